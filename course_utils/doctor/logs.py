"""Reading a pasted TensorFlow log: which lines are harmless, which one is the problem, and what to do.

TensorFlow prints many start-up lines that look like failures and are not, and a few that are the real reason the GPU
is not used: ``classify`` gives each line a verdict by ``RULES``, one ``LogRule`` per kind, read from ``log_rules.json``
(its schema: ``schemas/log_rules.schema.json``), so a new kind of line is one entry there. A ``meaning`` or ``fix`` is
a text entry as in versions.json, shown in the student's language by ``versions.localized``; a fix that several rules
share is named by its key in ``texts``. ``read_log`` reads a pasted file; ``course doctor --log FILE`` is the command.
"""

from __future__ import annotations

import codecs
import re
import sys
from collections import defaultdict
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from course_utils.core.errors import InputError
from course_utils.core.i18n import translator
from course_utils.doctor.versions import localized, read_data

_ = translator("doctor")

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


def _text(value: str | Text) -> Text:
    """A rule's text entry, or the key in ``texts`` of one that several rules share."""
    return read_data("log_rules")["texts"][value] if isinstance(value, str) else value


# The rules of log_rules.json, in its order (the first that matches a line decides).
RULES = tuple(
    LogRule(rule["code"], rule["verdict"], tuple(rule["patterns"]), _text(rule["meaning"]), _text(rule["fix"]),
            rule["source"], rule.get("gpu_evidence", False))
    for rule in read_data("log_rules")["rules"]
)
# Where a log line's own text starts: after the first of these prefixes that matches (absl/glog's, a Python logger's).
PREFIXES = tuple(re.compile(prefix["pattern"]) for prefix in read_data("log_rules")["prefixes"])


_ANSI = re.compile(r"\x1b\[[0-9;?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)")


def strip_prefix(line: str) -> tuple[str, bool]:
    """``(message, is_log_line)``: the line without its time/thread/file prefix (``PREFIXES``), and
    whether it had one."""
    line = line.strip()
    found = next((found for prefix in PREFIXES if (found := prefix.search(line))), None)
    return (line[found.end() :].strip(), True) if found else (line, False)


