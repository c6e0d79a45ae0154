"""Notebook 02's exercise checks, judged by tables written from each task's text: every answer the task allows is
right, every wrong one is wrong with a reason that is true for that answer."""

from __future__ import annotations

import pytest

from course_utils.lessons import RIGHT, WRONG, nb02

from .solutions import cells, judged, solved, source, task_cells

NOTEBOOK = "02_verify_gpu"


def markdown(notebook: str) -> list[str]:
    return [source(c) for c in cells(notebook) if c["cell_type"] == "markdown"]


def assert_the_task_names(gpus: dict[str, str], exercise: str) -> None:
    """The exercise's task cell names each GPU the check knows, and gives their compute capabilities."""
    task = task_cells(NOTEBOOK)[exercise]
    assert all(gpu in task for gpu in gpus)
    assert "compute capabilities: " + ", ".join(gpus.values()) in task, "the task gives the facts it needs"


# ----------------------------------------------------------------------------- Exercise 2.1

# Exercise 2.1's task: "Use the rules above and TF 2.21's list [sm_60, sm_70, sm_80, sm_89, compute_90]. For each GPU,
# decide: "cubin", "ptx" or "none"", for the five GPUs of its task cell, whose comment gives their compute
# capabilities (5.2, 6.1, 7.5, 8.6, 9.0). A cubin sm_XY runs on X.Y and every later X.z; compute_90 PTX on 9.0 and
# newer. So: GTX 980 none, GTX 1080 cubin (sm_60), T4 cubin (sm_70), RTX 3060 cubin (sm_80), H100 ptx.
SOLVED_2_1 = {"GeForce GTX 980": "none", "GeForce GTX 1080": "cubin", "Tesla T4": "cubin", "GeForce RTX 3060": "cubin",
              "H100": "ptx"}
ACCEPT_2_1 = [({gpu: kind.upper() + " " for gpu, kind in SOLVED_2_1.items()}, "the same words in capitals, spaced")]
REJECT_2_1 = [
    ({**SOLVED_2_1, "Tesla T4": "ptx"}, "Tesla T4 (7.5): look for an sm_ entry of the same major version"),  # sm_70
    ({**SOLVED_2_1, "H100": "cubin"}, "H100 (9.0): no sm_ entry has its major version, but compute_90 PTX runs"),
    ({**SOLVED_2_1, "GeForce GTX 980": "ptx"}, "GeForce GTX 980 (5.2): no sm_ entry has its major version, and the "
                                               "PTX is for 9.0 and newer"),
    ({**SOLVED_2_1, "GeForce GTX 980": None}, "GeForce GTX 980 (5.2) has no answer yet: replace its None"),
    ({**SOLVED_2_1, "H100": "binary"}, "H100: 'binary' is not one of"),
    ("cubin", "`answer` should be a dict"),
]


def test_the_gpu_code_solution_the_task_cell_and_the_rules_agree():
    assert solved(NOTEBOOK, "Exercise 2.1")["answer"] == SOLVED_2_1
    assert_the_task_names(nb02.GPUS, "Exercise 2.1")
    assert {gpu: nb02.code_kind(cc) for gpu, cc in nb02.GPUS.items()} == SOLVED_2_1  # the doctor's own rules
    assert [nb02.code_kind(cc) for cc in ("8.9", "3.7")] == ["cubin", "none"]


# ----------------------------------------------------------------------------- Exercise 2.2

# Exercise 2.2's task: a classmate's run of the timing cell on a GPU, MATMUL_SIZE = 4096: "Per product: CPU 820 ms;
# GPU 9.8 ms, and its copy 12 ms. Their program computes 100 such products and needs only their sum, in NumPy. Which
# plan is fastest? (a) the GPU, with .numpy() after each product; (b) the GPU, summing there, with one .numpy() at the
# end; (c) the CPU." (a) 100 x 21.8 ms = 2.2 s; (b) 100 x 9.8 + 12 ms = 1.0 s; (c) 100 x 820 ms = 82 s: only (b).
ACCEPT_2_2 = [("b", "one copy at the end: about 1.0 s")]  # its spellings: multiple_choice, test_feedback.py
REJECT_2_2 = [
    ("a", "A copy after each product costs 12 ms a hundred times: about 2.2 s"),
    ("c", "The CPU needs 820 ms for each product: about 82 s"),
]


