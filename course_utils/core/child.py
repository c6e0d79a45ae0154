"""Run a Python function in a fresh child process and get its result back - the course's one way to do it.

Why: TensorFlow reads its device configuration once per process and keeps device memory until the process ends,
peak memory only grows, and TensorFlow's C++ core logs to the process's file descriptors. So a notebook run, a
fresh TensorFlow, a placement log, a benchmark and each cluster worker run as
``python -m course_utils.core.child TARGET PAYLOAD.json RESULT.json``: a process group of its own
(``core.processes``), output and errors in one log; ``main`` calls ``function(payload)`` and writes
``{"value": ...}`` or ``{"error": {...}}`` (``what``/``fix`` of a ``CourseError``) atomically. The parent raises
``ChildError`` for any failure: an exception, a crash, a signal, a timeout, no result.

No child outlives its use: ``Child`` (a context manager) and ``run_python`` stop its group, and a watchdog
thread in the child ends it when the parent cannot (CONTRIBUTING, "Children end with their parent"): it waits for
the end of a pipe from the parent. A pipe rather than ``prctl(PR_SET_PDEATHSIG)``, which fires when the parent
*thread* ends (https://man7.org/linux/man-pages/man2/prctl.2.html) - the course starts children from worker
threads - and it works on macOS and Windows too.
"""

from __future__ import annotations

import contextlib
import json
import os
import pkgutil
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import traceback
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import psutil

from course_utils.core import variables
from course_utils.core.errors import ChildError, CourseError
from course_utils.core.files import write_json_atomic
from course_utils.core.i18n import N_, translator
from course_utils.core.places import PROJECT_ROOT
from course_utils.core.processes import descendants, start_in_group, stop_group

_TARGET = re.compile(r"[A-Za-z_][\w.]*:[A-Za-z_][\w.]*")
_ = translator("course")
EXIT_ORPHANED = 129  # the child's status when it ended because its parent had ended
EXIT_TIME_LIMIT = 124  # ... because its own time limit passed (as timeout(1) exits)
MORE_TIME = N_("Run it again with more time (or less work); if it stops at the same place again, run the same call "
               "in a terminal to see where it hangs.")


def _environment(env: Mapping[str, str | None]) -> dict[str, str]:
    """This process's environment with ``env`` applied (None removes a variable), course_utils importable."""
    merged = dict(os.environ)
    merged["PYTHONUNBUFFERED"] = "1"  # output reaches the log as it is printed, even if the child is killed
    # The log is read as UTF-8. On Windows a Python whose output goes to a file writes the ANSI code page
    # (cp1252) instead, and fails on characters it lacks - Keras 3's progress bar among them
    # (keras-team/keras#19386) - so the child writes UTF-8 unless told otherwise.
    merged.setdefault("PYTHONIOENCODING", "utf-8")
    for key, value in env.items():
        if value is None:
            merged.pop(key, None)
        else:
            merged[key] = str(value)
    paths = [p for p in merged.get("PYTHONPATH", "").split(os.pathsep) if p]
    if str(PROJECT_ROOT) not in paths:  # the child imports course_utils from where the parent did
        merged["PYTHONPATH"] = os.pathsep.join([str(PROJECT_ROOT), *paths])
    return merged


def exit_description(returncode: int) -> str:
    """``3`` -> ``"status 3"``, ``-9`` -> ``"signal SIGKILL"`` (a negative code is the signal that ended it)."""
    if returncode >= 0:
        return f"status {returncode}"
    try:
        return f"signal {signal.Signals(-returncode).name}"
    except ValueError:
        return f"signal {-returncode}"


