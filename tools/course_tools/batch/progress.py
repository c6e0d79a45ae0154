"""The runner's progress display: which runs are going, which grid point, how long so far.

On a terminal a status line at the bottom is redrawn every second; each start and finish
is printed above it. Elsewhere (CI logs, a file) only the start and finish lines are
printed, plus a "still running" line every ``HEARTBEAT_S`` seconds.
"""

from __future__ import annotations

import shutil
import sys
import threading
import time
from collections.abc import Callable
from typing import TextIO

from course_tools import _
from course_utils.core.i18n import columns

HEARTBEAT_S = 60.0


def clock_text(seconds: float) -> str:
    """``12s``, ``3m05s``, ``1h02m``: an elapsed time at a glance."""
    seconds = int(seconds)
    if seconds < 60:
        return f"{seconds}s"
    if seconds < 3600:
        return f"{seconds // 60}m{seconds % 60:02d}s"
    return f"{seconds // 3600}h{seconds % 3600 // 60:02d}m"


class Progress:
    """Thread-safe progress of ``total`` runs; use as a context manager."""

    def __init__(self, total: int, *, stream: TextIO | None = None, live: bool | None = None,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.total = total
        self.stream = stream or sys.stdout
        self.live = self.stream.isatty() if live is None else live
        self.clock = clock
        self.began = clock()
        self.running: dict[int, tuple[str, float]] = {}  # run number -> (label, start)
        self.done = 0
        self.failed = 0
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def __enter__(self) -> Progress:
        self._thread = threading.Thread(target=self._tick, daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        if self._thread:
            self._thread.join(timeout=5)
        with self._lock:
            if self.live:
                self.stream.write("\r\033[K")
            self.stream.flush()

    def status_line(self) -> str:
        """One line: counts, each running run with its time, the total elapsed time."""
        now = self.clock()
        going = "; ".join(f"{label} {clock_text(now - t0)}" for label, t0 in self.running.values())
        line = (_("[{done}/{total} done, {failed} failed] running: {running} | elapsed {elapsed}") if self.failed
                else _("[{done}/{total} done] running: {running} | elapsed {elapsed}"))
        return line.format(done=self.done, total=self.total, failed=self.failed, running=going or "-",
                           elapsed=clock_text(now - self.began))

    def start(self, number: int, label: str) -> None:
        """Run ``number`` (1-based) has started."""
        with self._lock:
            self.running[number] = (label, self.clock())
            self._say(_("[{number}/{total}] start  {label}").format(number=number, total=self.total, label=label))

    def finish(self, number: int, status: str, duration_s: float, detail: str = "") -> None:
        """Run ``number`` has ended with ``status`` ("ok" or "failed")."""
        with self._lock:
            label, _started = self.running.pop(number, ("?", 0.0))
            self.done += 1
            self.failed += status != "ok"
            word = "ok    " if status == "ok" else "FAILED"
            extra = f" - {detail}" if detail else ""
            line = _("[{number}/{total}] {status} {label} in {seconds:.1f} s (elapsed {elapsed})").format(
                number=number, total=self.total, status=word, label=label, seconds=duration_s,
                elapsed=clock_text(self.clock() - self.began))
            self._say(line + extra)

    def _live_line(self) -> str:
        width = shutil.get_terminal_size().columns - 1  # a wrapped line could not be redrawn in place
        line = self.status_line()
        if columns(line) <= width:
            return line
        while line and columns(line) > max(width - 3, 0):  # cut by columns: a Chinese character takes two
            line = line[:-1]
        return line + "..."

    def _say(self, line: str) -> None:
        if self.live:
            self.stream.write(f"\r\033[K{line}\n{self._live_line()}")
        else:
            self.stream.write(line + "\n")
        self.stream.flush()

    def _tick(self) -> None:
        last_beat = self.clock()
        while not self._stop.wait(1.0):
            with self._lock:
                if self.live:
                    self.stream.write(f"\r\033[K{self._live_line()}")
                    self.stream.flush()
                elif self.running and self.clock() - last_beat >= HEARTBEAT_S:
                    last_beat = self.clock()
                    self.stream.write(f"  ... {self.status_line()}\n")
                    self.stream.flush()
