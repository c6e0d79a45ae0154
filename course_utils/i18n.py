"""The course's messages in the student's language: English, or Simplified Chinese.

``COURSE_LANG`` chooses: ``en`` (the default) or ``zh-CN`` (also written ``zh``, ``zh_CN``,
``zh-Hans``). The Chinese notebooks' setup cell sets it (``setup(..., language="zh-CN")``), so
that helpers, the doctor and child processes speak Chinese in them; on the command line
``COURSE_LANG=zh-CN course doctor`` does the same.

Messages are marked with GNU gettext's standard marker, ``_("...")``, and translated in
message catalogues, one per *domain*:

- ``doctor``: ``course_utils/doctor/`` (findings, fixes, the report);
- ``exercises``: ``course_utils/exercises/`` (the feedback on a student's answer);
- ``course``: everything else (errors, parameter checks, setup and checkpoint lines).

A module takes its domain's marker once: ``_ = translator("doctor")``. A message with values
keeps named fields and is formatted after translation - ``_("Seed: {seed}").format(seed=seed)`` -
so a translation may put the fields in another order. The catalogues are
``course_utils/locale/zh_CN/LC_MESSAGES/<domain>.po`` (the text a translator edits) and the
``.mo`` file compiled from it, which Python's ``gettext`` reads. ``python scripts/messages.py``
extracts new messages into the ``.po`` files and compiles them (see CONTRIBUTING);
``tests/test_i18n.py`` fails on any message without a translation.
"""

from __future__ import annotations

import functools
import gettext
import os
import unicodedata
from collections.abc import Callable
from pathlib import Path

LANG_VARIABLE = "COURSE_LANG"
ENGLISH, CHINESE = "en", "zh-CN"
LANGUAGES = (ENGLISH, CHINESE)
DOMAINS = ("course", "doctor", "exercises")
LOCALE_DIR = Path(__file__).resolve().parent / "locale"
# Chinese characters and full-width punctuation, as a regular-expression character range: between two of these,
# a line break is no word space (the website and the tests of the Chinese documents use it).
CHINESE_CHARACTERS = "\u3000-\u303f\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uff00-\uffef"
_LOCALE_OF = {CHINESE: "zh_CN"}  # the folder name of each language's catalogues (gettext's locale names)
_SPELLINGS = {"en": ENGLISH, "english": ENGLISH, "zh": CHINESE, "zh-cn": CHINESE, "zh_cn": CHINESE,
              "zh-hans": CHINESE, "zh-hans-cn": CHINESE, "chinese": CHINESE}

__all__ = ["CHINESE", "CHINESE_CHARACTERS", "ENGLISH", "LANGUAGES", "LANG_VARIABLE", "N_", "check_language", "columns",
           "language", "padded", "set_language", "translator"]


def check_language(value: object) -> str:
    """``value`` as one of LANGUAGES; a ``ParameterError`` naming the choices otherwise."""
    found = _SPELLINGS.get(str(value).strip().lower()) if isinstance(value, str) else None
    if found is None:
        from course_utils.errors import ParameterError

        _ = translator("course")
        raise ParameterError(
            _("Language {value!r} is not one the course speaks.").format(value=value),
            _("Use {english!r} or {chinese!r} (in the environment: {variable}=zh-CN).").format(
                english=ENGLISH, chinese=CHINESE, variable=LANG_VARIABLE),
        )
    return found


def language() -> str:
    """The language messages are in now: ``COURSE_LANG`` (English when unset or not a known language)."""
    raw = os.environ.get(LANG_VARIABLE, "")
    return _SPELLINGS.get(raw.strip().lower(), ENGLISH)


def set_language(value: str) -> str:
    """Speak ``value`` from now on, here and in every child process (it sets ``COURSE_LANG``); the language."""
    chosen = check_language(value)
    os.environ[LANG_VARIABLE] = chosen
    return chosen


@functools.cache
def _catalogue(domain: str, lang: str) -> gettext.NullTranslations:
    if lang == ENGLISH:
        return gettext.NullTranslations()
    return gettext.translation(domain, localedir=LOCALE_DIR, languages=[_LOCALE_OF[lang]], fallback=True)


def N_(message: str) -> str:  # noqa: N802 - gettext's name for the no-op marker
    """Mark ``message`` for translation and return it unchanged: for text kept in a table at import, when the
    language may not be chosen yet. ``scripts/messages.py`` extracts it; pass it through ``_()`` where it is shown."""
    return message


def translator(domain: str) -> Callable[[str], str]:
    """The marker ``_`` for a domain: it returns a message in the language chosen at the time of the call."""
    if domain not in DOMAINS:
        raise ValueError(f"unknown message domain {domain!r} (domains: {', '.join(DOMAINS)})")

    def _(message: str) -> str:
        return _catalogue(domain, language()).gettext(message)

    return _


def columns(text: str) -> int:
    """How many terminal columns ``text`` takes: a Chinese character (East Asian wide) takes two."""
    return sum(2 if unicodedata.east_asian_width(c) in "WF" else 1 for c in text)


def padded(text: str, width: int) -> str:
    """``text`` with spaces after it up to ``width`` columns: ``f"{text:<width}"`` for a table in any language."""
    return text + " " * max(width - columns(text), 0)
