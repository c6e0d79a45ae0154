"""The course's messages in the student's language: English, or Simplified Chinese.

``language()`` says which: ``setup(..., language=...)`` (``set_language``: ``COURSE_LANG``, inherited by helpers
and child processes), ``COURSE_LANG``, else the locale variables in GNU gettext's order (``locale_language``).
Traditional Chinese locales stay English: the course has only Simplified Chinese, with mainland terms.

How messages are marked and translated: CONTRIBUTING, "Messages from course_utils". One catalogue per domain in
``course_utils/locale/zh_CN/LC_MESSAGES/``: ``doctor`` (``doctor/``), ``lessons`` (``lessons/``), ``course`` (the
rest); ``course_tools`` passes its own folder.
"""

from __future__ import annotations

import functools
import gettext
import os
import unicodedata
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path

from course_utils.core import variables

# The locale variables after COURSE_LANG, in GNU gettext's order of precedence:
# https://www.gnu.org/software/gettext/manual/html_node/Locale-Environment-Variables.html
LOCALE_VARIABLES = ("LANGUAGE", "LC_ALL", "LC_MESSAGES", "LANG")
ENGLISH, CHINESE = "en", "zh-CN"
LANGUAGES = (ENGLISH, CHINESE)
DOMAINS = ("course", "doctor", "lessons")
LOCALE_DIR = Path(__file__).resolve().parents[1] / "locale"  # course_utils/locale
# Chinese characters and full-width punctuation, as a regular-expression character range: between two of these,
# a line break is no word space (the website and the tests of the Chinese documents use it).
CHINESE_CHARACTERS = "\u3000-\u303f\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uff00-\uffef"
_LOCALE_OF = {CHINESE: "zh_CN"}  # the folder name of each language's catalogues (gettext's locale names)
# Each spelling, lower case with "-" (an "_" is read as "-"). zh-SG: Singapore writes Simplified Chinese. Traditional
# Chinese (zh-TW, zh-HK, zh-MO, zh-Hant) is not here: the course has no Traditional edition.
_SPELLINGS = {"en": ENGLISH, "english": ENGLISH, "zh": CHINESE, "zh-cn": CHINESE, "zh-sg": CHINESE,
              "zh-hans": CHINESE, "zh-hans-cn": CHINESE, "zh-hans-sg": CHINESE, "chinese": CHINESE}
_C_LOCALES = ("C", "POSIX")  # the locale in which gettext ignores LANGUAGE


def spelled(value: object) -> str | None:
    """The language a spelling names (``zh_CN``, ``zh-Hans``, ``en``: any case, ``_`` or ``-``), None if none."""
    return _SPELLINGS.get(value.strip().lower().replace("_", "-")) if isinstance(value, str) else None


def language() -> str:
    """The language messages are in now: ``COURSE_LANG`` when set (English when it names no language the course
    speaks), else the locale variables (``locale_language``)."""
    raw = os.environ.get(variables.LANG, "").strip()
    if raw:
        return spelled(raw) or ENGLISH
    return locale_language(os.environ)


def _locale_spelled(name: str) -> str | None:
    """The language of one locale name (``zh_CN.UTF-8``, ``en_US``, ``C``), None for one the course does not speak.
    The codeset (``.UTF-8``) and modifier (``@euro``) are left out; ``C``, ``POSIX`` and every ``en_*`` are English."""
    base = name.split("@")[0].split(".")[0].strip()
    if base in _C_LOCALES or base.lower().replace("_", "-").split("-")[0] == "en":
        return ENGLISH
    return spelled(base) if base else None


def locale_language(environ: Mapping[str, str]) -> str:
    """The language the locale variables ask for, in GNU gettext's order; English unless they ask for Chinese.

    The locale is the first non-empty of ``LC_ALL``, ``LC_MESSAGES``, ``LANG`` (else ``C``); unless it is ``C`` or
    ``POSIX``, a non-empty ``LANGUAGE`` decides first (``zh_TW:zh_CN`` is Chinese). Never raises or warns.
    """
    locale = next((environ[name].strip() for name in LOCALE_VARIABLES[1:] if environ.get(name, "").strip()), "C")
    preferred = environ.get("LANGUAGE", "").strip()
    if preferred and locale not in _C_LOCALES:
        return next((found for entry in preferred.split(":") if (found := _locale_spelled(entry))), ENGLISH)
    return _locale_spelled(locale) or ENGLISH


def set_language(value: str) -> None:
    """Speak ``value`` from now on, here and in every child process (it sets ``COURSE_LANG``, which comes before the
    locale variables). ``value`` is one the course speaks (``params.check_language`` checks a choice)."""
    chosen = spelled(value)
    if chosen is None:
        raise ValueError(f"{value!r} is not a language of the course: check it with params.check_language first")
    os.environ[variables.LANG] = chosen


@functools.cache
def _catalogue(domain: str, lang: str, folder: Path) -> gettext.NullTranslations:
    if lang == ENGLISH:
        return gettext.NullTranslations()
    return gettext.translation(domain, localedir=folder, languages=[_LOCALE_OF[lang]], fallback=True)


def N_(message: str) -> str:  # noqa: N802 - gettext's name for the no-op marker
    """Mark ``message`` for translation and return it unchanged: for text kept in a table at import, when the
    language may not be chosen yet. ``scripts/messages.py`` extracts it; pass it through ``_()`` where it is shown."""
    return message


def translator(domain: str, folder: Path = LOCALE_DIR) -> Callable[[str], str]:
    """The marker ``_`` for a domain: it returns a message in the language chosen at the time of the call.
    ``folder``: where the domain's catalogues are, when they belong to another package than this one."""
    if folder == LOCALE_DIR and domain not in DOMAINS:
        raise ValueError(f"unknown message domain {domain!r} (domains: {', '.join(DOMAINS)})")

    def _(message: str) -> str:
        return _catalogue(domain, language(), folder).gettext(message)

    return _


def listed(items: Iterable[str]) -> str:
    """Items in a row, as the chosen language writes a list: "a", "b" in English, "a"、"b" in Chinese."""
    return ("、" if language() == CHINESE else ", ").join(items)


def columns(text: str) -> int:
    """How many terminal columns ``text`` takes: a Chinese character (East Asian wide) takes two."""
    return sum(2 if unicodedata.east_asian_width(c) in "WF" else 1 for c in text)


def padded(text: str, width: int) -> str:
    """``text`` with spaces after it up to ``width`` columns: ``f"{text:<width}"`` for a table in any language."""
    return text + " " * max(width - columns(text), 0)
