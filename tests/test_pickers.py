"""Notebook 01's install picker: set the values, click the button, read what it shows."""

from __future__ import annotations

import html

import pytest

from course_utils.doctor.recommend import routes
from course_utils.pickers import PYTHONS, InstallPicker, render, text


def test_the_qa_post_machine_in_the_picker():
    picker = InstallPicker(platform="windows", python="3.10", driver="512.77")
    shown = picker.click()
    assert [r.tensorflow for r in shown] == ["tensorflow<2.11", "tensorflow[and-cuda]==2.21.*"]
    assert "conda install -c conda-forge cudatoolkit=11.2 cudnn=8.1.0" in picker.result.value
    assert "&quot;tensorflow&lt;2.11&quot;" in picker.result.value  # escaped, shown as text


def test_changing_values_and_clicking_again_follows_recommend():
    picker = InstallPicker()
    for platform in ("linux", "wsl2", "windows", "macos"):
        for python in ("3.9", "3.12", "3.14"):
            for driver in ("", "470.256.02", "535.113.01", "not a number"):
                picker.platform.value, picker.python.value, picker.driver.value = platform, python, driver
                shown = picker.click()
                expected = routes(platform, python, driver or None)
                assert [(r.tensorflow, r.commands) for r in shown] == [(r.tensorflow, r.commands) for r in expected]
                assert shown[0].commands[0].split()[0] in picker.result.value


def test_nothing_is_shown_before_the_click_and_the_box_holds_the_inputs():
    picker = InstallPicker()
    assert picker.result.value == "" and picker.recommendations == []
    assert picker.box.children[:4] == (picker.platform, picker.python, picker.driver, picker.button)
    assert tuple(picker.python.options) == PYTHONS


def test_a_failing_recommendation_is_shown_not_raised(monkeypatch):
    picker = InstallPicker()

    def broken(*args, **kwargs):
        raise ValueError("table missing")

    monkeypatch.setattr("course_utils.pickers.routes", broken)
    assert picker.click() == []
    assert "Could not recommend" in picker.result.value and "table missing" in picker.result.value


def test_render_and_text_show_every_command():
    recs = routes("windows", "3.10", "512.77")
    assert all(cmd.split()[0] in render(recs) for r in recs for cmd in r.commands)
    assert text(recs).startswith("Install - native Windows: tensorflow<2.11")


def test_notes_are_shown_as_their_text_with_their_code():
    picker = InstallPicker(platform="linux", python="3.8", driver="418.181.07")
    shown = picker.click()
    assert {"python-limits-tensorflow", "system-cuda-needed", "driver-too-old"} <= set(shown[0].note_codes())
    for rec in shown:
        for note in rec.notes:
            assert f'<li data-code="{note.code}">{html.escape(note.text)}</li>' in picker.result.value
            assert f"note: {note.text}" in text(shown)
    assert "Note(" not in picker.result.value + text(shown)  # the text, not the object's repr


def test_unknown_platform_value_is_rejected_by_the_dropdown():
    with pytest.raises(Exception):  # noqa: B017 - traitlets raises its own TraitError
        InstallPicker(platform="beos")


def test_macos_routes_are_titled_and_python_3_13_shows_no_metal_install():
    picker = InstallPicker(platform="macos", python="3.12")
    shown = picker.click()
    assert [r.route for r in shown] == [None, "Apple silicon, Metal GPU", "Intel Mac"]
    assert "macOS (Apple silicon, Metal GPU): <code>tensorflow==2.18.*</code>" in picker.result.value
    picker.python.value = "3.13"
    shown = picker.click()
    assert [r.route for r in shown] == [None, "Intel Mac"]
    assert "pip install &quot;tensorflow-metal" not in picker.result.value


def test_old_tensorflow_lines_show_the_numpy_pin_in_the_picker():
    picker = InstallPicker(platform="windows", python="3.10", driver="512.77")
    picker.click()
    assert "&quot;tensorflow&lt;2.11&quot; &quot;numpy&lt;2&quot;" in picker.result.value
    assert 'data-code="keras-2-only"' in picker.result.value
