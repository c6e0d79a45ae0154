"""Notebook 02's exercise checks: the notebook's own solutions are right, wrong answers say what is wrong."""

from __future__ import annotations

import pytest

from course_utils.exercises import EMPTY, RIGHT, WRONG, nb02

from .solutions import solutions, task_cells

NOTEBOOK = "02_verify_gpu"


@pytest.fixture(scope="module")
def tf():
    from course_utils.tf_setup import quiet_tensorflow

    return quiet_tensorflow()


def test_the_notebook_has_the_two_exercises_each_calling_its_check():
    tasks = task_cells(NOTEBOOK)
    assert set(tasks) == {"Exercise 2.1", "Exercise 2.2"}
    assert "nb02.check_op_device(answer)" in tasks["Exercise 2.1"]
    assert "nb02.check_gpu_check(answer)" in tasks["Exercise 2.2"]
    assert all("answer = None" in source for source in tasks.values())


# ----------------------------------------------------------------------------- Exercise 2.1


def test_the_device_solution_is_right(tf, capsys):
    namespace = {"tf": tf, "a": tf.ones((8, 8)), "b": tf.ones((8, 8))}  # section 5's a and b, smaller
    exec(solutions(NOTEBOOK)["Exercise 2.1"], namespace)  # noqa: S102 - the notebook's own solution code
    assert namespace["answer"].startswith("/job:localhost/")
    result = nb02.check_op_device(namespace["answer"])
    assert result.status == RIGHT, result
    assert capsys.readouterr().out.startswith("✅ Exercise 2.1: right")


def test_each_spelling_of_the_right_device_is_right(tf):
    ran = nb02.placed_without_scope()
    kind, index = ran.split(":")
    full = f"/job:localhost/replica:0/task:0/device:{ran}"
    for answer in (ran, f"/{ran}", f"/device:{ran}", ran.lower(), kind, full):
        assert nb02.check_op_device(answer, show=False).ok, answer
    assert index == "0"


def test_the_other_device_is_wrong_with_the_reason(tf):
    ran = nb02.placed_without_scope()
    other = "GPU:0" if ran.startswith("CPU") else "CPU:0"
    result = nb02.check_op_device(other, show=False)
    assert result.status == WRONG
    reason = ("TensorFlow sees no GPU here, so everything runs on the CPU" if ran.startswith("CPU")
              else "TensorFlow puts an op on the GPU when it sees one")
    assert result.messages[0].startswith(f"It ran on {ran}.") and reason in result.messages[0]


def test_the_check_computes_the_placement_itself(monkeypatch):
    """The right answer is the device the check's own product ran on, not a fixed string."""
    monkeypatch.setattr(nb02, "placed_without_scope", lambda: "GPU:0")
    assert nb02.check_op_device("GPU:0", show=False).ok
    wrong = nb02.check_op_device("CPU:0", show=False)
    assert wrong.status == WRONG and "TensorFlow puts an op on the GPU when it sees one" in wrong.messages[0]


@pytest.mark.parametrize(("answer", "message"), [
    ("banana", "'banana' is not a device name"),
    ("GPU:zero", "is not a device name"),
    (3, "`answer` is not text (3)"),
])
def test_an_answer_that_is_no_device_name_says_so(tf, answer, message):
    result = nb02.check_op_device(answer, show=False)
    assert result.status == WRONG and message in result.messages[0]


def test_a_tensor_instead_of_its_device_says_so(tf):
    result = nb02.check_op_device(tf.ones((2, 2)), show=False)
    assert result.status == WRONG and "`answer` is a tensor" in result.messages[0]


def test_an_empty_device_answer_is_not_answered_yet(capsys):
    assert nb02.check_op_device(None).status == EMPTY
    assert "✏️ Exercise 2.1: not answered yet" in capsys.readouterr().out


# ----------------------------------------------------------------------------- Exercise 2.2


def test_the_gpu_check_solution_is_right_and_runs_here(tf):
    namespace: dict = {}
    exec(solutions(NOTEBOOK)["Exercise 2.2"], namespace)  # noqa: S102
    result = nb02.check_gpu_check(namespace["answer"], show=False)
    assert result.status == RIGHT, result
    here = len(tf.config.list_physical_devices("GPU")) > 0
    assert f"On this machine it gives {here!r}." in result.messages[0]


@pytest.mark.parametrize("answer", [
    "tf.config.list_physical_devices('GPU')",
    "bool(tf.config.list_physical_devices(device_type='GPU'))",
    "len(tf.config.list_logical_devices('GPU')) >= 1",
])
def test_other_true_checks_are_right(tf, answer):
    assert nb02.check_gpu_check(answer, show=False).ok


@pytest.mark.parametrize(("answer", "message"), [
    ("tf.test.is_gpu_available()", "That is the old, deprecated check"),
    ("len(tf.config.list_physical_devices()) > 0", "it says yes (True). The list holds the CPU"),
    ("len(tf.config.list_physical_devices('GPU')) > 1", "On a machine with one GPU it says no (False)"),
    ("tf.config.list_physical_devices('GPU')[0]", "On a machine with no GPU it raised IndexError"),
    ("tf.test.is_built_with_cuda()", "says whether this TensorFlow was built with CUDA"),
    ("tf.test.gpu_device_name() != ''", "is a helper for TensorFlow's own tests"),
    ("tf.config.list_physical_devices('GPU'", "This is not one Python expression"),
    ("True", "Ask TensorFlow for its list of GPU devices"),
    (False, "`answer` is False, not text"),
])
def test_a_wrong_gpu_check_says_what_is_wrong(answer, message):
    result = nb02.check_gpu_check(answer, show=False)
    assert result.status == WRONG and message in result.messages[0], result


@pytest.mark.parametrize("answer", [None, "", "  "])
def test_an_empty_gpu_check_is_not_answered_yet(answer):
    assert nb02.check_gpu_check(answer, show=False).status == EMPTY
