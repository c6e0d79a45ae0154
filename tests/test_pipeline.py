"""The CNN's input: the blog post's float64 arrays, and the course's tf.data pipeline."""

from __future__ import annotations

import numpy as np
import pytest

from course_utils.pipeline import blog_arrays, image_dataset


def images_and_labels(n: int = 50):
    rng = np.random.default_rng(0)
    return rng.integers(0, 256, size=(n, 28, 28), dtype=np.uint8), np.arange(n) % 10


def collect(ds):
    xs, ys = zip(*[(x.numpy(), y.numpy()) for x, y in ds], strict=True)
    return np.concatenate(xs), np.concatenate(ys)


def test_blog_arrays_are_float64_as_written():
    images, _ = images_and_labels(4)
    x = blog_arrays(images)
    assert x.dtype == np.float64 and x.shape == (4, 28, 28, 1)
    np.testing.assert_allclose(x[..., 0], images / 255.0)


def test_pipeline_yields_float32_batches_in_order_without_shuffle():
    images, labels = images_and_labels()
    ds = image_dataset(images, labels, batch_size=16)
    first_x, first_y = next(iter(ds))
    assert first_x.shape == (16, 28, 28, 1) and first_x.dtype.name == "float32"
    x, y = collect(ds)
    np.testing.assert_array_equal(y, labels)
    np.testing.assert_allclose(x[..., 0], images / 255.0, rtol=1e-6)


def test_shuffle_reshuffles_every_epoch_and_keeps_pairs():
    images, labels = images_and_labels()
    ds = image_dataset(images, labels, batch_size=8, shuffle=True, seed=1)
    (x1, y1), (x2, y2) = collect(ds), collect(ds)
    assert not np.array_equal(y1, y2), "a new order every epoch"
    assert sorted(y1) == sorted(y2) == sorted(labels)
    for x, y in ((x1, y1), (x2, y2)):  # every image still has its own label
        index = [int(np.argmin(np.abs(images / 255.0 - img[..., 0]).sum(axis=(1, 2)))) for img in x]
        np.testing.assert_array_equal(labels[index], y)


def test_without_cache_and_prefetch_the_data_is_the_same():
    images, labels = images_and_labels()
    plain = collect(image_dataset(images, labels, batch_size=16, cache=False, prefetch=False))
    fast = collect(image_dataset(images, labels, batch_size=16))
    np.testing.assert_array_equal(plain[0], fast[0])


def test_mismatched_lengths_are_refused():
    images, labels = images_and_labels()
    with pytest.raises(ValueError, match="labels"):
        image_dataset(images, labels[:3], batch_size=4)


def test_drop_remainder_keeps_one_batch_shape():
    images, labels = images_and_labels(50)
    shapes = {tuple(x.shape) for x, _ in image_dataset(images, labels, batch_size=16, drop_remainder=True)}
    assert shapes == {(16, 28, 28, 1)}
    assert len(collect(image_dataset(images, labels, batch_size=16, drop_remainder=True))[1]) == 48
