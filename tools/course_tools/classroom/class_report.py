"""``course class-report FOLDER``: every student's preflight record in one table, problems first
(docs/class.md, "The class report"). Every value from a record is escaped, in the HTML and in the Markdown, so a
record cannot add markup to the report."""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from course_tools import _
from course_tools.classroom.handin import SCHEMA as PROGRESS_SCHEMA
from course_tools.report_page import ReportPage
from course_utils.core.errors import CourseError, InputError

SCHEMA = "course-preflight/1"  # the record `course preflight` writes
MAX_BYTES = 5 * 1024 * 1024  # a record is a few kB; a bigger file is no record
GROUPS = ("errors", "warnings", "fine")
SEVERITIES = ("error", "warning")


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


def load_folder(folder: Path, validate: Callable[[Any], str | None] = invalid_reason,
                max_bytes: int = MAX_BYTES) -> tuple[list[dict[str, Any]], list[tuple[str, str]]]:
    """The records under ``folder`` (each with ``_file``, its path there) and the files that are none, with why."""
    records, bad = [], []
    for path in sorted(folder.rglob("*.json")):
        name = path.relative_to(folder).as_posix()
        record, reason = read_record(path, validate, max_bytes)
        if record is None:
            bad.append((name, reason or "unknown"))
        else:
            records.append({**record, "_file": name})
    return records, bad


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


def platform_text(record: dict[str, Any]) -> str:
    """``linux (Linux 6.1, x86_64), Python 3.12``: the class report's cell and the preflight summary's line."""
    p, python = _dict(record.get("platform")), _dict(record.get("python"))
    text = str(p.get("kind") or p.get("system") or "?")
    if p.get("system") and p.get("release"):
        text += f" ({p['system']} {p['release']}" + (f", {p['machine']})" if p.get("machine") else ")")
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


def tensorflow_text(record: dict[str, Any]) -> str:
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


def data_text(record: dict[str, Any]) -> str:
    entries = [_dict(e) for e in _list(_dict(record.get("data")).get("datasets"))]
    return "; ".join(f"{e.get('dataset', '?')}: {e.get('source') or e.get('problem') or '?'}" for e in entries)


CELLS: dict[str, Callable[[dict[str, Any]], str]] = {  # the students table: a column, its cell (text, not escaped)
    "student": student,
    "file": lambda r: r["_file"],
    "platform": platform_text,
    "GPU": lambda r: "; ".join(_gpus(r)) or "none",
    "driver": lambda r: str(_dict(r.get("nvidia")).get("driver_version") or "-"),
    "TensorFlow": tensorflow_text,
    "product ms (GPU / CPU)": _product,
    "data": data_text,
    "problems": lambda r: ", ".join(f"{p['code']} ({p['severity']})" for p in r["problems"]) or "none",
}


def ordered(records: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """Errors first, then warnings, then fine; by user, host and file within a group."""
    return sorted(records, key=lambda r: (GROUPS.index(group(r)), r["user"], r["host"], r["_file"]))


def counts(records: Sequence[dict[str, Any]], bad: Sequence[tuple[str, str]]) -> dict[str, int]:
    """The records, those with errors and with warnings (a record with both counts under both), those with no
    problem, and the files that are no record: the summary line's and the summary table's numbers."""
    severities = Counter(severity for r in records for severity in {p["severity"] for p in r["problems"]})
    return {"records": len(records), "with errors": severities["error"], "with warnings": severities["warning"],
            "fine": sum(not r["problems"] for r in records), "unreadable": len(bad)}


def summary_line(records: Sequence[dict[str, Any]], bad: Sequence[tuple[str, str]]) -> str:
    """``"40 records: 3 with errors, 5 with warnings, 33 fine, 2 unreadable"``."""
    found = counts(records, bad)
    total = found.pop("records")
    return f"{total} record{'' if total == 1 else 's'}: " + ", ".join(f"{n} {what}" for what, n in found.items())


def counts_rows(records: Sequence[dict[str, Any]], bad: Sequence[tuple[str, str]]) -> list[list[str]]:
    """The summary table: what, how many."""
    rows = [[what, str(n)] for what, n in counts(records, bad).items()]
    rows.append(["a GPU TensorFlow sees",
                 str(sum(bool(_list(_dict(r.get("tensorflow")).get("gpus"))) for r in records))])
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


def render(records: Sequence[dict[str, Any]], bad: Sequence[tuple[str, str]], folder: str) -> ReportPage:
    """The report; every value from a record is escaped, in the Markdown too."""
    records = ordered(records)
    page = ReportPage("Class report", escape=True)
    page.text(f"{summary_line(records, bad)}. Records read from `{folder}`.")
    page.heading("Summary")
    page.table(["what", "how many"], counts_rows(records, bad))
    twice = duplicates(records)
    if twice:
        page.text("Sent more than one record: " + "; ".join(twice) + ".")
    problems = problem_rows(records)
    if problems:
        page.heading("Problems by code")
        page.table(["problem", "severity", "records", "students", "what to do"], problems,
                   ["failed" if r[1] == "error" else "warning" for r in problems])
    page.heading("Students")
    page.table(list(CELLS), [[cell(r) for cell in CELLS.values()] for r in records],
               [{"errors": "failed", "warnings": "warning", "fine": ""}[group(r)] for r in records])
    if bad:
        page.heading("Files that are no record")
        page.table(["file", "why"], [list(item) for item in bad], ["failed"] * len(bad))
    return page


def write_pages(out: Path, name: str, page: ReportPage) -> dict[str, Path]:
    """Write a report's pages into ``out`` as ``name``.md and ``name``.html and return their paths; ``InputError``
    when ``out`` cannot be written."""
    paths = {"md": out / f"{name}.md", "html": out / f"{name}.html"}
    try:
        out.mkdir(parents=True, exist_ok=True)
        page.write(paths["md"], paths["html"])
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
    paths = write_pages(out, "class-report", render(records, bad, str(folder)))
    return {**paths, "records": records, "bad": bad, "summary": summary_line(records, bad)}


def report_main(argv: list[str] | None, prog: str, description: str, folder_help: str,
                write: Callable[[Path, Path], dict[str, Any]], fix: str, none_read: str) -> int:
    """``course class-report`` and ``course progress``: read FOLDER and ``--out``, ``write(folder, out)`` the report
    (``fix``: what to do when FOLDER is no folder), print where and its summary; 2 when it cannot be written or no
    file is a record (``none_read`` says so)."""
    parser = argparse.ArgumentParser(prog=prog, description=description)
    parser.add_argument("folder", type=Path, help=folder_help)
    parser.add_argument("--out", metavar="DIR", type=Path, help="where to write the report (default: FOLDER)")
    args = parser.parse_args(argv)
    try:
        if not args.folder.is_dir():
            raise InputError(_("{folder} is not a folder.").format(folder=args.folder), fix)
        written = write(args.folder, args.out or args.folder)
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
    return report_main(argv, "course class-report", "Read the students' preflight records (*.json, in FOLDER and its "
                       "sub-folders) and write one report, problems first: class-report.md and class-report.html.",
                       "the folder with the collected preflight-*.json files", write_class_report,
                       _("Pass the folder that holds the students' records."),
                       _("no file is a valid preflight record (the report lists why)."))
