"""Native Windows on the CPU, checked without Windows.

Two kinds of checks. At run time, one fresh Python runs each Windows-only branch of course_utils (the platform's
name, the user's folder, process groups, the folder lock) with Windows simulated (``windows_sim``'s docstring says
how); a ``sitecustomize`` carries the simulation into every process it starts. In the source, every
Unix-only import or call in the package and the notebooks must sit behind a guard (``try/except
ImportError``/``AttributeError``, or an ``os.name``/``sys.platform`` branch Windows does not take). That every
text file the package opens names its encoding (Windows' default is the ANSI code page:
https://docs.python.org/3/library/functions.html#open, PEP 686) is ruff's PLW1514, run by ``make lint``.

What this cannot show: TensorFlow's own Windows build, the real psutil and Popen on Windows, and
Windows' file locking - those are reasoned about, not run.
"""

from __future__ import annotations

import ast
import json
import os
import shutil
import signal
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from ..conftest import NOTEBOOKS, ROOT, isolated
from ..test_architecture import MODULES, dotted, rel  # both packages' modules, each one's path from its package on
from ..test_notebooks import python_cells
from . import windows_sim

# --------------------------------------------------------------------------- the package, run as on Windows

HARNESS = (
    "import json, sys, windows_sim\n"
    "found = windows_sim.scenario(sys.argv[1])\n"
    "with open(sys.argv[2], 'w', encoding='utf-8') as fh:\n"
    "    json.dump(found, fh)\n"
)


@pytest.fixture(scope="module")
def windows(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    """What ``windows_sim.scenario`` found, run once in a fresh Python with Windows simulated."""
    folder = tmp_path_factory.mktemp("windows")
    sim = folder / "sim"
    sim.mkdir()
    shutil.copy(Path(windows_sim.__file__), sim / "windows_sim.py")
    (sim / "sitecustomize.py").write_text("import windows_sim\n\nwindows_sim.install()\n", encoding="utf-8")
    with isolated(folder) as monkeypatch:
        monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(sim), str(ROOT), str(ROOT / "tools")]))
        result = folder / "found.json"
        done = subprocess.run(
            [sys.executable, "-c", HARNESS, str(folder), str(result)],
            capture_output=True, text=True, encoding="utf-8", errors="replace", timeout=400, cwd=folder,
        )
    assert done.returncode == 0, f"the Windows scenario failed:\n{done.stdout[-3000:]}\n{done.stderr[-5000:]}"
    yield json.loads(result.read_text(encoding="utf-8"))


def test_the_branches_that_ask_which_platform_this_is(windows):
    found = windows["platform"]
    assert found["doctor_platform"] == "windows"
    assert "native Windows" in found["why_no_gpu_without_cuda"]
    assert Path(found["course_home"]).parts[-2:] == ("local", "tf-gpu-course"), "under LOCALAPPDATA"


def test_a_process_group_starts_the_windows_way_and_stops_with_its_children(windows):
    p = windows["processes"]
    assert p["popen_calls"] == [{"creationflags": windows_sim.CREATE_NEW_PROCESS_GROUP, "start_new_session": None}]
    assert p["alive_before_stop"] is True and p["alive_after_stop"] is False
    assert p["exit_code"] is not None
    assert p["still_running"] == [], "the child's own child was stopped too"


def test_a_folder_lock_refuses_a_second_process_and_is_released(windows):
    lock = windows["lock"]
    assert lock["module"] == "msvcrt", "Windows has no fcntl: the lock is msvcrt.locking's"
    assert lock["holder"] == lock["pid"]
    assert lock["while_held"] == {"locked": False, "pid": lock["pid"]}, "the second process is refused, told who"
    assert lock["after_release"] == {"locked": True}


def test_without_proc_cpuinfo_the_cpu_model_is_platforms(monkeypatch):
    """Windows has no /proc/cpuinfo: the CPU's model comes from ``platform`` (Windows' own name for it)."""
    from course_utils import device

    read_text = Path.read_text

    def no_proc(path: Path, *args: Any, **kwargs: Any) -> str:
        if str(path).startswith("/proc/"):
            raise FileNotFoundError(2, "The system cannot find the path specified", str(path))
        return read_text(path, *args, **kwargs)

    monkeypatch.setattr(Path, "read_text", no_proc)
    monkeypatch.setattr(device.platform, "processor", lambda: "Intel64 Family 6 Model 85 Stepping 7, GenuineIntel")
    assert device.cpuinfo("model name") is None
    assert device.cpu_model() == "Intel64 Family 6 Model 85 Stepping 7, GenuineIntel"


