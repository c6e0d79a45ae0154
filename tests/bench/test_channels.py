"""The Q&A post's noise/zeros datasets: the right shapes and dtypes, fixed noise, and lean in memory."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import numpy as np
import pytest

from course_utils.tools.bench.channels import (
    EXTRA_CHANNELS,
    book_arrays,
    channel_datasets,
    extra_channels,
    train_noise_vs_zeros,
    validation_start,
)

FEATURES = 784 + EXTRA_CHANNELS  # 1,568 inputs, as in the Q&A post


def noise_reference(index: int, seed: int) -> np.ndarray:
    """The noise of one image computed again in NumPy, from the hash's published constants (lowbias32, Chris
    Wellons' hash-prospector): what ``extra_channels`` must return, bit for bit."""
    mix1, mix2, golden = 0x7FEB352D, 0x846CA68B, 0x9E3779B9

    def mix(x: np.ndarray) -> np.ndarray:
        x = x ^ (x >> np.uint32(16))
        x = x * np.uint32(mix1)
        x = x ^ (x >> np.uint32(15))
        x = x * np.uint32(mix2)
        return x ^ (x >> np.uint32(16))

    with np.errstate(over="ignore"):
        key = mix(np.array((seed ^ golden) & 0xFFFFFFFF, dtype=np.uint32))
        image = mix(key ^ np.uint32(index & 0xFFFFFFFF))
        channel = np.arange(784, dtype=np.uint32) * np.uint32(golden)
        bits = mix(mix(image + channel))
    return (bits >> np.uint32(8)).astype(np.float32) * np.float32(1.0 / (1 << 24))


def numbered_images(n: int) -> np.ndarray:
    """uint8 images whose first pixel is their index, so a batch row says which image it is."""
    images = np.random.default_rng(1).integers(0, 256, size=(n, 28, 28), dtype=np.uint8)
    images[:, 0, 0] = np.arange(n)
    return images


def epoch(ds) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """One pass: (image index, features, labels), in the order the dataset gave them."""
    xs, ys = zip(*[(x.numpy(), y.numpy()) for x, y in ds], strict=True)
    x, y = np.concatenate(xs), np.concatenate(ys)
    return np.rint(x[:, 0] * 255).astype(int), x, y


def by_index(index: np.ndarray, x: np.ndarray) -> np.ndarray:
    return x[np.argsort(index)]


def test_shapes_dtypes_and_the_keras_split():
    images, labels = numbered_images(100), np.arange(100) % 10
    data = channel_datasets(images, labels, "noise", seed=0, batch_size=16)
    assert (data.train_images, data.validation_images) == (80, 20)
    x, y = next(iter(data.train))
    assert x.shape == (16, FEATURES) and x.dtype.name == "float32"
    assert y.dtype.name == "int32"
    index, x, y = epoch(data.validation)
    assert list(index) == list(range(80, 100)), "validation = the last 20%, in order, like fit(validation_split=0.2)"
    np.testing.assert_array_equal(y, labels[80:])
    np.testing.assert_allclose(x[:, :784], images[80:].reshape(20, 784) / 255.0, rtol=1e-6)
    assert 0.0 <= x[:, 784:].min() and x[:, 784:].max() < 1.0 and abs(x[:, 784:].mean() - 0.5) < 0.05


@pytest.mark.parametrize("n", [1, 7, 100, 60_000])
def test_validation_start_follows_keras(n):
    assert validation_start(n, 0.2) == int(np.floor(n * 0.8))
    assert validation_start(n, 0.0) == n


def test_noise_is_fixed_per_image_across_epochs_but_order_is_reshuffled():
    images, labels = numbered_images(64), np.zeros(64, dtype=np.uint8)
    data = channel_datasets(images, labels, "noise", seed=3, batch_size=10, validation_split=0.25)
    first, second = epoch(data.train), epoch(data.train)
    assert sorted(first[0]) == sorted(second[0]) == list(range(48)), "each training image once per epoch"
    assert list(first[0]) != list(second[0]), "the training set is reshuffled every epoch"
    np.testing.assert_array_equal(by_index(first[0], first[1]), by_index(second[0], second[1]))
    # rebuilding the datasets (same seed) gives the same noise; another seed gives other noise
    again = epoch(channel_datasets(images, labels, "noise", seed=3, batch_size=10, validation_split=0.25).train)
    np.testing.assert_array_equal(by_index(first[0], first[1]), by_index(again[0], again[1]))
    other = epoch(channel_datasets(images, labels, "noise", seed=4, batch_size=10, validation_split=0.25).train)
    assert not np.allclose(by_index(first[0], first[1])[:, 784:], by_index(other[0], other[1])[:, 784:])


