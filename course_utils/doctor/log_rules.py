"""What each kind of TensorFlow log line means: ``RULES``, one ``LogRule`` per kind, read from ``log_rules.json``
(its schema: ``schemas/log_rules.schema.json``), so a new kind of line is one entry there. A ``meaning`` or ``fix``
is a text entry as in versions.json, shown in the student's language by ``versions.localized``; a fix that several
rules share is named by its key in ``texts``.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from course_utils.doctor.versions import read_data

Text = Mapping[str, Any]  # {"text": English, "translations": {"zh-CN": {"text", "en_sha256"}}}


@dataclass(frozen=True)
class LogRule:
    """What one kind of log line means: ``code`` is stable (tools match on it), the texts are for people.

    ``verdict``: "harmless", "problem" or "depends" (the problem only on a machine with an NVIDIA GPU);
    ``meaning`` and ``fix`` may name the patterns' groups (``{library}``); ``gpu_evidence``: only a machine where
    TensorFlow found an NVIDIA GPU prints this line.
    """

    code: str
    verdict: str
    patterns: tuple[str, ...]
    meaning: Text
    fix: Text
    source: str
    gpu_evidence: bool = False

    def match(self, message: str) -> re.Match[str] | None:
        return next((found for pattern in self.patterns if (found := re.search(pattern, message))), None)


def load(data: Mapping[str, Any] | None = None) -> tuple[LogRule, ...]:
    """The rules of log_rules.json (or of ``data`` in its form), in its order (the first that matches a line
    decides)."""
    data = read_data("log_rules") if data is None else data
    shared = data["texts"]

    def text(value: str | Text) -> Text:
        return shared[value] if isinstance(value, str) else value

    return tuple(
        LogRule(rule["code"], rule["verdict"], tuple(rule["patterns"]), text(rule["meaning"]), text(rule["fix"]),
                rule["source"], rule.get("gpu_evidence", False))
        for rule in data["rules"]
    )


RULES: tuple[LogRule, ...] = load()
# Where a log line's own text starts: after the first of these prefixes that matches (absl/glog's, a Python logger's).
PREFIXES = tuple(re.compile(prefix["pattern"]) for prefix in read_data("log_rules")["prefixes"])
