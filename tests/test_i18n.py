"""The course's messages in Chinese: every marked message has a translation, compiled, with the same fields."""

from __future__ import annotations

import string
import sys
import warnings

import pytest

from course_utils.core import i18n, variables
from course_utils.core.errors import ParameterError
from course_utils.params import check_language

from .conftest import ROOT

sys.path.insert(0, str(ROOT / "scripts"))
import messages  # noqa: E402 - scripts/messages.py, the tool that keeps the catalogues


def fields(text: str) -> set[str]:
    return {name for _, name, _, _ in string.Formatter().parse(text) if name is not None}


def test_every_message_has_a_compiled_translation_and_a_missing_one_is_found(monkeypatch):
    assert messages.problems() == [], "run python scripts/messages.py, then translate what it lists"
    template = messages.extract()
    template["course"].add("A message nobody translated yet: {name}", locations=[("course_utils/x.py", 1)])
    monkeypatch.setattr(messages, "extract", lambda: template)
    assert any("A message nobody translated yet" in line for line in messages.problems())


def test_each_translation_keeps_the_fields_of_its_message():
    for domain in i18n.DOMAINS:
        for message in messages.load("zh_CN", domain):
            if message.id and message.string:
                assert fields(message.string) == fields(message.id), f"{domain}: {message.id!r}"


@pytest.mark.parametrize(("written", "meant"), [("zh_CN", "zh-CN"), ("ZH-Hans", "zh-CN"), ("en", "en")])
def test_the_language_switch_accepts_the_usual_spellings(written, meant):
    assert check_language(written) == meant


def test_an_unknown_language_is_a_parameter_error_naming_the_choices():
    with pytest.raises(ParameterError, match="zh-CN"):
        check_language("fr")


# ----------------------------------------------------------------- the locale variables (after COURSE_LANG)


@pytest.fixture
def no_language_variables(monkeypatch):
    """An environment with none of the variables that choose the language: each test sets only its own."""
    for name in (variables.LANG, *i18n.LOCALE_VARIABLES):
        monkeypatch.delenv(name, raising=False)
    return monkeypatch


@pytest.mark.parametrize(
    "environment, meant",
    [
        ({"LC_ALL": "zh_CN.UTF-8", "LC_MESSAGES": "en_US.UTF-8", "LANG": "en_US.UTF-8"}, "zh-CN"),  # LC_ALL first
        ({"LC_MESSAGES": "zh_CN.UTF-8", "LANG": "en_US.UTF-8"}, "zh-CN"),  # then LC_MESSAGES
        ({"LC_ALL": "", "LC_MESSAGES": "", "LANG": "zh_CN.UTF-8"}, "zh-CN"),  # empty counts as unset
        ({"LANGUAGE": "zh_CN:en", "LANG": "en_US.UTF-8"}, "zh-CN"),  # LANGUAGE before the locale...
        ({"LANGUAGE": "zh_TW:zh_CN", "LANG": "zh_TW.UTF-8"}, "zh-CN"),  # its first language the course speaks
        ({"LANGUAGE": "fr:de", "LANG": "zh_CN.UTF-8"}, "en"),  # LANGUAGE decides: none spoken, English
        ({"LANGUAGE": "zh_CN", "LANG": "C.UTF-8"}, "zh-CN"),  # C.UTF-8 is not the "C" locale
        ({"LANGUAGE": "zh_CN", "LANG": "C"}, "en"),  # ...but not when the locale is "C"
        ({"LANGUAGE": "zh_CN"}, "en"),  # no locale set is the "C" locale
        ({"LANG": "zh_CN.utf8@pinyin"}, "zh-CN"),  # a codeset and a modifier: left out
        ({"LANG": "en_US.UTF-8"}, "en"),
        ({"LANG": "zh_TW.UTF-8"}, "en"),  # Traditional Chinese: the course has no edition of it
        ({"LANG": "@"}, "en"),  # nothing before the modifier
    ],
)
def test_the_locale_variables_in_gettexts_order_never_warn(no_language_variables, capsys, environment, meant):
    for name, value in environment.items():
        no_language_variables.setenv(name, value)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert i18n.language() == meant
    assert i18n.locale_language(environment) == meant  # the same answer from a mapping, without os.environ
    assert capsys.readouterr() == ("", "")


@pytest.mark.parametrize(("course_lang", "meant"), [("en", "en"), ("zh-CN", "zh-CN"), ("klingon", "en")])
def test_course_lang_comes_before_every_locale_variable(no_language_variables, course_lang, meant):
    chinese, english = "zh_CN.UTF-8", "en_US.UTF-8"
    for name in i18n.LOCALE_VARIABLES:
        no_language_variables.setenv(name, english if meant == "zh-CN" else chinese)
    no_language_variables.setenv(variables.LANG, course_lang)
    assert i18n.language() == meant  # an unknown COURSE_LANG means English (the CLI names it), not the locale's
