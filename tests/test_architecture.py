"""The packages' shape: three bands (face, core, tools), small modules, one home for each concept.

These checks read the source (syntax trees, not text), so a second implementation of a
concept - another ``os.killpg``, another peak-memory reader, another exception class outside
``core/errors.py`` - fails here with the name of its one home.
"""

from __future__ import annotations

import ast
import functools
import graphlib
import re
import subprocess
import sys
from pathlib import Path

import pytest

from .conftest import NOTEBOOKS, ROOT
from .test_notebooks import python_cells

PACKAGE = ROOT / "course_utils"  # the student's package: the face and the core
TOOLS = ROOT / "tools" / "course_tools"  # the instructor's package: the tools
SKIP = {"__pycache__", "theme"}  # theme/: the website's files (course_tools.site), a page's glue among them
MODULES = sorted(p for folder in (PACKAGE, TOOLS) for p in folder.rglob("*.py") if not SKIP & set(p.parts))
PACKAGES = ("course_utils", "course_tools")


def rel(path: Path) -> str:
    """``course_utils/core/files.py``: a module's path from its package's folder on."""
    top = PACKAGE if path.is_relative_to(PACKAGE) else TOOLS
    return path.relative_to(top.parent).as_posix()


def dotted(node: ast.AST) -> str:
    """``os.killpg`` for an attribute chain, ``platform.system()`` for a call of one, ``''`` otherwise."""
    if isinstance(node, ast.Call) and not node.args and not node.keywords:
        inner = dotted(node.func)
        return inner + "()" if inner else ""
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        return ".".join([node.id, *reversed(parts)])
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
            found |= {f"import {n}" for n in names if n in ("resource", "pynvml")}
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in skip:
            if "VmHWM" in node.value:
                found.add("VmHWM")
    return found


HOMES = {
    "os.killpg()": {"course_utils/core/processes.py"},
    "subprocess.Popen()": {"course_utils/core/processes.py"},
    "start_new_session=": {"course_utils/core/processes.py"},
    "creationflags=": {"course_utils/core/processes.py"},
    "socket.socket()": {"course_utils/core/processes.py"},
    "python child": {"course_utils/core/processes.py", "course_utils/core/child.py"},
    "VmHWM": {"course_utils/core/rss.py"},
    "import resource": {"course_utils/core/rss.py"},
    # NVML's readings (nvidia-ml-py): notebook 05's monitor; the doctor runs nvidia-smi (doctor/probes.py)
    "import pynvml": {"course_utils/lessons/nb05/device_monitor.py"},
    # an atomic JSON write (core/files.py); a verified download moves its checked file into place
    "os.replace()": {"course_utils/core/files.py", "course_utils/data/download.py"},
}


@functools.cache
def uses_by_module() -> dict[str, set[str]]:
    """``uses`` of every module, read once per session (the parametrised test below asks once per concept)."""
    return {rel(p): uses(p) for p in MODULES}


@pytest.mark.parametrize("concept", sorted(HOMES))
def test_each_concept_has_one_home(concept):
    where = sorted(name for name, found in uses_by_module().items() if concept in found)
    assert set(where) <= HOMES[concept], f"{concept} belongs in {sorted(HOMES[concept])} only, found in {where}"
    assert where, f"{concept}: its home {sorted(HOMES[concept])} no longer uses it - update this test"


def exception_classes(path: Path) -> list[str]:
    """The classes in ``path`` whose base is named ...Error, ...Exception or ...Interrupt (CourseError among them)."""
    classes = [node for node in ast.walk(ast.parse(path.read_text())) if isinstance(node, ast.ClassDef)]
    return [c.name for c in classes if any(dotted(b).endswith(("Error", "Exception", "Interrupt")) for b in c.bases)]


ERROR_HOMES = ("course_utils/core/errors.py",)  # the tools raise its CourseError too


def test_every_course_exception_lives_in_errors_and_derives_from_course_error():
    import course_utils.core.errors as errors

    outside = [(rel(p), name) for p in MODULES if rel(p) not in ERROR_HOMES for name in exception_classes(p)]
    # BatchInterrupted is Ctrl-C carrying the finished runs (a KeyboardInterrupt), not an error to report.
    assert outside in ([], [("course_tools/batch/runner.py", "BatchInterrupted")]), f"define in errors.py: {outside}"
    for name in exception_classes(PACKAGE / "core" / "errors.py"):
        assert issubclass(getattr(errors, name), errors.CourseError), f"{name} must derive from CourseError"
        assert getattr(__import__("course_utils"), name) is getattr(errors, name), f"export {name} from course_utils"


