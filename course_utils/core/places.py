"""Where the course is (``PROJECT_ROOT``), and where it writes - results, TensorBoard logs, scratch - for one
student on a shared machine too.

docs/class.md, "Each student's files", says where, in order (``COURSE_HOME``, the checkout's or the current folder's
``build/``, a private ``$XDG_DATA_HOME/tf-gpu-course``). A place that cannot be written is a ``PlaceError`` naming
the variable to set.
"""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Any

from course_utils.core import variables
from course_utils.core.errors import PlaceError
from course_utils.core.i18n import translator

PROJECT_ROOT = Path(__file__).resolve().parents[2]  # the checkout that holds course_utils/ and notebooks/
APP_NAME = "tf-gpu-course"
_ = translator("course")


def is_checkout() -> bool:
    """True when the package runs from the course's checkout (not from an installed copy)."""
    return (PROJECT_ROOT / "pyproject.toml").is_file() and (PROJECT_ROOT / "notebooks").is_dir()


def is_own_and_writable(folder: Path) -> bool:
    """True when ``folder`` exists, this user may write in it and (POSIX) owns it: a folder another user owns is
    shared, and what one student writes there the next would overwrite.
    """
    try:
        info = folder.stat()
    except OSError:
        return False
    if hasattr(os, "geteuid") and info.st_uid != os.geteuid():
        return False
    return os.access(folder, os.W_OK | os.X_OK)


def writable(folder: Path, variable: str, *, private: bool = False) -> Path:
    """Create ``folder`` if needed (``private``: readable by this user only) and prove it can be written; else a
    ``PlaceError`` naming ``variable``, the setting that moves it.
    """
    folder = Path(folder).expanduser()
    try:
        folder.mkdir(mode=0o700 if private else 0o777, parents=True, exist_ok=True)
        with tempfile.TemporaryFile(dir=folder):
            pass
    except OSError as exc:
        reason = exc.strerror or type(exc).__name__
        raise PlaceError(
            _("The course cannot write into {folder} ({reason}).").format(folder=folder, reason=reason),
            _("Set {variable} to a folder you can write, for example `export {variable}=~/course-work` "
              "(Windows: `set {variable}=%USERPROFILE%\\course-work`), then start Jupyter or the command "
              "again.").format(variable=variable),
            path=folder,
        ) from None
    return folder


def course_home() -> Path:
    """The folder the course writes into for this user (see the module docstring); created if needed."""
    chosen = os.environ.get(variables.HOME)
    if chosen:
        return writable(Path(chosen), variables.HOME)
    if is_checkout():
        if is_own_and_writable(PROJECT_ROOT):
            return writable(PROJECT_ROOT / "build", variables.HOME)
    elif is_own_and_writable(Path.cwd()):
        return writable(Path.cwd() / "build", variables.HOME)
    if sys.platform == "win32":  # this user's own folder for the course's files
        base = os.environ.get("LOCALAPPDATA") or str(Path.home() / "AppData" / "Local")
    else:
        base = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return writable(Path(base) / APP_NAME, variables.HOME, private=True)


def results_dir() -> Path:
    """Where notebooks record their results: ``$COURSE_RESULTS_DIR``, else ``<course home>/results``."""
    chosen = os.environ.get(variables.RESULTS_DIR)
    if chosen:
        return writable(Path(chosen), variables.RESULTS_DIR)
    return writable(course_home() / "results", variables.HOME)


def log_base() -> Path:
    """Where a relative TensorBoard ``LOG_DIR`` starts: ``$COURSE_LOG_DIR``, else the current folder when it is
    this user's own (Jupyter starts a kernel in the notebook's folder), else ``<course home>/logs``.
    """
    chosen = os.environ.get(variables.LOG_DIR)
    if chosen:
        return writable(Path(chosen), variables.LOG_DIR)
    if is_own_and_writable(Path.cwd()):
        return Path.cwd()
    return writable(course_home() / "logs", variables.HOME)


def writable_places() -> list[dict[str, Any]]:
    """Each place the course writes, whether it can be written, and the variable that moves it (for preflight)."""
    places: list[dict[str, Any]] = []
    for name, variable, find in (
        ("course home", variables.HOME, course_home),
        ("results", variables.RESULTS_DIR, results_dir),
        ("TensorBoard logs", variables.LOG_DIR, log_base),
    ):
        try:
            path, problem = str(find()), None
        except PlaceError as exc:
            path, problem = str(exc.path), exc.what
        places.append({"name": name, "variable": variable, "path": path, "writable": problem is None,
                       "problem": problem})
    return places


def work_dir(record: Path, name: str | None = None) -> Path:
    """A fresh, empty folder for the run whose record is ``record`` (its programs, backups, checkpoints, logs), or
    its subfolder ``name``, emptied alone. Beside the results (``OUT/work/NAME/`` under ``course run``, else
    ``build/work/NN_name/``): not the system's temporary folder, where a stopped run would leave one behind, nor the
    course's own, which may be read-only. What a failed run left stays until the next run.
    """
    folder = record.parent.parent / "work" / record.stem
    if name is not None:
        folder = folder / name
    if folder.is_dir():
        shutil.rmtree(folder)
    folder.mkdir(parents=True)
    return folder
