"""Native Windows, simulated on Linux: what the course's code finds there (used by tests/core/test_windows.py).

No CI machine runs Windows, so the test runs the package in Python processes where, as on Windows:

- the Unix-only modules (``resource``, ``fcntl``, ``termios``, ``pwd``, ``grp``, ...) cannot be imported:
  a meta-path finder raises ``ModuleNotFoundError`` for them. psutil is imported first: its Linux
  backend needs ``resource`` (on Windows psutil has a backend of its own);
- the course's own modules see Windows' ``os``, ``sys``, ``signal``, ``subprocess`` and ``platform``:
  ``os.name == "nt"`` and no ``os.killpg``, ``os.setsid``, ``os.getpgid``, ``os.geteuid``, ...;
  ``sys.platform == "win32"``; ``signal`` without ``SIGKILL``, ``SIGHUP``, ...; and
  ``subprocess.CREATE_NEW_PROCESS_GROUP``. Only the course's modules get these views (an import hook
  hands them out; ``import posix`` fails there too): setting ``os.name`` for everyone would break
  pathlib and subprocess, and psutil's and Popen's ``kill()`` - which stand in here for Windows'
  TerminateProcess - need Linux's ``signal.SIGKILL``. The file system stays Linux's (``os.sep``,
  ``os.pathsep``, ``os.path``), and so do ``pathlib`` and third-party code;
- ``/proc`` does not exist (for pathlib), and ``psutil.Process.memory_info()`` has Windows' fields
  (``peak_wset``, ``wset``, ..., https://psutil.readthedocs.io/en/latest/#psutil.Process.memory_info),
  filled from Linux's counters with ``peak_wset`` ``MARK_MIB`` above the true high-water mark, so a
  test can tell which counter a reading came from;
- a Python whose output goes to a file or a pipe writes the ANSI code page (cp1252, strict), unless
  ``PYTHONIOENCODING`` says otherwise;
- ``msvcrt.locking`` exists (for ``core.files.FolderLock``), played by POSIX record locks on the same
  byte range (``fcntl.lockf``, held per process and released when it ends, as Windows' ``LockFile``).

``install()`` sets all this up. ``sitecustomize.py`` in a folder on ``PYTHONPATH`` that imports this
module (copied there as ``windows_sim.py``) and calls ``install()`` carries the simulation into every
Python process started below - the runner, its kernel, a worker. ``scenario(folder)`` is what the test
runs in such a process: a notebook's setup and record, memory readings, the process machinery and the
batch runner's record path, returned as JSON-able data for the test to check.
"""

from __future__ import annotations

import builtins
import collections
import errno
import importlib
import importlib.abc
import os
import pathlib
import platform
import signal
import subprocess
import sys
import types
from typing import Any

MIB = 2**20
MARK_MIB = 7.0  # peak_wset = the Linux high-water mark + this, so a reading shows which counter it came from
# A Keras 3 progress bar's characters and a few more that cp1252 lacks (keras-team/keras#19386).
NOT_CP1252 = "\u2501\u2501\u2501 \u2265 \u2192"

# Modules Windows' Python does not have (https://docs.python.org/3/library/unix.html and each module's
# "Availability: Unix"). The finder blocks them for everyone; the course's modules cannot import
# posix and friends either (they are loaded already, as os needs them on Linux).
UNIX_ONLY_MODULES = frozenset({"resource", "fcntl", "termios", "pwd", "grp", "pty", "tty", "syslog", "crypt", "nis"})
COURSE_BLOCKED = UNIX_ONLY_MODULES | {"posix", "_posixsubprocess", "_posixshmem"}

