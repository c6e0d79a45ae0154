"""The course's two models, built the same way in every notebook that needs them.

- ``build_dense``: the Q&A post's model (Deep Learning with Python, 2nd ed., ch. 5; docs/sources.md):
  Dense(512, relu) + Dense(10, softmax) on 1,568 inputs (784 pixels + 784 extra
  channels) - 808,458 parameters.
- ``build_blog_cnn``: the blog post's CNN (TensorFlow's official MNIST CNN tutorial in 2019): three
  3x3 convolutions (32, 64, 64) with two max-poolings, Dense(64, relu), Dense(10) -
  93,322 parameters. ``logits=True`` (the course's fix) ends in a plain Dense(10) to pair
  with ``from_logits=True``; ``logits=False`` ends in softmax, as the blog post did.

Keras builds the model inside whatever ``tf.device`` scope is active when you call these.
"""

from __future__ import annotations

import keras
from keras import layers

CNN_PARAMS = 93_322


def build_dense() -> keras.Model:
    """The Q&A post's dense classifier; compile it with rmsprop + sparse categorical crossentropy."""
    return keras.Sequential(
        [
            keras.Input(shape=(1568,)),
            layers.Dense(512, activation="relu"),
            layers.Dense(10, activation="softmax"),
        ],
        name="dense_512",
    )


def build_blog_cnn(*, logits: bool = True) -> keras.Model:
    """The blog post's CNN on 28x28x1 inputs; ``logits=True`` drops the final softmax (see module docstring)."""
    return keras.Sequential(
        [
            keras.Input(shape=(28, 28, 1)),
            layers.Conv2D(32, (3, 3), activation="relu"),
            layers.MaxPooling2D((2, 2)),
            layers.Conv2D(64, (3, 3), activation="relu"),
            layers.MaxPooling2D((2, 2)),
            layers.Conv2D(64, (3, 3), activation="relu"),
            layers.Flatten(),
            layers.Dense(64, activation="relu"),
            # float32 output even under a mixed-precision policy, for a numerically safe loss.
            layers.Dense(10, activation=None if logits else "softmax", dtype="float32"),
        ],
        name="blog_cnn",
    )
