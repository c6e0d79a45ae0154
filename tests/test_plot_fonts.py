"""Chinese plot labels: course_utils.core.plot_fonts picks an installed Chinese font, or warns what to install.

That the Chinese notebooks' plots draw their characters with the font chosen is the hosted tier's check
(tests/tiers/test_course_run.py: no "Glyph ... missing from font" in any output; CI installs fonts-wqy-microhei).
"""

from __future__ import annotations

import re

import matplotlib
import pytest

import course_utils
from course_utils.core import plot_fonts


@pytest.mark.parametrize("language", ["en", "zh-CN"])
def test_without_a_chinese_font_one_warning_says_what_to_install_in_the_notebook_s_language(monkeypatch, language):
    monkeypatch.setenv("COURSE_LANG", language)
    before = list(matplotlib.rcParams["font.family"])
    with pytest.warns(UserWarning) as caught:
        assert plot_fonts.use_chinese_font(["No Such Chinese Font"]) is None
    (warning,) = [str(w.message) for w in caught]
    for needed in ("sudo apt-get install fonts-noto-cjk", "fonts-wqy-microhei", "No Such Chinese Font"):
        assert needed in warning, warning  # the commands, and the font looked for (the field is filled)
    assert bool(re.search(r"[\u4e00-\u9fff]", warning)) is (language == "zh-CN")
    assert matplotlib.rcParams["font.family"] == before, "nothing changed"


def test_the_chinese_setup_cell_sets_the_font_and_the_english_one_does_not(monkeypatch):
    chosen: list[str] = []
    monkeypatch.setattr("course_utils.notebook.use_chinese_font", lambda: chosen.append("called"))
    monkeypatch.setenv("COURSE_LANG", "en")  # restored after the test: setup sets it
    course_utils.setup({"DEVICE": "cpu"}, "99_test", language="en")
    assert chosen == []
    course_utils.setup({"DEVICE": "cpu"}, "99_test", language="zh-CN")
    assert chosen == ["called"]
