"""``course grading FOLDER``: the course's exercises as an nbgrader course, for a class that wants grades
(docs/class.md, "Grades with nbgrader"; https://nbgrader.readthedocs.io).

Each exercise becomes three cells made from the lesson notebook itself, so there is one text and one check per
exercise: its task, an answer cell holding the lesson's solution between nbgrader's markers, and a locked test cell
that asserts the course's own check. FOLDER holds the solutions, so a folder it makes is open to its owner only.
"""

from __future__ import annotations

import argparse
import ast
import builtins
import json
import os
import posixpath
import re
import symtable
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from course_tools import _, links, speaking
from course_utils.core.errors import CourseError, InputError
from course_utils.core.places import PROJECT_ROOT

COURSE_ID = "tf-gpu-course"
POINTS = 1  # each exercise's test cell
CONFIG = f'''# nbgrader's settings for the course's exercises (written by `course grading`).
c = get_config()  # noqa: F821 - nbgrader provides it
c.CourseDirectory.course_id = "{COURSE_ID}"
# The students' copies keep the task cell's lines; nbgrader puts nothing in place of the solution.
c.ClearSolutions.code_stub = {{"python": ""}}
# A test cell may load TensorFlow (Exercise 5.1): allow it time on a busy server.
c.Execute.timeout = 300
'''
_SOLUTION = re.compile(r"```python\n(.*?)```", re.S)
_LINK = re.compile(r"\]\((?!https?:|#|mailto:)([^)\s]+)\)")


@dataclass(frozen=True)
class Exercise:
    """One exercise of a lesson notebook, as its cells give it."""

    number: str  # "3.1"
    task: str  # the Markdown from its "### Exercise 3.1" heading
    template: str  # the task cell's lines before its check
    arguments: str  # what the task cell passes to the check: "answer"
    solution: str  # the code of the lesson's solution


def _text(cell: dict[str, Any]) -> str:
    source = cell.get("source", "")
    return "".join(source) if isinstance(source, list) else source


def _check_call(code: str) -> tuple[str, str, str] | None:
    """(number, arguments, template) when the cell ends with ``course.check("3.1", ...)``, else None."""
    try:
        tree = ast.parse(code)
    except SyntaxError:
        return None
    last = tree.body[-1] if tree.body else None
    if not (isinstance(last, ast.Expr) and isinstance(call := last.value, ast.Call)
            and isinstance(call.func, ast.Attribute) and call.func.attr == "check"
            and isinstance(call.func.value, ast.Name) and call.func.value.id == "course"
            and call.args and isinstance(call.args[0], ast.Constant)):
        return None
    arguments = ", ".join(ast.get_source_segment(code, node) or "" for node in call.args[1:])
    template = "\n".join(code.splitlines()[:last.lineno - 1]).rstrip()
    return str(call.args[0].value), arguments, template


def exercises(notebook: dict[str, Any], where: str = "notebook") -> list[Exercise]:
    """The exercises of a lesson notebook: each task cell, its text above it, its solution below it."""
    cells = notebook.get("cells", [])
    found = []
    for index, cell in enumerate(cells):
        parsed = _check_call(_text(cell)) if cell.get("cell_type") == "code" else None
        if parsed is None:
            continue
        number, arguments, template = parsed
        before = _text(cells[index - 1]) if index else ""
        heading = re.search(rf"^### .*?{re.escape(number)}\b.*", before, re.M)
        solution = _SOLUTION.search(_text(cells[index + 1])) if index + 1 < len(cells) else None
        if heading is None or solution is None:
            raise InputError(
                _("{where}: Exercise {number} has no task heading above it or no solution below it.").format(
                    where=where, number=number),
                _("Keep each exercise as the lessons write it: a '### ...' heading, the task cell, then the "
                  "solution in a ```python block."))
        found.append(Exercise(number, before[heading.start():].strip(), template, arguments,
                              solution.group(1).strip()))
    return found


