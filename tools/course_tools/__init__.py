"""The course's tools for instructors and maintainers - a package of their own, beside the student's ``course_utils``
(CONTRIBUTING.md, "Layout", lists its modules). The tools import ``course_utils``; ``course_utils`` never imports them.
"""

import getpass
import os
import platform
import socket
from contextlib import AbstractContextManager
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from unittest import mock

from course_utils.core import variables
from course_utils.core.i18n import CHINESE, ENGLISH, translator

LOCALE_DIR = Path(__file__).resolve().parent / "locale"  # the tools' own message catalogues (domain "tools")
_ = translator("tools", LOCALE_DIR)  # every tools module imports this marker: from course_tools import _

LANGUAGES = {"en": ENGLISH, "zh": CHINESE}  # each edition's language: its notebooks and pages speak it


def speaking(edition: str) -> AbstractContextManager:
    """Messages in the language of ``edition`` ("en" or "zh") for a while: what a page or an assignment of that
    edition says, whatever the language of whoever makes it. The environment is as it was afterwards."""
    return mock.patch.dict(os.environ, {variables.LANG: LANGUAGES[edition]})


def user_name() -> str:
    """This user's login name ("unknown" when the system cannot say, as in some containers): preflight and hand-in
    records name it."""
    try:
        return getpass.getuser() or "unknown"
    except (OSError, KeyError):
        return "unknown"


def host_name() -> str:
    return socket.gethostname() or platform.node() or "unknown"


def installed(package: str) -> str | None:
    """The installed version of ``package``, None when it is not installed (the records say which ran)."""
    try:
        return version(package)
    except PackageNotFoundError:
        return None
