"""Companion package of the course "Training deep-learning models on the GPU with TensorFlow".

Importing it is cheap: TensorFlow is imported only by ``setup()`` and the modules that
need it, so the course can set environment switches first.
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
from course_utils.notebook import Course, checkpoint, setup

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
