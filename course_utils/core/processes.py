"""Child processes that never outlive their use: free ports, a process group each, and one way to stop it.

``start_in_group`` starts a process as the leader of a group of its own (a new session on POSIX,
``CREATE_NEW_PROCESS_GROUP`` on Windows); ``stop_group`` ends the whole group and every descendant that left it
(a Jupyter kernel runs in a session of its own). ``StopSignals`` makes a tool stop the same way on Ctrl-C, a
second Ctrl-C or SIGTERM/SIGHUP: its cleanup runs to the end.
"""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from typing import Any

import psutil

LOCALHOST = "127.0.0.1"


def free_ports(count: int) -> list[int]:
    """``count`` distinct TCP ports free now on 127.0.0.1 (the OS picks them; all held until every one is picked).
    Another program may still take one: use them at once.
    """
    with contextlib.ExitStack() as stack:  # each socket is closed as the block ends, whatever happened
        sockets = [stack.enter_context(socket.socket(socket.AF_INET, socket.SOCK_STREAM)) for _ in range(count)]
        for s in sockets:
            s.bind((LOCALHOST, 0))
        return [s.getsockname()[1] for s in sockets]


def start_in_group(
    cmd: Sequence[str], *, log_path: str | os.PathLike[str] | None = None, **popen: Any
) -> subprocess.Popen:
    """Start ``cmd`` as the leader of a process group of its own; ``stop_group`` ends it and all it started.

    ``log_path``: stdout and stderr go to that file (truncated first). Other keyword arguments go to
    ``subprocess.Popen``; standard input is closed unless ``stdin`` is given (a pipe's end tells the child this
    process is done, or gone).
    """
    popen.setdefault("stdin", subprocess.DEVNULL)
    if os.name == "nt":
        popen["creationflags"] = subprocess.CREATE_NEW_PROCESS_GROUP  # type: ignore[attr-defined]
    else:
        popen["start_new_session"] = True  # a new session: its own process group, no terminal's Ctrl-C
    if log_path is None:
        return subprocess.Popen(list(cmd), **popen)
    with open(log_path, "wb") as fh:  # the child keeps its own copy of the descriptor
        return subprocess.Popen(list(cmd), stdout=fh, stderr=subprocess.STDOUT, **popen)


def group_alive(pgid: int) -> bool:
    """Whether any process of process group ``pgid`` still exists (zombies count until reaped); on Windows, which
    has no POSIX groups, whether process ``pgid`` exists."""
    if os.name == "nt":
        return psutil.pid_exists(pgid)
    try:
        os.killpg(pgid, 0)
    except (ProcessLookupError, PermissionError):
        return False
    return True


def descendants(pid: int) -> set[int]:
    """The pids of every process ``pid`` started, and they started, that is running now (best effort)."""
    try:
        return {p.pid for p in psutil.Process(pid).children(recursive=True)}
    except Exception:  # gone already, or not allowed to look
        return set()


def leftover_processes(text: str | os.PathLike[str]) -> list[int]:
    """PIDs of running processes (zombies excluded) whose command line contains ``text``: with a folder's path, the
    children given paths inside it still running, orphans included (after a run of notebook 07's workers: none).
    """
    needle = os.fspath(text)
    found = []
    for proc in psutil.process_iter(["cmdline", "status"]):
        try:
            if proc.info["status"] != psutil.STATUS_ZOMBIE and needle in " ".join(proc.info["cmdline"] or []):
                found.append(proc.pid)
        except psutil.Error:
            continue
    return found


def running(handle: Any) -> bool:
    """Whether the process of a psutil handle still runs (a zombie has ended)."""
    try:
        return handle.is_running() and handle.status() != psutil.STATUS_ZOMBIE
    except psutil.Error:
        return False


def _signal_all(handles: list[Any], kill: bool) -> None:
    for handle in filter(running, handles):
        with contextlib.suppress(psutil.Error):
            handle.kill() if kill else handle.terminate()


