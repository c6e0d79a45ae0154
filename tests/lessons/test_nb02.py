"""Notebook 02's exercise checks: the notebook's own solutions are right, wrong answers say what to look at."""

from __future__ import annotations

import pytest

from course_utils.lessons import EMPTY, RIGHT, WRONG, nb02

from .solutions import solved, task_cells

NOTEBOOK = "02_verify_gpu"


def test_the_notebook_has_the_three_exercises_each_calling_its_check():
    tasks = task_cells(NOTEBOOK)
    assert set(tasks) == {"Exercise 2.1", "Exercise 2.2", "Exercise 2.3"}
    assert 'course.check("2.1", answer)' in tasks["Exercise 2.1"]
    assert 'course.check("2.2", answer)' in tasks["Exercise 2.2"]
    assert 'course.check("2.3", answer)' in tasks["Exercise 2.3"]


# ----------------------------------------------------------------------------- Exercise 2.1


def test_the_gpu_code_solution_is_right():
    answer = solved(NOTEBOOK, "Exercise 2.1")["answer"]
    assert set(answer) == set(nb02.GPUS)
    assert nb02.check_gpu_code(answer).status == RIGHT


def test_the_kinds_follow_nvidia_s_rules_on_the_wheel_s_list():
    """The check's answers come from the doctor's rules, not a table: T4 7.5 runs sm_70, H100 the PTX."""
    assert [nb02.code_kind(cc) for cc in ("5.2", "6.1", "7.5", "8.6", "8.9", "9.0")] == [
        "none", "cubin", "cubin", "cubin", "cubin", "ptx"]
    assert nb02.code_kind("3.7", "2.21") == "none"


def test_a_wrong_kind_says_which_rule_to_apply():
    answer = {**solved(NOTEBOOK, "Exercise 2.1")["answer"], "Tesla T4": "ptx", "H100": "cubin"}
    result = nb02.check_gpu_code(answer)
    assert result.status == WRONG and len(result.messages) == 2
    t4, h100 = result.messages
    assert t4.startswith("Tesla T4 (7.5): look for an sm_ entry of the same major version")
    assert h100.startswith("H100 (9.0): no sm_ entry has its major version, but compute_90 PTX runs")


@pytest.mark.parametrize(("answer", "message"), [
    ({"Tesla T4": "cubin"}, "GeForce GTX 980 (5.2) has no answer."),
    ({**dict.fromkeys(nb02.GPUS, "cubin"), "H100": "binary"}, "H100: 'binary' is not one of"),
    ("cubin", "`answer` should be a dict"),
])
def test_an_incomplete_or_odd_answer_says_so(answer, message):
    result = nb02.check_gpu_code(answer)
    assert result.status == WRONG and any(message in m for m in result.messages), result.messages


def test_the_skeleton_dict_counts_as_not_answered():
    assert nb02.check_gpu_code(dict.fromkeys(nb02.GPUS)).status == EMPTY
    spelled = {gpu: kind.upper() + " " for gpu, kind in solved(NOTEBOOK, "Exercise 2.1")["answer"].items()}
    assert nb02.check_gpu_code(spelled).ok  # case and spaces do not matter


# ----------------------------------------------------------------------------- Exercise 2.2


def test_the_timing_solution_is_right_and_each_wrong_choice_is_explained():
    assert nb02.check_timing(solved(NOTEBOOK, "Exercise 2.2")["answer"]).ok
    for letter, reason in (("a", "far more than any GPU can do"), ("c", "never calls .numpy()")):
        result = nb02.check_timing(letter)
        assert result.status == WRONG and reason in result.messages[0]
    assert nb02.check_timing(" (B) ").ok
    assert nb02.check_timing("d").status == WRONG


# ----------------------------------------------------------------------------- Exercise 2.3


@pytest.mark.parametrize("answer", [
    "tf.config.experimental.enable_tensor_float_32_execution(False)",
    "tf.config.experimental.enable_tensor_float_32_execution(enabled=False)",
    "  tensorflow.config.experimental.enable_tensor_float_32_execution( False ) ",
])
def test_every_spelling_of_switching_tf32_off_is_right(answer):
    assert nb02.check_tf32_off(answer).ok


def test_the_tf32_solution_is_right_and_runs():
    import tensorflow as tf

    answer = solved(NOTEBOOK, "Exercise 2.3")["answer"]
    assert nb02.check_tf32_off(answer).ok
    try:
        eval(answer, {"tf": tf})  # noqa: S307 - the notebook's own solution: it is a real TensorFlow call
        assert tf.config.experimental.tensor_float_32_execution_enabled() is False
    finally:
        tf.config.experimental.enable_tensor_float_32_execution(True)


@pytest.mark.parametrize(("answer", "message"), [
    ("tf.config.experimental.enable_tensor_float_32_execution(True)", "True keeps TF32 on"),
    ("keras.mixed_precision.set_global_policy('float32')", "the policy \"float32\" still uses it"),
    ("enable_tensor_float_32_execution(False)", "write its whole name"),
    ("tf.config.experimental.enable_op_determinism()", "turns TensorFloat-32 execution on or off"),
    ("tf.config.experimental.enable_tensor_float_32_execution()", "one value, True or False"),
    ("tf.config.experimental.enable_tensor_float_32_execution(False", "Write one call"),
    (False, "Write one call"),
])
def test_a_wrong_line_says_what_to_look_at(answer, message):
    result = nb02.check_tf32_off(answer)
    assert result.status == WRONG and message in result.messages[0], result.messages
