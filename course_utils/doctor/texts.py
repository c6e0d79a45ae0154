"""The doctor's words in the student's language: sentence endings, and notes.

Each doctor module translates a message where it builds it (``_ = translator("doctor")``), and marks text kept in
a table with ``course_utils.core.i18n.N_`` (CONTRIBUTING, "Messages from course_utils").

A note on a recommendation is a ``Note(code, text)``: programs match on the code; the text is for people, in the
language at the time it was made.
"""

from __future__ import annotations

from dataclasses import dataclass

from course_utils.core.i18n import CHINESE, language

_ENDS = (".", "!", "?", "。", "！", "？")
_WIDE_ENDS = ("。", "！", "？", "）", "；", "：")  # Chinese punctuation: the next sentence follows without a space


def sentence(text: str) -> str:
    """A note or log line as a finding's message: capital first letter, and a full stop of the language now
    (``。`` in Chinese) unless it ends with one already."""
    text = text[:1].upper() + text[1:]
    if text.endswith(_ENDS):
        return text
    return text + ("。" if language() == CHINESE else ".")


def join(*sentences: str) -> str:
    """Sentences as one text: a space after an English sentence, none after a Chinese one (``。``)."""
    out = ""
    for text in sentences:
        if out and text:
            out += "" if out.endswith(_WIDE_ENDS) else " "
        out += text
    return out


@dataclass(frozen=True)
class Note:
    """A note on a recommendation: ``code`` is stable (programs match on it), ``text`` is for people."""

    code: str  # kebab-case
    text: str
