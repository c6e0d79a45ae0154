"""The course's exceptions: each says what happened and what to do, and all derive from CourseError."""

from __future__ import annotations

from course_utils.core import errors


def test_the_message_holds_what_and_fix():
    err = errors.DataError("The file is cut short.", "Download it again.")
    assert (err.what, err.fix) == ("The file is cut short.", "Download it again.")
    assert str(err) == "The file is cut short.\nWhat to do: Download it again."


def test_old_catch_clauses_still_catch():
    # Before errors.py held them all, these derived from ValueError / AssertionError: code catching those still works.
    assert issubclass(errors.InputError, ValueError) and issubclass(errors.ParameterError, ValueError)
    assert issubclass(errors.CheckpointError, AssertionError)


def test_too_late_lists_the_refused_changes_and_what_tensorflow_said():
    err = errors.ConfigurationTooLateError(["memory growth on GPU:0"], "Restart the kernel.", "already initialized")
    assert "memory growth on GPU:0" in err.what and '"already initialized"' in err.what
    assert err.fix == "Restart the kernel." and err.changes == ["memory growth on GPU:0"]
