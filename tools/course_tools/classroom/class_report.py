"""``course class-report FOLDER``: every student's preflight record in one table, problems first.

Reads every ``*.json`` file under FOLDER (sub-folders too) and writes ``class-report.md`` and a
self-contained ``class-report.html`` into ``--out`` (default: FOLDER):

- **Summary**: how many records, with errors, with warnings (a record with both counts under both), fine,
  files that are no record; how many machines have a GPU TensorFlow can use; the TensorFlow versions and
  platforms; students who sent more than one record.
- **Problems by code**: each problem code, its severity, how many records have it, who, and the fix.
- **Students**: one row per record - errors first, then warnings, then fine; by user within a group.
- **Files that are no record**: empty, cut short, not JSON, not an object, another schema - each with why.

A record is shown as it was written: its ``problems`` were found on the student's machine
(``classroom.preflight``). Every value from a record is escaped, in the HTML and in the Markdown,
so a record cannot add markup to the report. Exit status 0 when the report is written; 2 when FOLDER is
missing, holds no ``*.json`` file or no valid record (the report is still written then, listing why).
"""

from __future__ import annotations

import argparse
import html
import json
import sys
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from course_tools import _
from course_tools.batch.report import _CSS, _html_table, _md_table
from course_tools.classroom.handin import SCHEMA as PROGRESS_SCHEMA
from course_tools.classroom.preflight import SCHEMA
from course_utils.core.errors import CourseError, InputError

MAX_BYTES = 5 * 1024 * 1024  # a record is a few kB; a bigger file is no record
GROUPS = ("errors", "warnings", "fine")
SEVERITIES = ("error", "warning")
COLUMNS = [
    "student",
    "file",
    "platform",
    "GPU",
    "driver",
    "TensorFlow",
    "product ms (GPU / CPU)",
    "data",
    "problems",
]


# --------------------------------------------------------------------------- reading


def invalid_reason(data: Any) -> str | None:
    """Why parsed JSON is not a preflight record this report can show; None when it is one."""
    if not isinstance(data, dict):
        return f"a JSON {type(data).__name__}, not a preflight record (a JSON object)"
    if "schema" not in data:
        return 'no "schema" key: not a preflight record'
    if data["schema"] == PROGRESS_SCHEMA:
        return "a progress record (course hand-in), not a preflight record: `course progress` reports those"
    if data["schema"] != SCHEMA:
        return f"schema {str(data['schema'])[:60]!r}, expected {SCHEMA!r} (another tool, or another version)"
    for key in ("user", "host"):
        if not isinstance(data.get(key), str) or not data[key]:
            return f'"{key}" is missing or not text'
    problems = data.get("problems")
    if not isinstance(problems, list):
        return '"problems" is missing or not a list'
    for item in problems:
        if not isinstance(item, dict) or not isinstance(item.get("code"), str):
            return '"problems" holds an entry without a "code"'
        if item.get("severity") not in SEVERITIES:
            return f"a problem's severity is {str(item.get('severity'))[:30]!r}, not error or warning"
    return None


def read_record(path: Path, validate: Callable[[Any], str | None] = invalid_reason,
                max_bytes: int = MAX_BYTES) -> tuple[dict[str, Any] | None, str | None]:
    """``(record, None)``, or ``(None, why the file is no record)``; never raises for a bad file. ``validate`` says
    why parsed JSON is not the record wanted (default: a preflight record; ``progress`` passes its own)."""
    try:
        if not path.is_file():
            return None, "not a regular file"
        size = path.stat().st_size
        if size == 0:
            return None, "empty file"
        if size > max_bytes:
            return None, f"too large ({size:,} bytes; a record is a few kB)"
        raw = path.read_bytes()
    except OSError as error:
        return None, f"cannot be read ({error.strerror or error})"
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        return None, "not UTF-8 text (a binary file?)"
    if not text.strip():
        return None, "only white space"
    try:
        data = json.loads(text)
    except json.JSONDecodeError as error:
        return None, f"not valid JSON: {error.msg} (line {error.lineno}, column {error.colno}); cut short or edited?"
    except (ValueError, RecursionError) as error:
        return None, f"not valid JSON ({type(error).__name__})"
    reason = validate(data)
    return (None, reason) if reason else (data, None)


