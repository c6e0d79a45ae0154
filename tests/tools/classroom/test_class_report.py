"""``course class-report``: a folder of real and planted records becomes one report, problems first; bad files
are listed with why, and nothing from a record can add markup to the HTML."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest

from course_tools.classroom import class_report
from course_tools.classroom.class_report import invalid_reason, read_record

HOSTILE_HOST = "<script>alert('x')</script>"
HOSTILE_USER = 'eve" onmouseover="alert(1)'


def planted(base: dict, user: str, host: str, problems: list[dict], **changes) -> dict:
    record = copy.deepcopy(base)
    record.update(user=user, host=host, problems=problems, **changes)
    return record


def problem(code: str, severity: str) -> dict:
    return {"code": code, "severity": severity, "message": f"{code} found", "fix": f"fix {code} with `course doctor`",
            "source": "x"}


@pytest.fixture
def class_folder(real_run, tmp_path) -> Path:
    """The real record, planted records (errors, warnings, fine, hostile names) and six files that are no record."""
    folder = tmp_path / "collected"
    (folder / "room-b").mkdir(parents=True)
    base = real_run.record
    text = real_run.path.read_text(encoding="utf-8")
    (folder / "real.json").write_text(text, encoding="utf-8")
    windows = planted(
        base, "bob", "laptop", [problem("tensorflow-unsupported", "error"),
                                problem("windows-native-no-gpu-after-2.10", "warning")],
        platform={**base["platform"], "kind": "windows", "system": "Windows", "release": "10"},
        tensorflow={**(base["tensorflow"] or {}), "version": "2.10.1", "supported": False, "is_cuda_build": False},
    )
    doctor_error = planted(base, "alice", "gpu-box", [problem("driver-too-old", "error")],
                           nvidia={"status": "ok", "driver_version": "470.57.02", "gpus": [
                               {"index": 0, "name": "Tesla T4", "memory_mib": 15360, "compute_capability": "7.5"}]})
    slow = planted(base, "carol", "pc1", [problem("gpu-slower-than-cpu", "warning")])
    fine = planted(base, "dave", "pc2", [])
    hostile = planted(base, HOSTILE_USER, HOSTILE_HOST, [problem("no-gpu", "error")])
    files = {
        "bob.json": windows, "room-b/alice.json": doctor_error, "carol.json": slow, "dave.json": fine,
        "room-b/dave-again.json": fine, "hostile.json": hostile,
        "other.json": {**base, "schema": "something-else/3"},
        "list.json": [base],
    }
    for name, data in files.items():
        (folder / name).write_text(json.dumps(data), encoding="utf-8")
    (folder / "cut.json").write_text(text[: len(text) // 2], encoding="utf-8")
    (folder / "junk.json").write_bytes(bytes(range(256)) * 4)
    (folder / "empty.json").write_bytes(b"")
    (folder / "notes.txt").write_text("not a record, not read")
    return folder


BAD = {
    "cut.json": "not valid JSON",
    "junk.json": "not UTF-8 text",
    "empty.json": "empty file",
    "list.json": "a JSON list, not a preflight record",
    "other.json": "schema 'something-else/3', expected 'course-preflight/1'",
}


def students_order(markdown: str) -> list[str]:
    section = markdown.split("## Students", 1)[1].split("##", 1)[0]
    return [line.split("|")[1].strip() for line in section.splitlines() if line.startswith("| ")][1:]


def test_the_report_lists_every_record_problems_first(real_run, class_folder, tmp_path, capsys):
    out = tmp_path / "report"
    assert class_report.main([str(class_folder), "--out", str(out)]) == 0
    printed = capsys.readouterr().out.splitlines()
    real = real_run.record
    real_errors = any(p["severity"] == "error" for p in real["problems"])
    real_warnings = any(p["severity"] == "warning" for p in real["problems"])
    assert printed == [  # bob has an error and a warning: he counts under both
        str(out / "class-report.md"),
        f"7 records: {3 + real_errors} with errors, {2 + real_warnings} with warnings, "
        f"{2 + (not real['problems'])} fine, 5 unreadable",
    ]
    hostile = (HOSTILE_USER, f"{HOSTILE_USER}@&lt;script&gt;alert('x')&lt;/script&gt;")
    real_row = (real["user"], f"{real['user']}@{real['host']}")
    errors = [("alice", "alice@gpu-box"), ("bob", "bob@laptop"), hostile] + ([real_row] if real_errors else [])
    fine = [("dave", "dave@pc2"), ("dave", "dave@pc2")] + ([] if real_errors else [real_row])
    expected = [who for _, who in sorted(errors)] + ["carol@pc1"] + [who for _, who in sorted(fine)]
    assert students_order((out / "class-report.md").read_text(encoding="utf-8")) == expected


def test_the_report_counts_and_lists_what_it_read_and_nothing_becomes_markup(class_folder):
    written = class_report.write_class_report(class_folder, class_folder)
    assert dict(written["bad"]).keys() == BAD.keys()  # files that are no record, with why
    for name, why in written["bad"]:
        assert BAD[name] in why, (name, why)
    markdown = written["md"].read_text(encoding="utf-8")
    assert all(name in markdown.split("## Files that are no record", 1)[1] for name in BAD)
    assert "room-b/alice.json" in markdown and "notes.txt" not in markdown  # sub-folders are read too, *.json only
    for counted in ("TensorFlow 2.10.1 | 1", "platform windows | 1", "unreadable | 5",
                    "driver-too-old | error | 1 | alice@gpu-box | fix driver-too-old with `course doctor`",
                    "gpu-slower-than-cpu | warning | 1 | carol@pc1"):
        assert f"| {counted} |" in markdown
    assert "Sent more than one record: dave@pc2 (dave.json, room-b/dave-again.json)." in markdown
    assert "Tesla T4, 15360 MiB" in markdown and "470.57.02" in markdown and "2.10.1 (CPU-only build)" in markdown
    assert "<script>" not in markdown and "&lt;script&gt;" in markdown
    page = written["html"].read_text(encoding="utf-8")  # code spans as code: tests/test_reports_browser.py
    assert "<script>" not in page and 'onmouseover="' not in page and "eve&quot; onmouseover=&quot;alert(1)" in page
    assert "&lt;script&gt;alert(&#x27;x&#x27;)&lt;/script&gt;" in page
    assert page.count("<tr class=\"failed\">") >= 3 + 5  # error rows and the bad files


def test_a_missing_or_empty_folder_is_bad_input(tmp_path, capsys):
    assert class_report.main([str(tmp_path / "nope")]) == 2
    assert "is not a folder" in capsys.readouterr().err
    assert class_report.main([str(tmp_path)]) == 2
    assert "holds no *.json file" in capsys.readouterr().err
    assert not (tmp_path / "class-report.md").exists()


def test_only_bad_files_still_writes_the_report_but_exits_2(tmp_path, capsys):
    (tmp_path / "a.json").write_text("{")
    assert class_report.main([str(tmp_path)]) == 2
    assert "0 records: 0 with errors, 0 with warnings, 0 fine, 1 unreadable" in capsys.readouterr().out
    assert "a.json" in (tmp_path / "class-report.md").read_text()


def test_an_out_that_cannot_be_written_is_bad_input(class_folder, tmp_path, capsys):
    (tmp_path / "file").write_text("x")
    assert class_report.main([str(class_folder), "--out", str(tmp_path / "file" / "report")]) == 2
    assert "cannot be written" in capsys.readouterr().err


@pytest.mark.parametrize(
    "data, why",
    [
        ({"schema": "course-preflight/1", "host": "h", "problems": []}, '"user" is missing'),
        ({"schema": "course-preflight/1", "user": "u", "host": "h", "problems": {}}, '"problems" is missing or not'),
        ({"schema": "course-preflight/1", "user": "u", "host": "h", "problems": [{"code": "x", "severity": "bad"}]},
         "severity is 'bad'"),
        ({"schema": "course-preflight/1", "user": "u", "host": "h", "problems": ["x"]}, 'without a "code"'),
        ({"user": "u"}, 'no "schema" key'),
        ("text", "a JSON str"),
    ],
)
def test_a_record_with_missing_or_wrong_fields_is_no_record(data, why):
    assert why in invalid_reason(data)


def test_odd_values_in_a_valid_record_do_not_crash_the_report(tmp_path):
    odd = {"schema": "course-preflight/1", "user": "u", "host": "h", "problems": [],
           "nvidia": "broken", "tensorflow": [1], "compute": {"cpu": {"median_ms": "fast"}}, "data": None}
    (tmp_path / "odd.json").write_text(json.dumps(odd))
    (tmp_path / "deep.json").write_text("[" * 100_000 + "]" * 100_000)
    record, why = read_record(tmp_path / "odd.json")
    assert why is None and record["user"] == "u"
    written = class_report.write_class_report(tmp_path, tmp_path)
    assert [name for name, _ in written["bad"]] == ["deep.json"]
    assert "| u@h | odd.json |" in written["md"].read_text()
