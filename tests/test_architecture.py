"""The package's shape: lesson helpers in front, machinery in subpackages, one home for each concept.

These checks read the source (syntax trees, not text), so a second implementation of a
concept - another ``os.killpg``, another peak-memory reader, another exception class outside
``errors.py`` - fails here with the name of its one home.
"""

from __future__ import annotations

import ast
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from .conftest import NOTEBOOKS, ROOT

PACKAGE = ROOT / "course_utils"
MODULES = sorted(p for p in PACKAGE.rglob("*.py") if "__pycache__" not in p.parts)
MACHINERY = ("batch", "system", "bench")


def rel(path: Path) -> str:
    return path.relative_to(PACKAGE).as_posix()


def dotted(node: ast.AST) -> str:
    """``os.killpg`` for an attribute chain, ``''`` for anything else."""
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        parts.append(node.id)
        return ".".join(reversed(parts))
    return ""


def docstrings(tree: ast.AST) -> set[int]:
    ids = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                ids.add(id(first.value))
    return ids


ONE_HOME_KEYWORDS = ("start_new_session", "creationflags")


def uses(path: Path) -> set[str]:
    """What a module does that has one home: calls, keywords, imports and string constants it uses."""
    tree = ast.parse(path.read_text())
    skip = docstrings(tree)
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            name = dotted(node.func)
            if name in ("os.killpg", "subprocess.Popen", "socket.socket", "os.replace"):
                found.add(name + "()")
            found |= {f"{k.arg}=" for k in node.keywords if k.arg in ONE_HOME_KEYWORDS}
        elif isinstance(node, ast.List) and node.elts:
            # a command line whose program is this Python: [sys.executable, ...] or [python or sys.executable, ...]
            first = node.elts[0]
            options = first.values if isinstance(first, ast.BoolOp) else [first]
            if any(dotted(o) == "sys.executable" for o in options):
                found.add("python child")
        elif isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Constant):
            # the same keyword passed through a dict: kwargs["start_new_session"] = True
            if node.slice.value in ONE_HOME_KEYWORDS:
                found.add(f"{node.slice.value}=")
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else [node.module or ""]
            found |= {f"import {n}" for n in names if n == "resource"}
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in skip:
            if "VmHWM" in node.value:
                found.add("VmHWM")
    return found


HOMES = {
    "os.killpg()": {"system/processes.py"},
    "subprocess.Popen()": {"system/processes.py"},
    "start_new_session=": {"system/processes.py"},
    "creationflags=": {"system/processes.py"},
    "socket.socket()": {"system/processes.py"},
    "python child": {"system/processes.py", "system/child.py"},
    "VmHWM": {"system/rss.py"},
    "import resource": {"system/rss.py"},
    # an atomic JSON write (system/files.py); a verified download moves its checked file into place
    "os.replace()": {"system/files.py", "data/download.py"},
}


@pytest.mark.parametrize("concept", sorted(HOMES))
def test_each_concept_has_one_home(concept):
    where = sorted(rel(p) for p in MODULES if concept in uses(p))
    assert set(where) <= HOMES[concept], f"{concept} belongs in {sorted(HOMES[concept])} only, found in {where}"
    assert where, f"{concept}: its home {sorted(HOMES[concept])} no longer uses it - update this test"


def exception_classes(path: Path) -> list[tuple[str, list[str]]]:
    tree = ast.parse(path.read_text())
    classes = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ClassDef):
            bases = [dotted(b) for b in node.bases]
            if any(b.endswith(("Error", "Exception", "Interrupt")) or b == "CourseError" for b in bases):
                classes.append((node.name, bases))
    return classes


def test_every_course_exception_lives_in_errors_and_derives_from_course_error():
    import course_utils.core.errors as errors

    outside = [(rel(p), name) for p in MODULES if rel(p) != "errors.py" for name, _ in exception_classes(p)]
    # BatchInterrupted is Ctrl-C carrying the finished runs (a KeyboardInterrupt), not an error to report.
    assert outside in ([], [("batch/runner.py", "BatchInterrupted")]), f"define these in errors.py: {outside}"
    for name, _ in exception_classes(PACKAGE / "errors.py"):
        assert issubclass(getattr(errors, name), errors.CourseError), f"{name} must derive from CourseError"
        assert getattr(__import__("course_utils"), name) is getattr(errors, name), f"export {name} from course_utils"