@pytest.mark.parametrize(("answer", "why"), ACCEPT_2_2)
def test_exercise_2_2_accepts(answer, why, capsys):
    result = judged(nb02.check_timing, answer, capsys)
    assert result.status == RIGHT and "about 1.0 s" in result.messages[0], why


def test_the_timing_task_gives_the_numbers_the_check_computes_with():
    task = next(s for s in markdown(NOTEBOOK) if "### Exercise 2.2" in s)
    t = nb02.TIMING
    assert f"CPU {t['cpu_ms']:g} ms; GPU {t['gpu_ms']:g} ms, and its copy {t['copy_ms']:g} ms" in task
    assert f"computes {t['products']} such products" in task
    seconds = nb02.timing_seconds()
    assert min(seconds, key=seconds.get) == "b" and seconds["b"] < seconds["a"] < seconds["c"]


# ----------------------------------------------------------------------------- Exercise 2.3

# Exercise 2.3's task: "With TensorFlow's defaults, on which of these GPUs does a float32 product like ours fail
# np.allclose(gpu, cpu, rtol=1e-3, atol=1e-3)? For each GPU, decide: True (it fails) or False", for the five GPUs of
# its task cell (compute capabilities 6.1, 7.5, 8.0, 8.9, 9.0). The text above it: only GPUs of compute capability
# 8.0 and newer have TF32, and TF32 products fail np.allclose. So True from 8.0: the A100, RTX 4090 and H100.
SOLVED_2_3 = {"GeForce GTX 1080": False, "Tesla T4": False, "A100": True, "GeForce RTX 4090": True, "H100": True}
ACCEPT_2_3 = [({**SOLVED_2_3, "an extra GPU": True}, "a GPU the task does not ask about changes nothing")]
REJECT_2_3 = [
    ({**SOLVED_2_3, "Tesla T4": True}, "Tesla T4 (7.5): TF32 came with compute capability 8.0"),  # Tensor Cores only
    ({**SOLVED_2_3, "A100": False}, "A100 (8.0): from compute capability 8.0, TensorFlow multiplies"),
    ({**SOLVED_2_3, "H100": "True"}, "H100: 'True' is not True or False (without quotes)"),
    ({**SOLVED_2_3, "A100": None}, "A100 (8.0) has no answer yet"),
    (True, "`answer` should be a dict"),
]


@pytest.mark.parametrize(("check", "answer", "why"), [(nb02.check_gpu_code, *r) for r in ACCEPT_2_1]
                         + [(nb02.check_tf32_gpus, *r) for r in ACCEPT_2_3])
def test_exercises_2_1_and_2_3_accept(check, answer, why, capsys):
    assert judged(check, answer, capsys).status == RIGHT, why


@pytest.mark.parametrize(("check", "answer", "reason"), [(nb02.check_gpu_code, *r) for r in REJECT_2_1]
                         + [(nb02.check_timing, *r) for r in REJECT_2_2]
                         + [(nb02.check_tf32_gpus, *r) for r in REJECT_2_3])
def test_exercises_2_1_to_2_3_reject(check, answer, reason, capsys):
    result = judged(check, answer, capsys)
    assert result.status == WRONG and any(reason in m for m in result.messages), result.messages


def test_the_tf32_solution_the_task_cell_and_the_rule_agree():
    assert solved(NOTEBOOK, "Exercise 2.3")["answer"] == SOLVED_2_3
    assert_the_task_names(nb02.TF32_GPUS, "Exercise 2.3")
    assert {gpu: nb02.uses_tf32(cc) for gpu, cc in nb02.TF32_GPUS.items()} == SOLVED_2_3
    assert [nb02.uses_tf32(cc) for cc in ("7.9", "8.0", "10.0", "12.0")] == [False, True, True, True]