@dataclass(eq=False)  # identity, as a process is
class Child:
    """A running child started by ``start_python``; a context manager that always stops it (and cleans up)."""

    process: subprocess.Popen
    what: str
    log: Path
    keep_log: bool  # the caller chose the log (or its folder): name it in messages
    result_file: Path
    temp_dir: Path | None

    def wait(self, timeout_s: float | None = None) -> int | None:
        """Wait until it ends, at most ``timeout_s`` seconds (None: no limit); its exit status, or None
        if it still runs then (it is not stopped: see ``run_python`` for that)."""
        try:
            return self.process.wait(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            return None

    def log_text(self) -> str:
        """Everything it printed so far (standard output and error, C++ logs included)."""
        try:
            return self.log.read_text(encoding="utf-8", errors="replace")
        except OSError:
            return ""

    def log_tail(self, lines: int = 8) -> str:
        """The last ``lines`` non-empty lines it printed."""
        return "\n".join([line for line in self.log_text().splitlines() if line.strip()][-lines:])

    def _record(self) -> dict[str, Any] | None:
        try:
            record = json.loads(self.result_file.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None
        return record if isinstance(record, dict) else None

    def result(self) -> Any:
        """Wait for the end and return the function's value; ``ChildError`` if the child did not deliver one."""
        code = self.wait()
        record = self._record()
        if code == 0 and record is not None and "value" in record:
            return record["value"]
        raise self.failure(record=record)

    def failure(self, *, timeout_s: float | None = None, record: dict[str, Any] | None = None) -> ChildError:
        """The ``ChildError`` that says how this child ended (``timeout_s``: it ran past that and was stopped)."""
        record = record if record is not None else self._record()
        error = record.get("error") if record else None
        error = error if isinstance(error, dict) else None
        code = self.process.returncode  # negative: the signal that ended it
        fix = _("Read the last lines of its log above; run `course doctor` if they mention CUDA or the GPU.")
        if timeout_s is not None:
            ended = f"timeout after {timeout_s:g} s"
            how = _("{subject} did not finish within {seconds:g} s, so it was stopped.")
            fix = _(MORE_TIME)
        elif error:
            ended = "error"
            how = _("{subject} raised {type}: {message}.")
            fix = error.get("fix") or _("Read the traceback at the end of its log above.")
        elif code < 0:
            ended = exit_description(code)
            how = _("{subject} was ended by {ended} before it reported.")
            if code == -getattr(signal, "SIGKILL", 9):
                fix = _(
                    "Nobody stopped it on purpose? Then the system most likely ran out of memory and killed it: "
                    "use less data or a smaller batch, close other notebooks, and run it again."
                )
        else:
            ended = exit_description(code)
            how = (_("{subject} exited with {ended} but wrote no result.") if code == 0
                   else _("{subject} exited with {ended} before it wrote a result."))
        raised = error or {}
        what = how.format(subject=self.what, seconds=timeout_s, ended=ended, type=raised.get("type"),
                          message=raised.get("what") or raised.get("message"))
        tail = self.log_tail()
        if self.keep_log:
            said = (_("The last lines of its log ({log}):\n{tail}") if tail else _("Its log ({log}) is empty.")).format(
                log=self.log, tail=tail)
        else:
            said = _("The last lines of its log:\n{tail}").format(tail=tail) if tail else _("Its log is empty.")
        return ChildError(f"{what}\n{said}", fix, ended=ended, returncode=code, error=error, tail=tail)

    def close(self) -> None:
        """Stop its whole process group (``stop_group``), and delete the temporary folder ``start_python`` made for
        it (if it made one)."""
        try:
            stop_group(self.process)
            self.process.stdin.close()  # type: ignore[union-attr]
        finally:
            if self.temp_dir is not None:
                shutil.rmtree(self.temp_dir, ignore_errors=True)

    def __enter__(self) -> Child:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def python_command(module: str, *args: str) -> list[str]:
    """``python -m MODULE ARGS`` with this Python: a command line for a tool that starts the process itself."""
    return [sys.executable, "-m", module, *args]


def start_python(
    target: str,
    payload: Any,
    *,
    folder: str | os.PathLike[str] | None = None,
    env: Mapping[str, str | None] | None = None,
    log: str | os.PathLike[str] | None = None,
    name: str = "child",
    what: str | None = None,
    python: str | None = None,
    time_limit_s: float | None = None,
) -> Child:
    """Start ``target`` (``"package.module:function"``) on ``payload`` in a new Python process; return at once.

    ``payload`` (JSON-able) and the result are ``<folder>/<name>.payload.json`` and ``.result.json`` (``folder``: a
    temporary folder, removed by ``Child.close``, when not given); output goes to ``log`` (default
    ``<folder>/<name>.log``). ``env`` adds variables (``None`` removes one); ``what`` names the child in errors;
    ``python``: the interpreter. The child ends by itself when this process ends, and after ``time_limit_s``.
    """
    if not _TARGET.fullmatch(target):
        raise ValueError(f"target {target!r} is not 'package.module:function'")
    if time_limit_s is not None and not time_limit_s > 0:
        raise ValueError(f"time_limit_s must be a positive number of seconds, not {time_limit_s!r}")
    temp_dir = Path(tempfile.mkdtemp(prefix=f"course-{name}-")) if folder is None else None
    env = {
        **(env or {}),
        variables.PARENT_PID: str(os.getpid()),
        variables.TIME_LIMIT_S: None if time_limit_s is None else f"{time_limit_s:g}",
        variables.CHILD_TEMP_DIR: None if temp_dir is None else str(temp_dir),
    }
    where = temp_dir or Path(folder)  # type: ignore[arg-type]
    try:
        where.mkdir(parents=True, exist_ok=True)
        payload_file = where / f"{name}.payload.json"
        result_file = where / f"{name}.result.json"
        result_file.unlink(missing_ok=True)  # a result of an earlier run must not pass for this one's
        log_path = Path(log) if log is not None else where / f"{name}.log"
        log_path.parent.mkdir(parents=True, exist_ok=True)
        write_json_atomic(payload_file, payload)
        cmd = [python or sys.executable, "-m", "course_utils.core.child", target, str(payload_file), str(result_file)]
        # its standard input: a pipe whose end says that this process has ended (``_watch_parent``)
        process = start_in_group(cmd, env=_environment(env), log_path=log_path, stdin=subprocess.PIPE)
    except BaseException:
        if temp_dir is not None:
            shutil.rmtree(temp_dir, ignore_errors=True)
        raise
    return Child(
        process,
        what=what or _("The child process {name!r} ({target})").format(name=name, target=target),
        log=log_path,
        keep_log=log is not None or folder is not None,
        result_file=result_file,
        temp_dir=temp_dir,
    )


@dataclass
class ChildRun:
    """A child that delivered: its function's value and everything it printed."""

    value: Any
    output: str


def run_python(
    target: str,
    payload: Any,
    *,
    timeout_s: float | None,
    what: str,
    env: Mapping[str, str | None] | None = None,
    log: str | os.PathLike[str] | None = None,
    folder: str | os.PathLike[str] | None = None,
    name: str = "child",
) -> ChildRun:
    """Run ``target(payload)`` in a new Python process, wait for it, and return what it delivered.

    ``ChildError`` if the function raised, the process crashed, wrote no result, or ran past ``timeout_s`` (None: no
    limit). Whatever happens the child's process group is stopped before this returns or raises.
    """
    with start_python(target, payload, folder=folder, env=env, log=log, name=name, what=what) as child:
        if child.wait(timeout_s) is None:
            stop_group(child.process)
            raise child.failure(timeout_s=timeout_s)
        return ChildRun(child.result(), child.log_text())


def _describe(exc: BaseException) -> dict[str, str | None]:
    course = isinstance(exc, CourseError)
    return {
        "type": type(exc).__name__,
        "message": str(exc),
        "what": exc.what if course else None,  # type: ignore[attr-defined]
        "fix": exc.fix if course else None,  # type: ignore[attr-defined]
        "traceback": "".join(traceback.format_exception(exc)),
    }


def _end_here(result_file: str, error: dict[str, str | None], status: int, remove: str | None = None) -> None:
    """End this child now: say why (log and result), stop every process it started, remove ``remove``, exit."""
    print(f"\n{error['what']}", file=sys.stderr, flush=True)
    with contextlib.suppress(Exception):  # the exit status still says it failed
        write_json_atomic(result_file, {"error": error})
    for pid in descendants(os.getpid()):
        with contextlib.suppress(psutil.Error):
            psutil.Process(pid).kill()
    if remove:  # the temporary folder its parent would have removed
        shutil.rmtree(remove, ignore_errors=True)
    os._exit(status)  # the main thread may be deep in TensorFlow or papermill: end the process from here


def _ended(kind: str, what: str, fix: str) -> dict[str, str | None]:
    return {"type": kind, "message": what, "what": what, "fix": fix, "traceback": None}


def _watch(result_file: str) -> None:
    """Start the child's watchdog: daemon threads that end the child once its parent has ended, or at its time limit.

    Reads ``COURSE_PARENT_PID``, ``COURSE_TIME_LIMIT_S`` and ``COURSE_CHILD_TEMP_DIR`` (set by ``start_python``).
    """
    try:
        parent_pid = int(os.environ.get(variables.PARENT_PID) or 0) or None
        limit_s = float(os.environ.get(variables.TIME_LIMIT_S) or 0) or None
    except ValueError:
        parent_pid, limit_s = None, None
    if limit_s is not None:
        what = _("This child ran past its own time limit of {seconds:g} s, so it ended itself.").format(seconds=limit_s)
        timer = threading.Timer(limit_s, _end_here, (result_file, _ended("ChildTimeLimit", what, _(MORE_TIME)),
                                                     EXIT_TIME_LIMIT))
        timer.daemon = True
        timer.start()
    if parent_pid is not None:
        threading.Thread(target=_watch_parent, args=(parent_pid, result_file), name="course-child-watchdog",
                         daemon=True).start()


def _watch_parent(parent_pid: int, result_file: str) -> None:
    """Wait for the end of standard input, a pipe from the parent that only the parent writes to: the system closes
    it when the parent ends, however it ends (killed too). Then end this child and remove its temporary folder."""
    with contextlib.suppress(OSError):  # Windows: a broken pipe
        while os.read(0, 4096):
            pass
    what = _("This child's parent process (pid {pid}) has ended, so it ended too.").format(pid=parent_pid)
    fix = _("Nothing to do here: whatever ended the parent (a killed kernel, a stopped `course run`) "
            "also ended this work. Start it again from the parent.")
    _end_here(result_file, _ended("ChildOrphaned", what, fix), EXIT_ORPHANED,
              remove=os.environ.get(variables.CHILD_TEMP_DIR) or None)


def main() -> int:
    """The child: ``python -m course_utils.core.child TARGET PAYLOAD.json RESULT.json`` (see the module docstring)."""
    args = sys.argv[1:]
    if len(args) != 3:
        print("usage: python -m course_utils.core.child package.module:function PAYLOAD.json RESULT.json",
              file=sys.stderr)
        return 2
    target, payload_file, result_file = args
    _watch(result_file)
    try:
        payload = json.loads(Path(payload_file).read_text(encoding="utf-8"))
        value = pkgutil.resolve_name(target)(payload)
        write_json_atomic(result_file, {"value": value})
        return 0
    except BaseException as exc:  # everything, SystemExit and KeyboardInterrupt too, is reported to the parent
        traceback.print_exc()
        with contextlib.suppress(Exception):  # the exit status still says it failed
            write_json_atomic(result_file, {"error": _describe(exc)})
        return 1


if __name__ == "__main__":
    sys.exit(main())
