"""Notebook 06's lesson file: parameters it cannot run with are refused at setup; in its exercise checks,
the notebook's own solutions are right, wrong answers say what to look at."""

from __future__ import annotations

import math

import pytest

from course_utils.core.errors import ParameterError
from course_utils.lessons import EMPTY, RIGHT, WRONG, nb06
from course_utils.params import apply_smoke, check_parameters, settle_smoke

from .solutions import declared_parameters, solved, task_cells

NOTEBOOK = "06_tensorboard"


def test_the_notebook_has_the_two_exercises_each_calling_its_check():
    tasks = task_cells(NOTEBOOK)
    assert set(tasks) == {"Exercise 6.1", "Exercise 6.2"}
    assert 'course.check("6.1", answer)' in tasks["Exercise 6.1"]
    assert 'course.check("6.2", answer)' in tasks["Exercise 6.2"]


# ----------------------------------------------------------------------------- what its parameters need


@pytest.mark.parametrize(
    "parameters, message",
    [
        ({"IMAGES": 5, "EPOCHS": 5, "BATCH_SIZE": 128, "PROFILE_BATCH": (10, 14)}, "IMAGES >= 322"),
        ({"IMAGES": 1, "EPOCHS": 5, "BATCH_SIZE": 128, "PROFILE_BATCH": None}, "at least 2"),
    ],
)
def test_too_few_images_for_what_it_profiles_are_refused_at_setup(parameters, message):
    with pytest.raises(ParameterError) as info:
        check_parameters(parameters, nb06.needs)
    assert "IMAGES = " in info.value.what and message in info.value.what + info.value.fix


def test_the_minimum_is_the_smallest_that_reaches_the_profiled_batch():
    nb06.needs({"IMAGES": 1000, "EPOCHS": 2, "BATCH_SIZE": 128, "PROFILE_BATCH": (10, 14)})
    for epochs, batch, stop in [(2, 128, 14), (5, 128, 14), (1, 32, 9), (3, 64, 10)]:
        with pytest.raises(ParameterError) as info:
            nb06.needs({"IMAGES": 2, "EPOCHS": epochs, "BATCH_SIZE": batch, "PROFILE_BATCH": (stop - 4, stop)})
        least = int(info.value.fix.split("IMAGES >= ")[1].split()[0].replace(",", ""))
        batches = [math.ceil(math.floor(n * (1.0 - 0.2)) / batch) * epochs for n in (least - 1, least)]
        assert batches[1] >= stop > batches[0]
        nb06.needs({"IMAGES": least, "EPOCHS": epochs, "BATCH_SIZE": batch, "PROFILE_BATCH": (stop - 4, stop)})


def test_a_smoke_cap_gives_way_to_what_the_notebook_needs():
    """`course run 06 --smoke -p EPOCHS 1`: the cap of 1,000 images leaves no step 10-14 to profile in one epoch."""
    parameters = declared_parameters(NOTEBOOK)
    namespace = {**parameters, "EPOCHS": 1}
    changes = apply_smoke(namespace, nb06.SMOKE, smoke=True)
    with pytest.raises(ParameterError, match="too few"):
        check_parameters(namespace, nb06.needs)  # what happened before: the cap alone broke the run
    settle_smoke(lambda: namespace, namespace, changes, nb06.needs)
    least = namespace["IMAGES"]
    assert nb06.SMOKE["IMAGES"] < least < 4000 and changes["IMAGES"] == (parameters["IMAGES"], least)
    check_parameters({**namespace, "IMAGES": least}, nb06.needs)
    with pytest.raises(ParameterError):
        check_parameters({**namespace, "IMAGES": least - 1}, nb06.needs)


def test_a_value_the_student_chose_that_is_too_few_still_fails_in_smoke_mode():
    namespace = {**declared_parameters(NOTEBOOK), "EPOCHS": 1, "IMAGES": 1500}
    changes = apply_smoke(namespace, nb06.SMOKE, smoke=True)
    with pytest.raises(ParameterError, match="IMAGES = 1,500 is too few"):
        settle_smoke(lambda: namespace, namespace, changes, nb06.needs)
    assert namespace["IMAGES"] == 1500 and "IMAGES" not in changes


# ----------------------------------------------------------------------------- Exercise 6.1


def test_the_profile_range_solution_is_right_and_passes_the_course_rules(capsys):
    from course_utils.tb_profile import check_profile_batch

    answer = solved(NOTEBOOK, "Exercise 6.1")["answer"]
    result = nb06.check_profile_range(answer)
    assert result.status == RIGHT, result
    start, stop = check_profile_batch(answer, total_batches=nb06.PROFILE_EPOCHS * nb06.BATCHES_PER_EPOCH)
    assert stop - start + 1 == nb06.PROFILE_STEPS and 21 <= start and stop <= 40, "5 batches of epoch 2"
    assert capsys.readouterr().out.startswith("✅ Exercise 6.1: right")


