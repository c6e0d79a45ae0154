"""The course's messages in Chinese: every marked message has a translation, compiled, with the same fields."""

from __future__ import annotations

import re
import string
import subprocess
import sys

import pytest

from course_utils import i18n
from course_utils.errors import ParameterError
from course_utils.notebook import checkpoint

from .conftest import ROOT

sys.path.insert(0, str(ROOT / "scripts"))
import messages  # noqa: E402 - scripts/messages.py, the tool that keeps the catalogues


def fields(text: str) -> set[str]:
    return {name for _, name, _, _ in string.Formatter().parse(text) if name is not None}


def test_every_message_has_a_compiled_translation():
    assert messages.problems() == [], "run python scripts/messages.py, then translate what it lists"


def test_a_message_missing_from_the_catalogue_is_found(monkeypatch):
    template = messages.extract()
    template["course"].add("A message nobody translated yet: {name}", locations=[("course_utils/x.py", 1)])
    monkeypatch.setattr(messages, "extract", lambda: template)
    assert any("A message nobody translated yet" in line for line in messages.problems())


def test_each_translation_keeps_the_fields_of_its_message():
    for domain in i18n.DOMAINS:
        for message in messages.load("zh_CN", domain):
            if message.id and message.string:
                assert fields(message.string) == fields(message.id), f"{domain}: {message.id!r}"


@pytest.mark.parametrize(("written", "meant"), [("zh", "zh-CN"), ("zh_CN", "zh-CN"), ("ZH-Hans", "zh-CN"),
                                               ("en", "en")])
def test_the_language_switch_accepts_the_usual_spellings(written, meant):
    assert i18n.check_language(written) == meant


def test_an_unknown_language_is_a_parameter_error_naming_the_choices():
    with pytest.raises(ParameterError, match="zh-CN"):
        i18n.check_language("fr")


def test_the_checkpoint_speaks_the_chosen_language(monkeypatch, capsys):
    monkeypatch.delenv(i18n.LANG_VARIABLE, raising=False)
    checkpoint({"loss went down": True})
    assert "Checkpoint passed: 1 of 1 checks." in capsys.readouterr().out
    monkeypatch.setenv(i18n.LANG_VARIABLE, "zh-CN")
    checkpoint({"loss went down": True})
    said = capsys.readouterr().out
    assert "检查点通过" in said and re.search(r"[\u4e00-\u9fff]", said)


def test_a_command_speaks_chinese_when_the_environment_says_so():
    code = "from course_utils.notebook import checkpoint; checkpoint({'x': True})"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          env={"COURSE_LANG": "zh-CN", "PATH": "/usr/bin:/bin"})
    assert done.returncode == 0 and "检查点通过" in done.stdout, done.stderr
