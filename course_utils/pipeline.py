"""Input pipelines for the CNN: the blog post's NumPy arrays, and the course's tf.data pipeline.

The blog post divides uint8 images by ``255.0`` in NumPy, which makes **float64** arrays (8 bytes
a pixel) that Keras then casts to float32 - a second copy - before it can train. The course
keeps the images as uint8 and builds a ``tf.data`` pipeline in the order of TensorFlow Datasets'
MNIST example (https://www.tensorflow.org/datasets/keras_example); the data-performance guide
(https://www.tensorflow.org/guide/data_performance) explains each step (docs/references.md#data-pipeline)::

    map (uint8 -> float32 in [0, 1], add the channel axis) -> cache -> shuffle -> batch -> prefetch

``cache`` keeps the converted images in memory after the first epoch, so the conversion is
paid once; ``prefetch`` prepares the next batch while the model trains on this one.
"""

from __future__ import annotations

import numpy as np


def blog_arrays(images: np.ndarray) -> np.ndarray:
    """The blog post's preprocessing, kept as written: reshape to (n, 28, 28, 1) and ``/ 255.0`` (float64)."""
    return images.reshape((len(images), 28, 28, 1)) / 255.0


def to_float_image(image, label):
    """uint8 image (28, 28) -> float32 (28, 28, 1) in [0, 1]; the label passes through."""
    import tensorflow as tf

    return tf.expand_dims(tf.cast(image, tf.float32) / 255.0, -1), label


def image_dataset(
    images: np.ndarray,
    labels: np.ndarray,
    *,
    batch_size: int,
    shuffle: bool = False,
    seed: int = 0,
    cache: bool = True,
    prefetch: bool = True,
    drop_remainder: bool = False,
):
    """A batched ``tf.data.Dataset`` of (float32 image, label) from uint8 arrays.

    ``shuffle=True`` reshuffles every epoch (as ``fit`` does with arrays), from ``seed``.
    The source tensors are created on the CPU: tf.data runs there whatever device the
    model trains on. ``drop_remainder=True`` drops a last partial batch, so every batch has
    one shape - what XLA wants, since it compiles one program per input shape.
    """
    import tensorflow as tf

    if len(images) != len(labels):
        raise ValueError(f"{len(images)} images but {len(labels)} labels")
    with tf.device("/CPU:0"):
        ds = tf.data.Dataset.from_tensor_slices((images, labels))
        ds = ds.map(to_float_image, num_parallel_calls=tf.data.AUTOTUNE)
        if cache:
            ds = ds.cache()
        if shuffle:
            ds = ds.shuffle(len(images), seed=seed, reshuffle_each_iteration=True)
        ds = ds.batch(batch_size, drop_remainder=drop_remainder)
        if prefetch:
            ds = ds.prefetch(tf.data.AUTOTUNE)
    return ds
