"""Notebook 03's exercise checks (course_utils.exercises.nb03): solutions right, wrong answers explained.

Exercise 3.1's check runs the student's code in a new Python process (stand-in GPUs here, where there is
no GPU); Exercise 3.2's truth is checked against what TensorFlow does, in the same way.
"""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from course_utils import fresh_process
from course_utils.errors import ChildError
from course_utils.exercises import EMPTY, RIGHT, WRONG, nb03

from .solutions import solved, task_cells

NOTEBOOK = "03_memory"


def test_the_notebook_has_both_exercises_each_calling_its_check():
    tasks = task_cells(NOTEBOOK)
    assert set(tasks) == {"Exercise 3.1", "Exercise 3.2"}
    assert "nb03.check_growth_code(answer)" in tasks["Exercise 3.1"]
    assert "nb03.check_growth_and_limit(answer)" in tasks["Exercise 3.2"]
    assert "answer = None" in tasks["Exercise 3.1"]


def test_the_task_cells_run_unattended_and_say_not_answered(capsys):
    namespace: dict = {}  # one kernel: the cells run in order, as in the notebook
    for source in task_cells(NOTEBOOK).values():
        exec(source, namespace)  # noqa: S102 - the notebook's own task cell, answers empty
    out = capsys.readouterr().out
    assert out.count("not answered yet") == 2 and "wrong" not in out


# ----------------------------------------------------------------------------- Exercise 3.1


def test_the_growth_solution_is_right_in_a_new_process(capsys):
    result = nb03.check_growth_code(solved(NOTEBOOK, "Exercise 3.1")["answer"])
    assert result.status == RIGHT, result
    assert "GPU:0, GPU:1" in result.messages[0]  # the stand-in GPUs, both with growth on
    assert capsys.readouterr().out.startswith("✅ Exercise 3.1: right")


@pytest.mark.parametrize(("code", "message"), [
    ("import tensorflow as tf\nx = tf.constant(1.0)\nfor gpu in tf.config.list_physical_devices('GPU'):\n"
     "    tf.config.experimental.set_memory_growth(gpu, True)\n",
     "Line 2: tf.constant(...) runs before set_memory_growth"),
    ("import tensorflow as tf\nfor gpu in tf.config.list_logical_devices('GPU'):\n"
     "    tf.config.experimental.set_memory_growth(gpu, True)\n",
     "Line 2: tf.config.list_logical_devices() starts TensorFlow's runtime"),
    ("import tensorflow as tf\ngpus = tf.config.list_physical_devices('GPU')\n"
     "tf.config.experimental.set_memory_growth(gpus[0], True)\n",
     "Line 3: set growth for every GPU, in a loop"),
    ("import tensorflow as tf\nfor gpu in tf.config.list_physical_devices('GPU'):\n"
     "    tf.config.experimental.set_memory_growth(gpu, False)\n",
     "Line 3: pass True as the second argument"),
    ("import tensorflow as tf\nprint(tf.config.list_physical_devices('GPU'))\n",
     "The code never calls tf.config.experimental.set_memory_growth(gpu, True)."),
    ("for gpu in gpus\n    set_memory_growth(gpu, True)\n", "Python cannot read line 1"),
    (42, "`answer` should be a string of Python code, not int."),
])
def test_growth_code_read_wrong_without_running_it(code, message):
    def never(*args, **kwargs):
        raise AssertionError("the code was run although reading it found the mistake")

    result = nb03.check_growth_code(code, run=never, show=False)
    assert result.status == WRONG and any(message in m for m in result.messages), result


def test_growth_code_over_every_device_fails_in_the_new_process():
    code = ("import tensorflow as tf\nfor device in tf.config.list_physical_devices():\n"
            "    tf.config.experimental.set_memory_growth(device, True)\n")
    result = nb03.check_growth_code(code, show=False)
    assert result.status == WRONG
    assert any("ValueError (line 3): Cannot set memory growth on non-GPU" in m for m in result.messages), result
    assert any('Loop over tf.config.list_physical_devices("GPU")' in m for m in result.messages)


def _fake_run(**fields):
    values = dict(error=None, gpus=["GPU:0", "GPU:1"], memory_growth={"GPU:0": True, "GPU:1": True},
                  gpu_options_error=None, growth_in_effect=True, stand_in_gpus=0)
    values.update(fields)
    return lambda code, **kwargs: SimpleNamespace(**values)


@pytest.mark.parametrize(("fields", "message"), [
    ({"growth_in_effect": False}, "Growth is set, but TensorFlow drops it"),
    ({"memory_growth": {"GPU:0": True, "GPU:1": False}}, "Memory growth is off on GPU:1."),
    ({"gpu_options_error": "ValueError: Memory growth cannot differ between GPU devices"},
     "TensorFlow would refuse to start: ValueError: Memory growth cannot differ"),
    ({"error": {"type": "RuntimeError", "message": "Physical devices cannot be modified after being initialized",
                "line": 4}}, "Something before set_memory_growth started TensorFlow's runtime"),
    ({"error": {"type": "NameError", "message": "name 'tf' is not defined", "line": 1}},
     "Start with `import tensorflow as tf`"),
])
def test_growth_code_judged_on_what_the_new_process_reports(fields, message):
    result = nb03.check_growth_code(solved(NOTEBOOK, "Exercise 3.1")["answer"], run=_fake_run(**fields), show=False)
    assert result.status == WRONG and any(message in m for m in result.messages), result


