"""``course hand-in``: a student's progress - each notebook's exercises and checkpoint, outcomes only, never answers -
in one file for the instructor (docs/class.md, "Progress: who is done, who is stuck"; ``target`` says where it goes).
"""

from __future__ import annotations

import argparse
import datetime as _dt
import os
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from course_tools import _, host_name, user_name
from course_utils.core import variables
from course_utils.core.errors import CourseError, InputError
from course_utils.core.files import write_json_atomic
from course_utils.core.places import results_dir
from course_utils.results import read_results

SCHEMA = "course-progress/1"
FILE_MODE = 0o640  # the student reads and writes it; the hand-in folder's group and ACL let instructors read it


def notebook_progress(record: Mapping[str, Any]) -> dict[str, Any]:
    """One notebook's outcomes from its record: smoke or full, when, the checkpoint, the exercises."""
    results = record.get("results") or {}
    passed = results.get("checkpoint_passed")
    return {
        "smoke": bool(record.get("smoke")),
        "updated": record.get("updated") or record.get("started"),
        "checkpoint": {"passed": passed if isinstance(passed, bool) else None,
                       "failed": list(results.get("checkpoint_failed") or [])},
        "exercises": dict(record.get("exercises") or {}),
    }


def gather(folder: Path) -> dict[str, Any]:
    """The progress record of the notebook records in ``folder`` (one per notebook, by its name)."""
    records = {}
    for path in sorted(folder.glob("*.json")):
        try:
            record = read_results(path)
        except (OSError, ValueError):  # a record cut short by a killed kernel: not progress to hand in
            continue
        if isinstance(record, dict) and isinstance(record.get("notebook"), str):
            records[path.stem] = record
    if not records:
        raise InputError(
            _("There is no notebook record in {folder} to hand in.").format(folder=folder),
            _("Run a notebook first: its setup cell starts its record. Then run `course hand-in` again."))
    return {
        "schema": SCHEMA,
        "user": user_name(),
        "host": host_name(),
        "handed_in": _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds"),
        "notebooks": {r["notebook"]: notebook_progress(r) for _, r in sorted(records.items())},
    }


def target(out: Path | None, user: str) -> Path:
    """Where the progress goes: ``--out`` (a file, or a folder for ``progress-<user>.json``), else the hand-in folder
    (``COURSE_HANDIN_DIR``: ``<user>.json``), else ``progress-<user>.json`` here."""
    if out is not None:
        return out / f"progress-{user}.json" if out.is_dir() else out
    folder = os.environ.get(variables.HANDIN_DIR)
    if folder:
        return Path(folder) / f"{user}.json"
    return Path.cwd() / f"progress-{user}.json"


def hand_in(out: Path | None = None) -> tuple[Path, dict[str, Any]]:
    """Write this student's progress where ``target`` says; return where it went, and what."""
    data = gather(results_dir())
    path = target(out, data["user"])
    if hasattr(os, "getuid") and path.exists() and path.stat().st_uid != os.getuid():
        raise InputError(
            _("{path} belongs to another account: it is not yours to replace.").format(path=path),
            _("Tell your instructor: someone handed in under your name."))
    try:
        write_json_atomic(path, data, mode=FILE_MODE)
    except OSError as error:
        raise InputError(
            _("Your progress cannot be written to {path} ({reason}).").format(path=path,
                                                                              reason=error.strerror or error),
            _("Pass --out with a file or folder you can write.")) from None
    return path, data


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="course hand-in",
        description="Hand in your progress: each notebook's exercises (right, wrong, not answered, tries) and "
        "checkpoint, for your instructor. Your answers themselves are not in it.")
    parser.add_argument("--out", type=Path, metavar="PATH",
                        help="a file or folder to write to (default: the class's hand-in folder, else this folder)")
    args = parser.parse_args(argv)
    try:
        path, data = hand_in(args.out)
    except CourseError as error:
        print(f"course hand-in: {error}", file=sys.stderr)  # CourseError says what, then what to do
        return 2
    notebooks = len(data["notebooks"])
    if os.environ.get(variables.HANDIN_DIR) and args.out is None:
        print(_("Handed in: {notebooks} notebook(s), in {path}. Your instructor can read it; other students "
                "cannot.").format(notebooks=notebooks, path=path))
    else:
        print(_("Written: {notebooks} notebook(s), in {path}. Send this file to your instructor.").format(
            notebooks=notebooks, path=path))
    return 0
