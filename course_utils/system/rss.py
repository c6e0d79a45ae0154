"""A process's resident memory (RSS) now, and the most it has held so far (its peak), in MiB.

Works on Linux, macOS and Windows; ``resource`` (POSIX only) is imported only where it exists,
so importing this module - and ``course_utils`` - works everywhere.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

MIB = 2**20


def _vmhwm_mib(pid: int | None) -> float | None:
    """Linux: ``VmHWM`` (the resident high-water mark) from /proc/<pid>/status, or None without one."""
    try:
        text = Path(f"/proc/{pid if pid is not None else 'self'}/status").read_text()
    except OSError:
        return None
    for line in text.splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024  # kB
    return None  # a zombie or a kernel thread has no memory lines


def peak_rss_mib(pid: int | None = None) -> float:
    """The peak resident memory of process ``pid`` (default: this process) so far, in MiB.

    Linux: ``VmHWM`` from /proc/<pid>/status. Not ``getrusage``'s ``ru_maxrss``: Linux keeps
    that across ``exec``, so a child started by a big process (a kernel started by a runner
    that holds TensorFlow) would report its parent's peak. Windows: psutil's ``peak_wset``
    (the peak working set). macOS: ``ru_maxrss`` for this process; another process's peak is
    not readable there, so its current resident memory stands in. Raises
    ``psutil.NoSuchProcess`` when ``pid`` is gone.
    """
    this = pid is None or pid == os.getpid()
    if sys.platform.startswith("linux"):
        found = _vmhwm_mib(None if this else pid)
        if found is not None:
            return found
    if this and sys.platform != "win32":
        try:
            import resource
        except ImportError:  # not POSIX after all: psutil below
            resource = None
        if resource is not None:
            peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
            return peak / MIB if sys.platform == "darwin" else peak / 1024  # bytes on macOS, KiB elsewhere
    import psutil

    info = psutil.Process(pid).memory_info()
    return (getattr(info, "peak_wset", None) or info.rss) / MIB


def rss_mib(pid: int | None = None) -> float:
    """The resident memory of process ``pid`` (default: this process) now, in MiB (psutil)."""
    import psutil

    return psutil.Process(pid).memory_info().rss / MIB