def imported(node: ast.Import | ast.ImportFrom) -> set[str]:
    """What one import statement loads, dotted: ``from a import b`` gives ``a`` and ``a.b`` (a module or not)."""
    if isinstance(node, ast.Import):
        return {a.name for a in node.names}
    return {node.module, *(f"{node.module}.{a.name}" for a in node.names)} if node.module else set()


def notebook_imports(path: Path) -> set[str]:
    nb = json.loads(path.read_text())
    found = set()
    for cell in nb["cells"]:
        if cell["cell_type"] != "code":
            continue
        source = "\n".join(line for line in "".join(cell["source"]).splitlines() if not line.lstrip().startswith("%"))
        for node in ast.walk(ast.parse(source)):
            if isinstance(node, ast.Import | ast.ImportFrom):
                found |= imported(node)
    return {name for name in found if name.startswith("course_utils")}


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_notebooks_import_lesson_helpers_not_machinery(path):
    machinery = [m for m in notebook_imports(path) if m.split(".")[1:2] and m.split(".")[1] in MACHINERY]
    assert machinery == [], f"{path.name} imports machinery: {machinery}"


def test_every_module_is_named_by_some_test():
    tests = "\n".join(p.read_text() for p in (ROOT / "tests").rglob("test_*.py"))
    missing = []
    for path in MODULES:
        parts = list(path.relative_to(ROOT).with_suffix("").parts)
        if parts[-1] in ("__init__", "__main__"):
            parts = parts[:-1]
            if path.name == "__main__.py" or not ast.parse(path.read_text()).body[1:]:
                continue  # a docstring-only package file, or `python -m` glue
        name = ".".join(parts)
        parent, _, leaf = name.rpartition(".")
        imported = re.search(rf"from {re.escape(parent)} import [^\n]*\b{re.escape(leaf)}\b", tests)
        if name not in tests and not imported:
            missing.append(name)
    assert missing == [], f"modules no test imports: {missing}"


