"""``data.load``: the course's one dataset switch - a name checked, a number of images kept, the source said."""

from __future__ import annotations

import numpy as np
import pytest

from course_utils import data
from course_utils.errors import ParameterError


def test_load_keeps_the_first_images_and_the_whole_test_set(capsys):
    (x_train, y_train), (x_test, y_test) = data.load("mnist", images=300)
    (all_x, all_y), (test_x, _) = data.load_mnist(quiet=True)
    assert x_train.shape == (300, 28, 28) and x_train.dtype == np.uint8
    assert np.array_equal(x_train, all_x[:300]) and np.array_equal(y_train, all_y[:300])
    assert len(x_test) == len(test_x) == len(y_test)
    assert "bundled" in capsys.readouterr().out.lower()  # the source is said, as every load does


def test_load_all_images_by_default_and_info_on_request():
    ((x_train, _), _), info = data.load("mnist", quiet=True, with_info=True)
    assert info.dataset == "mnist" and info.is_sample  # offline, no cache: the bundled sample
    assert len(x_train) == 8000


@pytest.mark.parametrize("name", ["MNIST", "fashion", "cifar10", None, 3])
def test_an_unknown_dataset_is_a_parameter_error_that_lists_the_choices(name):
    with pytest.raises(ParameterError) as info:
        data.load(name)
    assert repr(name) in info.value.what and "'mnist' or 'fashion-mnist'" in info.value.fix


@pytest.mark.parametrize("images", [0, -5, 2.5, "100", True])
def test_a_bad_number_of_images_is_refused(images):
    with pytest.raises(ParameterError, match="IMAGES"):
        data.load("mnist", images=images)


def test_more_images_than_the_dataset_holds(capsys):
    (x_train, _), _ = data.load("mnist", images=10**6)
    assert len(x_train) == 8000  # the bundled sample's training images, all of them
    assert "using all" in capsys.readouterr().out
    with pytest.raises(ParameterError, match="has 8,000"):
        data.load("mnist", images=10**6, strict=True, quiet=True)


def test_auto_prefers_full_size_fashion_mnist_when_mnist_is_only_the_sample(monkeypatch):
    calls = []
    monkeypatch.setattr(data, "load_fashion_mnist", lambda **kw: calls.append(kw) or data.load_mnist(**kw))
    data.load("auto", quiet=True)
    assert calls == []  # without full_size, "auto" is MNIST, sample or not
    data.load("auto", full_size=True, quiet=True)
    assert len(calls) == 1  # only the MNIST sample here: a full-size run takes Fashion-MNIST