def _all_ended(proc: subprocess.Popen, handles: list[Any]) -> bool:
    proc.poll()  # reap the leader: an unreaped leader keeps its group alive
    if proc.returncode is None or (os.name != "nt" and group_alive(proc.pid)):
        return False
    return not any(map(running, handles))


def _wait_ended(
    proc: subprocess.Popen, handles: list[Any], seconds: float, clock: Callable[[], float]
) -> bool:
    """Whether everything ended within ``seconds`` of ``clock`` (polled every 50 ms)."""
    deadline = clock() + seconds
    while True:
        if _all_ended(proc, handles):
            return True
        if clock() >= deadline:
            return False
        time.sleep(0.05)


def stop_group(
    proc: subprocess.Popen,
    grace_s: float = 3.0,
    *,
    also: Iterable[int] = (),
    clock: Callable[[], float] = time.monotonic,
) -> int | None:
    """End ``proc``, its process group and its descendants; ``proc``'s exit code (None if it never ended).

    POSIX: SIGTERM to the group, descendants outside it and ``also``, then SIGKILL after ``grace_s`` to what is
    left. Windows: the leader and its descendants are killed. Safe to call again. ``clock``: a test's own.
    """
    handles = []  # psutil's handles know their process's start time: a reused pid is never signalled by mistake
    for pid in descendants(proc.pid) | set(also):
        with contextlib.suppress(psutil.Error):
            handles.append(psutil.Process(pid))
    if os.name == "nt":
        _signal_all(handles, kill=True)
        if proc.poll() is None:
            proc.kill()
        _wait_ended(proc, handles, grace_s, clock)
    else:
        for sig in (signal.SIGTERM, signal.SIGKILL):
            if _all_ended(proc, handles):
                break
            try:
                os.killpg(proc.pid, sig)
            except (ProcessLookupError, PermissionError):  # the group is gone (or was never made)
                if proc.poll() is None:
                    proc.send_signal(sig)
            _signal_all(handles, kill=sig == signal.SIGKILL)
            if _wait_ended(proc, handles, grace_s, clock):
                break
    try:
        return proc.wait(timeout=grace_s)
    except subprocess.TimeoutExpired:
        return None


class StopSignals:
    """While active: SIGTERM (and SIGHUP, Windows' SIGBREAK) stop the program as Ctrl-C does, and only once.

    The first stop signal raises ``KeyboardInterrupt`` in the main thread, so the program's Ctrl-C handling (stop
    the children, write a report) runs; later ones are recorded in ``received`` and announced with
    ``on_repeat(name)``, so a second Ctrl-C or a ``kill`` does not cut the cleanup short. After ``disarm()`` none
    raises. Only the main thread can set handlers
    (https://docs.python.org/3/library/signal.html#signals-and-threads): elsewhere this does nothing.
    """

    def __init__(self, on_repeat: Callable[[str], None] | None = None) -> None:
        self.on_repeat = on_repeat
        self.received: list[str] = []
        self.armed = True
        self._previous: dict[int, Any] = {}

    @property
    def first(self) -> str | None:
        """The first stop signal received (``"Ctrl-C"``, ``"SIGTERM"``, ...), None before any."""
        return self.received[0] if self.received else None

    def _handle(self, number: int, frame: Any) -> None:
        name = "Ctrl-C" if number == signal.SIGINT else signal.Signals(number).name
        self.received.append(name)
        if self.armed and len(self.received) == 1:
            raise KeyboardInterrupt(name)
        if self.on_repeat is not None:
            self.on_repeat(name)

    def disarm(self) -> None:
        """From now on a stop signal is recorded and announced, never raised."""
        self.armed = False

    def __enter__(self) -> StopSignals:
        if threading.current_thread() is threading.main_thread():
            for name in ("SIGINT", "SIGTERM", "SIGHUP", "SIGBREAK"):  # the last two exist on POSIX / on Windows only
                if (number := getattr(signal, name, None)) is not None:
                    self._previous[number] = signal.signal(number, self._handle)
        return self

    def __exit__(self, *exc: object) -> None:
        for number, previous in self._previous.items():
            signal.signal(number, previous if previous is not None else signal.SIG_DFL)
        self._previous.clear()

