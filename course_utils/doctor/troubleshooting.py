"""Where each doctor code is explained for students: findings.json's ``see`` maps a code (of a finding, a note, a live
check or a log rule) to the anchor of its entry in docs/troubleshooting.md, and every report prints ``More: <link>``
with it - in Chinese to docs/zh/troubleshooting.md, which keeps the same anchors. ``scripts/course_lint.py`` (rule
``ts-link``) and ``tests/test_troubleshooting.py`` check both ends.
"""

from __future__ import annotations

from collections.abc import Iterable

from course_utils.core.i18n import CHINESE, ENGLISH, language, translator
from course_utils.doctor.versions import read_data

_ = translator("doctor")

PAGES = {ENGLISH: "docs/troubleshooting.md", CHINESE: "docs/zh/troubleshooting.md"}  # in each language, same anchors


def page() -> str:
    """The troubleshooting page in the language now (English when there is none in it)."""
    return PAGES.get(language(), PAGES[ENGLISH])


ANCHORS: dict[str, str] = read_data("findings")["see"]


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
