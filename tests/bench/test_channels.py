"""The Q&A post's noise/zeros data, the book's way and notebook 04's: shapes, dtypes, values, memory."""

from __future__ import annotations

import ast

import numpy as np
import pytest

from course_utils.tools.bench.channels import book_arrays, float32_array, train_noise_vs_zeros

from ..conftest import NOTEBOOKS
from ..test_notebooks import code_cells, load, source

FEATURES = 784 + 784  # 1,568 inputs, as in the Q&A post


def numbered_images(n: int) -> np.ndarray:
    """uint8 images whose first pixel is their index."""
    images = np.random.default_rng(1).integers(0, 256, size=(n, 28, 28), dtype=np.uint8)
    images[:, 0, 0] = np.arange(n)
    return images


def test_the_course_way_is_notebook_04s_float32_array():
    images = numbered_images(100)
    noise = float32_array(images, "noise", seed=3)
    assert noise.dtype == np.float32 and noise.shape == (100, FEATURES)
    np.testing.assert_allclose(noise[:, :784], images.reshape(100, 784) / 255.0, rtol=1e-6)
    assert 0.0 <= noise[:, 784:].min() and noise[:, 784:].max() < 1.0 and abs(noise[:, 784:].mean() - 0.5) < 0.05
    np.testing.assert_array_equal(noise, float32_array(images, "noise", seed=3))  # the same seed, the same noise
    assert not np.allclose(noise[:, 784:], float32_array(images, "noise", seed=4)[:, 784:])
    zeros = float32_array(images, "zeros")
    assert not zeros[:, 784:].any()
    np.testing.assert_array_equal(zeros[:, :784], noise[:, :784])


def notebook_recipe():
    """Notebook 04's own ``with_extra_channels``, taken from its code cell."""
    path = next(p for p in NOTEBOOKS if p.name.startswith("04_"))
    cell = next(source(c) for c in code_cells(load(path)) if "def with_extra_channels(" in source(c))
    [function] = [n for n in ast.parse(cell).body if getattr(n, "name", None) == "with_extra_channels"]
    return ast.get_source_segment(cell, function)


@pytest.mark.parametrize("kind", ["noise", "zeros"])
def test_the_benchmark_builds_what_notebook_04_builds(kind):
    images = numbered_images(50)
    namespace = {"np": np, "n": len(images), "train_images": images, "SEED": 7}
    exec(notebook_recipe(), namespace)
    np.testing.assert_array_equal(float32_array(images, kind, seed=7), namespace["with_extra_channels"](kind))


def test_memory_the_course_way_is_half_the_books():
    images = numbered_images(1000)
    book = book_arrays(images, "noise", seed=0)
    assert book.dtype == np.float64 and book.shape == (1000, FEATURES)
    assert book.nbytes == 2 * float32_array(images, "noise").nbytes == 1000 * 1568 * 8


def test_book_arrays_are_the_books_recipe():
    images = numbered_images(10)
    zeros = book_arrays(images, "zeros")
    assert not zeros[:, 784:].any()
    np.testing.assert_allclose(zeros[:, :784], images.reshape(10, 784).astype("float32") / 255)
    noise = book_arrays(images, "noise", seed=0)
    assert 0 <= noise[:, 784:].min() and noise[:, 784:].max() < 1


@pytest.mark.parametrize("way", ["book", "course"])
def test_train_noise_vs_zeros_both_ways(way):
    images, labels = numbered_images(200), np.arange(200) % 10
    histories = train_noise_vs_zeros(images, labels, way=way, epochs=2, seed=0)
    assert sorted(histories) == ["noise", "zeros"]
    for history in histories.values():
        assert len(history["val_accuracy"]) == 2 and len(history["loss"]) == 2
