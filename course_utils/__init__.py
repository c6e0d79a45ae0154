"""Companion package of the course "Training deep-learning models on the GPU with TensorFlow".

Importing it is cheap - the standard library only: ``setup``, ``checkpoint`` and ``Course`` load the notebook
machinery (TensorFlow, Matplotlib, psutil) when first used, so the course can set environment switches first and
the doctor runs where only the standard library is (the website's page "Check your machine").
"""

from importlib.metadata import PackageNotFoundError, version

from course_utils.core.errors import (
    CheckpointError,
    ChildError,
    ConfigurationTooLateError,
    CourseError,
    DataError,
    DeviceError,
    FolderInUseError,
    InputError,
    ParameterError,
    PlaceError,
    WorkerError,
)

try:
    __version__ = version("course-utils")  # pyproject.toml's, as installed
except PackageNotFoundError:  # run from a checkout that was never installed
    __version__ = "0+unknown"
__all__ = [
    "CheckpointError",
    "ChildError",
    "ConfigurationTooLateError",
    "Course",
    "CourseError",
    "DataError",
    "DeviceError",
    "FolderInUseError",
    "InputError",
    "ParameterError",
    "PlaceError",
    "WorkerError",
    "checkpoint",
    "setup",
]


def __getattr__(name: str):
    """``course_utils.setup`` and the other notebook helpers, imported on first use (PEP 562)."""
    if name in ("Course", "checkpoint", "setup"):
        from course_utils import notebook  # lazy: the notebook machinery imports psutil and Matplotlib

        return getattr(notebook, name)
    raise AttributeError(f"module 'course_utils' has no attribute {name!r}")