def test_growth_code_right_on_real_gpus_says_so():
    result = nb03.check_growth_code(solved(NOTEBOOK, "Exercise 3.1")["answer"], run=_fake_run(), show=False)
    assert result.ok and "TensorFlow reports memory growth on GPU:0, GPU:1" in result.messages[0]


def test_a_crashed_new_process_is_feedback_not_an_exception():
    def crashed(code, **kwargs):
        raise ChildError("The fresh TensorFlow process exited with status 1.", "Read its output.")

    result = nb03.check_growth_code(solved(NOTEBOOK, "Exercise 3.1")["answer"], run=crashed, show=False)
    assert result.status == WRONG and "did not finish" in result.messages[0]


@pytest.mark.parametrize("empty", [None, "", "   \n"])
def test_empty_growth_code_is_not_answered(empty):
    assert nb03.check_growth_code(empty, show=False).status == EMPTY


# ----------------------------------------------------------------------------- Exercise 3.2


@pytest.fixture(scope="module")
def both_orders() -> dict:
    """The two orders of growth and a limit, each in a new process, on a stand-in GPU (a real one if present)."""
    each = "import tensorflow as tf\nfor gpu in tf.config.list_physical_devices('GPU'):\n"
    limit = "    tf.config.set_logical_device_configuration(gpu, [tf.config.LogicalDeviceConfiguration(1024)])\n"
    growth = "    tf.config.experimental.set_memory_growth(gpu, True)\n"
    env = {"TF_FORCE_GPU_ALLOW_GROWTH": None}
    return {
        nb03.ORDER_KEYS[0]: fresh_process.run_code(each + limit + growth, stand_in_gpus=1, env=env),
        nb03.ORDER_KEYS[1]: fresh_process.run_code(each + growth + limit, stand_in_gpus=1, env=env),
    }


def test_the_truth_is_what_tensorflow_does(both_orders):
    first, second = both_orders[nb03.ORDER_KEYS[0]], both_orders[nb03.ORDER_KEYS[1]]
    assert first.error["type"] == nb03.TRUTH[nb03.ORDER_KEYS[0]] == "ValueError"
    assert "virtual devices configured" in first.error["message"]
    assert second.error is None and nb03.TRUTH[nb03.ORDER_KEYS[1]] == "no error"
    assert second.memory_growth == {"GPU:0": True}, "get_memory_growth still says True"
    assert second.logical_gpus_mb == {"GPU:0": [1024]}
    assert second.growth_in_effect is nb03.TRUTH[nb03.ORDER_KEYS[2]] is False


def test_the_prediction_solution_is_right(capsys):
    result = nb03.check_growth_and_limit(solved(NOTEBOOK, "Exercise 3.2")["answer"])
    assert result.status == RIGHT, result
    assert capsys.readouterr().out.startswith("✅ Exercise 3.2: right")


def test_spellings_of_the_choices_are_accepted():
    answer = {nb03.ORDER_KEYS[0]: "value error", nb03.ORDER_KEYS[1]: "No Error", nb03.ORDER_KEYS[2]: "false"}
    assert nb03.check_growth_and_limit(answer, show=False).ok


@pytest.mark.parametrize(("answer", "message"), [
    ({nb03.ORDER_KEYS[0]: "RuntimeError"}, "limit, then growth: not 'RuntimeError'. set_memory_growth first checks"),
    ({nb03.ORDER_KEYS[1]: "ValueError"}, "growth, then limit: not 'ValueError'. set_logical_device_configuration"),
    ({nb03.ORDER_KEYS[2]: True}, "growth is silently dropped"),
    ({nb03.ORDER_KEYS[2]: "maybe"}, "answer True or False, not 'maybe'"),
    ({nb03.ORDER_KEYS[0]: "TypeError"}, 'answer "ValueError", "RuntimeError" or "no error", not \'TypeError\''),
    ({nb03.ORDER_KEYS[0]: None}, "limit, then growth: no answer yet."),
])
def test_a_wrong_prediction_explains_what_tensorflow_does(answer, message):
    full = {nb03.ORDER_KEYS[0]: "ValueError", nb03.ORDER_KEYS[1]: "no error", nb03.ORDER_KEYS[2]: False, **answer}
    result = nb03.check_growth_and_limit(full, show=False)
    assert result.status == WRONG and any(message in m for m in result.messages), result


@pytest.mark.parametrize("empty", [None, {}, {key: None for key in nb03.ORDER_KEYS}])
def test_an_empty_prediction_is_not_answered(empty):
    assert nb03.check_growth_and_limit(empty, show=False).status == EMPTY


def test_a_prediction_that_is_not_the_dictionary_is_wrong():
    result = nb03.check_growth_and_limit("ValueError", show=False)
    assert result.status == WRONG and "should be the dictionary" in result.messages[0]