def imported(node: ast.Import | ast.ImportFrom) -> set[str]:
    """What one import statement loads, dotted: ``from a import b`` gives ``a`` and ``a.b`` (a module or not)."""
    if isinstance(node, ast.Import):
        return {a.name for a in node.names}
    return {node.module, *(f"{node.module}.{a.name}" for a in node.names)} if node.module else set()


def package_imports(source: str, where: str) -> set[str]:
    """The course_utils and course_tools modules ``source`` imports, anywhere in it (inside functions too), dotted."""
    found = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import | ast.ImportFrom):
            assert not getattr(node, "level", 0), f"{where}: a relative import; the package imports absolutely"
            found |= imported(node)  # `from course_utils import data`: the module course_utils.data
    return {name for name in found if name.startswith(PACKAGES)}


# The three bands (CONTRIBUTING.md, "Layout"): the face is course_utils' top level - what notebooks import and what it
# is made of, the `course` command included; the core (course_utils/core/) is what everything is built on; the tools
# are the instructor's package, course_tools (tools/course_tools/). Notebooks import only the face; the core imports
# nothing above it; nothing in course_utils imports the tools: they are not installed on a student's machine.
BANDS = ("face", "tools", "core")
MAY_IMPORT = {"face": {"face", "core"}, "core": {"core"}, "tools": {"tools", "face", "core"}}


def band(module: str) -> str:
    parts = module.split(".")
    if parts[0] == "course_tools":
        return "tools"
    return "core" if len(parts) > 1 and parts[1] == "core" else "face"


def band_violations(graph: dict[str, set[str]]) -> list[str]:
    """Each import that crosses the bands the wrong way, in a graph {module: modules it imports}."""
    return sorted(f"{a} ({band(a)}) imports {b} ({band(b)})" for a, deps in graph.items()
                  for b in deps if band(b) not in MAY_IMPORT[band(a)])


def notebook_violations(imports: set[str]) -> list[str]:
    return sorted(m for m in imports if band(m) != "face")


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_notebooks_import_only_the_face(path):
    imports = set().union(*(package_imports(cell, path.name) for cell in python_cells(path)))
    assert notebook_violations(imports) == [], f"{path.name} imports below the face"


def test_the_core_imports_nothing_above_it_and_nothing_imports_the_tools():
    assert band_violations(import_graph()) == []


def test_a_planted_import_across_the_bands_fails():
    planted = {"course_utils.core.files": {"course_utils.notebook"},  # the core importing the face
               "course_utils.lessons.nb05.speed": {"course_tools.bench.cli"},  # the face importing a tool
               "course_tools.batch.runner": {"course_utils.core.i18n", "course_utils.params"},  # allowed
               "course_utils.__main__": {"course_utils.cli"}}  # allowed
    assert band_violations(planted) == [
        "course_utils.core.files (core) imports course_utils.notebook (face)",
        "course_utils.lessons.nb05.speed (face) imports course_tools.bench.cli (tools)",
    ]
    assert notebook_violations({"course_utils", "course_utils.data", "course_utils.core.gpu_config",
                                "course_tools.bench"}) == ["course_tools.bench", "course_utils.core.gpu_config"]


def test_every_module_is_named_by_some_test():
    tests = "\n".join(p.read_text() for p in (ROOT / "tests").rglob("test_*.py"))
    missing = []
    for path in MODULES:
        if path.name == "__main__.py" or path.name == "__init__.py" and not ast.parse(path.read_text()).body[1:]:
            continue  # `python -m` glue, or a docstring-only package file
        name = module_name(path)
        parent, _, leaf = name.rpartition(".")
        imported = re.search(rf"from {re.escape(parent)} import [^\n]*\b{re.escape(leaf)}\b", tests)
        if name not in tests and not imported:
            missing.append(name)
    assert missing == [], f"modules no test imports: {missing}"


LIGHT = ("course_utils", "course_utils.doctor", "course_utils.doctor.cli", "course_utils.cli")


