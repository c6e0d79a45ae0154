"""Notebook 04's lesson file: parameters it cannot run with are refused at setup; in its exercise checks,
the notebook's own solutions are right, wrong answers say what to look at."""

from __future__ import annotations

import pytest

from course_utils.core.errors import ParameterError
from course_utils.lessons import EMPTY, RIGHT, WRONG, nb04
from course_utils.params import check_parameters

from .solutions import solved, task_cells

NOTEBOOK = "04_dense_noise_vs_zeros"
ONE, HELD = nb04.array_bytes() / 1e6, nb04.during_fit_bytes() / 1e6  # 752.64 MB, 1,881.6 MB


def test_the_notebook_has_both_exercises_each_calling_its_check():
    tasks = task_cells(NOTEBOOK)
    assert set(tasks) == {"Exercise 4.1", "Exercise 4.2"}
    assert 'course.check("4.1", answer)' in tasks["Exercise 4.1"]
    assert 'course.check("4.2", answer)' in tasks["Exercise 4.2"]


# ----------------------------------------------------------------------------- what its parameters need


@pytest.mark.parametrize(
    "parameters, message",
    [({"IMAGES": 5, "DATASET": "mnist"}, "at least 4,000"), ({"IMAGES": 1, "DATASET": "fashion-mnist"}, "at least 2")],
)
def test_too_few_images_for_its_checkpoint_are_refused_at_setup(parameters, message):
    with pytest.raises(ParameterError) as info:
        check_parameters(parameters, nb04.needs)
    assert "IMAGES = " in info.value.what and message in info.value.what + info.value.fix


def test_the_fewest_images_it_takes_are_accepted():
    nb04.needs({"IMAGES": 4000, "DATASET": "mnist"})
    nb04.needs({"IMAGES": 2, "DATASET": "fashion-mnist"})


# ----------------------------------------------------------------------------- Exercise 4.1


def test_the_memory_solution_is_right_and_its_numbers_are_the_arrays():
    import numpy as np

    answer = solved(NOTEBOOK, "Exercise 4.1")["answer"]
    assert nb04.check_memory(answer).status == RIGHT
    assert answer["float64_mb"] == pytest.approx(ONE) and answer["during_fit_mb"] == pytest.approx(HELD)
    # the sizes are what NumPy allocates: the book's recipe is float64, Keras's copy float32 (1,000 images here)
    book = np.concatenate([np.zeros((1000, 784), np.float32), np.random.random((1000, 784))], axis=1)
    assert book.dtype == np.float64 and book.nbytes == nb04.array_bytes(1000)
    assert book.astype("float32").nbytes == nb04.array_bytes(1000, 4)


@pytest.mark.parametrize("answer", [
    {"float64_mb": 752.6, "during_fit_mb": 1881.6, "fits": False},
    {"float64_mb": 753, "during_fit_mb": 1900, "fits": "no"},  # rounded, and a word for the decision
    {"float64_mb": ONE * 1e6 / 2**20, "during_fit_mb": HELD * 1e6 / 2**20, "fits": False},  # MiB
])
def test_every_correct_spelling_of_the_memory_answer_is_right(answer):
    assert nb04.check_memory(answer).ok


@pytest.mark.parametrize(("changes", "message"), [
    ({"float64_mb": ONE / 2}, "Each row holds 1,568 numbers"),
    ({"float64_mb": 2 * ONE}, "That is both arrays."),
    ({"float64_mb": ONE * 1e6}, "That is in bytes."),
    ({"float64_mb": 100}, "Multiply: images x 1,568 numbers x 8 bytes"),
    ({"float64_mb": "752"}, "`float64_mb` should be a number of MB"),
    ({"during_fit_mb": 2 * ONE}, "Add the float32 copy that `fit` makes"),
    ({"during_fit_mb": 1.5 * ONE}, "The post builds both arrays before its first `fit`"),
    ({"during_fit_mb": 3 * ONE}, "Keras's copy is float32"),
    ({"during_fit_mb": 5000}, "Add two float64 arrays and one float32 copy."),
    ({"fits": True}, "is more than 2 GB"),
    ({"fits": "maybe"}, "`fits` should be True or False"),
])
def test_a_wrong_memory_answer_says_what_to_look_at(changes, message):
    answer = {**solved(NOTEBOOK, "Exercise 4.1")["answer"], **changes}
    result = nb04.check_memory(answer)
    assert result.status == WRONG and len(result.messages) == 1 and message in result.messages[0], result.messages


def test_an_empty_or_odd_memory_answer():
    assert nb04.check_memory(None).status == EMPTY
    assert nb04.check_memory(dict.fromkeys(("float64_mb", "during_fit_mb", "fits"))).status == EMPTY
    result = nb04.check_memory(752.6)
    assert result.status == WRONG and "`answer` should be a dict" in result.messages[0]
    partial = nb04.check_memory({"float64_mb": ONE})  # the other keys missing: named, never a crash
    assert partial.status == WRONG and len(partial.messages) == 2


# ----------------------------------------------------------------------------- Exercise 4.2


def test_the_speed_solution_is_right_and_counts_the_model_s_weights():
    answer = solved(NOTEBOOK, "Exercise 4.2")["answer"]
    result = nb04.check_gpu_speed(answer)
    assert result.status == RIGHT and "0.62 GFLOP takes a T4 about 0.08 ms" in result.messages[0]
    weights = 1568 * 512 + 512 * 10
    assert weights == 808_458 - 512 - 10, "the weights of the notebook's model, without its biases"
    assert answer["gflop_per_step"] == pytest.approx(nb04.step_gflop()) == pytest.approx(0.6204, abs=1e-4)


@pytest.mark.parametrize("answer", [
    {"gflop_per_step": 0.62, "prediction": "b"},
    {"gflop_per_step": 0.6, "prediction": " (B) "},
    {"gflop_per_step": 0.621, "prediction": "b"},  # the biases counted too: the same to two digits
])
def test_every_correct_spelling_of_the_speed_answer_is_right(answer):
    assert nb04.check_gpu_speed(answer).ok


@pytest.mark.parametrize(("changes", "message"), [
    ({"gflop_per_step": 0.207}, "That is the forward pass only."),
    ({"gflop_per_step": 0.31}, "A multiply-add is 2 FLOP."),
    ({"gflop_per_step": 0.103}, "with a multiply-add counted once"),
    ({"gflop_per_step": 620}, "That is in MFLOP."),
    ({"gflop_per_step": 6.2e8}, "That is in FLOP."),
    ({"gflop_per_step": 0.00485}, "That is one image."),
    ({"gflop_per_step": 2.0}, "Count the weights"),
    ({"gflop_per_step": None}, "should be a number of GFLOP"),
    ({"prediction": "a"}, "the arithmetic of a step takes under 0.1 ms"),
    ({"prediction": "c"}, "makes the gain small, not negative"),
    ({"prediction": "d"}, "`prediction` should be \"a\", \"b\" or \"c\""),
])
def test_a_wrong_speed_answer_says_what_to_look_at(changes, message):
    answer = {**solved(NOTEBOOK, "Exercise 4.2")["answer"], **changes}
    result = nb04.check_gpu_speed(answer)
    assert result.status == WRONG and len(result.messages) == 1 and message in result.messages[0], result.messages


def test_an_empty_or_odd_speed_answer():
    assert nb04.check_gpu_speed(None).status == EMPTY
    assert nb04.check_gpu_speed({"gflop_per_step": None, "prediction": None}).status == EMPTY
    result = nb04.check_gpu_speed("b")
    assert result.status == WRONG and "`answer` should be a dict" in result.messages[0]
