"""``course``: one command for the course's tools, the same as ``python -m course_utils``."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from course_utils import cli


def test_help_lists_every_tool_and_an_unknown_command_is_refused_with_the_list(capsys):
    assert cli.main(["--help"]) == 0
    out = capsys.readouterr().out
    for command in ("run", "doctor", "data", "bench", "class-report"):
        assert f"\n  {command} " in out
    assert out.startswith("usage: course COMMAND")
    assert cli.main(["trian"]) == 2
    captured = capsys.readouterr()
    assert "unknown command 'trian'" in captured.err and "commands:" in captured.out


def test_without_the_tools_a_students_course_has_its_own_commands_and_says_how_to_get_the_others(monkeypatch, capsys):
    """A student's install (make lab): course_utils alone, so no package adds commands to the group."""
    monkeypatch.setattr(cli, "entry_points", lambda group: [])
    assert list(cli.commands()) == ["doctor", "data"]
    assert cli.main(["run", "01"]) == 2
    captured = capsys.readouterr()
    assert "unknown command 'run'" in captured.err and "make venv EXTRAS=tools" in captured.err
    assert "\n  run " not in captured.out and "\n  doctor " in captured.out
    assert cli.main(["trian"]) == 2 and "EXTRAS=tools" in capsys.readouterr().err


def test_with_the_tools_their_commands_come_from_the_entry_point_group():
    from course_tools.commands import COMMANDS as TOOLS

    found = cli.commands()
    assert set(TOOLS) <= set(found) and found["run"] == TOOLS["run"]
    assert list(found)[:2] == ["doctor", "data"], "the student's commands first"


@pytest.mark.parametrize("value, warned", [("klingon", True), ("zh", False), ("", False)])
def test_a_language_the_course_does_not_speak_is_named_and_messages_stay_english(value, warned, monkeypatch, capsys):
    monkeypatch.setenv("COURSE_LANG", value)
    assert cli.main(["data", "status"]) == 0
    captured = capsys.readouterr()
    assert ("'klingon' is not one the course speaks" in captured.err) is warned
    assert ("COURSE_LANG=zh-CN" in captured.err) is warned
    if warned:
        assert "images" in captured.out  # the command still ran, in English


@pytest.mark.parametrize("command", sorted(cli.commands()))
def test_every_command_module_has_a_main_and_its_own_help(command, capsys):
    with pytest.raises(SystemExit) as done:
        cli.main([command, "--help"])
    assert done.value.code == 0
    assert f"usage: course {command}" in capsys.readouterr().out


def test_the_console_script_and_python_dash_m_agree():
    script = Path(sys.executable).with_name("course")
    script = str(script) if script.exists() else shutil.which("course")
    assert script, "the console script 'course' is installed with the package (pyproject.toml [project.scripts])"
    env = {**os.environ, "TF_CPP_MIN_LOG_LEVEL": "3"}
    by_script = subprocess.run([script, "--help"], capture_output=True, text=True, env=env, check=True)
    by_module = subprocess.run([sys.executable, "-m", "course_utils", "--help"], capture_output=True, text=True,
                               env=env, check=True)
    assert by_script.stdout == by_module.stdout and "doctor" in by_script.stdout
