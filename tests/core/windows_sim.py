"""Native Windows, simulated on Linux, for the Windows-only branches of course_utils (tests/core/test_windows.py).

No CI machine runs Windows, so the test runs the package in Python processes where, as on Windows:

- the course's own modules cannot import the Unix-only modules (``resource``, ``fcntl``, ``termios``, ...), and
  see Windows' ``os``, ``sys``, ``signal``, ``subprocess`` and ``platform``: ``os.name == "nt"`` and no
  ``os.killpg``, ``os.setsid``, ...; ``sys.platform == "win32"``; ``signal`` without ``SIGKILL``, ...; and
  ``subprocess.CREATE_NEW_PROCESS_GROUP``. Only the course's modules get these views (an import hook hands them
  out): setting ``os.name`` for everyone would break pathlib and subprocess, and psutil's and Popen's ``kill()`` -
  which stand in here for Windows' TerminateProcess - need Linux's ``signal.SIGKILL``;
- ``msvcrt.locking`` exists (for ``core.files.FolderLock``), played by POSIX record locks on the same
  byte range (``fcntl.lockf``, held per process and released when it ends, as Windows' ``LockFile``).

``install()`` sets all this up. ``sitecustomize.py`` in a folder on ``PYTHONPATH`` that imports this
module (copied there as ``windows_sim.py``) and calls ``install()`` carries the simulation into every
Python process started below. ``scenario(folder)`` is what the test runs in such a process: one check per
Windows-only branch, returned as JSON-able data.
"""

from __future__ import annotations

import builtins
import errno
import os
import pathlib
import platform
import signal
import subprocess
import sys
import types
from typing import Any

# Modules Windows' Python does not have (https://docs.python.org/3/library/unix.html and each module's
# "Availability: Unix"). The course's modules cannot import them, nor posix and friends (loaded already, as os
# needs them on Linux).
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
    """Popen with Windows' ``creationflags``, recorded (Linux's Popen refuses it)."""

    def __init__(self, *args: Any, creationflags: int = 0, **kwargs: Any) -> None:
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


def _msvcrt() -> types.ModuleType:
    """Windows' ``msvcrt`` as far as the course uses it: ``locking`` a byte range from the current position
    (https://docs.python.org/3/library/msvcrt.html#msvcrt.locking), on top of POSIX record locks."""
    import fcntl

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
    if "msvcrt" not in sys.modules:
        sys.modules["msvcrt"] = _msvcrt()
        builtins.__import__ = _import


# --------------------------------------------------------------------------- run inside the simulation


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


def _platform(folder: pathlib.Path) -> dict[str, Any]:
    """The branches that only ask which platform this is."""
    from course_utils.core import places
    from course_utils.device import why_no_gpu
    from course_utils.doctor import detect_platform

    os.environ["LOCALAPPDATA"] = str(folder / "local")
    os.environ.pop("COURSE_HOME", None)
    places.is_checkout = lambda: False  # a student's install: not a checkout, the working folder not theirs
    places.is_own_and_writable = lambda path: False
    # TF 2.21's Windows wheel has no CUDA; this one has, so a stand-in says so
    no_cuda = types.SimpleNamespace(test=types.SimpleNamespace(is_built_with_cuda=lambda: False))
    return {
        "doctor_platform": detect_platform(),
        "why_no_gpu_without_cuda": why_no_gpu(no_cuda),
        "course_home": str(places.course_home()),
    }


def scenario(folder_name: str) -> dict[str, Any]:
    """What the course's Windows-only branches do, here; every part's outcome as data."""
    folder = pathlib.Path(folder_name)
    return {"platform": _platform(folder), "processes": _processes(), "lock": _lock(folder)}
