"""The instructor's three reports as a browser shows them (marker ``browser``): the run report of the hosted tier's
course run (the Chinese notebooks; the report speaks the instructor's language), a class report of planted
preflight records, and the progress report of a planted class.

Each is one HTML file that loads nothing from elsewhere; Chromium opens it from disk with every other request
refused, and the test checks that its tables render (cells, commands as code); what the reports say is checked on
their Markdown in tests/tools/. Screenshots: ``build/screenshots/report_run.png``, ``report_class.png`` and
``report_progress.png``.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from course_tools.classroom import class_report, handin, progress

from .conftest import IN_CI
from .site_served import CI_OUT, Visit
from .test_browser import SCREENSHOTS


def run_report(folder: Path) -> Path:
    report = CI_OUT.with_name(CI_OUT.name + "-zh") / "report.html"
    if not report.is_file():
        message = f"no {report}: run the hosted tier first (make hosted)"
        if IN_CI:
            pytest.fail(message)
        pytest.skip(message)
    return report


def class_report_of_three(folder: Path) -> Path:
    error = {"code": "driver-too-old", "severity": "error", "message": "old", "fix": "Run `nvidia-smi` first."}
    for user, found in (("ana", [error]), ("ben", [])):
        record = {"schema": "course-preflight/1", "user": user, "host": "pc", "problems": found,
                  "platform": {"kind": "linux"}, "tensorflow": {"version": "2.21.0", "gpus": []}}
        (folder / f"{user}.json").write_text(json.dumps(record), encoding="utf-8")
    return class_report.write_class_report(folder, folder)["html"]


def progress_of_two(folder: Path) -> Path:
    for user, e31, passed in (("ana", {"status": "right", "attempts": 1, "right_at": 1}, True),
                              ("ben", {"status": "wrong", "attempts": 4, "right_at": None}, False)):
        notebooks = {"03_memory": {"smoke": False, "checkpoint": {"passed": passed, "failed": []},
                                   "exercises": {"3.1": e31}}}
        record = {"schema": handin.SCHEMA, "user": user, "host": "pc", "handed_in": "2026-12-05T10:00:00+00:00",
                  "notebooks": notebooks}
        (folder / f"{user}.json").write_text(json.dumps(record), encoding="utf-8")
    return progress.write_progress(folder, folder / "report")["html"]


@pytest.mark.browser
@pytest.mark.parametrize(("write", "shown", "absent"), [
    (run_report, ["notebook\tmode\tparameters\tstatus\tcheckpoint", "\tpassed\t", "Key results of 07_beyond_one_gpu:"],
     []),
    (class_report_of_three, ["driver-too-old\terror\t1\tana@pc\tRun nvidia-smi first."], ["`"]),  # code, not `...`
    (progress_of_two, ["03_memory\t3.1\t1: ana\t0\t1: ben (4)\t0"], []),
], ids=["run", "class", "progress"])
def test_a_report_shows_its_tables_and_loads_nothing_from_elsewhere(chromium, tmp_path, write, shown, absent):
    visit = Visit(chromium, "file://", write(tmp_path).resolve().as_posix())  # COURSE_CI_OUT may be relative
    try:
        SCREENSHOTS.mkdir(parents=True, exist_ok=True)
        visit.page.screenshot(path=str(SCREENSHOTS / f"report_{write.__name__.split('_')[0]}.png"), full_page=True)
        text = visit.page.inner_text("body")
    finally:
        visit.close()
    assert (visit.errors, visit.outside) == ([], [])
    assert [s for s in shown if s not in text] == [] and [s for s in absent if s in text] == [], text
