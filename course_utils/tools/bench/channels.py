"""The Q&A post's "noise channels vs zeros channels" data, two ways: the book's and notebook 04's.

The experiment (Deep Learning with Python, 2nd ed., ch. 5; docs/references.md#noise-experiment) appends
784 extra channels to every flattened 28x28 image - uniform noise in [0, 1), or zeros - and
trains the same dense model on each. The book builds both datasets up front in NumPy::

    np.concatenate([train_images, np.random.random((len(train_images), 784))], axis=1)

``np.random.random`` returns float64, so the concatenation is float64: 60,000 x 1,568 x 8
bytes = 753 MB per dataset, two of them, plus the float32 copies Keras makes - 3.4 GB at
the peak on one machine (a 2-core AMD EPYC, TensorFlow 2.21), more than a Binder session's
1-2 GB (``book_arrays`` keeps that recipe for the memory benchmark, ``course bench dense-memory``).

The course's way (``float32_array``: notebook 04's ``with_extra_channels``) builds one float32
array, one variant at a time, with no other full-size copy.
"""

from __future__ import annotations

import numpy as np

KINDS = ("noise", "zeros")


def book_arrays(images: np.ndarray, kind: str, *, seed: int | None = None) -> np.ndarray:
    """The book's recipe, as written: a float64 (n, 1568) array. Kept to measure what it costs."""
    train_images = images.reshape((len(images), 28 * 28)).astype("float32") / 255
    rng = np.random.default_rng(seed)
    extra = rng.random((len(train_images), 784)) if kind == "noise" else np.zeros((len(train_images), 784))
    return np.concatenate([train_images, extra], axis=1)


def float32_array(images: np.ndarray, kind: str, *, seed: int = 0) -> np.ndarray:
    """Notebook 04's recipe: a float32 (n, 1568) array, the pixels in [0, 1], then 784 noise or zero channels."""
    n = len(images)
    x = np.zeros((n, 1568), dtype=np.float32)  # float32 from the start, and no other full-size copy
    x[:, :784] = images.reshape(n, 784)
    x[:, :784] /= 255
    if kind == "noise":
        x[:, 784:] = np.random.default_rng(seed).random((n, 784), dtype=np.float32)
    return x


def train_noise_vs_zeros(
    images: np.ndarray,
    labels: np.ndarray,
    *,
    way: str = "course",
    epochs: int = 10,
    seed: int = 0,
) -> dict[str, dict[str, list[float]]]:
    """Train the Q&A post's model on both variants; return each variant's ``history.history``.

    ``way="book"``: the book's float64 NumPy arrays, both built up front. ``way="course"``:
    ``float32_array``, one variant at a time. Both ``fit(validation_split=0.2)`` and seed the
    weights identically for each variant.
    """
    import keras

    from course_utils.models import build_dense

    both = {kind: book_arrays(images, kind, seed=seed) for kind in KINDS} if way == "book" else None  # up front
    histories: dict[str, dict[str, list[float]]] = {}
    for kind in KINDS:
        x = both[kind] if both is not None else float32_array(images, kind, seed=seed)
        keras.utils.set_random_seed(seed)
        model = build_dense()
        model.compile(optimizer="rmsprop", loss="sparse_categorical_crossentropy", metrics=["accuracy"])
        history = model.fit(x, labels, epochs=epochs, batch_size=128, validation_split=0.2, verbose=0)
        histories[kind] = history.history
        del x, model
    return histories
