"""course_utils.doctor's face: the package file only imports its public names from the small modules that define
them (course_utils.doctor.model, .probes, .rules, .rules_tensorflow), each small (issue 25: at most 500 lines, as
tests/test_architecture.py checks for every module)."""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

import course_utils.doctor as doctor
from course_utils.cli import COMMANDS
from course_utils.doctor import cli as doctor_cli
from course_utils.doctor import model, probes, rules, rules_tensorflow

ROOMS = [model, probes, rules, rules_tensorflow]


def test_the_face_is_a_docstring_imports_and_all():
    tree = ast.parse(Path(doctor.__file__).read_text(encoding="utf-8"))
    docstring, *rest = tree.body
    assert isinstance(docstring, ast.Expr) and isinstance(docstring.value, ast.Constant)
    for room in ROOMS:  # the docstring says where each part lives
        assert f"``{room.__name__.rpartition('.')[2]}``" in docstring.value.value
    *imports, names = rest
    assert all(isinstance(node, ast.ImportFrom) for node in imports)
    assert isinstance(names, ast.Assign) and [t.id for t in names.targets] == ["__all__"]
    imported = {alias.asname or alias.name for node in imports if node.module != "__future__" for alias in node.names}
    assert imported == set(doctor.__all__)


# where each public name lives
HOMES = {
    model: ["Finding", "Machine", "TensorFlowInfo"],
    probes: ["describe", "detect_platform", "probe"],
    rules: ["diagnose"],
}


def test_each_public_name_is_the_one_its_module_defines():
    assert sorted(name for names in HOMES.values() for name in names) == sorted(doctor.__all__)
    for room, names in HOMES.items():
        for name in names:
            assert getattr(doctor, name) is getattr(room, name), f"{name} is not {room.__name__}.{name}"


def test_course_doctor_runs_the_command_line_module():
    assert importlib.import_module(COMMANDS["doctor"][0]).main is doctor_cli.main
