"""Notebook 02's exercise checks, judged by tables written from each task's text: every answer the task allows is
right, every wrong one is wrong with a reason that is true for that answer."""

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


def judged(check, answer, capsys):
    result = check(answer)
    capsys.readouterr()
    return result


# ----------------------------------------------------------------------------- Exercise 2.1

# Exercise 2.1's task: "Use the rules above and TF 2.21's list [sm_60, sm_70, sm_80, sm_89, compute_90]. For each GPU,
# decide: "cubin", "ptx" or "none"", for the five GPUs of its task cell, whose comment gives their compute
# capabilities (5.2, 6.1, 7.5, 8.6, 9.0). A cubin sm_XY runs on X.Y and every later X.z; compute_90 PTX on 9.0 and
# newer. So: GTX 980 none, GTX 1080 cubin (sm_60), T4 cubin (sm_70), RTX 3060 cubin (sm_80), H100 ptx.
SOLVED_2_1 = {"GeForce GTX 980": "none", "GeForce GTX 1080": "cubin", "Tesla T4": "cubin", "GeForce RTX 3060": "cubin",
              "H100": "ptx"}
ACCEPT_2_1 = [
    (SOLVED_2_1, "the five kinds the rules give"),
    ({gpu: kind.upper() + " " for gpu, kind in SOLVED_2_1.items()}, "the same words in capitals, with a space"),
]
REJECT_2_1 = [
    ({**SOLVED_2_1, "Tesla T4": "ptx"}, "Tesla T4 (7.5): look for an sm_ entry of the same major version"),  # sm_70
    ({**SOLVED_2_1, "GeForce GTX 1080": "none"}, "GeForce GTX 1080 (6.1): look for an sm_ entry"),  # sm_60
    ({**SOLVED_2_1, "GeForce RTX 3060": "ptx"}, "GeForce RTX 3060 (8.6): look for an sm_ entry"),  # sm_80
    ({**SOLVED_2_1, "H100": "cubin"}, "H100 (9.0): no sm_ entry has its major version, but compute_90 PTX runs"),
    ({**SOLVED_2_1, "GeForce GTX 980": "ptx"}, "GeForce GTX 980 (5.2): no sm_ entry has its major version, and the "
                                               "PTX is for 9.0 and newer"),
    ({**SOLVED_2_1, "GeForce GTX 980": None}, "GeForce GTX 980 (5.2) has no answer yet: replace its None"),
    ({"Tesla T4": "cubin"}, "GeForce GTX 980 (5.2) has no answer yet"),
    ({**SOLVED_2_1, "H100": "binary"}, "H100: 'binary' is not one of"),
    ({**SOLVED_2_1, "GeForce GTX 1080": "sm_60"}, "GeForce GTX 1080: 'sm_60' is not one of"),
    ("cubin", "`answer` should be a dict"),
]


@pytest.mark.parametrize(("answer", "why"), ACCEPT_2_1)
def test_exercise_2_1_accepts(answer, why, capsys):
    assert judged(nb02.check_gpu_code, answer, capsys).status == RIGHT, why


@pytest.mark.parametrize(("answer", "reason"), REJECT_2_1)
def test_exercise_2_1_rejects(answer, reason, capsys):
    result = judged(nb02.check_gpu_code, answer, capsys)
    assert result.status == WRONG and any(reason in m for m in result.messages), result.messages


def test_the_gpu_code_solution_the_task_cell_and_the_rules_agree(capsys):
    assert solved(NOTEBOOK, "Exercise 2.1")["answer"] == SOLVED_2_1
    task = task_cells(NOTEBOOK)["Exercise 2.1"]
    assert all(gpu in task for gpu in nb02.GPUS)
    assert "compute capabilities: " + ", ".join(nb02.GPUS.values()) in task, "the task gives the facts it needs"
    assert {gpu: nb02.code_kind(cc) for gpu, cc in nb02.GPUS.items()} == SOLVED_2_1  # the doctor's own rules
    assert [nb02.code_kind(cc) for cc in ("8.9", "3.7")] == ["cubin", "none"]
    assert judged(nb02.check_gpu_code, dict.fromkeys(nb02.GPUS), capsys).status == EMPTY  # the skeleton


# ----------------------------------------------------------------------------- Exercise 2.2

# Exercise 2.2's task: a timing of a 4096 x 4096 float32 product on GPU:0, stopped right after matmul without a sync:
# "0.00005 s, so 2,700 TFLOP/s. What did they measure? (a) the product; (b) the time to queue the work for the GPU;
# (c) the product and the copy to main memory." Only (b): nothing waited for the GPU, and nothing was copied.
ACCEPT_2_2 = [("b", "the queueing: the clock stopped before the GPU finished"), (" (B) ", "the letter, as written")]
REJECT_2_2 = [
    ("a", "2,700 TFLOP/s is far more than any GPU can do"),
    ("c", "The code never calls .numpy(), so nothing was copied"),
    ("d", "'d' is not one of"),
]


@pytest.mark.parametrize(("answer", "why"), ACCEPT_2_2)
def test_exercise_2_2_accepts(answer, why, capsys):
    assert judged(nb02.check_timing, answer, capsys).status == RIGHT, why


