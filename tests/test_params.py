"""The smoke switch and parameter checks (what each notebook needs of its own: tests/lessons/)."""

from __future__ import annotations

import pytest

from course_utils.core.errors import ParameterError
from course_utils.params import (
    apply_smoke,
    check_parameters,
    check_positive_int,
    needs_split,
    smoke_enabled,
    too_few,
    train_images,
)


@pytest.mark.parametrize("value, expected", [(" Yes", True), ("0", False), (None, False)])
def test_smoke_values(value, expected):
    assert smoke_enabled({} if value is None else {"COURSE_SMOKE": value}) is expected


def test_unknown_smoke_value_is_an_error():
    with pytest.raises(ParameterError) as info:
        smoke_enabled({"COURSE_SMOKE": "fast"})
    assert "COURSE_SMOKE='fast'" in info.value.what and "COURSE_SMOKE=1" in info.value.fix


def test_smoke_lowers_to_caps_and_never_raises_and_without_smoke_changes_nothing():
    ns = {"EPOCHS": 10, "IMAGES": None, "BATCH_SIZE": 32, "SMALL": 1}
    caps = {"EPOCHS": 2, "IMAGES": 500, "SMALL": 3}
    assert apply_smoke(ns, caps, smoke=False) == {} and ns["EPOCHS"] == 10
    changed = apply_smoke(ns, caps, smoke=True)
    assert ns == {"EPOCHS": 2, "IMAGES": 500, "BATCH_SIZE": 32, "SMALL": 1}
    assert changed == {"EPOCHS": (10, 2), "IMAGES": (None, 500)}


def test_caps_must_name_defined_parameters():
    with pytest.raises(ParameterError, match="EPOCH"):
        apply_smoke({"EPOCHS": 1}, {"EPOCH": 1}, smoke=True)


@pytest.mark.parametrize("value", [0, 2.5, True])
def test_positive_int_rejects(value):
    with pytest.raises(ParameterError, match="BATCH_SIZE"):
        check_positive_int("BATCH_SIZE", value)


def test_positive_int_accepts():
    check_positive_int("BATCH_SIZE", 1)
    check_positive_int("IMAGES", None, allow_none=True)


# --- what parameters' names promise, checked at setup ------------------------------------------------------


@pytest.mark.parametrize(
    "name, value, message",
    [
        ("LEARNING_RATE", float("nan"), "LEARNING_RATE = nan is not a finite number"),
        ("SIZES", [1.0, float("nan")], "SIZES = [1.0, nan] holds a number that is not finite"),
        ("LEARNING_RATE", 0, "LEARNING_RATE = 0 must be a number greater than 0"),
        ("TENSOR_MB", "64", "TENSOR_MB = '64' must be a number greater than 0"),
        ("EPOCHS", 0, "EPOCHS = 0 must be a positive integer"),
        ("BENCH_IMAGES", 0, "BENCH_IMAGES = 0 must be a positive integer (or None for all)"),
    ],
)
def test_values_their_names_rule_out_are_refused(name, value, message):
    with pytest.raises(ParameterError) as info:
        check_parameters({name: value})
    assert message in info.value.what and name in info.value.fix


def test_values_their_names_allow_pass():
    check_parameters({"IMAGES": None, "SEED": 0, "HISTOGRAM_FREQ": 0, "SCALE": -1.5, "PROFILE_BATCH": None,
                      "LEARNING_RATE": 1e-3, "EPOCHS": 1, "DEVICE": "auto", "LABEL": "x", "FLAG": True})


# --- smoke caps never turn a legal choice into an error (each notebook's own: tests/lessons/) ------------------


def needs_50(values) -> None:
    if values["IMAGES"] is not None and values["IMAGES"] < 50:
        raise too_few(values["IMAGES"], 50, "the test needs 50.")


def test_too_few_keeps_the_least_images_for_settle_smoke_and_asks_for_them():
    error = too_few(1_000, 1_500, "the test needs 1,500.")
    assert "at least 1,500" in error.what and error.least_images == 1_500
    assert "IMAGES" in error.fix and "1,500 or more" in error.fix


def test_needs_split_asks_for_one_image_to_train_on_and_one_to_validate():
    assert train_images(10) == 8
    needs_split(2)
    needs_split(None)
    with pytest.raises(ParameterError, match="at least 2") as info:
        needs_split(1)
    assert info.value.least_images == 2


def test_check_parameters_runs_the_lessons_needs_after_the_names_promises():
    check_parameters({"IMAGES": 50}, needs_50)
    with pytest.raises(ParameterError, match="too few"):
        check_parameters({"IMAGES": 49}, needs_50)
    with pytest.raises(ParameterError, match="positive integer"):  # the name's promise comes first
        check_parameters({"IMAGES": 0}, needs_50)