@pytest.mark.parametrize("answer", [(21, 25), (30, 34), (36, 40), [25, 29]])
def test_any_five_batches_of_epoch_2_are_right(answer):
    assert nb06.check_profile_range(answer).ok


@pytest.mark.parametrize(("answer", "message"), [
    ((20, 24), "Batch 20 is the last batch of epoch 1. Keras counts batches from 1, across epochs"),
    ((21, 26), "Keras counts both ends: (21, 26) profiles 6 batches, not 5."),
    ((1, 5), "the first batches are warm-up"),
    ((5, 9), "Batch 5 is in epoch 1. Epoch 2 is batches 21 to 40"),
    ((41, 45), "Batch 41 is in epoch 3."),
    ((38, 42), "Batch 42 is in epoch 3. Stop by batch 40"),
    ((58, 62), "ends at batch 62, but training runs only 60 batches"),
    ((21, 40), "profiles 20 batches"),
    ((25, 21), "ends before it starts"),
    ("21-25", "is not two whole numbers"),
    ((21.0, 25.0), "is not two whole numbers"),
])
def test_a_wrong_profile_range_says_what_is_wrong(answer, message):
    result = nb06.check_profile_range(answer)
    assert result.status == WRONG and any(message in m for m in result.messages), result


def test_an_empty_profile_range_is_not_answered_yet():
    assert nb06.check_profile_range(None).status == EMPTY
    assert nb06.check_profile_range(()).status == EMPTY


# ----------------------------------------------------------------------------- Exercise 6.2


def test_the_input_bound_solution_is_right(capsys):
    answer = solved(NOTEBOOK, "Exercise 6.2")["answer"]
    assert set(answer) == set(nb06.PROFILES)
    result = nb06.check_input_bound(answer)
    assert result.status == RIGHT, result
    assert capsys.readouterr().out.startswith("✅ Exercise 6.2: right")


def test_the_verdicts_follow_xprofs_limits_on_the_share_not_the_time():
    """A and C wait about as long; only the share of the step tells them apart (5% and 20%, XProf's limits)."""
    assert {run: nb06.verdict(wait / step) for run, (step, wait) in nb06.PROFILES.items()} == {
        "A": "highly", "B": "not", "C": "moderately"}
    assert [nb06.verdict(share) for share in (0.0, 0.049, 0.05, 0.199, 0.20, 1.0)] == [
        "not", "not", "moderately", "moderately", "highly", "highly"]
    (step_a, wait_a), (step_c, wait_c) = nb06.PROFILES["A"], nb06.PROFILES["C"]
    assert abs(wait_a - wait_c) < 1.0 and step_c > 10 * step_a


@pytest.mark.parametrize("answer", [
    {"A": "Highly input-bound", "B": "not input-bound", "C": "moderately input-bound"},
    {"A": " HIGHLY ", "B": "no", "C": "Moderately"},
    {"A": "highly", "B": "Not", "C": "moderately-bound", "D": "ignored"},
])
def test_every_spelling_of_the_right_verdicts_is_accepted(answer):
    assert nb06.check_input_bound(answer).ok


def test_a_wrong_verdict_shows_the_share_and_the_limits():
    result = nb06.check_input_bound({"A": "highly", "B": "not", "C": "highly"})
    assert result.status == WRONG and len(result.messages) == 1
    (message,) = result.messages
    assert message.startswith("C: 6.8 ms of a 110.0 ms step is 6% of the step.")
    assert "Below 5%" in message and "from 20% highly" in message


def test_judging_by_the_wait_alone_is_caught():
    """The mistake the exercise is about: A and C wait as long, so a student calls both highly input-bound."""
    result = nb06.check_input_bound({"A": "highly", "B": "not", "C": "highly"})
    assert not result.ok
    result = nb06.check_input_bound({"A": "moderately", "B": "not", "C": "moderately"})
    assert [m.split(":")[0] for m in result.messages] == ["A"]


@pytest.mark.parametrize(("answer", "message"), [
    ({"A": "highly", "B": "not"}, "Run C has no answer."),
    ({"A": "highly", "B": "not", "C": None}, "Run C has no answer."),
    ({"A": "very", "B": "not", "C": "moderately"}, "A: 'very' is not one of"),
    ({"A": True, "B": "not", "C": "moderately"}, "A: True is not one of"),
    ("highly", "`answer` should be a dict"),
    (["highly", "not", "moderately"], "`answer` should be a dict"),
])
def test_an_incomplete_or_odd_answer_says_so(answer, message):
    result = nb06.check_input_bound(answer)
    assert result.status == WRONG and any(message in m for m in result.messages), result


def test_an_empty_answer_is_not_answered_yet():
    assert nb06.check_input_bound(None).status == EMPTY
    assert nb06.check_input_bound({"A": None, "B": None, "C": None}).status == EMPTY
    assert nb06.check_input_bound({}).status == EMPTY
