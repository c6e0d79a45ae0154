"""Class progress: ``course hand-in`` (a student's exercises and checkpoints, one file) and ``course progress`` (the
class's files as one report: who is done, stuck or not started). The hub tier checks the hand-in folder's privacy
with two real accounts (tests/tools/hub/)."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import pytest

from course_tools.classroom import class_report, handin, progress
from course_utils.notebook import Course
from course_utils.results import Recorder

from ...lessons.solutions import solved


def notebook_run(name: str, checks: list[tuple[str, object]], *, checkpoint: bool | None) -> None:
    """A student's run of notebook ``name`` into $COURSE_RESULTS_DIR: answers checked in order, then the checkpoint."""
    course = Course(name, device=None, recorder=Recorder(name, parameters={}, smoke=False))
    for number, answer in checks:
        course.check(number, answer)
    if checkpoint is not None:
        course.recorder.record(checkpoint_passed=checkpoint, checkpoint_failed=[] if checkpoint else ["x seen"])


RIGHT_32 = solved("03_memory", "Exercise 3.2")["answer"]


def test_hand_in_gathers_outcomes_and_tries_but_no_answers(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    notebook_run("03_memory", [("3.2", 7), ("3.2", RIGHT_32), ("3.1", None)], checkpoint=True)
    notebook_run("01_install_versions", [("1.1", "a")], checkpoint=None)  # stopped before its checkpoint
    (Path(os.environ["COURSE_RESULTS_DIR"]) / "cut.json").write_text('{"notebook": "05_', encoding="utf-8")
    assert handin.main([]) == 0
    path = tmp_path / f"progress-{handin.user_name()}.json"
    assert "Send this file to your instructor" in capsys.readouterr().out
    data = json.loads(path.read_text(encoding="utf-8"))
    assert data["schema"] == handin.SCHEMA and set(data["notebooks"]) == {"03_memory", "01_install_versions"}
    memory = data["notebooks"]["03_memory"]
    assert memory["checkpoint"] == {"passed": True, "failed": []}
    assert memory["exercises"]["3.2"] == {"status": "right", "attempts": 2, "right_at": 2}
    assert memory["exercises"]["3.1"] == {"status": "not answered yet", "attempts": 0, "right_at": None}
    assert data["notebooks"]["01_install_versions"]["checkpoint"]["passed"] is None
    assert str(RIGHT_32) not in json.dumps(data["notebooks"]), "outcomes only, never the answers"
    assert stat.S_IMODE(path.stat().st_mode) == handin.FILE_MODE


def test_on_the_hub_the_hand_in_goes_into_the_class_folder(tmp_path, monkeypatch, capsys):
    notebook_run("03_memory", [("3.2", 7)], checkpoint=False)
    monkeypatch.setenv("COURSE_HANDIN_DIR", str(tmp_path / "hand-in"))
    (tmp_path / "hand-in").mkdir()
    assert handin.main([]) == 0
    assert (tmp_path / "hand-in" / f"{handin.user_name()}.json").is_file()
    assert "other students cannot" in capsys.readouterr().out
    monkeypatch.setenv("LOGNAME", handin.user_name())  # the name stays; the uid below changes
    monkeypatch.setattr(handin.os, "getuid", lambda: 54321)  # the file now belongs to "another" account
    assert handin.main([]) == 2
    assert "belongs to another account" in capsys.readouterr().err


def test_nothing_to_hand_in_says_what_to_do(capsys):
    assert handin.main([]) == 2
    assert "Run a notebook first" in capsys.readouterr().err


def record(user: str, notebooks: dict, handed_in: str = "2026-12-05T10:00:00+00:00") -> dict:
    return {"schema": handin.SCHEMA, "user": user, "host": "pc", "handed_in": handed_in, "notebooks": notebooks}


def nb03(e31: dict | None = None, e32: dict | None = None, passed: bool | None = None) -> dict:
    empty = {"status": "not answered yet", "attempts": 0, "right_at": None}
    return {"smoke": False, "updated": "x", "checkpoint": {"passed": passed, "failed": []},
            "exercises": {"3.1": e31 or empty, "3.2": e32 or empty}}


@pytest.fixture
def hand_ins(tmp_path) -> Path:
    folder = tmp_path / "hand-in"
    folder.mkdir()
    files = {
        "ana.json": record("ana", {"03_memory": nb03({"status": "wrong", "attempts": 3, "right_at": 2},
                                                     {"status": "right", "attempts": 1, "right_at": 1}, True)}),
        "ben.json": record("ben", {"03_memory": nb03({"status": "wrong", "attempts": 4, "right_at": None},
                                                     {"status": "wrong", "attempts": 1, "right_at": None}, False)}),
        "chen.json": record("chen", {"01_install_versions": {"smoke": False, "checkpoint": {"passed": None},
                                                             "exercises": {}}}),
        "old/ben.json": record("ben", {}, handed_in="2026-12-01T10:00:00+00:00"),  # an older hand-in: not counted
        "preflight.json": {"schema": "course-preflight/1", "user": "dan", "host": "pc", "problems": []},
        "cut.json": '{"schema": "course-progress/1", "user": "e',
    }
    for name, data in files.items():
        (folder / name).parent.mkdir(exist_ok=True)
        (folder / name).write_text(data if isinstance(data, str) else json.dumps(data), encoding="utf-8")
    return folder


def row(rows: list[dict], notebook: str, item: str) -> dict:
    return next(r for r in rows if r["notebook"] == notebook and r["item"] == item)


def test_the_progress_report_says_who_is_done_stuck_working_or_not_started(hand_ins, tmp_path, capsys):
    out = tmp_path / "report"
    assert progress.main([str(hand_ins), "--out", str(out)]) == 0
    printed = capsys.readouterr().out.splitlines()
    assert printed[1] == "3 student(s) handed in; 1 stuck somewhere: ben."
    written = progress.write_progress(hand_ins, out)
    rows = written["rows"]
    assert [r["item"] for r in rows if r["notebook"] == "03_memory"] == ["3.1", "3.2", "checkpoint"]
    e31 = row(rows, "03_memory", "3.1")
    assert (e31["done"], e31["stuck"], e31["working"], e31["not started"]) == (["ana"], ["ben"], [], ["chen"])
    assert e31["attempts"] == {"ben": 4}, "right once counts as done, though the last try was wrong"
    assert row(rows, "03_memory", "3.2")["working"] == ["ben"]  # one wrong try: not stuck yet
    assert row(rows, "03_memory", "checkpoint")["stuck"] == ["ben"] and row(rows, "03_memory", "checkpoint")[
        "done"] == ["ana"]
    assert row(rows, "01_install_versions", "checkpoint")["working"] == ["chen"]
    assert row(rows, "07_beyond_one_gpu", "7.2")["not started"] == ["ana", "ben", "chen"]
    markdown = written["md"].read_text(encoding="utf-8")
    assert "| 03_memory | 3.1 | 1: ana | 0 | 1: ben (4) | 1: chen |" in markdown
    bad = dict(written["bad"])
    assert set(bad) == {"preflight.json", "cut.json"} and "course hand-in" in bad["preflight.json"]
    page = written["html"].read_text(encoding="utf-8")
    assert page.count('<tr class="failed">') == 2 + 2, "the rows with someone stuck, and the files not counted"


def test_the_report_is_in_the_instructors_language(hand_ins, tmp_path, monkeypatch):
    monkeypatch.setenv("COURSE_LANG", "zh-CN")
    markdown = progress.write_progress(hand_ins, tmp_path / "zh")["md"].read_text(encoding="utf-8")
    assert markdown.startswith("# 班级进度") and "| 笔记本 | 练习 | 完成 | 进行中 | 卡住 | 未开始 |" in markdown
    assert "| 03_memory | 检查点 |" in markdown


@pytest.mark.parametrize(("wrote", "reader", "bad"), [
    ("ben", "me", {"ana.json": "written by the account ben, not by ana"}),
    ("teacher", "teacher", {}),  # files a student sent, copied into a folder by the instructor's account
])
def test_a_hand_in_counts_if_its_student_or_the_reader_wrote_it(hand_ins, tmp_path, monkeypatch, wrote, reader, bad):
    def owner(path=None):  # owner() is who runs this; owner(path) is who wrote the file
        return reader if path is None else wrote if path.name == "ana.json" else None

    monkeypatch.setattr(progress, "owner", owner)
    written = progress.write_progress(hand_ins, tmp_path / "r")
    assert ("ana" in written["records"]) is not bad
    assert {name: why for name, why in written["bad"] if name == "ana.json"} == bad


def test_an_empty_class_exits_2_and_class_report_points_to_course_progress(hand_ins, tmp_path, capsys):
    empty = tmp_path / "empty"
    empty.mkdir()
    assert progress.main([str(empty)]) == 2
    assert "course hand-in" in capsys.readouterr().err
    why = class_report.invalid_reason(json.loads((hand_ins / "ana.json").read_text(encoding="utf-8")))
    assert "`course progress` reports those" in why


def run_all_in_a_new_kernel(cells: list[str], folder: Path) -> None:
    """A student's Run All: the cells in a kernel of their own, as a new notebook session starts one."""
    import nbclient
    from nbformat.v4 import new_code_cell, new_notebook

    nb = new_notebook(cells=[new_code_cell(source) for source in cells])
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nbclient.NotebookClient(nb, timeout=120, resources={"metadata": {"path": str(folder)}}).execute()


def test_wrong_in_three_run_alls_is_stuck_and_right_after_that_is_done(tmp_path, monkeypatch, capsys):
    """Notebook 01's own setup and exercise 1.1 cells, answered wrong, run in three new kernels (issue 40)."""
    cells = {c.get("id"): "".join(c["source"]) for c in json.loads(
        next(Path(__file__).parents[3].glob("notebooks/01_*.ipynb")).read_text(encoding="utf-8"))["cells"]}
    task = next(source for source in cells.values() if 'course.check("1.1", answer)' in source)
    assert "answer = None" in task
    run = [cells["e9927429"], cells["bf31e8a6"], task.replace("answer = None", 'answer = "a"')]  # parameters, setup
    for _ in range(3):
        run_all_in_a_new_kernel(run, tmp_path)
    hand_in = tmp_path / "hand-in"
    hand_in.mkdir()
    user = handin.user_name()
    assert handin.main(["--out", str(hand_in)]) == 0
    stuck = row(progress.write_progress(hand_in, tmp_path / "report")["rows"], "01_install_versions", "1.1")
    assert stuck["stuck"] == [user] and stuck["attempts"] == {user: 3}
    notebook_run("01_install_versions", [("1.1", "b")], checkpoint=None)  # a fourth run, right at last
    assert handin.main(["--out", str(hand_in)]) == 0
    done = row(progress.write_progress(hand_in, tmp_path / "report")["rows"], "01_install_versions", "1.1")
    assert done["done"] == [user] and not done["stuck"]
    assert json.loads((hand_in / f"progress-{user}.json").read_text(encoding="utf-8"))["notebooks"][
        "01_install_versions"]["exercises"]["1.1"] == {"status": "right", "attempts": 4, "right_at": 4}
