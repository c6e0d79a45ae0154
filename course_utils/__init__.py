"""Companion package of the course "Training deep-learning models on the GPU with TensorFlow".

Importing it is cheap: TensorFlow is imported only by ``setup()`` and the modules that
need it, so the course can set environment switches first.
"""

from course_utils._moved import install as _install_moved
from course_utils.errors import (
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

_install_moved()  # old flat import paths (course_utils.runner, ...) keep working, with a DeprecationWarning

__version__ = "0.1.0"
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
