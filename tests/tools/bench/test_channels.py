"""The Q&A post's noise/zeros data, the book's way and notebook 04's: shapes, dtypes, values, memory."""

from __future__ import annotations

import ast
import math
from types import SimpleNamespace

import numpy as np
import pytest

from course_tools.bench.channels import batch_bounds, book_arrays, float32_batch, train_noise_vs_zeros

from ...conftest import NOTEBOOKS
from ...test_notebooks import code_cells, load, source

FEATURES = 784 + 784  # 1,568 inputs, as in the Q&A post


def numbered_images(n: int) -> np.ndarray:
    """uint8 images whose first pixel is their index."""
    images = np.random.default_rng(1).integers(0, 256, size=(n, 28, 28), dtype=np.uint8)
    images[:, 0, 0] = np.arange(n)
    return images


def test_the_course_way_is_a_float32_batch_of_pixels_then_extra_channels():
    images = numbered_images(100)
    noise = float32_batch(images, "noise", 10, 60, seed=3)
    assert noise.dtype == np.float32 and noise.shape == (50, FEATURES)
    np.testing.assert_allclose(noise[:, :784], images[10:60].reshape(50, 784) / 255.0, rtol=1e-6)
    assert 0.0 <= noise[:, 784:].min() and noise[:, 784:].max() < 1.0 and abs(noise[:, 784:].mean() - 0.5) < 0.05
    # fixed noise: the same batch has the same noise each time it is built (every epoch), another seed other noise
    np.testing.assert_array_equal(noise, float32_batch(images, "noise", 10, 60, seed=3))
    assert not np.allclose(noise[:, 784:], float32_batch(images, "noise", 10, 60, seed=4)[:, 784:])
    assert not np.allclose(noise[:40, 784:], float32_batch(images, "noise", 60, 100, seed=3)[:, 784:])
    zeros = float32_batch(images, "zeros", 10, 60)
    assert not zeros[:, 784:].any()
    np.testing.assert_array_equal(zeros[:, :784], noise[:, :784])


def test_the_batches_cover_each_image_once_in_order():
    assert batch_bounds(0, 300) == [(0, 128), (128, 256), (256, 300)]
    assert batch_bounds(240, 300) == [(240, 300)] and batch_bounds(0, 256) == [(0, 128), (128, 256)]
    assert batch_bounds(5, 5) == []


def notebook_recipe() -> str:
    """Notebook 04's own ``WithExtraChannels``, taken from its code cell."""
    path = next(p for p in NOTEBOOKS if p.name.startswith("04_"))
    cell = next(source(c) for c in code_cells(load(path)) if "class WithExtraChannels(" in source(c))
    [recipe] = [n for n in ast.parse(cell).body if getattr(n, "name", None) == "WithExtraChannels"]
    return ast.get_source_segment(cell, recipe)


class StandInPyDataset:
    """``keras.utils.PyDataset`` as the notebook's class uses it: ``super().__init__()``, then ``len`` and ``[i]``."""

    def __init__(self, **kwargs) -> None:
        assert not kwargs


@pytest.mark.parametrize("kind", ["noise", "zeros"])
@pytest.mark.parametrize("n", [50, 300])
def test_the_benchmark_builds_what_notebook_04_builds(kind, n):
    images, labels = numbered_images(n), np.arange(n) % 10
    namespace = {"np": np, "math": math, "keras": SimpleNamespace(utils=SimpleNamespace(PyDataset=StandInPyDataset)),
                 "train_images": images, "train_labels": labels, "SEED": 7, "BATCH_SIZE": 128}
    exec(notebook_recipe(), namespace)  # noqa: S102 - the notebook's own class
    split = math.floor(n * 0.8)
    for first, end in ((0, split), (split, n)):  # what it trains on, then what it validates on
        batches = namespace["WithExtraChannels"](kind, first, end)
        assert len(batches) == len(batch_bounds(first, end))
        for i, (start, stop) in enumerate(batch_bounds(first, end)):
            x, y = batches[i]
            np.testing.assert_array_equal(x, float32_batch(images, kind, start, stop, seed=7))
            np.testing.assert_array_equal(y, labels[start:stop])


def test_the_book_way_is_the_whole_set_in_float64_the_course_way_a_float32_batch():
    images = numbered_images(1000)
    book = book_arrays(images, "noise", seed=0)
    assert book.dtype == np.float64 and book.shape == (1000, FEATURES) and book.nbytes == 1000 * 1568 * 8
    assert 0 <= book[:, 784:].min() and book[:, 784:].max() < 1
    batch = float32_batch(images, "noise", 0, 128)
    assert batch.nbytes == 128 * 1568 * 4 == book.nbytes / 2 * 128 / 1000  # float32, and 128 images, not all
    zeros = book_arrays(images, "zeros")
    assert not zeros[:, 784:].any()
    np.testing.assert_allclose(zeros[:, :784], images.reshape(1000, 784).astype("float32") / 255)


@pytest.mark.parametrize("way", ["book", "course"])
def test_train_noise_vs_zeros_both_ways(way):
    images, labels = numbered_images(200), np.arange(200) % 10
    histories = train_noise_vs_zeros(images, labels, way=way, epochs=2, seed=0)
    assert sorted(histories) == ["noise", "zeros"]
    for history in histories.values():
        assert len(history["val_accuracy"]) == 2 and len(history["loss"]) == 2
