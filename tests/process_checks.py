"""What the process tests check: which processes still run."""

from __future__ import annotations

from collections.abc import Iterable

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
