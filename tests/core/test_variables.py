"""core.variables: the one home of every COURSE_* name, used through its constants (scripts/course_lint.py's rule
doc-variable holds CONTRIBUTING's table and the docs to it)."""

from __future__ import annotations

import ast
import re

import pytest

from course_utils.core import variables

from ..conftest import ROOT

PACKAGE = ROOT / "course_utils"
TOOLS = ROOT / "tools" / "course_tools"  # the instructor's tools read the course's variables too
NAME = re.compile(r"^COURSE_[A-Z_]+$")


def test_no_module_spells_a_variable_name_of_its_own():
    """A string that is a whole COURSE_* name, outside variables.py, is a second home (a typo reads nothing)."""
    found = []
    for path in sorted([*PACKAGE.rglob("*.py"), *TOOLS.rglob("*.py")]):
        if path.name == "variables.py" and path.parent.name == "core":
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and NAME.match(node.value):
                found.append(f"{path.relative_to(ROOT)}:{node.lineno} {node.value}")
    assert found == [], found


def test_every_listed_variable_is_read_somewhere_and_every_constant_is_listed():
    constants = {name: value for name, value in vars(variables).items() if isinstance(value, str) and NAME.match(value)}
    assert set(constants.values()) == variables.NAMES and len(constants) == len(variables.NAMES)
    code = "\n".join(p.read_text(encoding="utf-8") for top in (PACKAGE, TOOLS) for p in top.rglob("*.py")
                     if p.name != "variables.py")
    unused = sorted(f"variables.{c}" for c in constants if f"variables.{c}" not in code)
    assert unused == [], f"listed but read nowhere: {unused}"


@pytest.mark.parametrize(("value", "expected"), [(None, False), ("Off", False), (" TRUE ", True), ("maybe", None)])
def test_an_on_off_switch_is_read_one_way_everywhere(value, expected):
    environ = {} if value is None else {variables.OFFLINE: value}
    assert variables.flag(variables.OFFLINE, environ) is expected
