"""``python -m course_utils COMMAND`` - the same as the ``course`` command (course_utils.cli)."""

from course_utils.cli import main

if __name__ == "__main__":
    raise SystemExit(main())
