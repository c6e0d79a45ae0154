"""Notebook 01's install picker: set the values, click the button, read what it shows."""

from __future__ import annotations

import html

import pytest

from course_utils.core.errors import ParameterError
from course_utils.doctor.recommend import in_order, routes
from course_utils.lessons.nb01.pickers import MARKERS, PYTHONS, InstallPicker, render, text, timeline


def test_the_qa_post_machine_in_the_picker():
    picker = InstallPicker(platform="windows", python="3.10", driver="512.77")
    shown = picker.click()
    assert [r.tensorflow for r in shown] == ["tensorflow[and-cuda]==2.21.*", "tensorflow<2.11"]  # WSL2 first
    assert picker.result.value.index("WSL2") < picker.result.value.index("native Windows")
    assert shown[1].mark() and html.escape(shown[1].mark_suffix()) in picker.result.value  # TF 2.10 has Keras 2
    assert "conda install -c conda-forge cudatoolkit=11.2 cudnn=8.1.0" in picker.result.value
    assert "&quot;tensorflow&lt;2.11&quot; &quot;numpy&lt;2&quot;" in picker.result.value  # escaped; its numpy pin
    assert 'data-code="keras-2-only"' in picker.result.value


def test_changing_values_and_clicking_again_follows_recommend():
    """The picker shows what the doctor's routes recommend (tests/doctor/ test the routes themselves)."""
    picker = InstallPicker()
    for platform, python, driver in (("linux", "3.12", "535.113.01"), ("macos", "3.9", "")):  # no driver: None
        picker.platform.value, picker.python.value, picker.driver.value = platform, python, driver
        shown = picker.click()
        expected = in_order(routes(platform, python, driver or None))
        assert [(r.tensorflow, r.commands) for r in shown] == [(r.tensorflow, r.commands) for r in expected]
        assert shown[0].commands[0].split()[0] in picker.result.value


def test_nothing_is_shown_before_the_click_and_a_failing_recommendation_is_shown_not_raised(monkeypatch):
    picker = InstallPicker()
    assert picker.result.value == "" and picker.recommendations == []
    assert picker.box.children[:4] == (picker.platform, picker.python, picker.driver, picker.button)
    assert tuple(picker.python.options) == PYTHONS

    def broken(*args, **kwargs):
        raise ValueError("table missing")

    monkeypatch.setattr("course_utils.lessons.nb01.pickers.routes", broken)
    assert picker.click() == []
    assert "Could not recommend" in picker.result.value and "table missing" in picker.result.value


def test_render_and_text_show_every_command_and_each_note_as_its_text_with_its_code():
    recs = routes("windows", "3.10", "512.77")
    assert all(cmd.split()[0] in render(recs) for r in recs for cmd in r.commands)
    assert text(recs).startswith("Install - native Windows: tensorflow<2.11")
    picker = InstallPicker(platform="linux", python="3.8", driver="418.181.07")
    shown = picker.click()
    assert {"python-limits-tensorflow", "system-cuda-needed", "driver-too-old"} <= set(shown[0].note_codes())
    for rec in shown:
        for note in rec.notes:
            assert f'<li data-code="{note.code}">{html.escape(note.text)}</li>' in picker.result.value
            assert f"note: {note.text}" in text(shown)
    assert "Note(" not in picker.result.value + text(shown)  # the text, not the object's repr


def test_an_unknown_platform_or_python_names_the_notebook_parameter():
    with pytest.raises(ParameterError, match="PLATFORM = 'beos' is not a platform") as caught:
        InstallPicker(platform="beos")
    assert "'linux', 'wsl2', 'windows', 'macos'" in caught.value.fix
    with pytest.raises(ParameterError, match="PYTHON = 3.1 is not one of the picker's Python versions") as caught:
        InstallPicker(python=3.1)  # the number 3.10, as Python reads it
    assert "written as text: '3.10'" in caught.value.fix


def test_the_timeline_draws_every_release_and_each_rule_change():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from course_utils.doctor.versions import load

    table = load()
    fig = timeline(table)
    top, bottom = fig.axes
    assert [t.get_text() for t in bottom.get_xticklabels()] == [b.minor for b in reversed(table.linux)]
    labels = {t.get_text() for t in top.texts}
    assert {label for _, label in MARKERS} <= labels and "native-Windows GPU builds (2.4-2.10)" in labels
    assert len(top.lines) == 2 + len(MARKERS)  # the CUDA and cuDNN steps, one dashed line per rule change
    plt.close(fig)


def test_macos_routes_are_titled_and_python_3_13_shows_no_metal_install():
    picker = InstallPicker(platform="macos", python="3.12")
    shown = picker.click()
    assert [r.route for r in shown] == [None, "Apple silicon, Metal GPU", "Intel Mac"]
    assert "macOS (Apple silicon, Metal GPU): <code>tensorflow==2.18.*</code>" in picker.result.value
    picker.python.value = "3.13"
    shown = picker.click()
    assert [r.route for r in shown] == [None, "Intel Mac"]
    assert "pip install &quot;tensorflow-metal" not in picker.result.value
