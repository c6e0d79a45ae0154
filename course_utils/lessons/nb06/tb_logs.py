"""Where a notebook writes its TensorBoard logs (``log_root``): its ``LOG_DIR``, as it is when absolute; a relative
one starts in ``COURSE_LOG_DIR`` when set (``course run`` sets one per run), else in the current folder, or in the
course home's ``logs/`` when that folder is not the student's own (``core.places.log_base``).
"""

from __future__ import annotations

import os
from pathlib import Path

from course_utils.core.places import log_base


def log_root(log_dir: str | os.PathLike[str]) -> Path:
    """The absolute log folder for a ``LOG_DIR`` parameter (see the module docstring); created if missing."""
    path = Path(log_dir).expanduser()
    if not path.is_absolute():
        path = log_base() / path  # COURSE_LOG_DIR, else the current folder if it is ours, else the course home
    path = path.resolve()
    path.mkdir(parents=True, exist_ok=True)
    return path