# os functions and constants with "Availability: Unix" (https://docs.python.org/3/library/os.html).
UNIX_ONLY_OS = frozenset(
    """killpg setsid setpgrp setpgid getpgid getpgrp getsid tcgetpgrp tcsetpgrp geteuid getegid getuid getgid
    getgroups getgrouplist setuid setgid seteuid setegid setreuid setregid setresuid setresgid getresuid getresgid
    initgroups setgroups fork forkpty openpty wait wait3 wait4 waitid WNOHANG WUNTRACED WCONTINUED
    sched_getaffinity sched_setaffinity uname getloadavg sysconf confstr pathconf fpathconf statvfs fstatvfs
    mkfifo mknod chown fchown lchown chroot nice getpriority setpriority pread pwrite sync ttyname ctermid
    posix_spawn posix_spawnp register_at_fork pidfd_open memfd_create eventfd sendfile splice O_NONBLOCK""".split()
)
# What Windows' signal module has (https://docs.python.org/3/library/signal.html: "On Windows, signal()
# can only be called with SIGABRT, SIGFPE, SIGILL, SIGINT, SIGSEGV, SIGTERM, or SIGBREAK").
WINDOWS_SIGNAL = frozenset(
    """SIGABRT SIGFPE SIGILL SIGINT SIGSEGV SIGTERM SIGBREAK CTRL_C_EVENT CTRL_BREAK_EVENT SIG_DFL SIG_IGN NSIG
    Signals Handlers signal getsignal default_int_handler raise_signal set_wakeup_fd strsignal valid_signals""".split()
)
CREATE_NEW_PROCESS_GROUP = 0x00000200  # Windows' value (subprocess.CREATE_NEW_PROCESS_GROUP there)

POPEN_CALLS: list[dict[str, Any]] = []  # how the course's code started processes, in this process

_real_import = builtins.__import__
_real_memory_info = None


class _View(types.ModuleType):
    """A module as Windows has it: some attributes replaced, some missing (AttributeError, as there)."""

    def __init__(self, real: types.ModuleType, replaced: dict[str, Any], missing: frozenset[str]) -> None:
        super().__init__(real.__name__, real.__doc__)
        self.__dict__.update(replaced)
        self._real, self._missing = real, missing

    def __getattr__(self, name: str) -> Any:
        if name in ("_real", "_missing"):
            raise AttributeError(name)
        if name in self._missing:
            raise AttributeError(f"module {self.__name__!r} has no attribute {name!r}")
        return getattr(self._real, name)


class _WindowsPopen(subprocess.Popen):
    """Popen with Windows' arguments: ``creationflags`` is recorded (Linux's Popen refuses it), ``preexec_fn``
    is refused as Windows refuses it."""

    def __init__(self, *args: Any, creationflags: int = 0, preexec_fn: Any = None, **kwargs: Any) -> None:
        if preexec_fn is not None:
            raise ValueError("preexec_fn is not supported on Windows platforms")
        POPEN_CALLS.append({"creationflags": creationflags, "start_new_session": kwargs.get("start_new_session")})
        super().__init__(*args, **kwargs)


def _views() -> dict[str, types.ModuleType]:
    signal_missing = frozenset(name for name in dir(signal) if not name.startswith("_") and name not in WINDOWS_SIGNAL)
    return {
        "os": _View(os, {"name": "nt"}, UNIX_ONLY_OS),
        "sys": _View(sys, {"platform": "win32"}, frozenset()),
        "signal": _View(signal, {"SIGBREAK": 21, "CTRL_C_EVENT": 0, "CTRL_BREAK_EVENT": 1}, signal_missing),
        "subprocess": _View(
            subprocess, {"CREATE_NEW_PROCESS_GROUP": CREATE_NEW_PROCESS_GROUP, "Popen": _WindowsPopen}, frozenset()
        ),
        "platform": _View(platform, {"system": lambda: "Windows"}, frozenset()),
    }


VIEWS = _views()


def _from_course(namespace: Any) -> bool:
    """Whether an import statement runs in the course's code (a course_utils module, or one run with -m)."""
    if not isinstance(namespace, dict):
        return False
    name = namespace.get("__name__") or ""
    if name == "__main__":
        name = getattr(namespace.get("__spec__"), "name", "") or ""
    return name.partition(".")[0] in ("course_utils", "course_tools")


def _import(name: str, globals: Any = None, locals: Any = None, fromlist: Any = (), level: int = 0) -> Any:
    """``builtins.__import__`` that hands the course's modules Windows' views and refuses them Unix-only modules."""
    if level == 0 and _from_course(globals):
        top = name.partition(".")[0]
        if top in COURSE_BLOCKED:
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        if top in VIEWS and (name == top or not fromlist):
            _real_import(name, globals, locals, fromlist, level)
            return VIEWS[top]
    return _real_import(name, globals, locals, fromlist, level)


class UnixOnlyModules(importlib.abc.MetaPathFinder):
    """Makes the Unix-only modules unimportable, with Windows' error."""

    def find_spec(self, fullname: str, path: Any = None, target: Any = None) -> None:
        if fullname.partition(".")[0] in UNIX_ONLY_MODULES:
            raise ModuleNotFoundError(f"No module named {fullname!r}", name=fullname)
        return None


