"""scripts/translations.py: each kind of problem that keeps a Chinese notebook out of step, planted in a temporary
copy and found, named by notebook, cell number and id, with what to do; and the maintainer's commands (new, stamp,
status). That the shipped notebooks are in step is scripts/course_lint.py's rule translation (CONTRIBUTING.md).
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from .conftest import NOTEBOOKS, ROOT, run_main

sys.path.insert(0, str(ROOT / "scripts"))
import translations  # noqa: E402 - scripts/translations.py: the checks, and the maintainer's commands

from course_tools import links as notebook_links  # noqa: E402 - the generated cells (make links)

SCRIPT = ROOT / "scripts" / "translations.py"
GUIDE = 'CONTRIBUTING.md, "Translations (the Chinese edition)"'


def report(problems: list) -> str:
    return "\n".join(str(p) for p in problems)


PLANTED = NOTEBOOKS[1]  # 02: markdown, code with f-strings, a %pip magic in its install cell


def translate(cell: dict) -> None:
    """A stand-in translator: Chinese words in front of every markdown cell, and Chinese comments."""
    if cell["cell_type"] == "markdown" and translations.has_words(translations.source(cell)):
        cell["source"] = ["中文翻译：", *cell["source"]]
    elif cell["cell_type"] == "code" and translations.source(cell).startswith("%%"):  # a cell magic stays first
        cell["source"] = [cell["source"][0], "# 中文注释\n", *cell["source"][1:]]
    elif cell["cell_type"] == "code":
        cell["source"] = ["# 中文注释\n", *cell["source"]]


@pytest.fixture
def copy(tmp_path) -> Path:
    """A checkout with one English notebook and its translation, started, translated and stamped."""
    (tmp_path / "notebooks").mkdir()
    shutil.copy2(PLANTED, tmp_path / "notebooks" / PLANTED.name)
    shutil.copy2(ROOT / "pyproject.toml", tmp_path / "pyproject.toml")
    chinese = translations.new(tmp_path, PLANTED.name[:2])
    nb = translations.load(chinese)
    for cell in nb["cells"]:
        if not translations.generated(cell):
            translate(cell)
    translations.save(chinese, nb)
    translations.stamp(tmp_path, PLANTED.name[:2])
    assert translations.status(tmp_path) == [], report(translations.status(tmp_path))
    return tmp_path


def zh(root: Path) -> Path:
    return root / "notebooks" / "zh" / PLANTED.name


def en(root: Path) -> Path:
    return root / "notebooks" / PLANTED.name


def edit(path: Path, change) -> None:
    nb = translations.load(path)
    change(nb["cells"])
    translations.save(path, nb)


def run(root: Path, *args: str) -> subprocess.CompletedProcess:
    """``python scripts/translations.py --root ROOT ARGS``, through its ``main``."""
    return run_main(translations.main, "--root", str(root), *args)


def first(cells: list, cell_type: str, start: int = 2) -> int:
    """The index of the first cell of this type after the generated ones and the title."""
    return next(i for i, c in enumerate(cells) if i >= start and c["cell_type"] == cell_type
                and not translations.generated(c) and "parameters" not in translations.tags(c))


def test_new_starts_an_unstamped_copy_that_status_lists_cell_by_cell(tmp_path):
    (tmp_path / "notebooks").mkdir()
    shutil.copy2(PLANTED, tmp_path / "notebooks" / PLANTED.name)
    shutil.copy2(ROOT / "pyproject.toml", tmp_path / "pyproject.toml")
    script = subprocess.run([sys.executable, str(SCRIPT), "--root", str(tmp_path), "new", "02"], capture_output=True,
                            text=True, timeout=60)
    assert script.returncode == 0, script.stderr
    nb = translations.load(zh(tmp_path))
    english = translations.load(en(tmp_path))
    assert [c["id"] for c in nb["cells"]] == [c["id"] for c in english["cells"]]
    assert all(translations.stamp_of(c) is None for c in nb["cells"])
    assert any('language="zh-CN"' in translations.source(c) for c in nb["cells"]), "the setup call speaks Chinese"
    wanted = notebook_links.notebook_text(zh(tmp_path), notebook_links.release(tmp_path))
    assert zh(tmp_path).read_text(encoding="utf-8") == wanted, "its own badges and install cell, as make links writes"

    translatable = [i for i, c in enumerate(nb["cells"]) if not translations.generated(c)]
    assert [p.cell for p in translations.status(tmp_path) if p.kind == "unstamped"] == translatable
    again = run(tmp_path, "new", "02")
    assert again.returncode == 2 and "exists already" in again.stderr


def test_a_changed_english_cell_names_its_stale_translation_and_stamp_clears_only_the_cells_it_names(copy):
    cells = translations.load(en(copy))["cells"]
    one, two = sorted((first(cells, "markdown"), first(cells, "code")))
    edit(en(copy), lambda cells: [cells[i]["source"].append("\n# changed") for i in (one, two)])
    problems = translations.status(copy)
    assert [(p.kind, p.cell) for p in problems] == [("stale", one), ("stale", two)], report(problems)
    cell_id = cells[one]["id"]
    message = str(problems[0])
    assert message.startswith(f"notebooks/zh/{PLANTED.name} cell {one} (id {cell_id}): stale")
    assert f"python scripts/translations.py stamp 02 --cell {cell_id}" in message and GUIDE in message

    done = run(copy, "status")
    assert done.returncode == 1 and message in done.stdout
    assert run(copy, "stamp", "02", "--cell", cell_id).returncode == 0
    assert [(p.kind, p.cell) for p in translations.status(copy)] == [("stale", two)]
    bad = run(copy, "stamp", "02", "--cell", "no-such-id")
    assert bad.returncode == 2 and "no-such-id" in bad.stderr
    assert run(copy, "stamp", "02").returncode == 0 and run(copy, "status").returncode == 0


# (what picks the Chinese cell: a tag or a text in it, the text changed, what it becomes, the problem: kind, shown)
CHANGES = [("parameters", "10", "11", "code", "11"), ("hosted-setup", "install -q", "install -U", "code", "-U"),
           ("%%writefile {work}/gpu_check.py", "(256, 256)", "(128, 128)", "code", "128"),  # a written program
           ('language="zh-CN"', 'language="zh-CN"', 'language="en"', "setup", "'en'")]  # a setup call in English


@pytest.mark.parametrize(("key", "old", "new", "kind", "shown"), CHANGES, ids=["number", "magic", "program", "setup"])
def test_changed_code_in_a_chinese_cell_is_found(copy, key, old, new, kind, shown):
    cells = translations.load(zh(copy))["cells"]
    at = next(i for i, c in enumerate(cells) if key in translations.tags(c) or key in translations.source(c))
    changed = translations.source(cells[at]).replace(old, new, 1)
    assert changed != translations.source(cells[at])
    edit(zh(copy), lambda cells: cells[at].__setitem__("source", changed.splitlines(True)))
    problems = translations.status(copy)
    assert [(p.kind, p.cell, p.cell_id) for p in problems] == [(kind, at, cells[at]["id"])], report(problems)
    assert shown in problems[0].what


def test_translated_comments_and_strings_are_not_code_differences_but_expressions_are(copy):
    nb = translations.load(zh(copy))
    (program,) = [c for c in nb["cells"] if translations.source(c).startswith("%%writefile {work}/gpu_check.py")]
    program["source"] = translations.source(program).replace("# first:", "# 第一句：").replace(
        '"GPUs:"', '"所有 GPU："').splitlines(True)
    cell = next(c for c in nb["cells"] if c["cell_type"] == "code" and 'print(f"' in translations.source(c))
    code = translations.source(cell)
    start = code.index('print(f"') + len('print(f"')
    cell["source"] = (code[:start] + "中文 " + code[start:]).splitlines(True)  # an f-string's literal part
    translations.save(zh(copy), nb)
    assert translations.status(copy) == [], report(translations.status(copy))

    expression = code.index("{", start)
    cell["source"] = (code[: expression + 1] + "1 + " + code[expression + 1:]).splitlines(True)  # its {expression}
    translations.save(zh(copy), nb)
    assert [p.kind for p in translations.status(copy)] == ["code"]


# An edit of the Chinese cells at `at` (the first translated markdown cell), how many problems it makes, and the
# cell each names first (from the cells' ids before the edit)
STRUCTURE = [
    (lambda cells, at: cells.pop(at), 2, lambda ids, at: f"{at} (id {ids[at]})"),  # and the count of cells
    (lambda cells, at: cells.insert(at, {"cell_type": "markdown", "id": "extra123", "metadata": {},
                                         "source": ["多出来的单元格"]}), 2, lambda ids, at: f"{at} (id extra123)"),
    (lambda cells, at: cells.insert(at, cells.pop(at + 1)), 1, lambda ids, at: f"{at} (id {ids[at + 1]})"),
    (lambda cells, at: cells[at]["metadata"].__setitem__("tags", ["new-tag"]), 1, lambda ids, at: "['new-tag']"),
]


@pytest.mark.parametrize(("change", "count", "named"), STRUCTURE, ids=["missing", "extra", "reordered", "tags"])
def test_a_changed_cell_list_is_a_structure_problem(copy, change, count, named):
    cells = translations.load(zh(copy))["cells"]
    at = first(cells, "markdown")
    edit(zh(copy), lambda cells: change(cells, at))
    problems = translations.status(copy)
    assert [p.kind for p in problems] == ["structure"] * count, report(problems)
    assert named([c["id"] for c in cells], at) in str(problems[0])


def test_a_markdown_cell_left_in_english_is_found(copy):
    cells = translations.load(zh(copy))["cells"]
    at = first(cells, "markdown")
    english = translations.load(en(copy))["cells"][at]["source"]
    edit(zh(copy), lambda cells: cells[at].__setitem__("source", english))
    assert [(p.kind, p.cell) for p in translations.status(copy)] == [("english", at)]


def test_a_missing_translation_names_the_command_that_starts_it(copy):
    shutil.copy2(NOTEBOOKS[0], copy / "notebooks" / NOTEBOOKS[0].name)
    problems = translations.status(copy)
    assert [p.kind for p in problems] == ["missing"]
    assert "python scripts/translations.py new 01" in str(problems[0])