# --------------------------------------------------------------------------- the source: guards


UNIX_ONLY_MODULES = windows_sim.COURSE_BLOCKED
UNIX_ONLY_ATTRIBUTES = {f"os.{name}" for name in windows_sim.UNIX_ONLY_OS} | {
    f"signal.{name}" for name in dir(signal) if name.isupper() and name not in windows_sim.WINDOWS_SIGNAL
}
UNIX_ONLY_KEYWORDS = {"start_new_session", "preexec_fn", "pass_fds"}  # Popen: ignored or refused on Windows
AS_ON_WINDOWS = {"os.name": "nt", "sys.platform": "win32", "platform.system()": "Windows"}


def on_windows(test: ast.expr) -> bool | None:
    """Whether ``test`` is true on Windows, when it depends only on the platform; None when it cannot say."""
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        inner = on_windows(test.operand)
        return None if inner is None else not inner
    if isinstance(test, ast.BoolOp):
        values = [on_windows(v) for v in test.values]
        decisive = isinstance(test.op, ast.Or)  # True decides an `or`, False an `and`
        if decisive in values:
            return decisive
        return None if None in values else not decisive
    if isinstance(test, ast.Compare) and len(test.ops) == 1:
        left, right = test.left, test.comparators[0]
        if dotted(left) not in AS_ON_WINDOWS:
            left, right = right, left
        value = AS_ON_WINDOWS.get(dotted(left))
        try:
            other = ast.literal_eval(right)
        except (ValueError, TypeError, SyntaxError):
            return None
        ops = {ast.Eq: lambda: value == other, ast.NotEq: lambda: value != other,
               ast.In: lambda: value in other, ast.NotIn: lambda: value not in other}
        return ops[type(test.ops[0])]() if value is not None and type(test.ops[0]) in ops else None
    if isinstance(test, ast.Call) and isinstance(test.func, ast.Attribute) and test.func.attr == "startswith":
        value = AS_ON_WINDOWS.get(dotted(test.func.value))
        if value is not None and len(test.args) == 1:
            return value.startswith(ast.literal_eval(test.args[0]))
    if isinstance(test, ast.Call) and dotted(test.func) == "hasattr" and len(test.args) == 2:
        if isinstance(test.args[1], ast.Constant):
            return f"{dotted(test.args[0])}.{test.args[1].value}" not in UNIX_ONLY_ATTRIBUTES
    return None


def _ends(body: list[ast.stmt]) -> bool:
    return bool(body) and isinstance(body[-1], (ast.Return, ast.Raise, ast.Continue, ast.Break))


@dataclass(frozen=True)
class Use:
    """One Unix-only import, attribute or keyword in the source, and what guards it (None: nothing)."""

    line: int
    what: str
    guard: str | None


CATCHES = {
    "import": {"ImportError", "ModuleNotFoundError", "Exception", "BaseException"},
    "attribute": {"AttributeError", "Exception", "BaseException"},
    "keyword": set(),  # a Popen keyword is passed, not looked up: only a platform branch guards it
}


def _caught(handlers: list[ast.excepthandler]) -> set[str]:
    names: set[str] = set()
    for handler in handlers:
        if handler.type is None:
            names.add("BaseException")
        for node in handler.type.elts if isinstance(handler.type, ast.Tuple) else [handler.type]:
            names.add(dotted(node) if node is not None else "BaseException")
    return names


