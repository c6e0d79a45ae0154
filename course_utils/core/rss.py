"""A process's resident memory (RSS) now, and the most it has held so far (its peak), in MiB.

Works on Linux, macOS and Windows: each platform's own counter is read in a branch of its own,
and ``resource`` (POSIX only) is imported only there, so importing this module - and
``course_utils`` - works everywhere (tests/core/test_windows.py's guard scan checks that import).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import psutil

MIB = 2**20


def _vmhwm_mib(pid: int | None) -> float | None:
    """Linux: ``VmHWM`` (the resident high-water mark) from /proc/<pid>/status, or None without one."""
    try:
        text = Path(f"/proc/{pid if pid is not None else 'self'}/status").read_text(encoding="ascii", errors="replace")
    except OSError:
        return None
    # in kB; a zombie or a kernel thread has no memory lines
    return next((int(line.split()[1]) / 1024 for line in text.splitlines() if line.startswith("VmHWM:")), None)


def peak_rss_mib(pid: int | None = None) -> float:
    """The peak resident memory of process ``pid`` (default: this process) so far, in MiB.

    Linux: ``VmHWM`` (/proc/<pid>/status), not ``ru_maxrss``, which Linux keeps across ``exec``, so a child of a
    big process would report its parent's peak. Windows: psutil's ``peak_wset``. macOS: ``ru_maxrss`` for this
    process, the current RSS for another. ``psutil.NoSuchProcess`` when ``pid`` is gone.
    """
    if sys.platform == "win32":  # peak_wset is Windows' PeakWorkingSetSize (psutil's memory_info docs)
        return psutil.Process(pid).memory_info().peak_wset / MIB
    this = pid is None or pid == os.getpid()
    if sys.platform.startswith("linux"):
        found = _vmhwm_mib(None if this else pid)
        if found is not None:
            return found
    if this:
        import resource  # POSIX only: Windows returned above
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        return peak / MIB if sys.platform == "darwin" else peak / 1024  # bytes on macOS, KiB elsewhere
    return psutil.Process(pid).memory_info().rss / MIB  # its resident memory now