def _no_proc(method: Any) -> Any:
    def read(self: pathlib.Path, *args: Any, **kwargs: Any) -> Any:
        text = str(self)
        if text == "/proc" or text.startswith("/proc/"):
            raise FileNotFoundError(errno.ENOENT, "The system cannot find the path specified", text)
        return method(self, *args, **kwargs)

    return read


def linux_peak_mib(pid: int | None = None) -> float:
    """The true high-water mark (Linux VmHWM) of ``pid``, read here past the simulation; 0.0 without one."""
    try:
        with open(f"/proc/{pid or os.getpid()}/status", encoding="ascii") as fh:
            for line in fh:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    return 0.0


WindowsPmem = collections.namedtuple(
    "pmem",
    "rss vms num_page_faults peak_wset wset peak_paged_pool paged_pool peak_nonpaged_pool nonpaged_pool "
    "pagefile peak_pagefile private",
)


def _windows_memory_info(self: Any) -> WindowsPmem:
    real = _real_memory_info(self)  # type: ignore[misc]  # raises NoSuchProcess as on Windows
    peak = (max(linux_peak_mib(self.pid), real.rss / MIB) + MARK_MIB) * MIB
    return WindowsPmem(real.rss, real.vms, 0, int(peak), real.rss, 0, 0, 0, 0, real.vms, real.vms, real.vms)


def _msvcrt() -> types.ModuleType:
    """Windows' ``msvcrt`` as far as the course uses it: ``locking`` a byte range from the current position
    (https://docs.python.org/3/library/msvcrt.html#msvcrt.locking), on top of POSIX record locks."""
    import fcntl  # before the finder blocks it

    module = types.ModuleType("msvcrt", "msvcrt, simulated: locking() only")
    module.LK_UNLCK, module.LK_LOCK, module.LK_NBLCK, module.LK_RLCK, module.LK_NBRLCK = 0, 1, 2, 3, 4

    def locking(fd: int, mode: int, nbytes: int) -> None:
        start = os.lseek(fd, 0, os.SEEK_CUR)
        if mode == module.LK_UNLCK:
            fcntl.lockf(fd, fcntl.LOCK_UN, nbytes, start, os.SEEK_SET)
            return
        try:  # every mode fails at once here: the course only uses LK_NBLCK, which does
            fcntl.lockf(fd, fcntl.LOCK_EX | fcntl.LOCK_NB, nbytes, start, os.SEEK_SET)
        except BlockingIOError:
            raise PermissionError(errno.EACCES, "Permission denied") from None  # Windows' error for a held lock

    module.locking = locking
    return module


def install() -> None:
    """Make this process look like native Windows to the course's code (see the module docstring)."""
    global _real_memory_info
    if _real_memory_info is not None:
        return
    import psutil  # before the finder: psutil's Linux backend imports resource

    sys.modules["msvcrt"] = _msvcrt()

    for name in UNIX_ONLY_MODULES:
        sys.modules.pop(name, None)
    sys.meta_path.insert(0, UnixOnlyModules())
    builtins.__import__ = _import
    for method in ("open", "read_text", "read_bytes"):
        setattr(pathlib.Path, method, _no_proc(getattr(pathlib.Path, method)))
    _real_memory_info = psutil.Process.memory_info
    psutil.Process.memory_info = _windows_memory_info
    if "PYTHONIOENCODING" not in os.environ:  # Windows: a file or pipe gets the ANSI code page
        for stream, errors in ((sys.stdout, "strict"), (sys.stderr, "backslashreplace")):
            if hasattr(stream, "reconfigure") and not stream.isatty():
                stream.reconfigure(encoding="cp1252", errors=errors)


# --------------------------------------------------------------------------- run inside the simulation


# One control per way the simulation makes a thing Unix-only: (code, run as the course's code, what Windows does - the
# exception's name, or "ok"). The test checks them first: without them, the checks after it would prove nothing.
CONTROLS = [
    ("import fcntl", False, "ModuleNotFoundError"),  # the finder: for everyone
    ("import posix", True, "ModuleNotFoundError"),  # the import hook: the course's code only
    ("import os; os.killpg", True, "AttributeError"),
    ("from os import setsid", True, "ImportError"),
    ("import signal; signal.SIGKILL", True, "AttributeError"),
    ("import signal; signal.SIGTERM", True, "ok"),  # Windows has SIGTERM
    ("import os, sys; assert (os.name, sys.platform) == ('nt', 'win32')", True, "ok"),
    ("import os; assert os.path.join('a', 'b') == 'a/b'", True, "ok"),  # the file system stays Linux's
    ("from pathlib import Path; Path('/proc/self/status').read_text()", False, "FileNotFoundError"),
    ("import os; assert os.name == 'posix'", False, "ok"),  # pathlib, subprocess and psutil keep working
]


