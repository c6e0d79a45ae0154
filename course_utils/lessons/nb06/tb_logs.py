"""Where a notebook writes its TensorBoard logs (notebook 06 reads them back with TensorBoard's own reader).

Where logs go (``log_root``): a notebook's ``LOG_DIR`` parameter. A relative ``LOG_DIR`` starts in
the current folder - the kernel's working folder, which JupyterLab and ``course run`` set to the
notebook's folder, and Colab and Kaggle to their working folders (``/content``, ``/kaggle/working``).
When the environment sets ``COURSE_LOG_DIR`` (the tests do; ``course run`` sets one folder per run), a
relative ``LOG_DIR`` starts in that folder instead. When the current folder is not the student's own (a
shared, read-only copy of the course on a class server), it starts in the course home's ``logs/``
(``core.places.log_base``). An absolute ``LOG_DIR`` is used as it is.
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
