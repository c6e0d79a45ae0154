"""``data.load``: the course's one dataset switch - a name checked, a number of images kept, the source said
and, after a notebook's setup cell, written into its results record."""

from __future__ import annotations

import numpy as np
import pytest

from course_utils import data
from course_utils.core.errors import ParameterError
from course_utils.notebook import Course
from course_utils.results import Recorder, read_results

from .test_loaders import write_fashion


def test_load_keeps_the_first_images_and_the_whole_test_set(capsys):
    (x_train, y_train), (x_test, y_test) = data.load("mnist", images=300)
    (all_x, all_y), (test_x, _) = data.load("mnist", quiet=True)
    assert x_train.shape == (300, 28, 28) and x_train.dtype == np.uint8
    assert np.array_equal(x_train, all_x[:300]) and np.array_equal(y_train, all_y[:300])
    assert len(x_test) == len(test_x) == len(y_test)
    assert "bundled" in capsys.readouterr().out.lower()  # the source is said, as every load does


def test_an_unknown_dataset_is_a_parameter_error_that_lists_the_choices():
    with pytest.raises(ParameterError) as info:
        data.load("MNIST")
    assert "'MNIST'" in info.value.what and "'mnist' or 'fashion-mnist'" in info.value.fix


@pytest.mark.parametrize("images", [0, 2.5, True])  # below 1, not an int, a bool
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
    monkeypatch.setattr(data, "_fashion_mnist", lambda **kw: calls.append(kw) or data._mnist(**kw))
    data.load("auto", quiet=True)
    assert calls == []  # without full_size, "auto" is MNIST, sample or not
    data.load("auto", full_size=True, quiet=True)
    assert len(calls) == 1  # only the MNIST sample here: a full-size run takes Fashion-MNIST


# -- the source in the results record ------------------------------------------------------------------------


@pytest.fixture
def course(tmp_path):
    """A notebook's ``course`` object as its setup cell hands it over, with a fresh results record."""
    recorder = Recorder("99_test", parameters={}, smoke=True, path=tmp_path / "record.json")
    return Course(notebook="99_test", device=None, recorder=recorder)


def recorded_data(course: Course) -> dict:
    return read_results(course.recorder.path)["environment"].get("data", {})


def test_data_load_and_course_data_status_record_nothing(tmp_path, course):
    from course_utils.data import cli

    data.load("mnist", images=100, quiet=True)
    data.load("mnist", quiet=True)
    assert any("the course's bundled sample" in line for line in cli.status())
    assert recorded_data(course) == {}
    assert [p.name for p in tmp_path.rglob("*.json")] == ["record.json"]


def test_course_load_records_the_dataset_its_source_and_the_images(course):
    (x_train, _), (x_test, _) = course.load("mnist", images=300)
    assert (len(x_train), len(x_test)) == (300, 2000)
    mnist = recorded_data(course)["mnist"]
    assert mnist.pop("location").endswith("mnist_sample.npz")
    assert mnist == {"source": "bundled-sample", "train_images": 8000, "test_images": 2000,
                     "train_images_used": 300, "checksum": "verified"}


def test_a_later_load_replaces_the_entry(course):
    course.load("mnist")
    assert recorded_data(course)["mnist"]["train_images_used"] == 8000
    course.load("mnist", images=50)
    assert recorded_data(course)["mnist"]["train_images_used"] == 50


def test_each_dataset_has_its_own_entry(monkeypatch, tmp_path, course):
    hashes = write_fashion(tmp_path / "d" / "fashion-mnist")
    monkeypatch.setattr(data, "FASHION_FILES", hashes)
    monkeypatch.setenv("COURSE_DATA_DIR", str(tmp_path / "d"))
    course.load("mnist")
    course.load("fashion-mnist")
    found = recorded_data(course)
    assert sorted(found) == ["fashion-mnist", "mnist"]
    assert found["fashion-mnist"]["source"] == "COURSE_DATA_DIR"
    assert (found["fashion-mnist"]["train_images"], found["fashion-mnist"]["test_images"]) == (6, 4)
    assert found["fashion-mnist"]["location"] == str(tmp_path / "d" / "fashion-mnist")


def test_auto_is_recorded_as_the_dataset_it_used(course):
    course.load("auto", images=10)
    assert list(recorded_data(course)) == ["mnist"]


def test_course_load_checks_the_dataset_name(course):
    with pytest.raises(ParameterError):
        course.load("cifar10")
    assert recorded_data(course) == {}
