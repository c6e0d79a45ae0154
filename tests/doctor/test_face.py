"""course_utils.doctor's face: the package file only imports its public names from the small modules that define
them (issue 25: each module at most 500 lines, as tests/test_architecture.py checks for every module)."""

from __future__ import annotations

import ast
from pathlib import Path

import course_utils.doctor as doctor


def test_the_face_is_a_docstring_imports_and_all():
    tree = ast.parse(Path(doctor.__file__).read_text(encoding="utf-8"))
    docstring, *rest = tree.body
    assert isinstance(docstring, ast.Expr) and isinstance(docstring.value, ast.Constant)
    *imports, names = rest
    assert all(isinstance(node, ast.ImportFrom) for node in imports)
    assert isinstance(names, ast.Assign) and [t.id for t in names.targets] == ["__all__"]
    imported = {alias.asname or alias.name for node in imports if node.module != "__future__" for alias in node.names}
    assert imported == set(doctor.__all__)
