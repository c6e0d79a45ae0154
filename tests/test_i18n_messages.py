"""The course's own messages in Chinese: errors, setup's lines, exercise feedback - in the language asked for, with
every field filled and the data (names, values, commands, paths) kept. The words are the catalogues' business."""

from __future__ import annotations

import re

import pytest

import course_utils
from course_utils.core import i18n, variables
from course_utils.core.errors import CheckpointError, ParameterError
from course_utils.lessons import EMPTY, WRONG, nb04, nb05
from course_utils.notebook import checkpoint
from course_utils.params import check_parameters, check_value

CJK = re.compile(r"[\u4e00-\u9fff]")


# what raises it -> (its class, what its `what` keeps, what its `fix` keeps): regular expressions; one per domain
# (every CourseError is shown by the same code)
ERRORS = {
    "parameter": (lambda: check_value("EPOCHS", 0), ParameterError, ["EPOCHS = 0"], ["-p EPOCHS"]),
    "images": (lambda: check_parameters({"IMAGES": 1500}, nb05.needs), ParameterError,  # a lesson's rule
               ["1,500", "2,000"], ["IMAGES"]),
}


@pytest.mark.parametrize("language", ["en", "zh-CN"])
@pytest.mark.parametrize("kind", list(ERRORS))
def test_an_error_speaks_the_language_asked_for_and_keeps_its_data(kind, language, monkeypatch):
    monkeypatch.setenv(variables.LANG, language)
    raise_it, cls, what, fix = ERRORS[kind]
    with pytest.raises(cls) as info:
        raise_it()
    err = info.value
    assert all(re.search(p, err.what) for p in what) and all(re.search(p, err.fix) for p in fix), (err.what, err.fix)
    assert "{" not in err.what + err.fix, "every field filled"
    first, second = str(err).split("\n")
    label = second.removesuffix(err.fix)
    assert first == err.what and second.endswith(err.fix) and label
    assert [bool(CJK.search(text)) for text in (err.what, err.fix, label)] == [language == "zh-CN"] * 3


def test_a_failed_checkpoint_is_chinese_and_names_the_failed_check(monkeypatch, capsys):
    monkeypatch.setenv(variables.LANG, "zh-CN")
    with pytest.raises(CheckpointError) as info:
        checkpoint({"损失下降了": False})
    assert "[FAILED] 损失下降了" in capsys.readouterr().out
    assert "损失下降了" in info.value.what and CJK.search(info.value.what.replace("损失下降了", ""))
    assert CJK.search(info.value.fix)


def test_setup_speaks_chinese_when_the_notebook_asks_for_it(monkeypatch, capsys):
    monkeypatch.setenv(variables.LANG, "en")  # restored after the test: setup(language=...) sets it for good
    monkeypatch.setenv("COURSE_SMOKE", "1")
    ns = {"EPOCHS": 10, "SEED": 3, "DEVICE": "cpu"}
    course = course_utils.setup(ns, "99_test", smoke={"EPOCHS": 1}, language="zh-CN")
    out = capsys.readouterr().out
    assert "/CPU:0" in out and "DEVICE='cpu'" in out and "keras.utils.set_random_seed(3)" in out
    assert "EPOCHS 10 -> 1" in out and str(course.recorder.path) in out
    assert all(CJK.search(line) for line in out.splitlines() if re.search(r"[A-Za-z]{4,} [a-z]{3,} [a-z]{3,}", line)
               and "keras." not in line), "no English sentence left"
    course.record(accuracy=0.5)
    said = capsys.readouterr().out
    assert "accuracy=0.5" in said and CJK.search(said)


@pytest.mark.parametrize("language", ["en", "zh-CN"])
def test_an_exercise_gives_its_feedback_in_the_language_asked_for(monkeypatch, capsys, language):
    monkeypatch.setenv(variables.LANG, language)
    result = nb04.check_memory({"float64_mb": 376.3, "during_fit_mb": 1881.6, "fits": False})
    lines = capsys.readouterr().out.splitlines()
    assert result.status == WRONG  # the status stays the constant the code compares
    assert lines[0].startswith("❌ ") and "4.1" in lines[0] and "`float64_mb` = 376.3" in lines[1]  # its fields
    assert [bool(CJK.search(line)) for line in lines[:2]] == [language == "zh-CN"] * 2
    empty = nb04.check_memory(None)
    assert empty.status == EMPTY and str(empty).startswith("✏️ ")
    assert bool(CJK.search(str(empty))) is (language == "zh-CN")


def test_a_table_lines_up_chinese_labels_by_terminal_columns():
    assert i18n.columns("显存") == 4 and i18n.columns("GPU") == 3
    assert i18n.padded("显存", 6) == "显存  " and i18n.padded("GPU", 6) == "GPU   "
    assert i18n.padded("a long label", 4) == "a long label"  # never cut
