"""The course notebooks as papermill reads them, and where the tests that run them live (nothing is executed here).

Their conventions as stored (no outputs, the cells in their places, the header's parts) are scripts/course_lint.py's
rules nb-outputs, nb-cells and nb-header. Running them is the job of the tiers: nbval
(``make nbval``), hosted (tests/tiers/test_course_run.py, ``make hosted``) and the browser (tests/test_browser.py).
"""

from __future__ import annotations

import ast
import json
import re

import pytest

from .conftest import NOTEBOOKS, ROOT, ZH_NOTEBOOKS

EDITIONS = [*NOTEBOOKS, *ZH_NOTEBOOKS]


def edition_id(path) -> str:
    return f"zh/{path.stem}" if path.parent.name == "zh" else path.stem


def load(path):
    return json.loads(path.read_text(encoding="utf-8"))


def code_cells(nb):
    return [c for c in nb["cells"] if c["cell_type"] == "code"]


def source(cell) -> str:
    return "".join(cell["source"])


def python_cells(path) -> list[str]:
    """A notebook's code cells as Python: an IPython magic or shell line becomes ``pass``, indented as it was."""

    def python(line: str) -> str:
        code = line.lstrip()
        return line[: len(line) - len(code)] + "pass" if code.startswith(("%", "!")) else line

    return ["\n".join(map(python, source(c).splitlines())) for c in code_cells(load(path))]


@pytest.mark.parametrize("path", EDITIONS, ids=edition_id)
def test_papermill_sees_every_parameter(path):
    """papermill silently skips a parameters line it cannot parse ("=" in a comment): it must see every name."""
    import papermill

    (params,) = [c for c in load(path)["cells"] if "parameters" in c["metadata"].get("tags", [])]
    declared = [t.id for node in ast.parse(source(params)).body for t in node.targets]
    assert sorted(papermill.inspect_notebook(str(path))) == sorted(declared)


def test_tests_that_run_whole_notebooks_live_where_the_hosted_tier_runs_them():
    """`make hosted` runs tests/tiers/test_course_run.py only and `make unit` skips `notebook` tests: elsewhere none
    would run."""
    stray = [
        str(path.relative_to(ROOT))
        for path in sorted((ROOT / "tests").rglob("test_*.py"))
        if path != ROOT / "tests" / "tiers" / "test_course_run.py" and re.search(r"mark\.notebook\b", path.read_text())
    ]
    assert stray == [], "move tests marked `notebook` to tests/tiers/test_course_run.py"
