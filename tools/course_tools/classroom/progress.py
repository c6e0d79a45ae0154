"""``course progress FOLDER``: the class's progress - who is done, stuck, working or not started on each notebook's
exercises and checkpoint (docs/class.md, "Progress: who is done, who is stuck").

Where the file system says who wrote a file (POSIX), a record whose file belongs to another account than the student
it names is not counted (a classmate cannot hand in for someone) - unless it belongs to root or to the account running
``course progress``: files the instructor collected and copied are theirs.
"""

from __future__ import annotations

import importlib
import os
import pkgutil
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from course_tools import _
from course_tools.classroom.class_report import load_folder as read_folder
from course_tools.classroom.class_report import report_main, write_pages
from course_tools.classroom.handin import SCHEMA
from course_tools.report_page import ReportPage
from course_utils import lessons
from course_utils.lessons import RIGHT

STUCK_ATTEMPTS = 3  # wrong this many times, never right: stuck
DONE, WORKING, STUCK, NOT_STARTED = "done", "working", "stuck", "not started"
STATES = (DONE, WORKING, STUCK, NOT_STARTED)
CHECKPOINT = "checkpoint"
MAX_BYTES = 1024 * 1024  # a progress record is a few kB


def course_exercises() -> list[tuple[str, list[str]]]:
    """Each course notebook with its exercises' numbers, in order: ``[("03_memory", ["3.1", "3.2"]), ...]``."""
    found = []
    for info in sorted(pkgutil.iter_modules(lessons.__path__), key=lambda m: m.name):
        if info.name.startswith("nb"):
            lesson = importlib.import_module(f"{lessons.__name__}.{info.name}")
            found.append((lesson.NOTEBOOK, list(getattr(lesson, "CHECKS", {}))))
    return found


def invalid_reason(data: Any) -> str | None:
    """Why parsed JSON is not a progress record; None when it is one."""
    if not isinstance(data, dict) or data.get("schema") != SCHEMA:
        return _("not a progress record (from `course hand-in`)")
    if not isinstance(data.get("user"), str) or not data["user"]:
        return _('"user" is missing or not text')
    if not isinstance(data.get("notebooks"), dict):
        return _('"notebooks" is missing or not an object')
    return None


def owner(path: Path | None = None) -> str | None:
    """The account that owns ``path``, or (no path) the one running this (POSIX); None where that is not known."""
    try:
        import pwd  # lazy: POSIX only

        return pwd.getpwuid(path.stat().st_uid if path else os.geteuid()).pw_name
    except (ImportError, AttributeError, KeyError, OSError):  # not POSIX, no such account, no such file
        return None


def load_folder(folder: Path) -> tuple[dict[str, dict[str, Any]], list[tuple[str, str]]]:
    """``({user: record}, [(file, why it was not counted)])``; the newest record of a user wins."""
    found, bad = read_folder(folder, invalid_reason, MAX_BYTES)
    records: dict[str, dict[str, Any]] = {}
    trusted = (None, "root", owner())  # an unknown owner, root, and whoever runs this: they collected the files
    for data in found:
        wrote, kept = owner(folder / data["_file"]), records.get(data["user"])
        if wrote not in (*trusted, data["user"]):
            bad.append((data["_file"], _("written by the account {owner}, not by {user}").format(
                owner=wrote, user=data["user"])))
        elif kept is None or str(data.get("handed_in", "")) > str(kept.get("handed_in", "")):
            records[data["user"]] = data
    return records, sorted(bad)


def exercise_state(notebook: Mapping[str, Any] | None, number: str) -> tuple[str, int]:
    """One student's state on one exercise, and their attempts."""
    if notebook is None:
        return NOT_STARTED, 0
    entry = (notebook.get("exercises") or {}).get(number) or {}
    attempts = int(entry.get("attempts") or 0)
    if entry.get("right_at") is not None or entry.get("status") == RIGHT:
        return DONE, attempts
    return (STUCK if attempts >= STUCK_ATTEMPTS else WORKING), attempts


