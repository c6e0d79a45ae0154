"""Read what the lesson tests check out of a notebook: its parameters, the values its header invites, and each
exercise's task cell and the solution shown under it (the cells as CONTRIBUTING's "Exercises" lays them out).
"""

from __future__ import annotations

import ast
import json
import re
from pathlib import Path
from typing import Any

from ..conftest import ROOT
from ..test_notebooks import source

SOLUTION = re.compile(
    r"<details>\s*<summary>\s*Solution to (Exercise \d+\.\d+)\s*</summary>(.*?)</details>", re.S
)
CODE = re.compile(r"```python\n(.*?)```", re.S)


def cells(notebook: str) -> list[dict]:
    path = next((ROOT / "notebooks").glob(f"{notebook}*.ipynb"))
    return json.loads(Path(path).read_text(encoding="utf-8"))["cells"]


def cell_source(notebook: str, cell_id: str) -> str:
    """The source of the notebook's cell ``cell_id``: the tests that run a lesson's own cell read it here."""
    (found,) = [source(c) for c in cells(notebook) if c["id"] == cell_id]
    return found


def declared_parameters(notebook: str) -> dict[str, Any]:
    """The notebook's parameters cell, as values (literals only: CONTRIBUTING, "A notebook")."""
    namespace: dict = {}
    exec(next(source(c) for c in cells(notebook) if "parameters" in c["metadata"].get("tags", [])), namespace)  # noqa: S102
    return {k: v for k, v in namespace.items() if k.isupper()}


def parameters_to_try(notebook: str) -> list[tuple[str, Any]]:
    """The values the header's "Parameters to try" invites, such as ``("PROFILE_BATCH", (20, 24))``."""
    header = next(s for s in map(source, cells(notebook)) if "**Parameters to try**" in s)
    return [(n, ast.literal_eval(v)) for n, v in re.findall(r"^- `([A-Z_]+) = ([^`]+)`", header, re.M)]


def solutions(notebook: str) -> dict[str, str]:
    """``{"Exercise 3.1": code, ...}``: the Python of each revealed solution in the notebook."""
    found = {}
    for cell in cells(notebook):
        if cell["cell_type"] == "markdown":
            for name, body in SOLUTION.findall(source(cell)):
                code = CODE.search(body)
                assert code, f"{notebook}: the solution to {name} has no ```python block"
                found[name] = code.group(1)
    return found


def function(notebook: str, cell_id: str, name: str, **names: object) -> Any:
    """The function ``name`` that the notebook's cell ``cell_id`` defines, with the cell's imports, the rest of the
    cell not run: the lesson's own code, not a copy."""
    body = [n for n in ast.parse(cell_source(notebook, cell_id)).body if isinstance(n, (ast.Import, ast.ImportFrom))
            or (isinstance(n, ast.FunctionDef) and n.name == name)]
    namespace: dict = dict(names)
    exec(compile(ast.Module(body, []), notebook, "exec"), namespace)  # noqa: S102 - the notebook's own code
    return namespace[name]


def solved(notebook: str, exercise: str, **names: object) -> dict:
    """The names the notebook's solution to ``exercise`` sets, run with ``names`` already defined."""
    namespace: dict = dict(names)
    exec(solutions(notebook)[exercise], namespace)  # noqa: S102 - the notebook's own solution code
    return namespace


def task_cells(notebook: str) -> dict[str, str]:
    """``{"Exercise 3.1": source}``: the code cells tagged ``exercise``, by the exercise they name."""
    found = {}
    for cell in cells(notebook):
        if cell["cell_type"] == "code" and "exercise" in cell.get("metadata", {}).get("tags", []):
            names = re.findall(r"Exercise \d+\.\d+", source(cell))
            assert names, f"{notebook}: an exercise cell must name its exercise in a comment"
            found[names[0]] = source(cell)
    return found


def judged(check, answer, capsys) -> Any:
    """What a lesson's ``check`` makes of ``answer``, the feedback it prints swallowed."""
    result = check(answer)
    capsys.readouterr()
    return result
