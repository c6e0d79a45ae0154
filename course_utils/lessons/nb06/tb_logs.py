"""Where a notebook writes its TensorBoard logs: ``log_root(LOG_DIR)``."""

from __future__ import annotations

import os
from pathlib import Path

from course_utils.core.places import log_base


def log_root(log_dir: str | os.PathLike[str]) -> Path:
    """The absolute log folder for a ``LOG_DIR`` parameter, created if missing: as it is when absolute, else under
    ``places.log_base()`` (``COURSE_LOG_DIR``, else the current folder if it is the student's, else the course home).
    """
    path = Path(log_dir).expanduser()
    if not path.is_absolute():
        path = log_base() / path
    path = path.resolve()
    path.mkdir(parents=True, exist_ok=True)
    return path
