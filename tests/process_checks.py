"""What the process tests check: which processes still run; and waiting for a condition."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable

import psutil


def still_running(pids: Iterable[int]) -> list[int]:
    """Those of ``pids`` whose process still runs (a zombie has ended: it only waits to be reaped)."""
    alive = []
    for pid in sorted(set(pids)):
        try:
            if psutil.Process(pid).status() != psutil.STATUS_ZOMBIE:
                alive.append(pid)
        except psutil.Error:
            pass
    return alive


def wait_until(check: Callable[[], object]) -> None:
    """Wait until ``check()`` holds (the test's timeout catches a hang)."""
    while not check():
        time.sleep(0.01)
