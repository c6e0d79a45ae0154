"""The instructor's three reports as a browser shows them (marker ``browser``): the run report of the hosted tier's
course run (the Chinese notebooks; the report speaks the instructor's language), a class report of planted
preflight records, and the progress report of a planted class.

Each is one HTML file that loads nothing from elsewhere; Chromium opens it from disk with every other request
refused, and the test checks what an instructor reads first. Screenshots: ``build/screenshots/report_run.png``,
``report_class.png`` and ``report_progress.png``.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from course_tools.classroom import class_report, handin, progress

from .conftest import IN_CI
from .site_served import CI_OUT
from .test_browser import SCREENSHOTS, VIEWPORT


def show(chromium, page_file: Path, screenshot: str) -> tuple[object, list[str]]:
    """``page_file`` in a fresh context; returns the page's text and what went wrong (errors, outside requests)."""
    problems: list[str] = []
    context = chromium.new_context(viewport=VIEWPORT)
    try:
        context.route(re.compile(r"^(?!file://)"), lambda route: (  # only what is not on disk reaches Python
            problems.append(f"asked for {route.request.url}"), route.abort()))
        page = context.new_page()
        page.on("console", lambda m: problems.append(f"console: {m.text}") if m.type == "error" else None)
        page.on("pageerror", lambda e: problems.append(f"page error: {e}"))
        page.goto(page_file.resolve().as_uri())  # COURSE_CI_OUT may be relative (the Makefile gives build/ci/course)
        SCREENSHOTS.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(SCREENSHOTS / screenshot), full_page=True)
        return page.inner_text("body"), problems
    finally:
        context.close()


@pytest.mark.browser
def test_the_run_report_says_mode_checkpoint_and_what_each_key_result_means(chromium):
    report = CI_OUT.with_name(CI_OUT.name + "-zh") / "report.html"
    if not report.is_file():
        message = f"no {report}: run the hosted tier first (make hosted)"
        if IN_CI:
            pytest.fail(message)
        pytest.skip(message)
    text, problems = show(chromium, report, "report_run.png")
    assert problems == []
    assert "notebook\tmode\tparameters\tstatus\tcheckpoint" in text
    assert "smoke mode (short runs)" in text and "\tpassed\t" in text
    assert "Key results of 07_beyond_one_gpu:" in text


def preflight(user: str, problems: list[dict]) -> dict:
    return {"schema": "course-preflight/1", "user": user, "host": "pc", "problems": problems,
            "platform": {"kind": "linux"}, "tensorflow": {"version": "2.21.0", "gpus": []}}


@pytest.mark.browser
def test_the_class_report_shows_commands_as_code_and_counts_each_severity(chromium, tmp_path):
    error = {"code": "driver-too-old", "severity": "error", "message": "old", "fix": "Run `nvidia-smi` first."}
    warning = {"code": "gpu-slower-than-cpu", "severity": "warning", "message": "slow", "fix": "Use a bigger batch."}
    for user, found in (("ana", [error, warning]), ("ben", [warning]), ("chen", [])):
        (tmp_path / f"{user}.json").write_text(json.dumps(preflight(user, found)), encoding="utf-8")
    written = class_report.write_class_report(tmp_path, tmp_path)
    text, problems = show(chromium, written["html"], "report_class.png")
    assert problems == []
    assert "3 records: 1 with errors, 2 with warnings, 1 fine, 0 unreadable" in text
    assert "Run nvidia-smi first." in text and "`" not in text, "the command shows as code, without backticks"


@pytest.mark.browser
def test_the_progress_report_names_who_is_stuck(chromium, tmp_path):
    stuck = {"status": "wrong", "attempts": 4, "right_at": None}
    right = {"status": "right", "attempts": 1, "right_at": 1}
    for user, e31, passed in (("ana", right, True), ("ben", stuck, False)):
        notebooks = {"03_memory": {"smoke": False, "checkpoint": {"passed": passed, "failed": []},
                                   "exercises": {"3.1": e31}}}
        record = {"schema": handin.SCHEMA, "user": user, "host": "pc", "handed_in": "2026-12-05T10:00:00+00:00",
                  "notebooks": notebooks}
        (tmp_path / f"{user}.json").write_text(json.dumps(record), encoding="utf-8")
    written = progress.write_progress(tmp_path, tmp_path / "report")
    text, problems = show(chromium, written["html"], "report_progress.png")
    assert problems == []
    assert "2 student(s) handed in; 1 stuck somewhere: ben." in text
    assert "03_memory\t3.1\t1: ana\t0\t1: ben (4)\t0" in text