def controls() -> dict[str, str]:
    """What each control's code does here: the name of the exception it raises, or "ok"."""
    found = {}
    for code, as_course, _ in CONTROLS:
        try:
            exec(code, {"__name__": "course_utils._windows_probe" if as_course else "someone_else"})
            found[code] = "ok"
        except Exception as error:  # noqa: BLE001 - the exception's type is the answer
            found[code] = type(error).__name__
    return found


def child_report(payload: dict[str, Any]) -> dict[str, Any]:
    """A ``core.child`` target: print text cp1252 lacks, and say what the course's code sees in this process."""
    from course_utils.core import processes, rss

    print(payload["text"], flush=True)
    return {
        "platform": rss.sys.platform,
        "os_name": processes.os.name,
        "stdout_encoding": sys.stdout.encoding,
        "peak_rss_mib": rss.peak_rss_mib(),
        "linux_peak_mib": linux_peak_mib(),
    }


def _sleeper_with_grandchild() -> list[str]:
    code = (
        "import subprocess, sys, time\n"
        "p = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(120)'])\n"
        "print(p.pid, flush=True)\n"
        "time.sleep(120)\n"
    )
    return [sys.executable, "-c", code]


def _processes() -> dict[str, Any]:
    from course_utils.core import processes
    from tests.process_checks import still_running

    POPEN_CALLS.clear()
    proc = processes.start_in_group(_sleeper_with_grandchild(), stdout=subprocess.PIPE)
    grandchild = int(proc.stdout.readline())
    alive = processes.group_alive(proc.pid)
    code = processes.stop_group(proc, grace_s=10)
    proc.stdout.close()
    return {
        "popen_calls": list(POPEN_CALLS),
        "alive_before_stop": alive,
        "alive_after_stop": processes.group_alive(proc.pid),
        "exit_code": code,
        "still_running": still_running([proc.pid, grandchild]),
    }


def _children(folder: pathlib.Path) -> dict[str, Any]:
    from course_utils.core import child
    from course_utils.core.errors import ChildError

    run = child.run_python("windows_sim:child_report", {"text": NOT_CP1252}, timeout_s=120, what="The Windows child")
    found: dict[str, Any] = {"value": run.value, "printed": NOT_CP1252 in run.output}
    try:
        child.run_python("time:sleep", 60, timeout_s=1, what="The sleeping child")
        found["timeout"] = "no error"
    except ChildError as error:
        found["timeout"] = error.ended
    # The same print in a Python started without the course's environment: Windows' cp1252 fails on it.
    env = {k: v for k, v in os.environ.items() if k != "PYTHONIOENCODING"}
    with open(folder / "plain.log", "wb") as log:
        plain = subprocess.run([sys.executable, "-c", f"print({NOT_CP1252!r})"], stdout=log, stderr=log, env=env)
    found["plain_exit"] = plain.returncode
    found["plain_log"] = (folder / "plain.log").read_bytes().decode("utf-8", "replace")[-300:]
    return found


TINY_NOTEBOOK_CELLS = [
    "X = 1  # parameters",
    "from course_utils.results import Recorder\n"
    "from course_utils.core import rss\n"
    f"print({NOT_CP1252!r})\n"
    "recorder = Recorder('99_windows_tiny', parameters={'X': X}, smoke=True)\n"
    "recorder.record(x=X, platform=rss.sys.platform, peak_seen_mib=rss.peak_rss_mib())",
]


def _runner(folder: pathlib.Path) -> dict[str, Any]:
    import nbformat

    from course_tools.batch import notebook_run

    nb = nbformat.v4.new_notebook(
        metadata={"kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"}}
    )
    nb.cells = [nbformat.v4.new_code_cell(TINY_NOTEBOOK_CELLS[0], metadata={"tags": ["parameters"]})]
    nb.cells += [nbformat.v4.new_code_cell(source) for source in TINY_NOTEBOOK_CELLS[1:]]
    path = folder / "99_windows_tiny.ipynb"
    nbformat.write(nb, str(path))
    record = notebook_run.run_notebook(path, folder / "run", parameters={"X": 3}, smoke=True, timeout=120)
    return {
        "status": record.status,
        "error": record.error,
        "results": record.results,
        "peak_rss_mib": record.peak_rss_mib,
        "log": pathlib.Path(record.log).read_text(encoding="utf-8", errors="replace")[-2000:],
    }


