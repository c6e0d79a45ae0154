"""``course COMMAND ...`` - one command for the course (also ``python -m course_utils COMMAND``).

The student's commands live here; ``course_tools`` adds the instructor's through the entry-point group
``course.commands``. Each command is a module with ``main(argv) -> int``, imported only when used, so ``course
--help`` is fast and never imports TensorFlow.
"""

from __future__ import annotations

import importlib
import os
import sys
from importlib.metadata import entry_points

from course_utils.core import variables
from course_utils.core.errors import ParameterError
from course_utils.core.i18n import translator
from course_utils.params import check_language

PROG = "course"
_ = translator("course")

COMMANDS = {  # the student's commands: (its module, what it does)
    "doctor": ("course_utils.doctor.cli",
               "diagnose this machine (or captured nvidia-smi/nvcc output): what to install"),
    "data": ("course_utils.data.cli", "fetch datasets for offline use, or show which source each would use"),
}
# Each entry of this group is a table like COMMANDS, from an installed package (course_tools: tools/pyproject.toml).
GROUP = "course.commands"


def commands() -> dict[str, tuple[str, str]]:
    """Every command there is: the student's, then those of each installed package that adds some."""
    found = dict(COMMANDS)
    for entry in entry_points(group=GROUP):
        found.update({name: spec for name, spec in entry.load().items() if name not in COMMANDS})
    return found


def no_such_command(command: str, tools_installed: bool) -> str:
    """The error for a command that is not there; without the tools, it says how to get them."""
    message = _("error: unknown command {command!r}").format(command=command)
    if tools_installed:
        return message
    return message + "\n" + _(
        "The instructor's commands ({prog} run, the class commands) come with the course's tools, which are not "
        "installed here. In the course folder: make venv EXTRAS=tools (or: pip install -e ./tools)."
    ).format(prog=PROG)


def usage(table: dict[str, tuple[str, str]]) -> str:
    lines = [f"usage: {PROG} COMMAND [ARGS]   (or: python -m course_utils COMMAND [ARGS])", "", "commands:"]
    width = max(len(name) for name in table)
    lines += [f"  {name:<{width}} {help_}" for name, (_, help_) in table.items()]
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
    table = commands()
    if not argv or argv[0] in ("-h", "--help"):
        print(usage(table))
        return 0
    if argv[0] not in table:
        print(usage(table))
        print("\n" + no_such_command(argv[0], tools_installed=len(table) > len(COMMANDS)), file=sys.stderr)
        return 2
    unknown = unknown_language()
    if unknown:
        print(unknown, file=sys.stderr)
    module = importlib.import_module(table[argv[0]][0])
    return module.main(argv[1:])