def unix_only_uses(source: str) -> list[Use]:
    """Every Unix-only import, attribute and Popen keyword in ``source``, with the guard each sits behind."""
    found: list[Use] = []

    def visit(node: ast.AST, platform: str | None, caught: frozenset[str]) -> None:
        def use(kind: str, what: str) -> None:
            guard = platform or (f"try/except {sorted(caught & CATCHES[kind])[0]}" if caught & CATCHES[kind] else None)
            found.append(Use(node.lineno, what, guard))

        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.partition(".")[0] in UNIX_ONLY_MODULES:
                    use("import", f"import {alias.name}")
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            if node.module.partition(".")[0] in UNIX_ONLY_MODULES:
                use("import", f"from {node.module} import ...")
            for alias in node.names:
                if f"{node.module}.{alias.name}" in UNIX_ONLY_ATTRIBUTES:
                    use("import", f"from {node.module} import {alias.name}")
        elif isinstance(node, ast.Attribute) and dotted(node) in UNIX_ONLY_ATTRIBUTES:
            use("attribute", dotted(node))
        elif isinstance(node, ast.keyword) and node.arg in UNIX_ONLY_KEYWORDS:
            use("keyword", f"{node.arg}=")
        elif isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Constant):
            if node.slice.value in UNIX_ONLY_KEYWORDS:  # kwargs["start_new_session"] = True
                use("keyword", f"{node.slice.value}=")

        if isinstance(node, (ast.If, ast.IfExp)):
            taken = on_windows(node.test)
            visit(node.test, platform, caught)
            guard = f"if {ast.unparse(node.test)}"
            body_guard = platform or (guard if taken is False else None)
            else_guard = platform or (f"else of {guard}" if taken is True else None)
            if isinstance(node, ast.If):
                block(node.body, body_guard, caught)
                block(node.orelse, else_guard, caught)
            else:
                visit(node.body, body_guard, caught)
                visit(node.orelse, else_guard, caught)
            return
        if isinstance(node, ast.Try):
            block(node.body, platform, caught | _caught(node.handlers))
            for part in (*node.handlers, node.orelse, node.finalbody):
                block(part if isinstance(part, list) else part.body, platform, caught)
            return
        if isinstance(node, ast.BoolOp):  # Windows stops at the first False of an `and`, the first True of an `or`
            stop, after = isinstance(node.op, ast.Or), None
            for value in node.values:
                visit(value, platform or after, caught)
                if on_windows(value) is stop:
                    after = after or f"after `{ast.unparse(value)}`"
            return
        for _, value in ast.iter_fields(node):
            if isinstance(value, list) and value and isinstance(value[0], ast.stmt):
                block(value, platform, caught)
            elif isinstance(value, list):
                for item in value:
                    if isinstance(item, ast.AST):
                        visit(item, platform, caught)
            elif isinstance(value, ast.AST):
                visit(value, platform, caught)

    def block(statements: list[ast.stmt], platform: str | None, caught: frozenset[str]) -> None:
        for statement in statements:
            visit(statement, platform, caught)
            # `if os.name == "nt": ...; return` - what follows runs only elsewhere
            if isinstance(statement, ast.If) and on_windows(statement.test) is True and _ends(statement.body):
                platform = platform or f"after `if {ast.unparse(statement.test)}: return`"

    block(ast.parse(source).body, None, frozenset())
    return found


def test_every_unix_only_import_and_call_in_the_package_is_guarded():
    uses = {f"{rel(p)}:{u.line} {u.what}": u.guard
            for p in MODULES for u in unix_only_uses(p.read_text(encoding="utf-8"))}
    print("\n".join(f"{where}: {guard}" for where, guard in sorted(uses.items())))  # the list, for the record
    whats = {where.split(" ", 1)[1] for where in uses}
    # the ones the package needs today: found, so the scan sees them (an empty scan would prove nothing)
    assert {"import resource", "os.killpg", "signal.SIGKILL", "start_new_session=", "os.sched_getaffinity"} <= whats
    assert [where for where, guard in uses.items() if guard is None] == []


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_notebooks_use_nothing_unix_only_unguarded(path):
    cells = python_cells(path)
    assert cells
    unguarded = [(i, u) for i, cell in enumerate(cells) for u in unix_only_uses(cell) if u.guard is None]
    assert unguarded == []


# Planted: every unguarded form, and the guards the package does not use today (those it uses - try/except,
# hasattr, the else of `if os.name == "nt"`, an early return - the test above would flag if the scan missed them).
@pytest.mark.parametrize(
    ("source", "guarded"),
    [
        ("import resource", False),
        ("import os\nos.killpg(1, 9)", False),
        ("from os import setsid", False),
        ("import subprocess\nsubprocess.Popen(['x'], start_new_session=True)", False),
        ("try:\n    import resource\nexcept ValueError:\n    pass", False),  # the wrong exception
        ("import os\nif os.name == 'nt':\n    os.killpg(1, 9)", False),  # the Windows branch
        ("import sys\nif sys.platform != 'darwin':\n    import termios", False),  # Windows takes it too
        ("import os\nif os.name != 'nt':\n    os.killpg(1, 9)", True),
        ("import sys\nif sys.platform.startswith('linux'):\n    import fcntl", True),
    ],
)
def test_the_guard_scan_tells_guarded_from_unguarded(source, guarded):
    uses = unix_only_uses(source)
    assert uses or guarded, "nothing Unix-only was found"
    assert all(u.guard is not None for u in uses) is guarded, uses
