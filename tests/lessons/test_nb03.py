"""Notebook 03's exercise checks: the notebook's own solutions are right, wrong answers say what to look at."""

from __future__ import annotations

import math

import pytest

from course_utils.lessons import RIGHT, WRONG, nb03

from .solutions import cell_source, cells, solved, source, task_cells

NOTEBOOK = "03_memory"


# ----------------------------------------------------------------------------- Exercise 3.1
# Exercise 3.1's task: choose "default" (nothing set), "growth", "limit" or "logical GPUs" (each set in code), or
# "TF_FORCE_GPU_ALLOW_GROWTH", for (1) "A class of four shares one 24 GB GPU. Nobody may take more than 6 GB.",
# (2) "You test code for two GPUs (MirroredStrategy ...) on one Colab T4." and (3) "A program that you cannot change
# must leave room on the GPU for your notebook. What do you set for it?". Section 3 says "A memory limit makes one
# logical GPU of at most N MB", "Two entries make two logical GPUs on one card", and that the variable "turns growth
# on without code"; section 1 that growth "takes more as needed". So each situation has one right choice, in any of
# the spellings the notebook and TensorFlow use (its error says "virtual devices").
ACCEPT_3_1 = [
    (1, "limit", "only a limit puts a ceiling on each student's process"),
    (1, "Memory_Limit", "case, spaces and underscores do not matter"),
    (2, "logical GPUs", "two logical GPUs look like two GPUs to MirroredStrategy"),
    (3, "TF_FORCE_GPU_ALLOW_GROWTH", "the variable turns growth on without code"),
    (3, "export TF_FORCE_GPU_ALLOW_GROWTH=true", "how a shell sets it"),
]
REJECT_3_1 = [
    (1, "default", "nearly the whole card"),  # true: section 1
    (1, "growth", "Growth has no ceiling"),  # true: it "takes more as needed"
    (1, "TF_FORCE_GPU_ALLOW_GROWTH", "growth has no ceiling"),
    # four logical GPUs in one notebook do not cap the other three students' processes
    (1, "logical GPUs", "Each student's notebook is one process"),
    (2, "limit", "MirroredStrategy needs two devices"),  # one limit makes one logical GPU
    # the task says growth, a limit and logical GPUs are each set in code, and the program cannot change
    (3, "growth", "which you cannot change"),
    (3, "default", "your notebook finds it full"),
    # not one of the five: the call makes a limit or logical GPUs, and "false" turns growth off
    (1, "set_logical_device_configuration", "is not one of the five choices"),
    (2, 2, "is not one of the five choices"),
]


def test_the_task_cell_names_the_situations_and_the_choices_the_check_knows():
    tasks = task_cells(NOTEBOOK)
    assert all(f'{situation}: None' in tasks["Exercise 3.1"] for situation in nb03.SITUATIONS)
    assert all(f'`"{choice}"`' in cell_source(NOTEBOOK, "read-gpu-runs") for choice in nb03.CHOICES)


@pytest.mark.parametrize(("situation", "given", "why"), ACCEPT_3_1)
def test_every_setting_the_task_allows_is_right(situation, given, why):
    answer = {**solved(NOTEBOOK, "Exercise 3.1")["answer"], situation: given}
    assert nb03.check_memory_setting(answer).status == RIGHT, why


@pytest.mark.parametrize(("situation", "given", "reason"), REJECT_3_1)
def test_each_wrong_setting_says_what_it_does_there(situation, given, reason):
    answer = {**solved(NOTEBOOK, "Exercise 3.1")["answer"], situation: given}
    result = nb03.check_memory_setting(answer)
    assert result.status == WRONG and len(result.messages) == 1, result.messages
    assert result.messages[0].startswith(f"Situation {situation}: ") and reason in result.messages[0], result.messages
    if nb03.as_setting(given):  # it names the choice it understood
        assert result.messages[0].startswith(f"Situation {situation}: not {nb03.as_setting(given)!r}.")


@pytest.mark.parametrize(("answer", "message"), [
    ({1: "limit"}, "Situation 2: no answer yet."),
    ("limit", "`answer` should be a dict"),
])
def test_an_incomplete_or_odd_setting_answer_says_so(answer, message):
    result = nb03.check_memory_setting(answer)
    assert result.status == WRONG and any(message in m for m in result.messages), result.messages


# ----------------------------------------------------------------------------- Exercise 3.2
# Exercise 3.2's task: "Say TensorFlow's start-up line there reads `GPU:0 with 5000 MB memory`. ... This MB is 2²⁰
# bytes. You train this CNN with Adam. From the list above and the summary, estimate the largest batch size that
# fits." The list: 16 bytes a weight (weights, gradients, Adam's two numbers), and each layer's output per image,
# kept for the backward pass, which "needs about as much again", at 4 bytes a number. The summary gives the outputs
# and 93,322 weights. That estimate is 17,420; what a careful reading may change moves it by 2% at most. Answers
# further off come from a slip, and the message names it. (What a real step needs, the next cell measures.)
ACCEPT_3_2 = [
    (16_898, "the lowest accepted (97%): the input counted as one more output, twice, gives 17,064"),
    (17_768, "the highest accepted (102%): Flatten left out, as it only reshapes its input, gives 17,691"),
    (17420.5, "not rounded at all"),
]
REJECT_3_2 = [
    (16_897, "not 5000 x 10**6"),  # 16,613: the MB read as 10**6 bytes, although the task says 2**20
    (17_769, "Round down at the end"),  # 18,000: 17,420 rounded up, which by the estimate does not fit
    (34_850, "Count each output twice"),  # the backward pass forgotten
    (69_701, "A float32 number takes 4 bytes"),  # 1 byte a number, and once
    (8_713, "at 4 bytes a number"),  # float64: 8 bytes a number
    (5, "work in bytes"),
]


def test_the_batch_solution_matches_the_check_s_estimate():
    namespace = solved(NOTEBOOK, "Exercise 3.2")
    assert namespace["weights"] == nb03.WEIGHTS and namespace["activations"] == nb03.ACTIVATIONS
    assert namespace["answer"] == nb03.largest_batch() == 17_420


def test_the_solution_s_sizes_are_the_check_s():
    """The solution's prose gives the fixed part and one image in MiB, as the check's message does."""
    prose = next(s for s in map(source, cells(NOTEBOOK)) if "Solution to Exercise 3.2" in s)
    assert f"take {nb03.fixed_bytes() / 2**20:.1f} MiB, one image {nb03.per_image_bytes() / 2**20:.2f} MiB" in prose


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


@pytest.mark.parametrize(("answer", "why"), ACCEPT_3_2)
def test_every_careful_estimate_is_accepted(answer, why):
    result = nb03.check_largest_batch(answer)
    assert result.status == RIGHT, why
    # right as an estimate: the message says a real step may differ, and that the next cell tells whether it fits
    assert "the estimate is about 17,420" in result.messages[0] and "really fits" in result.messages[0]


@pytest.mark.parametrize(("answer", "hint"), REJECT_3_2)
def test_a_wrong_estimate_names_the_usual_slip(answer, hint):
    result = nb03.check_largest_batch(answer)
    assert result.status == WRONG and hint in result.messages[0], result.messages
    assert f"{answer:,}" in result.messages[0] and "17,420" not in result.messages[0], "no answer given away"


@pytest.mark.parametrize("answer", ["many", True, 0, float("nan")])
def test_a_batch_that_is_not_a_count_says_so(answer):
    result = nb03.check_largest_batch(answer)
    assert result.status == WRONG and "should be a number of images" in result.messages[0]
