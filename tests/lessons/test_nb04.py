"""Notebook 04's exercise checks: every answer the task allows is right, wrong answers say what to look at."""

from __future__ import annotations

import pytest

from course_utils.lessons import RIGHT, WRONG, nb04

from .solutions import cell_source, cells, solved, source

NOTEBOOK = "04_dense_noise_vs_zeros"
ONE, HELD = nb04.array_bytes() / 1e6, nb04.during_fit_bytes() / 1e6  # 752.64 MB, 1,881.6 MB


# ----------------------------------------------------------------------------- Exercise 4.1
# Exercise 4.1's task: "You run the post's code on 60,000 images, in a session with 2 GB of memory. The post builds
# both float64 arrays before it trains. Its first `fit` then adds a float32 copy of the array it trains on. Compute,
# in MB (10⁶ bytes): `float64_mb`, one of the post's arrays; `during_fit_mb`, all this data during the first `fit`.
# Then decide `fits`: does it fit in 2 GB, beside what this process holds already (printed above)?" Section 1 says
# each image has 1,568 inputs and float64 takes 8 bytes. So: 752.64 MB, 1,881.6 MB, and False - the process printed
# several hundred MB with TensorFlow loaded (627 MB here), and 1,881.6 MB + that is more than 2 GB (2,000 MB, or
# 2,147 MB read as 2 GiB). Sizes rounded to 2 or 3 digits are right; a size in MiB is not: the task says MB.
ACCEPT_4_1 = [
    ({"float64_mb": 752.6, "during_fit_mb": 1881.6, "fits": False}, "rounded to one decimal, as the solution shows"),
    ({"float64_mb": 753, "during_fit_mb": 1882, "fits": "no"}, "rounded to whole MB; a word for the decision"),
    ({"float64_mb": 750, "during_fit_mb": 1900, "fits": "False"}, "rounded to 2 digits, as the solution's prose"),
    ({"float64_mb": ONE, "during_fit_mb": HELD + 0.48, "fits": False}, "the 60,000 labels (int64) added"),
    ({"float64_mb": ONE, "during_fit_mb": HELD + 47.04, "fits": False}, "the loaded uint8 images added too"),
]
REJECT_4_1 = [
    ({"float64_mb": ONE * 1e6 / 2**20}, "That is in MiB"),  # 717.8: the task asks for MB, 10**6 bytes
    ({"during_fit_mb": HELD * 1e6 / 2**20}, "That is in MiB"),  # 1,794.4
    ({"float64_mb": 718}, "That is in MiB"),
    ({"float64_mb": ONE / 2}, "Each row holds 1,568 numbers"),  # float32, or the 784 pixels alone in float64
    ({"float64_mb": 2 * ONE}, "That is both arrays."),
    ({"float64_mb": ONE * 1e6}, "That is in bytes."),
    ({"float64_mb": ONE * 1e3}, "That is in kB."),
    ({"float64_mb": ONE / 1e3}, "That is in GB."),
    ({"float64_mb": 800}, "Round less"),  # one digit: 6% off
    ({"float64_mb": 100}, "Multiply: images x 1,568 numbers x 8 bytes"),
    ({"float64_mb": "752"}, "`float64_mb` should be a number of MB"),
    ({"during_fit_mb": 2 * ONE}, "That is two float64 arrays."),  # the copy forgotten, or made float64 of one array
    ({"during_fit_mb": 1.5 * ONE}, "The post builds both arrays before its first `fit`"),
    ({"during_fit_mb": 3 * ONE}, "That is three float64 arrays."),  # a float64 copy, or float32 copies of both
    ({"during_fit_mb": 2000}, "Round less"),  # 1,881.6 rounded to one digit: 6% off
    ({"during_fit_mb": HELD * 1e6}, "That is in bytes."),
    ({"during_fit_mb": HELD / 1e3}, "That is in GB."),
    ({"during_fit_mb": HELD + 188.16}, "Add two float64 arrays and one float32 copy."),  # the float32 pixels added
    ({"during_fit_mb": 5000}, "Add two float64 arrays and one float32 copy."),
    ({"fits": True}, "is more than 2 GB"),
    ({"fits": "yes"}, "is more than 2 GB"),
    ({"fits": "maybe"}, "`fits` should be True or False"),
    ({"fits": 0}, "`fits` should be True or False"),
]


def test_the_memory_solution_s_numbers_are_the_arrays():
    import numpy as np

    answer = solved(NOTEBOOK, "Exercise 4.1")["answer"]
    assert answer["float64_mb"] == pytest.approx(ONE) and answer["during_fit_mb"] == pytest.approx(HELD)
    # the sizes are what NumPy allocates: the book's recipe is float64, Keras's copy float32 (1,000 images here)
    book = np.concatenate([np.zeros((1000, 784), np.float32), np.random.random((1000, 784))], axis=1)
    assert book.dtype == np.float64 and book.nbytes == nb04.array_bytes(1000)
    assert book.astype("float32").nbytes == nb04.array_bytes(1000, 4)


