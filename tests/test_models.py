"""The course models have the architectures of the Q&A post and the blog post (docs/sources.md)."""

from __future__ import annotations

import keras
import numpy as np

from course_utils.models import CNN_PARAMS, build_blog_cnn, build_dense


def test_dense_matches_the_qa_post():
    model = build_dense()
    assert model.count_params() == 808_458
    assert model.layers[-1].activation is keras.activations.softmax


def test_cnn_matches_the_blog_post():
    logits, probabilities = build_blog_cnn(logits=True), build_blog_cnn(logits=False)
    for model in (logits, probabilities):
        assert model.count_params() == CNN_PARAMS == 93_322
        assert [type(layer).__name__ for layer in model.layers].count("Conv2D") == 3
    assert logits.layers[-1].activation is keras.activations.linear
    assert probabilities.layers[-1].activation is keras.activations.softmax
    x = np.random.default_rng(0).random((4, 28, 28, 1), dtype=np.float32)
    np.testing.assert_allclose(probabilities(x).numpy().sum(axis=1), 1.0, rtol=1e-5)
    assert logits(x).shape == (4, 10)