def test_the_package_the_doctor_and_the_command_import_with_the_standard_library_alone():
    """No site-packages at all (-I -S, only the checkout on the path): what the website's doctor page has."""
    code = (f"import sys; sys.path.insert(0, {str(ROOT)!r}); import {', '.join(LIGHT)}; "
            "print(sorted({m.split('.')[0] for m in sys.modules} - set(sys.stdlib_module_names) - {'__main__'}))")
    out = subprocess.run([sys.executable, "-I", "-S", "-c", code], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "['course_utils']"


def test_the_notebook_helpers_load_on_first_use_no_lesson_file_before_setup_and_no_tensorflow():
    """``setup`` imports the notebook's lesson file; ``import course_utils`` stays light; neither it, its command
    line, the runner nor the data and child machinery import TensorFlow."""
    code = ("import sys, course_utils; before = 'psutil' in sys.modules; course_utils.setup; "
            "lessons = [m for m in sys.modules if '.lessons' in m]; "
            "import course_utils.cli, course_tools.batch.runner, course_utils.doctor, course_utils.data, "
            "course_utils.core.child; "
            "print(before, 'psutil' in sys.modules, course_utils.checkpoint.__module__, lessons == [], "
            "'tensorflow' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["False", "True", "course_utils.notebook", "True", "False"]


def module_name(path: Path) -> str:
    parts = list(Path(rel(path)).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def import_graph() -> dict[str, set[str]]:
    """{module: the package's modules it imports}, imports inside functions included."""
    names = {module_name(p): p for p in MODULES}
    graph = {name: package_imports(path.read_text(encoding="utf-8"), rel(path)) for name, path in names.items()}
    return {name: {m for m in deps if m in names and m != name} for name, deps in graph.items()}


def test_no_module_imports_one_that_imports_it_back():
    """No cycles, not even through imports inside functions (which hide them from a first reading)."""
    graph = import_graph()
    # a package's __init__ that imports its own submodules is not a cycle with them: drop package -> child edges
    graph = {n: {m for m in deps if not m.startswith(n + ".")} for n, deps in graph.items()}
    try:
        graphlib.TopologicalSorter(graph).prepare()
    except graphlib.CycleError as error:
        pytest.fail("an import cycle: " + " -> ".join(error.args[1]))


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


def layout_tables() -> dict[str, set[str]]:
    """The names in CONTRIBUTING's three layout tables, one per band: `notebook`, `batch/`, `child`, ..."""
    text = (ROOT / "CONTRIBUTING.md").read_text(encoding="utf-8")
    tables = {}
    for name in BANDS:
        head = f"| {name}: "
        block = text[text.index(head):].split("\n\n", 1)[0]
        first_cells = [row.split("|")[1] for row in block.splitlines()[2:]]
        names = {re.sub(r"\.py$|/$", "", n) for cell in first_cells for n in re.findall(r"`([\w./]+)`", cell)}
        tables[name] = {n for n in names if "." not in n}  # `lessons.nbNN` names a part, not a module
    return tables


def band_contents(folder: Path) -> set[str]:
    return {p.stem for p in folder.glob("*.py") if p.stem not in ("__init__", "__main__")} | {
        p.name for p in folder.iterdir() if p.is_dir() and list(p.glob("*.py"))}


def test_contributings_layout_is_the_code():
    tables = layout_tables()
    actual = {"face": band_contents(PACKAGE) - {"core"}, "core": band_contents(PACKAGE / "core"),
              "tools": band_contents(TOOLS)}
    for name in BANDS:
        assert actual[name] - tables[name] == set(), f"in no row of CONTRIBUTING.md's {name} table"
        assert tables[name] - actual[name] == set(), f"in CONTRIBUTING.md's {name} table, but not in the code"


# Small rooms: a module of at most MODULE_LINES lines, a function of at most FUNCTION_LINES.
MODULE_LINES, FUNCTION_LINES = 500, 80


def size_violations(paths: list[Path]) -> list[str]:
    """Each module longer than MODULE_LINES and each function longer than FUNCTION_LINES, with its length."""
    found = []
    for path in paths:
        text, name = path.read_text(encoding="utf-8"), f"{path.parent.name}/{path.name}"
        if (lines := len(text.splitlines())) > MODULE_LINES:
            found.append(f"{name}: {lines} lines")
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                if (size := node.end_lineno - node.lineno + 1) > FUNCTION_LINES:
                    found.append(f"{name}:{node.name}: {size} lines")
    return found


def test_modules_and_functions_are_small():
    assert size_violations(MODULES) == [], f"split these (modules <= {MODULE_LINES}, functions <= {FUNCTION_LINES})"


def test_a_planted_large_module_and_long_function_fail(tmp_path):
    long_function = "def f():\n" + "    x = 1\n" * FUNCTION_LINES
    (tmp_path / "big.py").write_text("\n" * MODULE_LINES + "x = 1\n", encoding="utf-8")
    (tmp_path / "long.py").write_text(long_function, encoding="utf-8")
    (tmp_path / "fine.py").write_text("def f():\n" + "    x = 1\n" * (FUNCTION_LINES - 1), encoding="utf-8")
    assert size_violations(sorted(tmp_path.glob("*.py"))) == [f"{tmp_path.name}/big.py: {MODULE_LINES + 1} lines",
                                                               f"{tmp_path.name}/long.py:f: {FUNCTION_LINES + 1} lines"]
