"""``course``: one command for the course's tools, the same as ``python -m course_utils``."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from course_utils.tools import cli


def test_help_lists_every_tool(capsys):
    assert cli.main(["--help"]) == 0
    out = capsys.readouterr().out
    for command in ("run", "doctor", "data", "bench", "class-report"):
        assert f"\n  {command} " in out
    assert out.startswith("usage: course COMMAND")


def test_an_unknown_command_is_refused_with_the_list(capsys):
    assert cli.main(["trian"]) == 2
    captured = capsys.readouterr()
    assert "unknown command 'trian'" in captured.err and "commands:" in captured.out


def test_run_without_the_lab_extra_says_which_extra_to_install(monkeypatch, capsys):
    """As on Colab and Kaggle, where the package comes without papermill."""
    real = cli.importlib.util.find_spec
    monkeypatch.setattr(cli.importlib.util, "find_spec", lambda name, *a: None if name == "papermill" else real(name))
    assert cli.main(["run", "01"]) == 2
    err = capsys.readouterr().err
    assert "needs papermill" in err and 'pip install "course-utils[lab]"' in err
    assert cli.missing_extra("doctor") is None  # the other commands need nothing more


@pytest.mark.parametrize("value, warned", [("klingon", True), ("zh", False), ("en", False), ("", False)])
def test_a_language_the_course_does_not_speak_is_named_and_messages_stay_english(value, warned, monkeypatch, capsys):
    monkeypatch.setenv("COURSE_LANG", value)
    assert cli.main(["data", "status"]) == 0
    captured = capsys.readouterr()
    assert ("'klingon' is not one the course speaks" in captured.err) is warned
    assert ("COURSE_LANG=zh-CN" in captured.err) is warned
    if warned:
        assert "images" in captured.out  # the command still ran, in English


@pytest.mark.parametrize("command", sorted(cli.COMMANDS))
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


DOCS = Path(__file__).resolve().parents[1] / "docs"


def test_the_docs_name_exactly_the_commands_that_exist():
    """instructors.md's table lists every command; no page names a command that `course --help` does not list."""
    import re

    table = re.findall(r"^\| `course ([a-z-]+)` \|", (DOCS / "instructors.md").read_text(encoding="utf-8"), re.M)
    assert table == list(cli.COMMANDS), "instructors.md's table: the commands of `course --help`, in its order"
    for page in sorted(DOCS.rglob("*.md")) + [DOCS.parent / "README.md", DOCS.parent / "CONTRIBUTING.md"]:
        text = page.read_text(encoding="utf-8")
        code = re.findall(r"`([^`\n]+)`", text) + re.findall(r"```[a-z]*\n(.*?)```", text, re.S)
        # a command line: `course X` at the start of a span or a line, or after a notebook's ! or a pipe/&&
        named = {m for c in code for m in re.findall(r"(?:^\s*|!|\|\s*|&&\s*)course ([a-z][a-z-]*)", c, re.M)}
        assert named <= set(cli.COMMANDS), f"{page.name} names a command that does not exist: {named}"
    class_page = (DOCS / "class.md").read_text(encoding="utf-8")
    for command in ("preflight", "class-report", "hand-in", "progress", "grading"):
        assert f"`course {command}`" in class_page