def test_the_memory_task_leaves_fits_to_the_student():
    """The measured 3.4 GB would answer `fits`: it comes in the solution, not before the task."""
    task = cell_source(NOTEBOOK, "read-cast")
    assert "Exercise 4.1" in task and "3.4 GB" not in task
    assert "3.4 GB" in next(s for s in map(source, cells(NOTEBOOK)) if "Solution to Exercise 4.1" in s)


def test_an_odd_memory_answer():
    result = nb04.check_memory(752.6)
    assert result.status == WRONG and "`answer` should be a dict" in result.messages[0]
    partial = nb04.check_memory({"float64_mb": ONE})  # the other keys missing: named, never a crash
    assert partial.status == WRONG and len(partial.messages) == 2


# ----------------------------------------------------------------------------- Exercise 4.2
# Exercise 4.2's task: "A multiply-add counts as 2 FLOP. The forward pass does one multiply-add per weight and image.
# The model has 1,568 x 512 + 512 x 10 weights. A training step costs about 3 times the forward pass ... A T4 GPU does
# about 8 TFLOP/s ... each step also has a fixed cost ... Compute `gflop_per_step` at batch 128. Then predict a step
# of this model on a T4: (a) about its arithmetic time, under 0.1 ms; (b) much longer than its arithmetic: the fixed
# cost sets the pace; (c) longer than on a CPU." So 0.62 GFLOP, "b". The task's "about" allows 10%: the biases
# counted, 0.6, or G read as 2**30 (the task does not say which). (a) ignores the fixed cost the task names; (c)
# ignores that a CPU needs milliseconds for 0.62 GFLOP.
ACCEPT_4_2 = [
    ({"gflop_per_step": 0.62, "prediction": "b"}, "the solution, rounded"),
    ({"gflop_per_step": 0.6, "prediction": " (B) "}, "one digit; the letter as the task prints it"),
    ({"gflop_per_step": 0.621, "prediction": "b)"}, "the biases counted too: the same to two digits"),
    ({"gflop_per_step": 0.578, "prediction": "B"}, "GFLOP read as 2**30 FLOP: 7% less"),
]
REJECT_4_2 = [
    ({"gflop_per_step": 0.207}, "That is the forward pass only."),
    ({"gflop_per_step": 0.31}, "A multiply-add is 2 FLOP."),
    ({"gflop_per_step": 0.414}, "3 times the forward pass"),  # forward + backward read as 2 passes
    ({"gflop_per_step": 0.103}, "with a multiply-add counted once"),
    ({"gflop_per_step": 620}, "That is in MFLOP."),
    ({"gflop_per_step": 6.2e8}, "That is in FLOP."),
    ({"gflop_per_step": 0.00485}, "That is one image."),
    ({"gflop_per_step": 2.0}, "Count the weights"),
    ({"gflop_per_step": None}, "should be a number of GFLOP"),
    ({"gflop_per_step": "0.62"}, "should be a number of GFLOP"),
    ({"prediction": "a"}, "the arithmetic of a step takes under 0.1 ms"),
    ({"prediction": "c"}, "not negative"),
    ({"prediction": "d"}, "`prediction` should be \"a\", \"b\" or \"c\""),
    ({"prediction": "(b) it takes much longer"}, "`prediction` should be \"a\", \"b\" or \"c\""),
]


def test_the_speed_solution_counts_the_model_s_weights():
    answer = solved(NOTEBOOK, "Exercise 4.2")["answer"]
    result = nb04.check_gpu_speed(answer)
    assert result.status == RIGHT and "0.62 GFLOP takes a T4 about 0.08 ms" in result.messages[0]
    weights = 1568 * 512 + 512 * 10
    assert weights == 808_458 - 512 - 10, "the weights of the notebook's model, without its biases"
    assert answer["gflop_per_step"] == pytest.approx(nb04.step_gflop()) == pytest.approx(0.6204, abs=1e-4)


def test_an_odd_speed_answer():
    result = nb04.check_gpu_speed("b")
    assert result.status == WRONG and "`answer` should be a dict" in result.messages[0]


@pytest.mark.parametrize(("check", "answer", "why"), [(nb04.check_memory, *r) for r in ACCEPT_4_1]
                         + [(nb04.check_gpu_speed, *r) for r in ACCEPT_4_2])
def test_every_answer_the_task_allows_is_right(check, answer, why):
    assert check(answer).status == RIGHT, why


@pytest.mark.parametrize(("exercise", "changes", "message"), [("4.1", *r) for r in REJECT_4_1]
                         + [("4.2", *r) for r in REJECT_4_2])
def test_a_wrong_answer_says_what_to_look_at(exercise, changes, message):
    answer = {**solved(NOTEBOOK, f"Exercise {exercise}")["answer"], **changes}
    result = nb04.CHECKS[exercise](answer)
    assert result.status == WRONG and len(result.messages) == 1 and message in result.messages[0], result.messages