def load_folder(folder: Path) -> tuple[list[dict[str, Any]], list[tuple[str, str]]]:
    """The records under ``folder`` (each with ``_file``, its path there) and the files that are none, with why."""
    records, bad = [], []
    for path in sorted(folder.rglob("*.json")):
        name = path.relative_to(folder).as_posix()
        record, reason = read_record(path)
        if record is None:
            bad.append((name, reason or "unknown"))
        else:
            records.append({**record, "_file": name})
    return records, bad


# --------------------------------------------------------------------------- one record's cells


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def group(record: dict[str, Any]) -> str:
    """"errors", "warnings" or "fine", by the record's worst problem."""
    severities = {p["severity"] for p in record["problems"]}
    return "errors" if "error" in severities else "warnings" if severities else "fine"


def student(record: dict[str, Any]) -> str:
    return f"{record['user']}@{record['host']}"


def _platform(record: dict[str, Any]) -> str:
    p, python = _dict(record.get("platform")), _dict(record.get("python"))
    text = str(p.get("kind") or p.get("system") or "?")
    if p.get("system") and p.get("release"):
        text += f" ({p['system']} {p['release']})"
    return text + (f", Python {python['version']}" if python.get("version") else "")


def _gpus(record: dict[str, Any]) -> list[str]:
    """The GPUs as nvidia-smi listed them (name, memory), else as TensorFlow saw them."""
    found = []
    for g in _list(_dict(record.get("nvidia")).get("gpus")):
        g = _dict(g)
        memory = f", {g['memory_mib']} MiB" if g.get("memory_mib") is not None else ""
        found.append(f"{g.get('name', '?')}{memory}")
    if not found:
        found = [str(_dict(g).get("name", "?")) for g in _list(_dict(record.get("tensorflow")).get("gpus"))]
    return found


def _tensorflow(record: dict[str, Any]) -> str:
    tf = record.get("tensorflow")
    if not isinstance(tf, dict):
        return "not importable"
    build = f"CUDA {tf.get('cuda_version')} build" if tf.get("is_cuda_build") else "CPU-only build"
    return f"{tf.get('version', '?')} ({build}), sees {len(_list(tf.get('gpus')))} GPU(s)"


def _ms(value: Any) -> str:
    ms = _dict(value).get("median_ms")
    return f"{ms:.3g}" if isinstance(ms, (int, float)) and not isinstance(ms, bool) else "-"


def _product(record: dict[str, Any]) -> str:
    result = _dict(record.get("compute"))
    if result.get("skipped"):
        return "skipped"
    if result.get("error"):
        return "failed"
    return f"{_ms(result.get('gpu'))} / {_ms(result.get('cpu'))}"


def _data(record: dict[str, Any]) -> str:
    entries = [_dict(e) for e in _list(_dict(record.get("data")).get("datasets"))]
    return "; ".join(f"{e.get('dataset', '?')}: {e.get('source') or e.get('problem') or '?'}" for e in entries)


def _problems(record: dict[str, Any]) -> str:
    return ", ".join(f"{p['code']} ({p['severity']})" for p in record["problems"]) or "none"


def row(record: dict[str, Any]) -> list[str]:
    """One record's cells, in ``COLUMNS`` order (text, not yet escaped)."""
    return [
        student(record),
        record["_file"],
        _platform(record),
        "; ".join(_gpus(record)) or "none",
        str(_dict(record.get("nvidia")).get("driver_version") or "-"),
        _tensorflow(record),
        _product(record),
        _data(record),
        _problems(record),
    ]


