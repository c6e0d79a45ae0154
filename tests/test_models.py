"""The course models have the seeds' architectures."""

from __future__ import annotations

import keras
import numpy as np

from course_utils.models import CNN_PARAMS, DENSE_PARAMS, build_dense, build_seed_cnn


def test_dense_matches_seed_000():
    model = build_dense()
    assert model.count_params() == DENSE_PARAMS == 808_458
    assert model.layers[-1].activation is keras.activations.softmax


def test_cnn_matches_seed_004():
    for logits in (True, False):
        model = build_seed_cnn(logits=logits)
        assert model.count_params() == CNN_PARAMS == 93_322
        assert [type(layer).__name__ for layer in model.layers].count("Conv2D") == 3
    assert build_seed_cnn(logits=True).layers[-1].activation is keras.activations.linear
    assert build_seed_cnn(logits=False).layers[-1].activation is keras.activations.softmax


def test_cnn_outputs_logits_or_probabilities():
    x = np.random.default_rng(0).random((4, 28, 28, 1), dtype=np.float32)
    probs = build_seed_cnn(logits=False)(x).numpy()
    np.testing.assert_allclose(probs.sum(axis=1), 1.0, rtol=1e-5)
    assert build_seed_cnn(logits=True)(x).shape == (4, 10)