def test_noise_of_image_i_is_a_function_of_seed_index_and_channel_only():
    import tensorflow as tf

    indices = [5, 0, 59_999, 2**31 + 7]
    noise = extra_channels(tf.constant(indices, tf.int64), "noise", 7).numpy()
    for row, index in zip(noise, indices, strict=True):
        np.testing.assert_array_equal(row, noise_reference(index, 7))  # bit-identical to the NumPy reference
    assert not np.array_equal(noise[0], noise[1])
    alone = extra_channels(tf.constant([59_999], tf.int64), "noise", 7).numpy()
    np.testing.assert_array_equal(alone[0], noise[2])  # the batch around an image does not change its noise


def test_noise_is_uniform_and_uncorrelated():
    import tensorflow as tf

    noise = extra_channels(tf.range(20_000, dtype=tf.int64), "noise", 0).numpy()
    assert noise.dtype == np.float32 and noise.min() >= 0.0 and noise.max() < 1.0
    assert abs(noise.mean() - 0.5) < 0.001 and abs(noise.std() - 12**-0.5) < 0.001
    counts = np.histogram(noise, bins=10, range=(0, 1))[0] / noise.size
    np.testing.assert_allclose(counts, 0.1, atol=0.001)
    assert abs(np.corrcoef(noise[:, 0], noise[:, 1])[0, 1]) < 0.03, "channels are independent"
    assert abs(np.corrcoef(noise[:-1, 3], noise[1:, 3])[0, 1]) < 0.03, "neighbouring images are independent"
    other = extra_channels(tf.range(1000, dtype=tf.int64), "noise", 1).numpy()
    assert abs(np.corrcoef(other.ravel(), noise[:1000].ravel())[0, 1]) < 0.01, "another seed, other noise"


def test_noise_is_identical_in_another_process():
    code = textwrap.dedent(
        """
        import numpy as np, tensorflow as tf
        from course_utils.tools.bench.channels import extra_channels
        noise = extra_channels(tf.constant([0, 1, 59999], tf.int64), "noise", 0).numpy()
        print(repr(float(np.sum(noise, dtype=np.float64))))
        """
    )
    import tensorflow as tf

    here = float(np.sum(extra_channels(tf.constant([0, 1, 59999], tf.int64), "noise", 0).numpy(), dtype=np.float64))
    child = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert float(child.stdout.strip().splitlines()[-1]) == here


def test_zeros_variant_appends_zeros():
    images, labels = numbered_images(20), np.zeros(20, dtype=np.uint8)
    index, x, _ = epoch(channel_datasets(images, labels, "zeros", validation_split=0.0).train)
    assert not x[:, 784:].any()
    np.testing.assert_allclose(by_index(index, x)[:, :784], images.reshape(20, 784) / 255.0, rtol=1e-6)


def test_memory_the_course_way_stores_uint8_pixels_only():
    n = 1000
    images, labels = numbered_images(n), np.zeros(n, dtype=np.uint8)
    data = channel_datasets(images, labels, "noise")
    assert data.stored_bytes == n * 784 + n * 4  # uint8 pixels + int32 labels
    book = book_arrays(images, "noise", seed=0)
    assert book.dtype == np.float64 and book.shape == (n, FEATURES)
    assert book.nbytes == n * 1568 * 8
    assert book.nbytes / data.stored_bytes > 15
    # at full size: 60,000 images
    assert 60_000 * 1568 * 8 / 2**20 > 700 and (60_000 * 784 + 60_000 * 4) / 2**20 < 50


def test_book_arrays_are_the_books_recipe():
    images = numbered_images(10)
    zeros = book_arrays(images, "zeros")
    assert not zeros[:, 784:].any()
    np.testing.assert_allclose(zeros[:, :784], images.reshape(10, 784).astype("float32") / 255)
    noise = book_arrays(images, "noise", seed=0)
    assert 0 <= noise[:, 784:].min() and noise[:, 784:].max() < 1


def test_bad_arguments_are_refused():
    images, labels = numbered_images(10), np.zeros(10, dtype=np.uint8)
    with pytest.raises(ValueError, match="kind"):
        channel_datasets(images, labels, "ones")
    with pytest.raises(ValueError, match="uint8"):
        channel_datasets(images / 255.0, labels, "noise")
    with pytest.raises(ValueError, match="labels"):
        channel_datasets(images, labels[:5], "noise")
    with pytest.raises(ValueError, match="validation_split"):
        validation_start(10, 1.0)


@pytest.mark.parametrize("way", ["book", "course"])
def test_train_noise_vs_zeros_both_ways(way):
    images, labels = numbered_images(200), np.arange(200) % 10
    histories = train_noise_vs_zeros(images, labels, way=way, epochs=2, seed=0)
    assert sorted(histories) == ["noise", "zeros"]
    for history in histories.values():
        assert len(history["val_accuracy"]) == 2 and len(history["loss"]) == 2
