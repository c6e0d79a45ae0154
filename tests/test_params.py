"""The smoke switch and parameter checks."""

from __future__ import annotations

import pytest

from course_utils.errors import ParameterError
from course_utils.params import apply_smoke, check_choice, check_positive_int, smoke_enabled


@pytest.mark.parametrize("value, expected", [("1", True), ("true", True), ("YES", True), ("0", False), ("", False)])
def test_smoke_values(value, expected):
    assert smoke_enabled({"COURSE_SMOKE": value}) is expected


def test_smoke_unset_is_off():
    assert smoke_enabled({}) is False


def test_unknown_smoke_value_is_an_error():
    with pytest.raises(ParameterError) as info:
        smoke_enabled({"COURSE_SMOKE": "fast"})
    assert "COURSE_SMOKE='fast'" in info.value.what and "COURSE_SMOKE=1" in info.value.fix


def test_smoke_lowers_to_caps_and_never_raises():
    ns = {"EPOCHS": 10, "IMAGES": None, "BATCH_SIZE": 32, "SMALL": 1}
    changed = apply_smoke(ns, {"EPOCHS": 2, "IMAGES": 500, "SMALL": 3}, smoke=True)
    assert ns == {"EPOCHS": 2, "IMAGES": 500, "BATCH_SIZE": 32, "SMALL": 1}
    assert changed == {"EPOCHS": (10, 2), "IMAGES": (None, 500)}


def test_no_smoke_changes_nothing():
    ns = {"EPOCHS": 10}
    assert apply_smoke(ns, {"EPOCHS": 1}, smoke=False) == {} and ns == {"EPOCHS": 10}


def test_caps_must_name_defined_parameters():
    with pytest.raises(ParameterError, match="EPOCH"):
        apply_smoke({"EPOCHS": 1}, {"EPOCH": 1}, smoke=True)


@pytest.mark.parametrize("value", [0, -3, 2.5, "10", True])
def test_positive_int_rejects(value):
    with pytest.raises(ParameterError, match="BATCH_SIZE"):
        check_positive_int("BATCH_SIZE", value)


def test_positive_int_accepts():
    check_positive_int("BATCH_SIZE", 128)
    check_positive_int("IMAGES", None, allow_none=True)


def test_choice():
    check_choice("DATASET", "mnist", ("mnist", "fashion-mnist"))
    with pytest.raises(ParameterError, match="'cifar'"):
        check_choice("DATASET", "cifar", ("mnist", "fashion-mnist"))
