"""Chinese plot labels: course_utils.core.plot_fonts picks an installed Chinese font, or warns what to install.

The rendering checks draw with matplotlib's Agg backend (what the notebooks' inline plots use) and
compare pixels: DejaVu Sans draws every Chinese character as the same empty box, a Chinese font
draws each one differently. CI installs Debian's fonts-wqy-microhei (.ci/run); without any Chinese
font these tests are skipped locally and fail in CI.
"""

from __future__ import annotations

import io
import re
import warnings

import matplotlib
import numpy as np
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


def render(text: str, **text_options) -> tuple[np.ndarray, list[str]]:
    """A small figure with ``text`` as its title, drawn to PNG; its pixels and matplotlib's warnings."""
    fig, ax = plt.subplots(figsize=(4, 1.5), dpi=80)
    ax.set_title(text, **text_options)
    ax.plot([-1, 1])
    buffer = io.BytesIO()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        fig.savefig(buffer, format="png")
    plt.close(fig)
    buffer.seek(0)
    return plt.imread(buffer), [str(w.message) for w in caught]


def glyph(char: str, family: list[str]) -> np.ndarray:
    """One character, large, alone in a figure: its pixels."""
    fig = plt.figure(figsize=(1, 1), dpi=60)
    fig.text(0.5, 0.5, char, family=family, size=40, ha="center", va="center")
    buffer = io.BytesIO()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # DejaVu Sans warns about the missing glyph: expected here
        fig.savefig(buffer, format="png")
    plt.close(fig)
    buffer.seek(0)
    return plt.imread(buffer)


def missing_glyphs(messages: list[str]) -> list[str]:
    return [m for m in messages if "missing from font" in m]


def test_with_a_chinese_font_a_chinese_title_renders_its_characters_not_boxes(chinese_font):
    assert plot_fonts.use_chinese_font() == chinese_font
    assert matplotlib.rcParams["font.family"] == ["DejaVu Sans", chinese_font], "Latin first, Chinese second"
    assert matplotlib.rcParams["axes.unicode_minus"] is False
    _, messages = render(TITLE)
    assert missing_glyphs(messages) == []
    # Two different characters: the same box in DejaVu Sans alone, two different shapes with the fallback.
    fallback = list(matplotlib.rcParams["font.family"])
    boxes = glyph("训", ["DejaVu Sans"]), glyph("练", ["DejaVu Sans"])
    drawn = glyph("训", fallback), glyph("练", fallback)
    assert np.array_equal(*boxes), "DejaVu Sans has no Chinese: both are its empty box"
    assert not np.array_equal(*drawn), "the Chinese font draws each character"
    assert not np.array_equal(boxes[0], drawn[0])
    ink = (drawn[0][..., :3] < 0.5).mean()
    assert 0.02 < ink < 0.6, f"a character's strokes, not an empty or a filled box ({ink:.1%} dark pixels)"


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


