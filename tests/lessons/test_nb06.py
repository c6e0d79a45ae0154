"""Notebook 06's lesson file: parameters it cannot run with are refused at setup; in its exercise checks,
the notebook's own solutions are right, wrong answers say what to look at."""

from __future__ import annotations

import math

import numpy as np
import pytest

from course_utils.core.errors import ParameterError
from course_utils.lessons import RIGHT, WRONG, nb06
from course_utils.params import apply_smoke, check_parameters, settle_smoke

from .solutions import declared_parameters

NOTEBOOK = "06_tensorboard"


# ----------------------------------------------------------------------------- what its parameters need


def test_the_minimum_is_the_smallest_that_reaches_the_profiled_batch():
    """The least IMAGES its error gives (IMAGES >= N) reaches the last profiled batch; one fewer does not."""
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

# Exercise 6.1's task: "Your own run trains for 3 epochs of 20 batches each. [...] So you profile 5 steps of the
# second epoch. Write `profile_batch` as `answer = (start, stop)`." Section 3: "Keras counts batches from 1, across
# epochs, and both ends count". Every answer it allows: 5 batches, both ends counted, inside batches 21 to 40, in any
# form the callback reads as that range.
ACCEPT_6_1 = [
    ((21, 25), "the first 5 batches of epoch 2, which is batches 21 to 40"),
    ((36, 40), "the last 5 batches of epoch 2"),
    ([25, 29], "a list: the callback takes a list of two ints as well as a tuple"),
    ("21,25", "the callback also takes the text 'start,stop' (Keras 3 splits it at the comma)"),
    ((np.int64(22), np.int64(26)), "NumPy ints: the callback compares them with its batch count like ints"),
]
REJECT_6_1 = [
    ((20, 24), "Batch 20 is the last batch of epoch 1. Keras counts batches from 1, across epochs"),  # counted from 0
    ((0, 4), "Keras counts batches from 1, across epochs: there is no batch 0. Epoch 2 is batches 21 to 40."),
    ((1, 5), "the first batches are warm-up"),  # counted from 1 inside the epoch
    ((1, 5), "Batch 1 is in epoch 1. Epoch 2 is batches 21 to 40"),
    ((21, 26), "Keras counts both ends: (21, 26) profiles 6 batches, not 5."),  # stop = start + 5
    ((21, 24), "(21, 24) profiles 4 batches (both ends count), not 5."),
    ((37, 41), "Batch 41 is in epoch 3. Stop by batch 40, the last batch of epoch 2."),
    ((41, 45), "Batch 41 is in epoch 3. Epoch 2 is batches 21 to 40"),
    ((58, 62), "ends at batch 62, but training runs only 60 batches"),
    ((21, 40), "profiles 20 batches"),  # the whole epoch, not 5 steps
    ((25, 21), "ends before it starts"),
    ((21, 25.0), "Batch numbers are ints: the callback takes \"a tuple of integers\" (with the stop a float, it "
                 "fails). Write (21, 25), not (21, 25.0)."),
    ((21.5, 25), "is not two whole numbers"),
    ((True, 5), "is not two whole numbers"),
    ("21-25", "`answer` = '21-25' is not two whole numbers."),  # text the callback cannot read either
    ("(21, 25)", "is not two whole numbers"),
]


def test_the_callback_reads_every_accepted_range_as_5_batches_of_epoch_2(tmp_path):
    """What the check accepts, Keras's TensorBoard callback takes, and profiles 5 batches of epoch 2 with."""
    keras = pytest.importorskip("keras")
    for answer, _why in ACCEPT_6_1:
        callback = keras.callbacks.TensorBoard(log_dir=str(tmp_path), profile_batch=answer)
        start, stop = callback._start_batch, callback._stop_batch  # what it compares its batch count with
        assert (stop - start + 1, 21 <= start, stop <= 40) == (nb06.PROFILE_STEPS, True, True), answer


# ----------------------------------------------------------------------------- Exercise 6.2