def checkpoint_state(notebook: Mapping[str, Any] | None) -> str:
    if notebook is None:
        return NOT_STARTED
    passed = (notebook.get("checkpoint") or {}).get("passed")
    return DONE if passed is True else STUCK if passed is False else WORKING


def table(records: Mapping[str, dict[str, Any]]) -> list[dict[str, Any]]:
    """One row per notebook and exercise (then its checkpoint): the students in each state."""
    rows = []
    for notebook, numbers in course_exercises():
        for item in [*numbers, CHECKPOINT]:
            who: dict[str, list[str]] = {state: [] for state in STATES}
            attempts: dict[str, int] = {}  # the stuck students' wrong attempts
            for user, record in sorted(records.items()):
                progress = (record.get("notebooks") or {}).get(notebook)
                if item == CHECKPOINT:
                    who[checkpoint_state(progress)].append(user)
                else:
                    state, tries = exercise_state(progress, item)
                    who[state].append(user)
                    if state == STUCK:
                        attempts[user] = tries
            rows.append({"notebook": notebook, "item": item, **who, "attempts": attempts})
    return rows


def _names(names: Sequence[str], attempts: Mapping[str, int] | None = None) -> str:
    """``2: ana, ben (4)``: how many, then who (a stuck student's wrong attempts in brackets)."""
    shown = [f"{n} ({attempts[n]})" if attempts and n in attempts else n for n in names]
    return f"{len(names)}: {', '.join(shown)}" if names else "0"


def _rows(rows: Sequence[Mapping[str, Any]]) -> tuple[list[str], list[list[str]]]:
    words = {DONE: _("done"), WORKING: _("working"), STUCK: _("stuck"), NOT_STARTED: _("not started")}
    header = [_("notebook"), _("exercise"), *(words[s] for s in STATES)]
    item = {CHECKPOINT: _("checkpoint")}
    return header, [[r["notebook"], item.get(r["item"], r["item"]),
                     *(_names(r[s], r["attempts"] if s == STUCK else None) for s in STATES)] for r in rows]


def summary(records: Mapping[str, Any], rows: Sequence[Mapping[str, Any]]) -> str:
    stuck = sorted({name for r in rows for name in r[STUCK]})
    return _("{students} student(s) handed in; {stuck} stuck somewhere: {names}.").format(
        students=len(records), stuck=len(stuck), names=", ".join(stuck) or "-")


def legend() -> str:
    return _("Done: the check said right, or the checkpoint passed. Stuck: wrong {n} times or more and never right "
             "(the attempts in brackets), or the checkpoint failed. Working: started, neither yet. Not started: no "
             "record of the notebook.").format(n=STUCK_ATTEMPTS)


def render(records: Mapping[str, Any], rows: Sequence[Mapping[str, Any]], bad: Sequence[tuple[str, str]],
           folder: str) -> ReportPage:
    header, body = _rows(rows)
    page = ReportPage(_("Class progress"), escape=True)
    page.text(summary(records, rows))
    page.text(legend(), meta=True)
    page.table(header, body, ["failed" if r[STUCK] else "" for r in rows])
    if bad:
        page.heading(_("Files not counted"))
        page.table([_("file"), _("why")], [list(item) for item in bad], ["failed"] * len(bad))
    page.text(_("Read from {folder}.").format(folder=folder), meta=True)
    return page


def write_progress(folder: Path, out: Path) -> dict[str, Any]:
    records, bad = load_folder(folder)
    rows = table(records)
    paths = write_pages(out, "progress", render(records, rows, bad, str(folder)))
    return {**paths, "records": records, "rows": rows, "bad": bad, "summary": summary(records, rows)}


def main(argv: list[str] | None = None) -> int:
    return report_main(argv, "course progress", "Read the students' progress records (course hand-in) in FOLDER and "
                       "write who is done, stuck or not started, per notebook and exercise: progress.md and "
                       "progress.html.", "the hand-in folder, or a folder of collected progress-*.json files",
                       write_progress, _("Pass the folder that holds the students' progress records."),
                       _("no file is a progress record; students make one with `course hand-in`."))
