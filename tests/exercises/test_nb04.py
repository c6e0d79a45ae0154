"""Notebook 04's exercise checks (course_utils.exercises.nb04): solutions right, wrong answers explained."""

from __future__ import annotations

import numpy as np
import pytest

from course_utils.data import load
from course_utils.exercises import EMPTY, RIGHT, WRONG, nb04

from .solutions import solved, task_cells

NOTEBOOK = "04_dense_noise_vs_zeros"


@pytest.fixture(scope="module")
def mnist():
    (images, labels), _ = load("mnist", images=64)  # the course's bundled sample: offline
    return images, labels


def test_the_notebook_has_both_exercises_each_calling_its_check():
    tasks = task_cells(NOTEBOOK)
    assert set(tasks) == {"Exercise 4.1", "Exercise 4.2"}
    assert "nb04.check_zeros_batch(answer, pixels8)" in tasks["Exercise 4.1"]
    assert "nb04.check_param_count(answer, inputs=784)" in tasks["Exercise 4.2"]
    for source in tasks.values():
        assert "answer = None" in source, "the task starts with an empty answer"


def test_the_task_cells_run_unattended_and_say_not_answered(mnist, capsys):
    namespace: dict = {"train_images": mnist[0]}  # one kernel: the cells run in order, as in the notebook
    for source in task_cells(NOTEBOOK).values():
        exec(source, namespace)  # noqa: S102 - the notebook's own task cell, answer empty
    out = capsys.readouterr().out
    assert out.count("not answered yet") == 2 and "wrong" not in out


# ----------------------------------------------------------------------------- Exercise 4.1


def test_the_zeros_solution_is_right(mnist, capsys):
    pixels8 = mnist[0][:8]
    answer = solved(NOTEBOOK, "Exercise 4.1", np=np, pixels8=pixels8)["answer"]
    result = nb04.check_zeros_batch(answer, pixels8)
    assert result.status == RIGHT, result
    assert capsys.readouterr().out.startswith("✅ Exercise 4.1: right")


def test_the_expected_input_is_what_the_course_pipeline_builds(mnist):
    from course_utils.channels import channel_datasets

    images, labels = mnist[0][:16], mnist[1][:16]
    data = channel_datasets(images, labels, "zeros", batch_size=8, validation_split=0.5)  # validation: images 8-15
    (batch, _), = list(data.validation)
    np.testing.assert_array_equal(batch.numpy(), nb04.zeros_input(images[8:]))
    assert nb04.check_zeros_batch(batch, images[8:], show=False).ok, "a TensorFlow tensor is accepted too"


def _variants(pixels):
    flat = pixels.reshape(len(pixels), 784)
    right = nb04.zeros_input(pixels)
    return {
        "float64": (right.astype("float64"), "The dtype is float64: 8 bytes a number, the book's memory trap."),
        "not flattened": (pixels, "Flatten each image to 784 numbers first: pixels.reshape(8, 784)."),
        "no zeros": (flat / 255, "Append the 784 zero channels"),
        "stacked": (np.concatenate([flat, np.zeros_like(flat)]), "beside each image (axis=1), not below"),
        "not scaled": (np.concatenate([flat, np.zeros_like(flat)], axis=1).astype("float32"),
                       "The pixels are still 0-255. Divide by 255"),
        "zeros first": (np.concatenate([np.zeros_like(flat, "float32"), flat / 255], axis=1).astype("float32"),
                        "The zeros come first."),
        "noise instead": (np.concatenate([flat / 255, np.full(flat.shape, 0.5)], axis=1).astype("float32"),
                          "The last 784 numbers of each row should all be 0"),
        "other images": (nb04.zeros_input(pixels[::-1]), "should be that image's pixels / 255, in order"),
        "a string": ("zeros", "The shape is (), not (8, 1568)."),
    }


@pytest.mark.parametrize("variant", ["float64", "not flattened", "no zeros", "stacked", "not scaled", "zeros first",
                                     "noise instead", "other images", "a string"])
def test_a_wrong_zeros_input_says_what_is_wrong(mnist, variant):
    pixels8 = mnist[0][:8]
    answer, message = _variants(pixels8)[variant]
    result = nb04.check_zeros_batch(answer, pixels8, show=False)
    assert result.status == WRONG and any(message in m for m in result.messages), result


def test_an_empty_zeros_input_is_not_answered(mnist):
    result = nb04.check_zeros_batch(None, mnist[0][:8], show=False)
    assert result.status == EMPTY and "from the 8 images" in result.messages[0]


# ----------------------------------------------------------------------------- Exercise 4.2


def test_the_parameter_solution_is_right_and_matches_keras(capsys):
    from course_utils.models import DENSE_PARAMS, build_dense

    answer = solved(NOTEBOOK, "Exercise 4.2", np=np)["answer"]
    result = nb04.check_param_count(answer, inputs=784)
    assert result.status == RIGHT, result
    assert answer == build_dense(784).count_params() == 407_050
    assert nb04.dense_params(1568) == DENSE_PARAMS == build_dense().count_params()
    assert capsys.readouterr().out.startswith("✅ Exercise 4.2: right")


@pytest.mark.parametrize(("answer", "message"), [
    (784 * 512 + 512 * 10, "You left out the biases"),
    (784 * 512 + 512, "That is the first layer only."),
    (808_458, "That is the model for 1,568 inputs, not 784."),
    (784 * 10 + 10, "That skips the hidden layer"),
    (407_051, "you are off by +1"),
    ("407050", "`answer` should be a whole number, not '407050'."),
    (True, "`answer` should be a whole number"),
    (407_050.0, "`answer` should be a whole number"),
])
def test_a_wrong_parameter_count_names_the_likely_mistake(answer, message):
    result = nb04.check_param_count(answer, inputs=784, show=False)
    assert result.status == WRONG and any(message in m for m in result.messages), result


def test_the_check_works_for_another_width():
    assert nb04.check_param_count(nb04.dense_params(100), inputs=100, show=False).ok
    result = nb04.check_param_count(407_050, inputs=1568, show=False)
    assert "That is the model for 784 inputs, not 1,568." in result.messages[0]


def test_an_empty_parameter_count_is_not_answered():
    assert nb04.check_param_count(None, inputs=784, show=False).status == EMPTY