def looks_binary(text: str) -> bool:
    """True when a decoded text is mostly not text: NULs, or many control or undecodable characters."""
    if "\x00" in text:
        return True
    odd = sum(1 for c in text if (ord(c) < 32 and c not in "\t\n\r\x1b\x0c") or c == "\ufffd")
    return odd > max(8, len(text) // 20)


def decode_text(data: bytes) -> str:
    """The text of a saved capture or log: UTF-8 or UTF-16 (with or without a byte-order mark); never raises.

    Windows PowerShell 5.1's ``>`` and ``Out-File`` write UTF-16 LE with a byte-order mark
    ("Unicode", their default: https://learn.microsoft.com/powershell/module/microsoft.powershell.core/about/
    about_character_encoding?view=powershell-5.1), so ``nvidia-smi > smi.txt`` there is UTF-16.
    """
    if data.startswith(codecs.BOM_UTF8):
        return data[len(codecs.BOM_UTF8) :].decode("utf-8", errors="replace")
    if data.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        return data.decode("utf-16", errors="replace")
    if len(data) >= 4 and data[1::2].count(0) > len(data) // 4 and data[0::2].count(0) == 0:
        return data.decode("utf-16-le", errors="replace")  # UTF-16 without a byte-order mark
    if len(data) >= 4 and data[0::2].count(0) > len(data) // 4 and data[1::2].count(0) == 0:
        return data.decode("utf-16-be", errors="replace")
    return data.decode("utf-8", errors="replace")


def decode_log(data: bytes, name: str) -> str:
    """The text of a pasted log (``decode_text``), ANSI colours removed; ``name`` starts the error messages.

    Raises ``InputError`` for an empty file or one that is not text.
    """
    how = _("Save the output as plain text - e.g. `python train.py > log.txt 2>&1` - and pass that file.")
    text = _ANSI.sub("", decode_text(data))
    if not data.strip():
        what = _("{name} is empty: there is no log to read.")
    elif looks_binary(text):
        what = _("{name} is not a text log (it holds binary data - a compressed file, an image or a program?).")
    elif not text.strip():
        what = _("{name} holds only colour codes and white space: there is no log to read.")
    else:
        return text
    raise InputError(what.format(name=name), how)


def read_log(path: str | Path) -> str:
    """Read a log file (``"-"``: standard input) with ``decode_log``; ``InputError`` when it cannot be read."""
    if str(path) == "-":
        return decode_log(sys.stdin.buffer.read(), _("The log on standard input"))
    where = Path(path)
    try:
        data = where.read_bytes()
    except OSError as error:
        if isinstance(error, IsADirectoryError):
            what, fix = _("{path} is a folder, not a log file."), _("Pass the log file itself.")
        elif isinstance(error, FileNotFoundError):
            what, fix = _("The log file {path} does not exist."), _("Check the path (or pass - to read stdin).")
        else:
            what = _("The log file {path} cannot be read: {reason}.")
            fix = _("Check the file's permissions, or copy the log into a file you can read.")
        raise InputError(what.format(path=where, reason=error.strerror), fix) from None
    return decode_log(data, _("The log file {path}").format(path=where))


@dataclass
class LogEntry:
    """One kind of message in the log: where it appears, its verdict and (when a rule knows it) what to do."""

    message: str
    lines: list[int]  # 1-based line numbers
    verdict: str
    rule: LogRule | None = None
    details: dict[str, str] = field(default_factory=dict)

    @property
    def code(self) -> str | None:
        return self.rule.code if self.rule else None

    def _filled(self, entry: dict | None) -> str:
        """A rule's text entry in the language now, with the line's values filled in ("?" for one it lacks)."""
        return localized(entry).format_map(defaultdict(lambda: "?", self.details)) if entry else ""

    @property
    def meaning(self) -> str:
        return self._filled(self.rule and self.rule.meaning)

    @property
    def fix(self) -> str:
        return self._filled(self.rule and self.rule.fix)

    def to_dict(self) -> dict[str, Any]:
        return {
            "verdict": self.verdict,
            "code": self.code,
            "lines": list(self.lines),
            "message": self.message,
            "meaning": self.meaning or None,
            "fix": self.fix or None,
            "source": self.rule.source if self.rule else None,
        }


@dataclass
class LogReport:
    """A classified log: its entries in order of first appearance, and what was assumed about the GPU."""

    entries: list[LogEntry]
    total_lines: int
    other_lines: int  # lines that are not TensorFlow log lines (program output, tracebacks) - not classified
    gpu: bool | None  # the machine has an NVIDIA GPU: True, False, or None when unknown
    gpu_reason: str

    @property
    def problem(self) -> LogEntry | None:
        """The first line that is the problem, if any."""
        return next((e for e in self.entries if e.verdict == "problem"), None)

    @property
    def problem_if_gpu(self) -> LogEntry | None:
        """When no line is certainly the problem: the first that is, if the machine has an NVIDIA GPU."""
        return next((e for e in self.entries if e.verdict == "depends"), None)

    def codes(self) -> list[str]:
        """The rule codes found, in order, each once."""
        return list(dict.fromkeys(e.code for e in self.entries if e.code))

    def to_dict(self) -> dict[str, Any]:
        problem = self.problem
        maybe = self.problem_if_gpu if problem is None else None
        return {
            "problem": problem.to_dict() if problem else None,
            "problem_if_gpu": maybe.to_dict() if maybe else None,
            "gpu": self.gpu,
            "gpu_reason": self.gpu_reason,
            "total_lines": self.total_lines,
            "other_lines": self.other_lines,
            "entries": [e.to_dict() for e in self.entries],
        }

    def text(self) -> str:
        """A readable report: the problem and its fix first, then every classified line with its verdict."""
        out: list[str] = []
        problem = self.problem
        if problem is not None:
            out += [_("The problem:"), *_describe(problem, with_fix=True)]
        elif self.problem_if_gpu is not None:
            out += [
                _("No line is certainly the problem. If this machine has an NVIDIA GPU, this one is:"),
                *_describe(self.problem_if_gpu, with_fix=True),
            ]
        else:
            out.append(_("The problem: none of the known problem lines is in this log."))
        out += ["", _("GPU: {reason}").format(reason=self.gpu_reason), ""]
        counted = sum(len(e.lines) for e in self.entries)
        out.append(
            _(
                "Line by line ({counted} TensorFlow log line(s) of {total}; {other} other line(s), "
                "such as program output and tracebacks, not classified):"
            ).format(counted=counted, total=self.total_lines, other=self.other_lines)
        )
        for e in self.entries:
            out += _describe(e, with_fix=e.verdict in ("problem", "depends"))
        return "\n".join(out)


def _where(lines: list[int]) -> str:
    shown = ", ".join(str(n) for n in lines[:6]) + (", ..." if len(lines) > 6 else "")
    if len(lines) == 1:
        return _("line {number}").format(number=shown)
    return _("lines {numbers} ({count}x)").format(numbers=shown, count=len(lines))


def _describe(entry: LogEntry, *, with_fix: bool) -> list[str]:
    """An entry's lines in the report: ``[verdict] code, where: message``, then what it means and what to do
    (the verdicts and codes are the JSON's, in every language)."""
    message = entry.message if len(entry.message) <= 200 else entry.message[:197] + "..."
    code = f" {entry.code}" if entry.code else ""
    lines = [f"  [{entry.verdict}]{code}, {_where(entry.lines)}: {message}"]
    if entry.rule is not None:
        lines.append("      " + _("means: {meaning}").format(meaning=entry.meaning))
        if with_fix or entry.rule.fix["text"] != "Nothing to do.":
            lines.append("      " + _("fix: {fix}").format(fix=entry.fix))
        lines.append("      " + _("source: {url}").format(url=entry.rule.source))
    else:
        lines.append(
            "      " + _("means: no rule knows this line; read it yourself (a later line may be the problem).")
        )
    return lines


def _match(message: str) -> tuple[LogRule | None, dict[str, str]]:
    """The first rule with a pattern found in ``message``, and the values of that pattern's named groups."""
    for rule in RULES:
        for pattern in rule.patterns:
            if found := re.search(pattern, message):
                return rule, {k: v.strip() for k, v in found.groupdict().items() if v}
    return None, {}


def classify(text: str, gpu: bool | None = None) -> LogReport:
    """Classify every line of a TensorFlow log (already decoded text; see ``read_log`` for files).

    ``gpu``: whether the machine that printed it has an NVIDIA GPU (None: unknown - then a line only such
    a machine prints decides, else ``depends`` lines stay ``depends``).
    """
    entries: dict[str, LogEntry] = {}
    other = 0
    evidence: int | None = None
    lines = _ANSI.sub("", text).splitlines()
    for number, raw in enumerate(lines, start=1):
        if not raw.strip():
            continue
        message, is_log = strip_prefix(raw)
        rule, details = _match(message)
        if rule is None and not is_log:
            other += 1
            continue
        if rule is not None and rule.gpu_evidence and evidence is None:
            evidence = number
        if message in entries:
            entries[message].lines.append(number)
        else:
            entries[message] = LogEntry(message, [number], rule.verdict if rule else "unknown", rule, details)
    if gpu is not None:
        reason = (
            _("this machine has an NVIDIA GPU (as given)") if gpu else _("this machine has no NVIDIA GPU (as given)")
        )
    elif evidence is not None:
        gpu = True
        reason = _("TensorFlow found an NVIDIA GPU (line {number} is printed only then)").format(number=evidence)
    else:
        reason = _(
            "unknown - lines marked 'depends' are harmless without an NVIDIA GPU and the problem with one "
            "(pass --gpu or --no-gpu, or --nvidia-smi with that machine's output)"
        )
    for entry in entries.values():
        if entry.verdict == "depends" and gpu is not None:
            entry.verdict = "problem" if gpu else "harmless"
    return LogReport(list(entries.values()), len(lines), other, gpu, reason)
