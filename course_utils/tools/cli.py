"""``course COMMAND ...`` - the course's tools in one command (also ``python -m course_utils COMMAND``).

Each command is a module with a ``main(argv) -> int``, imported only when used, so
``course --help`` is fast and never imports TensorFlow.
"""

from __future__ import annotations

import importlib
import importlib.util
import os
import sys

from course_utils.core import variables
from course_utils.core.errors import ParameterError
from course_utils.core.i18n import translator
from course_utils.params import check_language

PROG = "course"
_ = translator("course")

COMMANDS = {  # command: (its module, what it does)
    "run": ("course_utils.tools.batch.runner",
            "run notebooks headless (papermill), over parameter grids; write a report"),
    "doctor": ("course_utils.tools.doctor_cli",
               "diagnose this machine (or captured nvidia-smi/nvcc output): what to install"),
    "data": ("course_utils.tools.data_cli", "fetch datasets for offline use, or show which source each would use"),
    "bench": ("course_utils.tools.bench.cli",
              "measure notebook 04's memory, two ways (JSON)"),
    "preflight": ("course_utils.tools.classroom.preflight",
                  "check this machine before a class: one JSON record, problems"),
    "class-report": ("course_utils.tools.classroom.class_report", "the students' preflight records as one report"),
    "hand-in": ("course_utils.tools.classroom.handin",
                "hand in your progress (each notebook's exercises and checkpoint) to your instructor"),
    "progress": ("course_utils.tools.classroom.progress",
                 "the students' hand-ins as one report: who is done, stuck or not started"),
    "grading": ("course_utils.tools.classroom.grading",
                "write the exercises as an nbgrader course: graded by the course's own checks"),
}


# What a command needs beyond the package's own dependencies: the extra that brings it. On Colab and
# Kaggle the package is installed without extras (their notebook servers are their own).
NEEDS = {"run": ("papermill", "lab")}


def missing_extra(command: str) -> str | None:
    """The message for a command whose extra is not installed, else None."""
    if command not in NEEDS:
        return None
    module, extra = NEEDS[command]
    if importlib.util.find_spec(module) is not None:
        return None
    return _(
        "error: '{prog} {command}' needs {module}, which is not installed.\n"
        'Install the "{extra}" extra: pip install "course-utils[{extra}]" (in the course folder: '
        'pip install -e ".[{extra}]").'
    ).format(prog=PROG, command=command, module=module, extra=extra)


def usage() -> str:
    lines = [f"usage: {PROG} COMMAND [ARGS]   (or: python -m course_utils COMMAND [ARGS])", "", "commands:"]
    width = max(len(name) for name in COMMANDS)
    lines += [f"  {name:<{width}} {help_}" for name, (_, help_) in COMMANDS.items()]
    lines += ["", f"'{PROG} COMMAND --help' shows a command's options."]
    return "\n".join(lines)


def unknown_language() -> str | None:
    """A warning when COURSE_LANG is set to a language the course does not speak (messages stay English)."""
    raw = os.environ.get(variables.LANG, "").strip()
    if not raw:
        return None
    try:
        check_language(raw)
    except ParameterError as error:
        return f"warning: {error} Messages stay in English."
    return None


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or argv[0] in ("-h", "--help"):
        print(usage())
        return 0
    if argv[0] not in COMMANDS:
        print(usage())
        print("\n" + _("error: unknown command {command!r}").format(command=argv[0]), file=sys.stderr)
        return 2
    message = missing_extra(argv[0])
    if message:
        print(message, file=sys.stderr)
        return 2
    unknown = unknown_language()
    if unknown:
        print(unknown, file=sys.stderr)
    module = importlib.import_module(COMMANDS[argv[0]][0])
    return module.main(argv[1:])