def test_importing_the_package_and_its_command_line_does_not_import_tensorflow():
    code = (
        "import sys, course_utils, course_utils.tools.cli, course_utils.tools.batch.runner, course_utils.doctor, "
        "course_utils.data, course_utils.core.child; print('tensorflow' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imports_of(path: Path) -> set[str]:
    """The course_utils modules ``path`` imports, anywhere in it (inside functions too), as dotted names."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import | ast.ImportFrom):
            assert not getattr(node, "level", 0), f"{path}: a relative import; the package imports absolutely"
            found |= imported(node)  # `from course_utils import data`: the module course_utils.data
    return {name for name in found if name.startswith("course_utils")}


def test_no_module_imports_one_that_imports_it_back():
    """No cycles, not even through imports inside functions (which hide them from a first reading)."""
    names = {module_name(p): p for p in MODULES}
    graph = {name: {m for m in imports_of(path) if m in names and m != name} for name, path in names.items()}
    # a package's __init__ that imports its own submodules is not a cycle with them: drop package -> child edges
    graph = {n: {m for m in deps if not m.startswith(n + ".")} for n, deps in graph.items()}
    cycles, state, stack = [], {}, []

    def visit(node: str) -> None:
        state[node] = "open"
        stack.append(node)
        for nxt in sorted(graph[node]):
            if state.get(nxt) == "open":
                cycles.append(stack[stack.index(nxt):] + [nxt])
            elif nxt not in state:
                visit(nxt)
        stack.pop()
        state[node] = "done"

    for name in sorted(graph):
        if name not in state:
            visit(name)
    assert cycles == [], "import cycles: " + "; ".join(" -> ".join(c) for c in cycles)


# What an import inside a function may load: a heavy library (seconds to import, or Unix only), so that importing
# course_utils never imports TensorFlow (switches are set first) and a command starts at once. Everything else is
# imported at the top of its module, where a reader looks for what a module depends on - unless its line says why not
# in a comment "# lazy: ..." (the package's face must not load the doctor or a lesson helper on `import course_utils`).
HEAVY = {"tensorflow", "keras", "matplotlib", "tensorboard", "tensorboard_plugin_profile", "xprof", "papermill",
         "nbclient", "nbformat", "nbconvert", "jupyter_client", "IPython", "ipywidgets", "absl", "jupyterhub",
         "resource"}


def top_level_imports(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found = set()
    for statement in tree.body:
        for node in ast.walk(statement) if isinstance(statement, ast.Try | ast.If) else [statement]:
            if isinstance(node, ast.Import | ast.ImportFrom):
                found |= imported(node)
    return found


def test_an_import_inside_a_function_is_of_something_heavy():
    paths = {module_name(p): p for p in MODULES}
    heavy: dict[str, bool] = {}

    def is_heavy(name: str, seen: frozenset = frozenset()) -> bool:
        if name.split(".")[0] in HEAVY:
            return True
        if name not in paths or name in seen:
            return False
        if name not in heavy:
            parent = name.rpartition(".")[0]
            heavy[name] = any(is_heavy(m, seen | {name}) for m in top_level_imports(paths[name]) | {parent})
        return heavy[name]

    light = []
    for path in paths.values():
        source = path.read_text(encoding="utf-8").splitlines()
        tree = ast.parse("\n".join(source))
        inside_try = {id(n) for t in ast.walk(tree) if isinstance(t, ast.Try) for n in t.body}
        for function in ast.walk(tree):
            if not isinstance(function, ast.FunctionDef | ast.AsyncFunctionDef):
                continue
            for node in ast.walk(function):
                if isinstance(node, ast.Import | ast.ImportFrom) and id(node) not in inside_try:
                    if not any(map(is_heavy, imported(node))) and "# lazy: " not in source[node.lineno - 1]:
                        light.append(f"{path.relative_to(ROOT)}:{node.lineno} {ast.unparse(node)}")
    assert light == [], f"move these imports to the top of their module: {light}"


def layout_tables() -> tuple[set[str], set[str]]:
    """The names in CONTRIBUTING's two layout tables (front, behind): `notebook`, `system/`, `cli.py`, ..."""
    text = (ROOT / "CONTRIBUTING.md").read_text(encoding="utf-8")
    tables = []
    for head in ("| front (lessons import these) |", "| behind (no notebook imports these) |"):
        block = text[text.index(head):].split("\n\n", 1)[0]
        first_cells = [row.split("|")[1] for row in block.splitlines()[2:]]
        names = {re.sub(r"\.py$|/$", "", n) for cell in first_cells for n in re.findall(r"`([\w./]+)`", cell)}
        tables.append({n for n in names if "." not in n})  # `exercises.nbNN` names a part, not a module
    return tables[0], tables[1]


def test_contributings_layout_names_every_module_and_nothing_behind_is_imported_by_a_notebook():
    front, behind = layout_tables()
    top = {p.stem for p in PACKAGE.glob("*.py") if p.stem != "__init__"} | {
        p.name for p in PACKAGE.iterdir() if p.is_dir() and list(p.glob("*.py"))}
    assert top - (front | behind) == set(), "in no layout table of CONTRIBUTING.md"
    assert (front | behind) - top == set(), "in CONTRIBUTING.md's layout, but not in the package"
    imported = {m.split(".")[1] for path in NOTEBOOKS for m in notebook_imports(path) if m.count(".")}
    assert imported & behind == set(), "CONTRIBUTING.md says no notebook imports these"


# Small rooms: a module of at most MODULE_LINES lines, a function of at most FUNCTION_LINES. The doctor's parsers,
# checks and rules are still larger (issue 25): each may shrink, none may grow, and no other may join them.
MODULE_LINES, FUNCTION_LINES = 500, 80
LARGER_MODULES = {"doctor/checks.py": 784, "doctor/logs.py": 752, "doctor/recommend.py": 607, "doctor/nvidia.py": 540}
LONGER_FUNCTIONS = {"doctor/recommend.py:recommend": 111, "doctor/checks.py:kernel_checks": 85,
                    "doctor/rules_tensorflow.py:tensorflow_findings": 135, "doctor/rules.py:_driver_findings": 90,
                    "doctor/rules.py:_route_findings": 85}


def test_modules_and_functions_are_small():
    big, long = {}, {}
    for path in MODULES:
        name = rel(path)
        lines = len(path.read_text(encoding="utf-8").splitlines())
        if lines > LARGER_MODULES.get(name, MODULE_LINES):
            big[name] = lines
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                size = node.end_lineno - node.lineno + 1
                if size > LONGER_FUNCTIONS.get(f"{name}:{node.name}", FUNCTION_LINES):
                    long[f"{name}:{node.name}"] = size
    assert big == {}, f"split these modules (at most {MODULE_LINES} lines): {big}"
    assert long == {}, f"split these functions (at most {FUNCTION_LINES} lines): {long}"