def _free(code: str) -> set[str]:
    """The names ``code`` reads and does not bind, builtins aside (Python's own symbol tables): what it needs."""
    top = symtable.symtable(code, "<lesson>", "exec")
    tables, read = [top], set()
    while tables:
        table = tables.pop()
        tables += table.get_children()
        read |= {s.get_name() for s in table.get_symbols() if s.is_referenced() and (table is top or s.is_global())}
    bound = {s.get_name() for s in top.get_symbols() if s.is_assigned() or s.is_imported()}
    return read - bound - set(dir(builtins))


def _definitions(notebook: dict[str, Any]) -> dict[str, tuple[int, str, ast.stmt]]:
    """Each name the lesson's code binds by an import or a ``def``: (order, its code, the statement)."""
    found: dict[str, tuple[int, str, ast.stmt]] = {}
    order = 0
    for cell in notebook.get("cells", []):
        code = _text(cell)
        if cell.get("cell_type") != "code" or _check_call(code) is not None:
            continue
        try:
            tree = ast.parse(code)
        except SyntaxError:  # IPython magics: not a definition to copy
            continue
        for statement in tree.body:
            order += 1
            if isinstance(statement, (ast.FunctionDef, ast.ClassDef)):
                names = {statement.name}  # not its arguments and locals
            elif isinstance(statement, (ast.Import, ast.ImportFrom)):
                names = {(alias.asname or alias.name).split(".")[0] for alias in statement.names}
            else:
                continue
            for name in names:
                found.setdefault(name, (order, ast.get_source_segment(code, statement) or "", statement))
    return found


def context(notebook: dict[str, Any], needed: set[str], where: str = "notebook") -> str:
    """The lesson's imports and definitions that ``needed`` names use, in the lesson's order."""
    definitions, chosen, waiting = _definitions(notebook), {}, sorted(needed)
    while waiting:
        name = waiting.pop()
        if name in chosen:
            continue
        if name not in definitions:
            raise InputError(
                _("{where}: a solution uses {name!r}, which the lesson neither imports nor defines with def.").format(
                    where=where, name=name),
                _("Write the solution with names an import or a def of the lesson gives, or define it there."))
        chosen[name] = definitions[name]
        if not isinstance(definitions[name][2], (ast.Import, ast.ImportFrom)):  # a def: what its body needs too
            waiting += sorted(_free(definitions[name][1]))
    blocks = sorted({(order, code, isinstance(s, (ast.Import, ast.ImportFrom))) for order, code, s in chosen.values()})
    return "".join(("\n" if imported else "\n\n\n") + code for _order, code, imported in blocks).strip()


def _cell(kind: str, source: str, cell_id: str, **grading: Any) -> dict[str, Any]:
    cell: dict[str, Any] = {"cell_type": kind, "id": cell_id, "metadata": {}, "source": source}
    if grading:
        cell["metadata"]["nbgrader"] = {"schema_version": 3, "grade_id": cell_id, "grade": False,
                                        "solution": False, "locked": False, "task": False, **grading}
    if kind == "code":
        cell |= {"execution_count": None, "outputs": []}
    return cell


def _absolute_links(markdown: str, lesson: str, blob: str) -> str:
    """Relative links of a lesson (``../docs/x.md``) as links into the repository at this release."""
    folder = posixpath.dirname(lesson)
    return _LINK.sub(lambda m: f"]({blob}/{posixpath.normpath(posixpath.join(folder, m.group(1)))})", markdown)


