"""The course's own exceptions: each says what happened and what to do about it."""

from __future__ import annotations


class CourseError(RuntimeError):
    """An error a student can act on.

    The message has two parts, always: what happened, and what to do. Both are kept
    as attributes so tools (the runner, the doctor) can show them separately.
    """

    def __init__(self, what: str, fix: str) -> None:
        self.what = what
        self.fix = fix
        super().__init__(f"{what}\nWhat to do: {fix}")


class DataError(CourseError):
    """A dataset file is missing, corrupt, truncated or fails its checksum."""


class ParameterError(CourseError, ValueError):
    """A notebook parameter or an environment switch has a value the course cannot use."""


class DeviceError(CourseError):
    """A device was asked for that this machine does not have."""
