"""``python -m course_utils COMMAND`` - the same as the ``course`` command (course_utils.tools.cli)."""

from course_utils.tools.cli import main

if __name__ == "__main__":
    raise SystemExit(main())