def try_lock(payload: dict[str, Any]) -> dict[str, Any]:
    """A ``core.child`` target: take and release ``payload["folder"]``'s lock, or say who holds it."""
    from course_utils.core.errors import FolderInUseError
    from course_utils.core.files import FolderLock

    try:
        with FolderLock(payload["folder"]):
            return {"locked": True}
    except FolderInUseError as busy:
        return {"locked": False, "pid": busy.pid}


def _lock(folder: pathlib.Path) -> dict[str, Any]:
    """``course run``'s folder lock, the Windows way: held here, tried by a second process, then released."""
    from course_utils.core import child, files

    locked = folder / "locked"
    locked.mkdir()
    with files.FolderLock(locked) as lock:
        held = child.run_python("windows_sim:try_lock", {"folder": str(locked)}, timeout_s=120, what="A locker")
        holder = lock.holder()
    after = child.run_python("windows_sim:try_lock", {"folder": str(locked)}, timeout_s=120, what="A locker")
    return {
        "module": "msvcrt" if files.msvcrt is not None and files.fcntl is None else "fcntl",
        "pid": os.getpid(),
        "holder": holder,
        "while_held": held.value,
        "after_release": after.value,
    }


def scenario(folder_name: str) -> dict[str, Any]:
    """What a Windows student's notebooks do with the package, here; every part's outcome as data."""
    import json

    folder = pathlib.Path(folder_name)
    out: dict[str, Any] = {"controls": controls()}

    import course_tools
    import course_utils

    modules = []
    for package in (course_utils, course_tools):  # the student's package and the instructor's tools
        root = pathlib.Path(package.__file__).parent
        files = [f.relative_to(root).with_suffix("") for f in root.rglob("*.py")
                 if not {"__pycache__", "theme"} & set(f.parts)]  # theme/: the website's files, not modules
        modules += [".".join((package.__name__, *f.parts)).removesuffix(".__init__") for f in files]
    modules.sort()
    failures = {}
    for name in modules:
        if not name.endswith("__main__"):
            try:
                importlib.import_module(name)
            except Exception as error:  # noqa: BLE001 - reported to the test
                failures[name] = f"{type(error).__name__}: {error}"
    out["modules"], out["import_failures"] = modules, failures

    # a notebook's setup cell (notebooks/02_verify_gpu.ipynb cell 2) and a record
    os.environ["COURSE_SMOKE"] = "1"
    os.environ["COURSE_RESULTS_DIR"] = str(folder / "records")
    namespace: dict[str, Any] = {"EPOCHS": 10, "IMAGES": None, "DEVICE": "auto", "SEED": 0}
    course = course_utils.setup(namespace, "99_windows", smoke={"EPOCHS": 1, "IMAGES": 2000})
    from course_utils.device import cpu_model, why_no_gpu
    from course_utils.doctor import detect_platform, probes
    from course_utils.lessons.nb05 import speed

    before = linux_peak_mib()
    course.record(x=1)
    after = linux_peak_mib()
    out["setup"] = {
        "epochs": namespace["EPOCHS"],
        "images": namespace["IMAGES"],
        "device_kind": course.device.kind,
        "record": json.loads((folder / "records" / "99_windows.json").read_text(encoding="utf-8")),
        "linux_peak_before": before,
        "linux_peak_after": after,
        # TF 2.21's Windows wheel has no CUDA; this one has, so a stand-in says so
        "why_no_gpu_without_cuda": why_no_gpu(types.SimpleNamespace(test=types.SimpleNamespace(
            is_built_with_cuda=lambda: False))),
        "cpu_model": cpu_model(),
        "cpu_flags": sorted(speed.cpu_flags()),
        "doctor_platform": detect_platform(),
        "is_wsl": probes.is_wsl(environ={}),
    }

    out["processes"] = _processes()
    out["children"] = _children(folder)
    out["runner"] = _runner(folder)
    out["lock"] = _lock(folder)
    return out
