"""Chinese plot labels: course_utils.core.plot_fonts picks an installed Chinese font, or warns what to install.

The rendering check draws with matplotlib's Agg backend (what the notebooks' inline plots use): matplotlib warns
"Glyph ... missing from font(s)" for every character no font of the family list draws. CI installs Debian's
fonts-wqy-microhei (.ci/run); without any Chinese font these tests are skipped locally and fail in CI.
"""

from __future__ import annotations

import io
import re
import warnings

import matplotlib
import pytest

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402 - after choosing the backend

import course_utils  # noqa: E402
from course_utils.core import plot_fonts  # noqa: E402

from .conftest import IN_CI  # noqa: E402

TITLE = "训练损失与准确率 (loss -0.5)"


@pytest.fixture(autouse=True)
def _restore_rc_params():
    """Each test starts from matplotlib's defaults (an earlier test's Chinese setup may have added a font) and its
    rcParams changes are undone after it."""
    with matplotlib.rc_context():
        matplotlib.rcdefaults()
        matplotlib.use("Agg")
        yield


@pytest.fixture
def chinese_font() -> str:
    found = plot_fonts.find_chinese_font()
    if found is None:
        message = "no Chinese font installed: apt-get install fonts-wqy-microhei (CI installs it: .ci/run)"
        if IN_CI:
            pytest.fail(message)
        pytest.skip(message)
    return found


def missing_glyphs(text: str) -> list[str]:
    """Draw a small figure with ``text`` as its title to PNG: matplotlib's warnings of a glyph missing from the fonts."""
    fig, ax = plt.subplots(figsize=(4, 1.5), dpi=80)
    ax.set_title(text)
    ax.plot([-1, 1])
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        fig.savefig(io.BytesIO(), format="png")
    plt.close(fig)
    return [str(w.message) for w in caught if "missing from font" in str(w.message)]


def test_with_a_chinese_font_a_chinese_title_renders_its_characters_not_boxes(chinese_font):
    assert plot_fonts.use_chinese_font() == chinese_font
    assert matplotlib.rcParams["font.family"] == ["DejaVu Sans", chinese_font], "Latin first, Chinese second"
    assert matplotlib.rcParams["axes.unicode_minus"] is False
    assert missing_glyphs(TITLE) == [], "every character found a glyph, the minus sign too"
    matplotlib.rcdefaults()
    assert missing_glyphs(TITLE), "DejaVu Sans alone has no Chinese: the check can fail"


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


