"""Notebook 03's exercise checks: the notebook's own solutions are right, wrong answers say what to look at."""

from __future__ import annotations

import math

import pytest

from course_utils.lessons import EMPTY, RIGHT, WRONG, nb03

from .solutions import cell_source, solved, task_cells

NOTEBOOK = "03_memory"


def test_the_notebook_has_the_two_exercises_each_calling_its_check():
    tasks = task_cells(NOTEBOOK)
    assert set(tasks) == {"Exercise 3.1", "Exercise 3.2"}
    assert 'course.check("3.1", answer)' in tasks["Exercise 3.1"]
    assert 'course.check("3.2", answer)' in tasks["Exercise 3.2"]


# ----------------------------------------------------------------------------- Exercise 3.1


def test_the_setting_solution_is_right():
    answer = solved(NOTEBOOK, "Exercise 3.1")["answer"]
    assert set(answer) == set(nb03.SITUATIONS)
    assert nb03.check_memory_setting(answer).status == RIGHT


def test_the_task_cell_names_the_situations_the_check_knows():
    (source,) = [s for name, s in task_cells(NOTEBOOK).items() if name == "Exercise 3.1"]
    assert all(f'"{situation}": None' in source for situation in nb03.SITUATIONS)


@pytest.mark.parametrize(("spelled", "meant"), [
    ("Memory limit", "limit"), ("virtual GPUs", "logical GPUs"), ("two logical GPUs", "logical GPUs"),
    ("TF_FORCE_GPU_ALLOW_GROWTH=true", "TF_FORCE_GPU_ALLOW_GROWTH"), ("memory growth", "growth"),
    ("set_memory_growth", "growth"), (" DEFAULT ", "default"), ("the moon", None), (3, None),
])
def test_the_usual_spellings_of_a_setting_are_understood(spelled, meant):
    assert nb03.as_setting(spelled) == meant


@pytest.mark.parametrize(("situation", "given", "reason"), [
    ("a class of four", "growth", "Growth has no ceiling"),
    ("a class of four", "TF_FORCE_GPU_ALLOW_GROWTH", "growth has no ceiling"),
    ("a class of four", "default", "nearly the whole card"),
    ("a class of four", "logical GPUs", "Each student needs one cap"),
    ("two GPUs on one T4", "limit", "MirroredStrategy needs two devices"),
    ("two GPUs on one T4", "growth", "MirroredStrategy needs two devices"),
    ("a program you cannot change", "growth", "which you cannot change"),
    ("a program you cannot change", "limit", "which you cannot change"),
    ("a program you cannot change", "default", "your notebook finds it full"),
])
def test_each_wrong_setting_says_what_it_does_there(situation, given, reason):
    answer = {**solved(NOTEBOOK, "Exercise 3.1")["answer"], situation: given}
    result = nb03.check_memory_setting(answer)
    assert result.status == WRONG and len(result.messages) == 1
    assert result.messages[0].startswith(f"{situation}: not {given!r}.") and reason in result.messages[0]


@pytest.mark.parametrize(("answer", "message"), [
    ({"a class of four": "limit"}, "two GPUs on one T4: no answer yet."),
    ({**dict.fromkeys(nb03.SITUATIONS, "limit"), "a class of four": "half"}, "'half' is not one of the five"),
    ("limit", "`answer` should be the dict"),
])
def test_an_incomplete_or_odd_setting_answer_says_so(answer, message):
    result = nb03.check_memory_setting(answer)
    assert result.status == WRONG and any(message in m for m in result.messages), result.messages


def test_the_skeleton_dict_counts_as_not_answered():
    assert nb03.check_memory_setting(dict.fromkeys(nb03.SITUATIONS)).status == EMPTY
    assert nb03.check_memory_setting(None).status == EMPTY


# ----------------------------------------------------------------------------- Exercise 3.2


def test_the_batch_solution_is_right_and_matches_the_check_s_estimate():
    namespace = solved(NOTEBOOK, "Exercise 3.2")
    assert namespace["weights"] == nb03.WEIGHTS and namespace["activations"] == nb03.ACTIVATIONS
    assert namespace["answer"] == nb03.largest_batch() == 17_420
    assert nb03.check_largest_batch(namespace["answer"]).status == RIGHT


def test_the_check_s_model_is_the_notebook_s_cnn():
    """The weights and the output sizes the check counts are those of the model cell, built by Keras."""
    import keras

    source = cell_source(NOTEBOOK, "model")
    namespace = {"keras": keras}
    source = source.replace("with tf.device(course.device.name):", "if True:").replace("model.summary()", "")
    exec(source, namespace)  # noqa: S102 - the notebook's own model cell
    model = namespace["model"]
    assert model.count_params() == nb03.WEIGHTS
    assert sum(math.prod(layer.output.shape[1:]) for layer in model.layers) == nb03.ACTIVATIONS


@pytest.mark.parametrize("answer", [17_420, 17_064, 16_613, 13_500, 20_000, 17420.5, nb03.largest_batch()])
def test_every_careful_estimate_is_accepted(answer):
    """With the input counted (17,064), with MB read as 10**6 bytes (16,613), or near what this CPU measures: each
    image there takes up to 1.2 times the formula's bytes (13,500)."""
    assert nb03.check_largest_batch(answer).status == RIGHT


@pytest.mark.parametrize(("answer", "hint"), [
    (21_412, "not the card's 6 GB"),  # 6144 MiB instead of 5000
    (34_840, "Count each output twice"),  # the backward pass forgotten
    (69_680, "A float32 number takes 4 bytes"),
    (9_000, "not more"),
    (12_000, "not more"),
    (5, "work in bytes"),
])
def test_a_wrong_estimate_names_the_usual_slip(answer, hint):
    result = nb03.check_largest_batch(answer)
    assert result.status == WRONG and hint in result.messages[0], result.messages
    assert f"{answer:,}" in result.messages[0] and "17,420" not in result.messages[0], "no answer given away"


@pytest.mark.parametrize("answer", ["many", True, -3, 0, float("nan"), float("inf"), [1000]])
def test_a_batch_that_is_not_a_count_says_so(answer):
    result = nb03.check_largest_batch(answer)
    assert result.status == WRONG and "should be a number of images" in result.messages[0]


def test_an_empty_batch_answer_is_not_answered_yet():
    assert nb03.check_largest_batch(None).status == EMPTY
    assert nb03.check_largest_batch("").status == EMPTY