def ordered(records: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """Errors first, then warnings, then fine; by user, host and file within a group."""
    return sorted(records, key=lambda r: (GROUPS.index(group(r)), r["user"], r["host"], r["_file"]))


# --------------------------------------------------------------------------- the class


def severity_counts(records: Sequence[dict[str, Any]]) -> Counter[str]:
    """How many records have each severity: a record with an error and a warning counts under both."""
    return Counter(severity for r in records for severity in {p["severity"] for p in r["problems"]})


def summary_line(records: Sequence[dict[str, Any]], bad: Sequence[tuple[str, str]]) -> str:
    """``"40 records: 3 with errors, 5 with warnings, 33 fine, 2 unreadable"``."""
    counts = severity_counts(records)
    fine = sum(not r["problems"] for r in records)
    return (
        f"{len(records)} record{'' if len(records) == 1 else 's'}: {counts['error']} with errors, "
        f"{counts['warning']} with warnings, {fine} fine, {len(bad)} unreadable"
    )


def counts_rows(records: Sequence[dict[str, Any]], bad: Sequence[tuple[str, str]]) -> list[list[str]]:
    """The summary table: what, how many."""
    counts = severity_counts(records)
    rows = [
        ["records", str(len(records))],
        ["with errors", str(counts["error"])],
        ["with warnings", str(counts["warning"])],
        ["fine (no problem)", str(sum(not r["problems"] for r in records))],
        ["files that are no record", str(len(bad))],
        ["a GPU TensorFlow sees", str(sum(bool(_list(_dict(r.get("tensorflow")).get("gpus"))) for r in records))],
    ]
    versions = Counter(str(_dict(r.get("tensorflow")).get("version") or "not importable") for r in records)
    rows += [[f"TensorFlow {v}", str(n)] for v, n in sorted(versions.items())]
    kinds = Counter(str(_dict(r.get("platform")).get("kind") or "?") for r in records)
    rows += [[f"platform {k}", str(n)] for k, n in sorted(kinds.items())]
    return rows


def problem_rows(records: Sequence[dict[str, Any]]) -> list[list[str]]:
    """Per problem code: severity, how many records, who, and the fix (from the first record that has it)."""
    by_code: dict[tuple[str, str], list[dict[str, Any]]] = {}
    fixes: dict[tuple[str, str], str] = {}
    for record in ordered(records):
        for p in record["problems"]:
            key = (p["code"], p["severity"])
            if not any(r is record for r in by_code.setdefault(key, [])):  # a code twice in a record counts once
                by_code[key].append(record)
            fixes.setdefault(key, str(p.get("fix") or ""))
    keys = sorted(by_code, key=lambda k: (SEVERITIES.index(k[1]), -len(by_code[k]), k[0]))
    return [[code, severity, str(len(by_code[(code, severity)])),
             ", ".join(student(r) for r in by_code[(code, severity)]), fixes[(code, severity)]]
            for code, severity in keys]


def duplicates(records: Sequence[dict[str, Any]]) -> list[str]:
    """Students who sent more than one record: ``"alice@pc1 (a.json, b.json)"``."""
    files: dict[str, list[str]] = {}
    for record in records:
        files.setdefault(student(record), []).append(record["_file"])
    return [f"{who} ({', '.join(names)})" for who, names in sorted(files.items()) if len(names) > 1]


# --------------------------------------------------------------------------- rendering


def _md(text: str) -> str:
    """Record text for Markdown: HTML special characters as entities (a viewer may render raw HTML)."""
    return html.escape(text, quote=False)


def render_markdown(records: Sequence[dict[str, Any]], bad: Sequence[tuple[str, str]], folder: str) -> str:
    records = ordered(records)
    lines = ["# Class report", "", f"{summary_line(records, bad)}. Records read from `{_md(folder)}`.", ""]
    lines += ["## Summary", ""] + _md_table(["what", "how many"], counts_rows(records, bad)) + [""]
    twice = duplicates(records)
    if twice:
        lines += ["Sent more than one record: " + _md("; ".join(twice)) + ".", ""]
    problems = problem_rows(records)
    if problems:
        header = ["problem", "severity", "records", "students", "what to do"]
        lines += ["## Problems by code", ""] + _md_table(header, [[_md(c) for c in r] for r in problems]) + [""]
    lines += ["## Students", ""]
    lines += _md_table(COLUMNS, [[_md(c) for c in row(r)] for r in records]) + [""]
    if bad:
        lines += ["## Files that are no record", ""]
        lines += _md_table(["file", "why"], [[_md(name), _md(reason)] for name, reason in bad]) + [""]
    return "\n".join(lines)


_EXTRA_CSS = "tr.warning td{background:#fff4dc}"


def render_html(records: Sequence[dict[str, Any]], bad: Sequence[tuple[str, str]], folder: str) -> str:
    """The same content as the Markdown, one file; ``_html_table`` escapes every cell."""
    esc = html.escape
    records = ordered(records)
    parts = [
        "<!doctype html><html><head><meta charset='utf-8'><title>Class report</title>",
        f"<style>{_CSS}\n{_EXTRA_CSS}</style></head><body><h1>Class report</h1>",
        f"<p>{esc(summary_line(records, bad))}.</p><p class='meta'>Records read from <code>{esc(folder)}</code>.</p>",
        "<h2>Summary</h2>",
        _html_table(["what", "how many"], counts_rows(records, bad)),
    ]
    twice = duplicates(records)
    if twice:
        parts.append(f"<p>Sent more than one record: {esc('; '.join(twice))}.</p>")
    problems = problem_rows(records)
    if problems:
        parts.append("<h2>Problems by code</h2>")
        classes = ["failed" if r[1] == "error" else "warning" for r in problems]
        parts.append(_html_table(["problem", "severity", "records", "students", "what to do"], problems, classes))
    parts.append("<h2>Students</h2>")
    classes = [{"errors": "failed", "warnings": "warning", "fine": ""}[group(r)] for r in records]
    parts.append(_html_table(COLUMNS, [row(r) for r in records], classes))
    if bad:
        parts.append("<h2>Files that are no record</h2>")
        parts.append(_html_table(["file", "why"], [list(item) for item in bad], ["failed"] * len(bad)))
    parts.append("</body></html>")
    return "\n".join(parts) + "\n"


def write_pages(out: Path, pages: Mapping[str, tuple[str, str]]) -> dict[str, Path]:
    """Write a report's pages into ``out`` - ``{"md": (file name, text), "html": ...}`` - and return their paths;
    ``InputError`` when ``out`` cannot be written."""
    try:
        out.mkdir(parents=True, exist_ok=True)
        paths = {kind: out / name for kind, (name, _text) in pages.items()}
        for kind, (_name, text) in pages.items():
            paths[kind].write_text(text, encoding="utf-8")
    except OSError as error:
        raise InputError(
            _("The report cannot be written into {out} ({reason}).").format(out=out, reason=error.strerror or error),
            _("Pass --out with a folder you can write."),
        ) from None
    return paths


def write_class_report(folder: Path, out: Path) -> dict[str, Any]:
    """Read ``folder``, write ``out``/class-report.md and .html; return their paths, the records, the bad files and
    the summary line. ``InputError`` when ``folder`` holds no ``*.json`` file."""
    records, bad = load_folder(folder)
    if not records and not bad:
        raise InputError(
            _("{folder} holds no *.json file.").format(folder=folder),
            _("Collect the students' preflight-*.json files (from `course preflight`) into it first."),
        )
    paths = write_pages(out, {"md": ("class-report.md", render_markdown(records, bad, str(folder))),
                              "html": ("class-report.html", render_html(records, bad, str(folder)))})
    return {**paths, "records": records, "bad": bad, "summary": summary_line(records, bad)}


def report_main(prog: str, folder: Path, fix: str, write: Callable[[], dict[str, Any]], none_read: str) -> int:
    """``course class-report`` and ``course progress`` once their options are read: ``write()`` the report of
    ``folder`` (``fix``: what to do when it is no folder), print where and its summary; 2 when it cannot be written
    or no file is a record (``none_read`` says so)."""
    try:
        if not folder.is_dir():
            raise InputError(_("{folder} is not a folder.").format(folder=folder), fix)
        written = write()
    except CourseError as error:
        print(f"{prog}: {error}", file=sys.stderr)  # CourseError says what, then what to do
        return 2
    print(written["md"])
    print(written["summary"])
    if not written["records"]:
        print(f"{prog}: {none_read}", file=sys.stderr)
        return 2
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="course class-report",
        description="Read the students' preflight records (*.json, in FOLDER and its sub-folders) and write one "
        "report, problems first: class-report.md and class-report.html.",
    )
    parser.add_argument("folder", type=Path, help="the folder with the collected preflight-*.json files")
    parser.add_argument("--out", metavar="DIR", type=Path, help="where to write the report (default: FOLDER)")
    args = parser.parse_args(argv)
    return report_main("course class-report", args.folder, _("Pass the folder that holds the students' records."),
                       lambda: write_class_report(args.folder, args.out or args.folder),
                       _("no file is a valid preflight record (the report lists why)."))


if __name__ == "__main__":
    raise SystemExit(main())
