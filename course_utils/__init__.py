"""Companion package of the course "Training deep-learning models on the GPU with TensorFlow".

Importing it is cheap: TensorFlow is imported only by ``setup()`` and the modules that
need it, so the course can set environment switches first.
"""

from course_utils.errors import CourseError, DataError, DeviceError, ParameterError
from course_utils.notebook import Course, checkpoint, setup

__version__ = "0.1.0"
__all__ = ["Course", "CourseError", "DataError", "DeviceError", "ParameterError", "checkpoint", "setup"]
