"""The Q&A post's "noise channels vs zeros channels" data, built lean.

The experiment (Deep Learning with Python, 2nd ed., ch. 5; docs/references.md#noise-experiment) appends
784 extra channels to every flattened 28x28 image - uniform noise in [0, 1), or zeros - and
trains the same dense model on each. The book builds both datasets up front in NumPy::

    np.concatenate([train_images, np.random.random((len(train_images), 784))], axis=1)

``np.random.random`` returns float64, so the concatenation is float64: 60,000 x 1,568 x 8
bytes = 753 MB per dataset, two of them, plus the float32 copies Keras makes - 3.4 GB at
the peak on one machine (a 2-core AMD EPYC, TensorFlow 2.21), more than a Binder session's
1-2 GB (``book_arrays`` keeps that recipe for the memory benchmark, ``course bench dense-memory``).

The course's way (``channel_datasets``) stores only the uint8 pixels (784 bytes an image)
and builds each batch in a ``tf.data`` map: pixels scaled to float32, extra channels
appended. The noise of image ``i``, channel ``j`` is a function of ``(seed, i, j)`` alone
(``extra_channels``: a counter-based generator, the idea behind TensorFlow's stateless random
functions), so it is fixed per image, identical in every epoch and every run, and never
stored. (The lesson needs that: noise drawn afresh each epoch would act as data
augmentation, not as a fixed distraction the model can memorise.)
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

KINDS = ("noise", "zeros")
EXTRA_CHANNELS = 784


def check_kind(kind: str) -> None:
    if kind not in KINDS:
        raise ValueError(f"kind must be one of {KINDS}, not {kind!r}")


def validation_start(n: int, validation_split: float) -> int:
    """Index of the first validation image - Keras's rule for ``validation_split``.

    ``fit(validation_split=v)`` keeps the *last* ``v`` of the arrays for validation, taken
    before any shuffling: the split starts at ``floor(n * (1 - v))``.
    """
    if not 0.0 <= validation_split < 1.0:
        raise ValueError(f"validation_split must be in [0, 1), not {validation_split}")
    return int(np.floor(n * (1.0 - validation_split)))


def book_arrays(images: np.ndarray, kind: str, *, seed: int | None = None) -> np.ndarray:
    """The book's recipe, as written: a float64 (n, 1568) array. Kept to measure what it costs."""
    check_kind(kind)
    train_images = images.reshape((len(images), 28 * 28)).astype("float32") / 255
    rng = np.random.default_rng(seed)
    extra = rng.random((len(train_images), 784)) if kind == "noise" else np.zeros((len(train_images), 784))
    return np.concatenate([train_images, extra], axis=1)


# The noise generator: counter-based, like TensorFlow's stateless random functions - the value
# for (seed, image i, channel j) is computed from those three numbers alone, by an integer
# hash, so a whole batch is one vectorised computation and nothing depends on batch order.
# (tf.random.stateless_uniform takes one seed per call: a different seed per image means a
# loop over the batch, which we measured at 4x the cost of this.) The hash is "lowbias32"
# (C. Wellons, github.com/skeeto/hash-prospector), a bijection on 32-bit integers; applied
# twice per value it gives well-mixed bits, of which the top 24 become a float32 in [0, 1).
_MIX1, _MIX2, _GOLDEN = 0x7FEB352D, 0x846CA68B, 0x9E3779B9


def _lowbias32(x, tf):
    x = tf.bitwise.bitwise_xor(x, tf.bitwise.right_shift(x, 16))
    x = x * tf.constant(_MIX1, tf.uint32)
    x = tf.bitwise.bitwise_xor(x, tf.bitwise.right_shift(x, 15))
    x = x * tf.constant(_MIX2, tf.uint32)
    return tf.bitwise.bitwise_xor(x, tf.bitwise.right_shift(x, 16))


def extra_channels(indices, kind: str, seed: int):
    """The extra channels of the images at ``indices`` (int64, shape (batch,)): float32 (batch, 784).

    Noise: uniform in [0, 1), a function of ``(seed, index, channel)`` only - the same values
    whenever that image comes round again, in any epoch, run or process, on any machine
    (it is integer arithmetic). Zeros: zeros.
    """
    import tensorflow as tf

    check_kind(kind)
    if kind == "zeros":
        return tf.zeros([tf.shape(indices)[0], EXTRA_CHANNELS], tf.float32)
    with tf.device("/CPU:0"):  # input work: uint32 kernels are CPU kernels
        key = _lowbias32(tf.constant((seed ^ _GOLDEN) & 0xFFFFFFFF, tf.uint32), tf)
        image = _lowbias32(tf.bitwise.bitwise_xor(key, tf.cast(indices, tf.uint32)), tf)  # one key per image
        channel = tf.cast(tf.range(EXTRA_CHANNELS), tf.uint32) * tf.constant(_GOLDEN, tf.uint32)
        bits = _lowbias32(_lowbias32(image[:, None] + channel[None, :], tf), tf)
        return tf.cast(tf.bitwise.right_shift(bits, 8), tf.float32) * (1.0 / (1 << 24))