@pytest.mark.parametrize(("answer", "reason"), REJECT_2_2)
def test_exercise_2_2_rejects(answer, reason, capsys):
    result = judged(nb02.check_timing, answer, capsys)
    assert result.status == WRONG and reason in result.messages[0], result.messages


def test_the_timing_solution_is_right_and_the_task_s_speed_is_its_own_arithmetic(capsys):
    assert judged(nb02.check_timing, solved(NOTEBOOK, "Exercise 2.2")["answer"], capsys).ok
    assert round(2 * 4096**3 / 0.00005 / 1e12, -2) == 2700  # TFLOP/s, as the task says


# ----------------------------------------------------------------------------- Exercise 2.3

# Exercise 2.3's task: "Your RTX 3060 (compute capability 8.6) gives products that differ from the CPU's in the third
# decimal. A test of your project needs full float32 precision. Write the one line of TensorFlow, as text, that you
# run before the products." That is tf.config.experimental.enable_tensor_float_32_execution with False, in any
# spelling Python and TensorFlow accept: the keyword, the tensorflow. or tf.compat names, spaces, a ';' or a comment,
# an import in front, and 0 (TensorFlow reads it as False: the runtime test below).
TF32 = "tf.config.experimental.enable_tensor_float_32_execution"
ACCEPT_2_3 = [
    (f"{TF32}(False)", "the solution"),
    (f"{TF32}(enabled=False)", "the argument by its name"),
    ("  tensorflow.config.experimental.enable_tensor_float_32_execution( False ) ", "after `import tensorflow`"),
    ("tf.compat.v1.config.experimental.enable_tensor_float_32_execution(False)", "the same function, v1 name"),
    (f"{TF32}(False);", "a trailing semicolon"),
    (f"{TF32}(False)  # full float32", "a comment"),
    (f"import tensorflow as tf; {TF32}(False)", "the import in front, on the same line"),
    (f"{TF32}(0)", "TensorFlow reads 0 as False: TF32 is off"),
    (f"{TF32}(enabled=0.0)", "TensorFlow reads 0.0 as False"),
]
REJECT_2_3 = [
    (f"{TF32}(True)", "True keeps TF32 on"),
    (f"{TF32}(1)", "TensorFlow reads 1 as True: it keeps TF32 on"),
    (f"{TF32}(-1)", "TensorFlow reads -1 as True"),
    (f"{TF32}('False')", "'False' is text: TensorFlow refuses it (TypeError)"),
    (f"{TF32}(enable=False)", "it has no argument enable"),
    (f"{TF32}()", "one value, True or False"),
    (f"{TF32}(None)", "one value, True or False"),  # None turns TF32 off too, but it says neither on nor off
    ("keras.mixed_precision.set_global_policy('float32')", "It does not switch TF32 off"),
    ("keras.config.set_floatx('float32')", "It does not switch TF32 off"),
    ("os.environ['NVIDIA_TF32_OVERRIDE'] = '0'", "The task asks for a line of TensorFlow"),
    ("enable_tensor_float_32_execution(False)", "write its whole name"),
    ("tf.config.enable_tensor_float_32_execution(False)", "write its whole name"),
    ("tf.config.experimental.enable_op_determinism()", "turns TensorFloat-32 execution on or off"),
    (f"{TF32}(False", "Write one call"),
    (TF32, "Write one call"),
    (f"{TF32}(False)\n{TF32}(True)", "Write one call"),
    (False, "Write one call"),
]


@pytest.mark.parametrize(("answer", "why"), ACCEPT_2_3)
def test_exercise_2_3_accepts(answer, why, capsys):
    assert judged(nb02.check_tf32_off, answer, capsys).status == RIGHT, why


@pytest.mark.parametrize(("answer", "reason"), REJECT_2_3)
def test_exercise_2_3_rejects(answer, reason, capsys):
    result = judged(nb02.check_tf32_off, answer, capsys)
    assert result.status == WRONG and reason in result.messages[0], result.messages


def test_what_tensorflow_does_with_each_tf32_answer():
    """Run the answers with TensorFlow: each accepted one turns TF32 off; each rejected call to the function leaves it
    on or raises - except None, which TensorFlow also reads as False (the check asks for False there)."""
    import tensorflow as tf

    assert all(eval(name, {"tf": tf, "tensorflow": tf}) is tf.config.experimental.enable_tensor_float_32_execution  # noqa: S307
               for name in nb02.TF32_FUNCTIONS)
    calls = [a for a, _ in ACCEPT_2_3] + [solved(NOTEBOOK, "Exercise 2.3")["answer"]]
    wrong = [a for a, _ in REJECT_2_3 if isinstance(a, str) and a.startswith(f"{TF32}(") and a.endswith(")")]
    try:
        for answer in calls + wrong:
            tf.config.experimental.enable_tensor_float_32_execution(True)
            try:
                exec(answer.strip(), {"tf": tf, "tensorflow": tf})  # noqa: S102 - the tables' own lines, as checked
            except TypeError:
                assert answer in wrong, answer
                continue
            off = tf.config.experimental.tensor_float_32_execution_enabled() is False
            assert off == (answer in calls or answer == f"{TF32}(None)"), answer
    finally:
        tf.config.experimental.enable_tensor_float_32_execution(True)
