"""``course grading``: the lessons' exercises as an nbgrader course, graded by the course's own checks.

The first tests read and run the exported notebooks in this process; the last runs nbgrader itself (generate,
autograde, feedback) on a planted class: right, partly right, wrong, empty and tampered submissions.
"""

from __future__ import annotations

import contextlib
import csv
import io
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from course_tools.classroom import grading
from course_tools.classroom.progress import course_exercises
from course_tools.links import release
from course_utils.core.places import PROJECT_ROOT

from ...conftest import ROOT


def cells(path: Path) -> list[dict]:
    return json.loads(path.read_text(encoding="utf-8"))["cells"]


def source(cell: dict) -> str:
    return "".join(cell["source"]) if isinstance(cell["source"], list) else cell["source"]


@pytest.fixture(scope="module", params=["en", "zh"])
def exported(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> tuple[str, Path]:
    folder = tmp_path_factory.mktemp(f"grading-{request.param}")
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        assert grading.main([str(folder), "--language", request.param]) == 0
    assert printed.getvalue().startswith("Written: 7 assignments")
    return request.param, folder


def test_each_exercise_becomes_its_task_an_answer_cell_and_a_locked_check_worth_one_point(exported):
    language, folder = exported
    assert "c.ClearSolutions.code_stub" in (folder / "nbgrader_config.py").read_text()
    for notebook, numbers in course_exercises():
        (path,) = (folder / "source" / f"nb{notebook[:2]}").glob("*.ipynb")
        assert path.name == f"{notebook}.ipynb"
        found = cells(path)
        checks = [c for c in found if c["metadata"].get("nbgrader", {}).get("grade")]
        assert [c["id"] for c in checks] == [f"check-{n.replace('.', '_')}" for n in numbers]
        for cell in checks:
            grade = cell["metadata"]["nbgrader"]
            assert grade["locked"] and grade["points"] == 1 and re.fullmatch(r"[a-zA-Z0-9_-]+", grade["grade_id"])
            assert f'nb{notebook[:2]}.CHECKS["' in source(cell)
        answers = [c for c in found if c["metadata"].get("nbgrader", {}).get("solution")]
        assert len(answers) == len(numbers)
        assert all("### BEGIN SOLUTION\n" in source(c) and "### END SOLUTION" in source(c) for c in answers)
        tasks = [source(c) for c in found if c["id"].startswith("task-")]
        assert len(tasks) == len(numbers)
        assert all(t.startswith("### ") and n in t.splitlines()[0] for t, n in zip(tasks, numbers, strict=True))
        text = "\n".join(source(c) for c in found if c["cell_type"] == "markdown")
        assert "](../" not in text and "](./" not in text, f"{path.name}: a relative link left"
        lesson = "notebooks/zh/" if language == "zh" else "notebooks/"
        assert f"/blob/{release(PROJECT_ROOT).tag}/{lesson}{notebook}.ipynb)" in text


def test_the_lessons_solutions_pass_their_checks_and_the_students_empty_cells_do_not(exported, monkeypatch, capsys):
    """Each test cell run after the instructor's answer cell passes; after the student's copy it fails, and the
    check says why in the edition's language (the context cell sets it)."""
    language, folder = exported
    monkeypatch.setenv("COURSE_LANG", "en")  # the zh context cell sets it: restored after the test
    for path in sorted((folder / "source").glob("*/*.ipynb")):
        found = cells(path)
        for version in ("solution", "student"):
            namespace: dict = {}
            for cell in (c for c in found if c["cell_type"] == "code"):
                code = source(cell)
                if version == "student" and cell["id"].startswith("answer-"):
                    code = re.sub(r"### BEGIN SOLUTION\n.*?### END SOLUTION", "", code, flags=re.S)  # as released
                if cell["id"].startswith("check-") and version == "student":
                    with pytest.raises(AssertionError):
                        exec(code, namespace)  # noqa: S102 - the exported test cell
                else:
                    exec(code, namespace)  # noqa: S102 - the exported cells
            if language == "zh":
                assert re.search(r"[\u4e00-\u9fff]", capsys.readouterr().out), f"{path.name}: the checks spoke English"


def lesson(tmp_path: Path, solution: str, heading: str = "### Exercise 9.1: a task") -> Path:
    """A lesson notebook with one exercise, in a folder of its own."""
    notebook = {"cells": [
        {"cell_type": "code", "source": "import math\n\ndef helper(x):\n    return math.sqrt(x)\n"},
        {"cell_type": "markdown", "source": f"Some text.\n\n{heading}\n\nSee [the guide](../docs/guide.md#a)."},
        {"cell_type": "code", "source": "answer = None\ncourse.check(\"9.1\", answer)"},
        {"cell_type": "markdown", "source": f"<details><summary>Solution</summary>\n\n```python\n{solution}\n```\n"
                                            "\n</details>"},
    ], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    folder = tmp_path / "notebooks"
    folder.mkdir(exist_ok=True)
    (folder / "09_planted.ipynb").write_text(json.dumps(notebook), encoding="utf-8")
    return folder


def test_a_solution_gets_the_lessons_definitions_it_uses_and_relative_links_become_absolute(tmp_path):
    written = grading.write_course(tmp_path / "course", notebooks=lesson(tmp_path, "answer = helper(16)"))
    found = {c["id"]: source(c) for c in cells(written[0])}
    assert found["nb09-context"] == "import math\n\n\ndef helper(x):\n    return math.sqrt(x)"
    assert found["task-9_1"].startswith("### Exercise 9.1: a task")  # the text above the heading is the lesson's
    assert re.search(r"\]\(https://github\.com/[^)]+/blob/v[^/]+/docs/guide\.md#a\)", found["task-9_1"])


@pytest.mark.parametrize(("solution", "heading", "said"), [
    ("answer = unknown_helper(16)", "### Exercise 9.1: a task", "'unknown_helper'"),
    ("answer = 4", "### Exercise 8.8: another", "Exercise 9.1 has no task heading"),
    (None, None, "There are no lesson notebooks"),  # a folder without lessons
])
def test_a_lesson_the_export_cannot_read_is_refused_with_what_to_do(tmp_path, capsys, solution, heading, said):
    notebooks = lesson(tmp_path, solution, heading) if solution else tmp_path
    code = grading.main([str(tmp_path / "course"), "--notebooks", str(notebooks)])
    error = capsys.readouterr().err
    assert code == 2 and said in error and "What to do:" in error
    assert not (tmp_path / "course" / "source").exists() or not list((tmp_path / "course" / "source").rglob("*.ipynb"))


def test_the_course_folder_holds_the_solutions_so_it_is_made_private(tmp_path, capsys):
    assert grading.main([str(tmp_path / "mine")]) == 0
    assert (tmp_path / "mine").stat().st_mode & 0o777 == 0o700 and "Warning" not in capsys.readouterr().err
    (tmp_path / "open").mkdir(mode=0o755)
    assert grading.main([str(tmp_path / "open")]) == 0
    assert "chmod 700" in capsys.readouterr().err


def answered(course: Path, answers: dict[str, str], tamper: bool = False) -> str:
    """A student's copy of nb03 as they hand it in: the released notebook with ``answers`` (cell id -> code)."""
    notebook = json.loads((course / "release" / "nb03" / "03_memory.ipynb").read_text(encoding="utf-8"))
    for cell in notebook["cells"]:
        if cell["id"] in answers:
            cell["source"] = answers[cell["id"]]
        if tamper and cell["id"].startswith("check-"):
            cell["source"] = "assert True  # every check passes"
    return json.dumps(notebook)


def solution_of(course: Path, cell_id: str) -> str:
    code = next(source(c) for c in cells(course / "source" / "nb03" / "03_memory.ipynb") if c["id"] == cell_id)
    return re.sub(r"### (BEGIN|END) SOLUTION\n?", "", code)


def documented_steps() -> str:
    """docs/class.md's commands for grading collected files without nbgrader's exchange (its first bash block after
    the anchor "grading-without-the-exchange")."""
    text = (ROOT / "docs" / "class.md").read_text(encoding="utf-8")
    after = text[text.index('<a id="grading-without-the-exchange"></a>'):]
    block = re.search(r"```bash\n(.*?)```", after, re.S)
    assert block, "docs/class.md: no bash block after the anchor grading-without-the-exchange"
    return block.group(1)


def test_the_documented_steps_grade_a_planted_class_with_the_course_checks(tmp_path):
    """No exchange and no root: a planted class's answered copies (right, partly right, wrong, empty, and a changed
    test cell) come back by any means into ~/collected/nb03/, and the documented block, run as written (HOME is this
    test's folder), places them, autogrades and exports."""
    env = {**os.environ, "HOME": str(tmp_path),  # nbgrader's gradebook needs ``alembic`` on PATH (the environment's)
           "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"}
    course = tmp_path / "tf-gpu-course-grades"
    grading.write_course(course)
    done = subprocess.run([sys.executable, "-m", "nbgrader", "generate_assignment", "nb03"], cwd=course, env=env,
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0 and "| ERROR]" not in done.stderr, done.stderr[-3000:]
    right = {cell: solution_of(course, cell) for cell in ("answer-3_1", "answer-3_2")}
    wrong = {"answer-3_1": 'answer = {"a class of four": "growth", "two GPUs on one T4": "limit", '
                           '"a program you cannot change": "default"}',
             "answer-3_2": "answer = 1000"}
    collected = tmp_path / "collected" / "nb03"
    collected.mkdir(parents=True)
    for student, answers, tamper in (("ada", right, False), ("ben", {**right, "answer-3_2": "answer = 1000"}, False),
                                     ("chen", wrong, False), ("dina", {}, False), ("eli", wrong, True)):
        (collected / f"{student}.ipynb").write_text(answered(course, answers, tamper), encoding="utf-8")
    done = subprocess.run(["bash", "-euo", "pipefail", "-c", documented_steps()], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0 and "| ERROR]" not in done.stderr, done.stderr[-3000:]
    with (course / "grades.csv").open(encoding="utf-8") as table:
        grades = {row["student_id"]: float(row["score"]) for row in csv.DictReader(table)
                  if row["assignment"] == "nb03"}
    assert grades == {"ada": 2, "ben": 1, "chen": 0, "dina": 0, "eli": 0}
    tampered = cells(course / "autograded" / "eli" / "nb03" / "03_memory.ipynb")
    assert "assert True" not in json.dumps(tampered)  # nbgrader put the locked checks back
    feedback = (course / "feedback" / "ben" / "nb03" / "03_memory.html").read_text(encoding="utf-8")
    assert "Exercise 3.2" in feedback and "is not it" in feedback  # the course's own hint, in the feedback