@dataclass
class ChannelData:
    """The two datasets of one variant, and how much the pipeline keeps in memory."""

    kind: str
    train: Any  # tf.data.Dataset of (float32 (batch, 1568), int32 (batch,)), reshuffled every epoch
    validation: Any  # the same for the validation images, in order; None without a split
    train_images: int
    validation_images: int
    stored_bytes: int  # what the pipeline holds: the uint8 pixels and the labels


def channel_datasets(
    images: np.ndarray,
    labels: np.ndarray,
    kind: str,
    *,
    seed: int = 0,
    batch_size: int = 128,
    validation_split: float = 0.2,
) -> ChannelData:
    """tf.data datasets for the Q&A post's experiment, split the way ``fit(validation_split=...)`` splits.

    ``images``: uint8 (n, 28, 28) or (n, 784); ``labels``: (n,). Image ``i`` (its index in
    ``images``) always gets the same extra channels. The training set is reshuffled every
    epoch from ``seed``; pass ``shuffle=False`` to ``fit``, the pipeline shuffles.
    """
    import tensorflow as tf

    check_kind(kind)
    if len(images) != len(labels):
        raise ValueError(f"{len(images)} images but {len(labels)} labels")
    if images.dtype != np.uint8:
        raise ValueError(f"images must be uint8 (as the loaders return them), not {images.dtype}")
    flat = images.reshape((len(images), 28 * 28))
    n = len(flat)
    split = validation_start(n, validation_split)
    with tf.device("/CPU:0"):  # tf.data runs on the CPU, whatever device trains
        pixels = tf.constant(flat)
        targets = tf.constant(labels.astype(np.int32))

        def to_batch(indices):
            x = tf.cast(tf.gather(pixels, indices), tf.float32) / 255.0
            return tf.concat([x, extra_channels(indices, kind, seed)], axis=1), tf.gather(targets, indices)

        def batches(start: int, stop: int, shuffle: bool):
            ds = tf.data.Dataset.range(start, stop)
            if shuffle:
                ds = ds.shuffle(stop - start, seed=seed, reshuffle_each_iteration=True)
            ds = ds.batch(batch_size).map(to_batch, num_parallel_calls=tf.data.AUTOTUNE)
            return ds.prefetch(tf.data.AUTOTUNE)

        train = batches(0, split, shuffle=True)
        validation = batches(split, n, shuffle=False) if split < n else None
    return ChannelData(kind, train, validation, split, n - split, flat.nbytes + targets.numpy().nbytes)


def compile_dense(model) -> None:
    """The Q&A post's compile step: rmsprop, sparse categorical crossentropy (softmax output), accuracy."""
    model.compile(optimizer="rmsprop", loss="sparse_categorical_crossentropy", metrics=["accuracy"])


def train_noise_vs_zeros(
    images: np.ndarray,
    labels: np.ndarray,
    *,
    way: str = "course",
    epochs: int = 10,
    seed: int = 0,
) -> dict[str, dict[str, list[float]]]:
    """Train the Q&A post's model on both variants; return each variant's ``history.history``.

    ``way="book"``: the book's float64 NumPy arrays, both built up front, and
    ``fit(validation_split=0.2)``. ``way="course"``: ``channel_datasets``, one variant at a
    time. Both seed the weights identically for each variant.
    """
    import keras

    from course_utils.models import build_dense

    if way not in ("book", "course"):
        raise ValueError(f"way must be 'book' or 'course', not {way!r}")

    histories: dict[str, dict[str, list[float]]] = {}
    if way == "book":
        arrays = {kind: book_arrays(images, kind, seed=seed) for kind in KINDS}  # as the book: both up front
        for kind in KINDS:
            keras.utils.set_random_seed(seed)
            model = build_dense()
            compile_dense(model)
            history = model.fit(arrays[kind], labels, epochs=epochs, batch_size=128, validation_split=0.2,
                                verbose=0)
            histories[kind] = history.history
        return histories
    for kind in KINDS:
        data = channel_datasets(images, labels, kind, seed=seed)
        keras.utils.set_random_seed(seed)
        model = build_dense()
        compile_dense(model)
        history = model.fit(data.train, validation_data=data.validation, epochs=epochs, shuffle=False, verbose=0)
        histories[kind] = history.history
        del data, model
    return histories
