"""The Q&A post's "noise channels vs zeros channels" data, two ways: the book's and notebook 04's.

The experiment (Deep Learning with Python, 2nd ed., ch. 5; docs/references.md#noise-experiment) appends
784 extra channels to every flattened 28x28 image - uniform noise in [0, 1), or zeros - and
trains the same dense model on each. The book builds both datasets up front in NumPy::

    np.concatenate([train_images, np.random.random((len(train_images), 784))], axis=1)

``np.random.random`` returns float64, so the concatenation is float64: 60,000 x 1,568 x 8
bytes = 753 MB per dataset, two of them, plus the float32 copies Keras makes - 3.4 GB at
the peak on one machine (a 2-core AMD EPYC, TensorFlow 2.21), more than a Binder session's
1-2 GB (``book_arrays`` keeps that recipe for the memory benchmark, ``course bench dense-memory``).

The course's way (``float32_batch``: the batches of notebook 04's ``WithExtraChannels``, a ``keras.utils.PyDataset``)
builds each batch in float32 when ``fit`` asks for it, one variant at a time: no full-size array at all. A batch's
noise is seeded by its first image, so an image gets the same noise in every epoch (fixed noise, as in the book,
not new noise each epoch); ``fit`` shuffles the order of the batches.
"""

from __future__ import annotations

import numpy as np

from course_utils.params import train_images

KINDS = ("noise", "zeros")
BATCH_SIZE = 128  # the Q&A post's


def book_arrays(images: np.ndarray, kind: str, *, seed: int | None = None) -> np.ndarray:
    """The book's recipe, as written: a float64 (n, 1568) array. Kept to measure what it costs."""
    train_images = images.reshape((len(images), 28 * 28)).astype("float32") / 255
    rng = np.random.default_rng(seed)
    extra = rng.random((len(train_images), 784)) if kind == "noise" else np.zeros((len(train_images), 784))
    return np.concatenate([train_images, extra], axis=1)


def float32_batch(images: np.ndarray, kind: str, start: int, stop: int, *, seed: int = 0) -> np.ndarray:
    """Notebook 04's batch of the images ``start, ..., stop - 1``: float32 (stop - start, 1568), the pixels in
    [0, 1], then 784 noise or zero channels (the noise seeded by ``(seed, start)``)."""
    x = np.zeros((stop - start, 1568), dtype=np.float32)
    x[:, :784] = images[start:stop].reshape(-1, 784)
    x[:, :784] /= 255
    if kind == "noise":
        x[:, 784:] = np.random.default_rng([seed, start]).random((stop - start, 784), dtype=np.float32)
    return x


def batch_bounds(first: int, end: int, batch_size: int = BATCH_SIZE) -> list[tuple[int, int]]:
    """The ``(start, stop)`` of each batch of the images ``first, ..., end - 1``, in order (the last may be short)."""
    return [(start, min(start + batch_size, end)) for start in range(first, end, batch_size)]


def train_noise_vs_zeros(
    images: np.ndarray,
    labels: np.ndarray,
    *,
    way: str = "course",
    epochs: int = 10,
    seed: int = 0,
) -> dict[str, dict[str, list[float]]]:
    """Train the Q&A post's model on both variants; return each variant's ``history.history``.

    ``way="book"``: the book's float64 NumPy arrays, both built up front, ``fit(validation_split=0.2)``.
    ``way="course"``: notebook 04's, one variant at a time, each batch built in float32 when ``fit`` asks for it
    (``float32_batch``), the last 20% of the images for validation. Both seed the weights identically for each
    variant.
    """
    import keras

    from course_utils.models import build_dense

    class Batches(keras.utils.PyDataset):
        """Notebook 04's ``WithExtraChannels``: one variant's images ``first, ..., end - 1``, batch by batch."""

        def __init__(self, kind: str, first: int, end: int) -> None:
            super().__init__()
            self.kind, self.bounds = kind, batch_bounds(first, end)

        def __len__(self) -> int:
            return len(self.bounds)

        def __getitem__(self, i: int) -> tuple[np.ndarray, np.ndarray]:
            start, stop = self.bounds[i]
            return float32_batch(images, self.kind, start, stop, seed=seed), labels[start:stop]

    both = {kind: book_arrays(images, kind, seed=seed) for kind in KINDS} if way == "book" else None  # up front
    split = train_images(len(images))  # the first 80% train, as validation_split=0.2 splits them
    histories: dict[str, dict[str, list[float]]] = {}
    for kind in KINDS:
        keras.utils.set_random_seed(seed)
        model = build_dense()
        model.compile(optimizer="rmsprop", loss="sparse_categorical_crossentropy", metrics=["accuracy"])
        if both is not None:
            history = model.fit(both[kind], labels, epochs=epochs, batch_size=BATCH_SIZE, validation_split=0.2,
                                verbose=0)
        else:
            train, validation = Batches(kind, 0, split), Batches(kind, split, len(images))
            history = model.fit(train, epochs=epochs, validation_data=validation, verbose=0)
        histories[kind] = history.history
        del model
    return histories
