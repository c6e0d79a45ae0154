"""The course notebooks: stored clean and following the conventions (static checks; nothing is executed here).

Running them is the job of the tiers: papermill (tests/tiers/test_course_run.py, ``make papermill``),
nbval (``make nbval``) and the browser (tests/test_browser.py, ``make browser``).
"""

from __future__ import annotations

import ast
import json
import re

import pytest

from .conftest import NOTEBOOKS, ROOT


def load(path):
    return json.loads(path.read_text())


def code_cells(nb):
    return [c for c in nb["cells"] if c["cell_type"] == "code"]


def source(cell) -> str:
    return "".join(cell["source"])


def test_there_are_notebooks():
    assert NOTEBOOKS, "notebooks/ holds the course"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_stored_without_outputs(path):
    for i, cell in enumerate(code_cells(load(path))):
        assert cell["outputs"] == [], f"{path.name} code cell {i} has stored outputs: strip them"
        assert cell["execution_count"] is None, f"{path.name} code cell {i} has an execution count"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_conventions(path):
    nb = load(path)
    # cell 0 holds the Colab, Kaggle and Binder badges (generated: tests/test_notebook_links.py); the title follows
    title = nb["cells"][1]
    assert title["cell_type"] == "markdown" and source(title).startswith(f"# {path.stem[:2]} · "), "the title second"
    cells = code_cells(nb)
    # the generated hosted-setup cell comes first, then the parameters and the setup cell
    assert cells[0]["metadata"].get("tags", []) == ["hosted-setup"], "first code cell: the hosted setup"
    params, setup_cell = cells[1], cells[2]
    assert "parameters" in params["metadata"].get("tags", []), "second code cell is tagged 'parameters'"
    for node in ast.parse(source(params)).body:
        assert isinstance(node, ast.Assign), f"parameters cell holds assignments only: {ast.dump(node)[:60]}"
        ast.literal_eval(node.value)  # literals only, so papermill can override them
        assert all(isinstance(t, ast.Name) and t.id.isupper() for t in node.targets), "UPPER_CASE names"
    assert f'course_utils.setup(globals(), "{path.stem}"' in source(setup_cell), "the setup cell follows the parameters"
    # papermill must see every parameter (it silently skips a line it cannot parse, e.g. "=" in a comment).
    import papermill

    declared = [t.id for node in ast.parse(source(params)).body for t in node.targets]
    assert sorted(papermill.inspect_notebook(str(path))) == sorted(declared), "papermill cannot parse a parameter line"
    assert "checkpoint(" in source(cells[-1]), "the last code cell is the checkpoint"


def test_tests_that_run_whole_notebooks_live_in_the_papermill_tier():
    """`make papermill` collects tests/tiers/ only and `make unit` skips `notebook` tests: elsewhere none would run."""
    tests = ROOT / "tests"
    stray = [
        str(path.relative_to(ROOT))
        for path in sorted(tests.rglob("test_*.py"))
        if path.relative_to(tests).parts[0] != "tiers" and re.search(r"mark\.notebook\b", path.read_text())
    ]
    assert stray == [], "move tests marked `notebook` to tests/tiers/"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_the_header_says_how_long_it_takes_and_which_parameters_to_try(path):
    """The title cell: what you learn, prerequisites, time (CPU smoke, CPU full, GPU), parameters to try."""
    import ast
    import re

    cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
    header = "".join(cells[1]["source"])
    assert header.startswith(f"# {path.name[:2]} · ")
    assert "**What you learn**" in header
    assert re.search(r"\*\*(Prerequisites|Before you start)", header), "say what to know or do first"
    time = header[header.index("**Time"):header.index("**Parameters to try")]
    assert re.search(r"smoke", time) and re.search(r"full", time) and "GPU" in time, time
    assert re.search(r"\d+(\.\d+)?(-\d+)? ?(s|seconds?|minutes?)\b", time), "a measured time, with its unit"
    (params,) = [c for c in cells if "parameters" in c.get("metadata", {}).get("tags", [])]
    names = {t.id for n in ast.parse("".join(params["source"])).body if isinstance(n, ast.Assign) for t in n.targets}
    to_try = re.findall(r"(?m)^- `([A-Z][A-Z0-9_]*)\b", header[header.index("**Parameters to try"):])
    assert len(set(to_try)) >= 2 and set(to_try) <= names, (to_try, sorted(names))
