"""Where each doctor code is explained for students: one mapping from a code to an entry of docs/troubleshooting.md.

The doctor's findings, the notes on a recommendation, the live checks' notes and the log rules each
have a stable ``code``. When an entry of the troubleshooting page covers the problem behind a code,
``ANCHORS`` (findings.json's ``see``) names that entry's anchor, and every report prints
``More: docs/troubleshooting.md#<anchor>`` with it. ``scripts/course_lint.py`` (rule ``ts-link``) checks that
each one exists in the page, and ``tests/test_troubleshooting.py`` that each key is a code the doctor really gives.

In Chinese (``COURSE_LANG=zh-CN``, or a Chinese locale) the links lead to the Chinese page,
``docs/zh/troubleshooting.md``, which keeps the English page's anchors (``PAGES``;
``tests/doctor/test_doctor_chinese.py`` checks them).
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path

from course_utils.core.i18n import CHINESE, ENGLISH, language, translator

_ = translator("doctor")

PAGE = "docs/troubleshooting.md"
PAGES = {ENGLISH: PAGE, CHINESE: "docs/zh/troubleshooting.md"}  # the page in each language, same anchors


def page() -> str:
    """The troubleshooting page in the language now (English when there is none in it)."""
    return PAGES.get(language(), PAGE)


# code -> anchor of the entry in docs/troubleshooting.md that explains it (an <a id="..."> in the page): findings.json's
# "see"
ANCHORS: dict[str, str] = json.loads(Path(__file__).with_name("findings.json").read_text(encoding="utf-8"))["see"]


def see(code: str | None) -> str | None:
    """``docs/troubleshooting.md#<anchor>`` (the page in the language now) for a code the page explains, else
    None."""
    anchor = ANCHORS.get(code) if code else None
    return f"{page()}#{anchor}" if anchor else None


def more_text(link: str) -> str:
    """``"More: <link>"`` in the language now."""
    return _("More: {link}").format(link=link)


def more_line(code: str | None, indent: str = "") -> list[str]:
    """The line a report prints under a finding or note with this code: ``[indent + "More: ..."]`` or ``[]``."""
    link = see(code)
    return [indent + more_text(link)] if link else []


def links(codes: Iterable[str | None]) -> dict[str, str]:
    """``{code: link}`` for the codes the page explains, in order, each once (for the JSON reports)."""
    return {code: link for code in codes if code and (link := see(code))}