# Exercise 6.2's task: three runs, "the median step, and the part of it spent waiting for input"; "For each run,
# decide: "highly", "moderately" or "not" input-bound." Section 4: "Below 5%, a run is *not* input-bound. From
# 20%, it is *highly* input-bound. In between, it is *moderately* input-bound." A waits 80% of its step, B 1.6%, C 6%.
# Every answer it allows: those verdicts, in the task's words, in section 4's words, or in the same words spelled
# otherwise.
ACCEPT_6_2 = [
    ({"A": "highly", "B": "not", "C": "moderately"}, "the task's words"),
    ({"A": "Highly input-bound", "B": "not_input_bound", "C": " moderately input-bound "},
     "section 4's words, in any case, joined any way"),
    ({"A": "High", "B": "no", "C": "moderate"}, "the adjective, and 'no' for 'not'"),
    ({"A": "highly", "B": "none", "C": "moderately", "D": "highly"}, "'none'; a run the task does not have"),
]
REJECT_6_2 = [
    ({"A": "highly", "B": "not", "C": "not"}, "C: 6.8 ms of a 110 ms step is 6.2% of the step. Below 5% a run "
                                              "is not input-bound, from 20% highly, in between moderately."),
    ({"A": "highly", "B": "not"}, "Run C has no answer."),
    ({"A": "very", "B": "not", "C": "moderately"}, "A: 'very' is not one of \"highly\", \"moderately\", \"not\"."),
    ({"A": True, "B": "not", "C": "moderately"}, "A: True is not one of"),
    ("highly", "`answer` should be a dict"),
]


@pytest.mark.parametrize(("check", "answer", "why"), [(nb06.check_profile_range, *r) for r in ACCEPT_6_1]
                         + [(nb06.check_input_bound, *r) for r in ACCEPT_6_2])
def test_every_answer_the_task_allows_is_right(check, answer, why):
    result = check(answer)
    assert result.status == RIGHT, (why, result)


@pytest.mark.parametrize(("check", "answer", "message"), [(nb06.check_profile_range, *r) for r in REJECT_6_1]
                         + [(nb06.check_input_bound, *r) for r in REJECT_6_2])
def test_a_wrong_answer_says_what_is_wrong(check, answer, message):
    result = check(answer)
    assert result.status == WRONG and any(message in m for m in result.messages), result


def test_a_wrong_verdict_names_only_the_runs_answered_wrongly():
    result = nb06.check_input_bound({"A": "moderately", "B": "not", "C": "moderately"})
    assert [m.split(":")[0] for m in result.messages] == ["A"]


def test_the_verdicts_follow_xprofs_limits_on_the_share_not_the_time():
    """A and C wait about as long; only the share of the step tells them apart (5% and 20%, XProf's limits)."""
    assert {run: nb06.verdict(wait / step) for run, (step, wait) in nb06.PROFILES.items()} == {
        "A": "highly", "B": "not", "C": "moderately"}
    (step_a, wait_a), (step_c, wait_c) = nb06.PROFILES["A"], nb06.PROFILES["C"]
    assert abs(wait_a - wait_c) < 1.0 and step_c > 10 * step_a


@pytest.mark.parametrize(("step", "waiting", "right", "wrong"), [
    (100.0, 4.9, "not", "moderately"),
    (100.0, 5.0, "moderately", "not"),  # "Below 5%" not: 5% itself is moderately
    (7.0, 0.35, "moderately", "not"),  # 5% too, though 0.35 / 7.0 is a hair under 0.05 in floating point
    (100.0, 19.9, "moderately", "highly"),
    (100.0, 20.0, "highly", "moderately"),  # "From 20%" highly
    (9.5, 1.9, "highly", "moderately"),  # 20% too, a hair under 0.2 in floating point
])
def test_the_check_puts_the_limits_where_section_4_puts_them(monkeypatch, step, waiting, right, wrong):
    monkeypatch.setattr(nb06, "PROFILES", {"X": (step, waiting)})
    assert nb06.check_input_bound({"X": right}).ok
    result = nb06.check_input_bound({"X": wrong})
    assert result.status == WRONG and f"is {100 * waiting / step:.1f}% of the step" in result.messages[0], result
