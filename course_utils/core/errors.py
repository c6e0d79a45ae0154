"""The course's own exceptions, all in one place: each says what happened and what to do about it.

Every exception the course raises for a student, an instructor or a tool derives from
``CourseError`` and carries ``what`` and ``fix``.
"""

from __future__ import annotations

from collections.abc import Sequence

from course_utils.core.i18n import translator

_ = translator("course")


class CourseError(RuntimeError):
    """An error a student can act on: ``what`` happened and the ``fix``, kept apart for tools to show. A subclass
    declares the facts it carries as class attributes with their defaults; ``details`` sets them."""

    def __init__(self, what: str, fix: str, **details: object) -> None:
        self.what = what
        self.fix = fix
        for name, value in details.items():
            if not hasattr(type(self), name):
                raise TypeError(f"{type(self).__name__} carries no {name!r}")
            setattr(self, name, value)
        super().__init__(_("{what}\nWhat to do: {fix}").format(what=what, fix=fix))


class DataError(CourseError):
    """A dataset file is missing, corrupt, truncated or fails its checksum; for one file there but unusable,
    ``path`` and ``problem`` ("corrupt: checksum mismatch"), so ``course data status`` can say so.
    """

    path: object = None
    problem: str | None = None


class ParameterError(CourseError, ValueError):
    """A notebook parameter or an environment switch has a value the course cannot use."""


class DeviceError(CourseError):
    """A device was asked for that this machine does not have."""


class InputError(CourseError, ValueError):
    """Bad input to a command (a notebook, a parameter, a grid file), found before anything ran.

    ``course run`` exits with status 2 for it.
    """

    def __init__(self, what: str, fix: str | None = None) -> None:
        super().__init__(what, fix if fix is not None else _(
            "Correct the command line or the grid file; `course run --help` lists the options."))


class CheckpointError(CourseError, AssertionError):
    """A notebook's checkpoint failed: the notebook did not show what it set out to show."""


class WorkerError(CourseError):
    """A local worker failed, did not report, or the workers ran past their time limit: ``worker`` (its index,
    None for all), ``last_error`` (its log's last exception line, or None) and ``timed_out``.
    """

    worker: int | None = None
    last_error: str | None = None
    timed_out: bool = False


class FolderInUseError(CourseError):
    """Another process holds a folder's lock (``core.files.FolderLock``): the holder's ``pid``.

    ``course run`` says so, for its ``--out``, as an ``InputError``.
    """

    pid: int | None = None


class PlaceError(CourseError):
    """A folder the course must write into cannot be used: ``path``; its fix names the variable that moves it."""

    path: object = None


class ChildError(CourseError):
    """A child Python process (``core.child``) failed, crashed, ran past its time or reported nothing.

    Kept apart: ``ended`` ("status 3", "signal SIGKILL", "timeout after 5 s", "error"), ``returncode``, ``error``
    (the child's exception, when it wrote one) and ``tail`` (its log's last lines).
    """

    ended: str = ""
    returncode: int | None = None
    error: dict[str, str | None] | None = None
    tail: str = ""


class ConfigurationTooLateError(CourseError):
    """TensorFlow's runtime is already initialised, so its device configuration can no longer change.

    ``changes`` are the settings that were refused (each says what it would have changed), ``fix`` how to restart,
    ``tf_message`` TensorFlow's own refusal.
    """

    def __init__(self, changes: Sequence[object], fix: str, tf_message: str) -> None:
        self.changes = list(changes)
        self.tf_message = tf_message
        what = _(
            "TensorFlow's runtime is already initialised in this process, so its device configuration is "
            "fixed and these settings cannot change: {settings}. Something before this call created a tensor, "
            "ran an op, built a model or listed logical devices. TensorFlow says: \"{tf_message}\"."
        ).format(settings="; ".join(str(c) for c in self.changes), tf_message=tf_message)
        super().__init__(what, fix)
