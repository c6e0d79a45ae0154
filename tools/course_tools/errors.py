"""The tools' errors, each a ``CourseError`` (what happened, and what to do) like the student's package's
(``course_utils.core.errors``). ``BatchInterrupted`` (``batch.runner``) is Ctrl-C carrying the finished runs, not an
error."""

from __future__ import annotations

from course_utils.core.errors import CourseError


class SiteError(CourseError):
    """The website cannot be built: a course run it shows is missing or incomplete, or Sphinx failed."""


class PageError(CourseError):
    """The page "Check your machine" cannot be built: Pyodide is not there, or not the pinned release."""


class LinksError(CourseError):
    """The notebooks' links cannot be written: a setting in pyproject.toml or a notebook is not as they need."""