def assignment(path: Path, lesson: str, blob: str) -> dict[str, Any]:
    """The nbgrader source notebook of one lesson notebook (``lesson``: its path in the repository)."""
    notebook = json.loads(path.read_text(encoding="utf-8"))
    number = path.name[:2]
    found = exercises(notebook, where=lesson)
    title = next((_text(c).splitlines()[0] for c in notebook["cells"] if _text(c).startswith("# ")), path.stem)
    edition = "zh" if "/zh/" in f"/{lesson}" else "en"
    with speaking(edition):  # the assignment speaks its notebooks' language, not the instructor's
        header = _("{title}: the exercises, graded").format(title=title.removeprefix("# "))
        intro = _("Read the lesson first: [{name}]({url}). Each exercise below is one of its exercises. Write your "
                  "answer in its cell. The cell after it is the course's own check (1 point): run it as often as you "
                  "like. Do not change the locked cells.").format(name=path.name, url=f"{blob}/{lesson}")
    cells = [_cell("markdown", f"# {header}\n\n{intro}", f"nb{number}-intro")]
    setup = ['import os\n\nos.environ["COURSE_LANG"] = "zh-CN"  # 检查用中文回答'] if edition == "zh" else []
    needed = set().union(*(_free(e.solution) for e in found)) if found else set()
    if shared := context(notebook, needed, where=lesson):
        setup.append(shared)
    if setup:
        cells.append(_cell("code", "\n\n".join(setup), f"nb{number}-context", locked=True))
    for exercise in found:
        key = exercise.number.replace(".", "_")
        cells += [
            _cell("markdown", _absolute_links(exercise.task, lesson, blob), f"task-{key}"),
            _cell("code", f"{exercise.template}\n### BEGIN SOLUTION\n{exercise.solution}\n### END SOLUTION",
                  f"answer-{key}", solution=True),
            _cell("code", f"from course_utils.lessons import nb{number}\n\n"
                          f'assert nb{number}.CHECKS["{exercise.number}"]({exercise.arguments}).ok',
                  f"check-{key}", grade=True, locked=True, points=POINTS),
        ]
    return {"cells": cells, "metadata": notebook.get("metadata", {}), "nbformat": 4, "nbformat_minor": 5}


def write_course(folder: Path, language: str = "en", notebooks: Path | None = None) -> list[Path]:
    """Write the nbgrader course into ``folder``; the source notebooks written. Existing sources are replaced."""
    root = notebooks or PROJECT_ROOT / "notebooks"
    lessons = root / "zh" if language == "zh" else root
    paths = links.notebooks(lessons)
    if not paths:
        raise InputError(_("There are no lesson notebooks in {folder}.").format(folder=lessons),
                         _("Run the command in the course folder, or pass --notebooks."))
    rel = links.release(PROJECT_ROOT)  # the course's repository at its release tag: its links, as the notebooks' badges
    blob, written = f"{rel.repository}/blob/{rel.tag}", []
    folder.mkdir(mode=0o700, parents=True, exist_ok=True)  # it holds the solutions: its owner's only
    for path in paths:
        lesson = path.relative_to(root.parent).as_posix()
        notebook = assignment(path, lesson, blob)
        target = folder / "source" / f"nb{path.name[:2]}" / path.name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(json.dumps(notebook, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
        written.append(target)
    (folder / "nbgrader_config.py").write_text(CONFIG, encoding="utf-8")
    return written


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="course grading",
        description="Write the course's exercises as an nbgrader course into FOLDER: nbgrader_config.py and "
        "source/nbNN/, one assignment per notebook, each exercise graded by the course's own check.")
    parser.add_argument("folder", type=Path, help="the nbgrader course folder (made if missing)")
    parser.add_argument("--language", choices=("en", "zh"), default="en", help="which edition's notebooks")
    parser.add_argument("--notebooks", type=Path, help="the lessons' folder (default: the course's notebooks/)")
    args = parser.parse_args(argv)
    try:
        written = write_course(args.folder, args.language, args.notebooks)
    except CourseError as error:
        print(f"course grading: {error}", file=sys.stderr)  # CourseError says what, then what to do
        return 2
    if hasattr(os, "getuid") and args.folder.stat().st_mode & 0o077:
        print(_("Warning: other accounts can open {folder}, and it holds the solutions. Make it yours only: "
                "chmod 700 {folder}").format(folder=args.folder), file=sys.stderr)
    print(_("Written: {count} assignments in {folder}. Next, in that folder: nbgrader generate_assignment nb01 "
            "(and each other), then release them to the class.").format(count=len(written), folder=args.folder))
    return 0
