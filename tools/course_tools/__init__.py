"""The course's tools for instructors and maintainers - a package of their own, beside the student's ``course_utils``.

- ``commands``: the commands this package adds to ``course`` (entry-point group ``course.commands``);
- ``batch/``: ``course run`` (notebooks run headless, grids, shards, the report);
- ``bench/``: ``course bench``;
- ``classroom/``: the class commands (``course preflight``, ``class-report``, ``hand-in``, ``progress``, ``grading``)
  and the JupyterHub settings.

The tools import ``course_utils``; ``course_utils`` never imports them (``tests/test_architecture.py``).
"""

from pathlib import Path

from course_utils.core.i18n import translator

LOCALE_DIR = Path(__file__).resolve().parent / "locale"  # the tools' own message catalogues (domain "tools")
_ = translator("tools", LOCALE_DIR)  # every tools module imports this marker: from course_tools import _
