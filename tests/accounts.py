"""Other accounts on this machine: let a test's accounts through the closed folders on the way to the course.

The course's tests run as root in CI, where the Python lives under a 0700 ``/root``. A test that runs the course as
another account (the hub tier's students, the hosted tier's read-only student) lets only that account pass
through each closed folder (a POSIX ACL entry ``u:NAME:x``; Debian package ``acl``) and removes it at the end:
nothing opens for anyone else. Two tiers may do this at once (make test runs the hub and hosted tiers side by side):
each change of an ACL holds a lock, and each tier removes only its own entries, never another's.
"""

from __future__ import annotations

import fcntl
import os
import re
import stat
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from .conftest import ROOT


def closed_folders() -> list[Path]:
    """The folders other accounts cannot pass through on the way to the checkout and the environment's Python."""
    found: dict[Path, None] = {}
    for target in (ROOT / "notebooks", Path(sys.executable), Path(sys.executable).resolve()):
        for folder in reversed(Path(os.path.abspath(target)).parents):
            if not folder.stat().st_mode & stat.S_IXOTH:
                found[folder] = None
    return list(found)


@contextmanager
def acl_lock() -> Iterator[None]:
    """One ACL change at a time on this machine: setfacl reads, changes and writes a folder's whole ACL."""
    with open(Path(tempfile.gettempdir()) / "course-tests-acl.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        yield


def named_entries(folder: Path) -> list[str]:
    """The ACL entries of ``folder`` that name an account or a group (``user:alice:--x``)."""
    acl = subprocess.run(["getfacl", "--omit-header", "--absolute-names", str(folder)], capture_output=True,
                         text=True).stdout
    return re.findall(r"^(?:user|group):[^:\n]+:.*$", acl, re.M)


@contextmanager
def passage(names: list[str]) -> Iterator[None]:
    """Within the block, ``names`` pass through the closed folders to the checkout and this Python (no listing, no
    reading: one ACL entry ``u:NAME:x`` each). At the end each entry goes again; a folder that had no ACL entry
    naming an account before gets no ACL again, unless another run's entries are still there."""
    closed = closed_folders()
    with acl_lock():
        plain = [f for f in closed if not named_entries(f)]  # a mask alone, left by a run beside another, is none
        for folder in closed:
            for name in names:
                subprocess.run(["setfacl", "-m", f"u:{name}:x", str(folder)], check=True, capture_output=True)
    try:
        yield
    finally:
        with acl_lock():
            for folder in closed:
                subprocess.run(["setfacl", "-x", ",".join(f"u:{name}" for name in names), str(folder)], check=True,
                               capture_output=True)
                if folder in plain and not named_entries(folder):
                    subprocess.run(["setfacl", "-b", str(folder)], check=True, capture_output=True)
