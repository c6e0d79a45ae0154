"""The one DEVICE check: every place that takes a device choice gives the same answer and message."""

from __future__ import annotations

import pytest

from course_utils.core.errors import ParameterError
from course_utils.device import CHOICES, check_device


def test_choices_are_case_insensitive():
    assert check_device("Gpu") == "gpu"


@pytest.mark.parametrize("value", ["tpu", None])
def test_anything_else_is_a_parameter_error_naming_the_parameter(value):
    with pytest.raises(ParameterError) as info:
        check_device(value)
    assert info.value.what.startswith(f"DEVICE = {value!r}") and all(c in info.value.fix for c in CHOICES)


def test_choose_device_refuses_a_typo_with_the_same_message():
    from course_utils import device

    with pytest.raises(ParameterError) as checked:
        check_device("tpu")
    with pytest.raises(ParameterError) as from_notebook:
        device.choose_device("tpu")
    assert (from_notebook.value.what, from_notebook.value.fix) == (checked.value.what, checked.value.fix)
