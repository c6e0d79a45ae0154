"""Binder, checked without Binder: the files parse, the scripts run, the README's link opens notebook 01.

tests/test_pins.py checks that binder/requirements.txt starts with pyproject's pins
(``tensorflow-cpu`` for ``tensorflow``); here: what comes after them, and the scripts.
"""

from __future__ import annotations

import os
import re
import subprocess
import tomllib

import pytest
from packaging.requirements import Requirement

from course_utils.tb_server import proxy_url_hint

from .conftest import ROOT

BINDER = ROOT / "binder"
SCRIPTS = ("postBuild", "start")
FIRST_NOTEBOOK = "notebooks/01_install_versions.ipynb"


def requirement_lines() -> list[str]:
    lines = [line.strip() for line in (BINDER / "requirements.txt").read_text().splitlines()]
    return [line for line in lines if line and not line.startswith("#")]


def test_every_requirement_parses_and_has_a_range():
    for line in requirement_lines():
        requirement = Requirement(line)
        assert requirement.specifier, f"binder/requirements.txt: {line!r} needs a tested range"
        assert any(s.operator == "<" for s in requirement.specifier), f"{line!r}: no upper bound"


def test_binder_only_extras_come_after_the_shared_pins_and_bring_the_proxy():
    shared = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["dependencies"]
    extras = requirement_lines()[len(shared):]
    names = {Requirement(d).name for d in shared} | {"tensorflow-cpu"}
    assert [Requirement(e).name for e in extras] == ["jupyter-server-proxy"]
    assert not names & {Requirement(e).name for e in extras}, "an extra must not repeat a shared pin"


@pytest.mark.parametrize("script", SCRIPTS)
def test_scripts_parse_and_are_executable(script):
    path = BINDER / script
    assert path.read_text().startswith("#!/usr/bin/env bash\n")
    assert subprocess.run(["bash", "-n", str(path)]).returncode == 0
    assert os.access(path, os.X_OK), f"binder/{script} must be executable (git update-index --chmod=+x)"


@pytest.mark.parametrize("prefix", ["/user/ann-course-abc123/", None])
def test_start_sets_the_tensorboard_proxy_url_then_runs_the_server_command(prefix):
    env = {k: v for k, v in os.environ.items() if k not in ("JUPYTERHUB_SERVICE_PREFIX", "TENSORBOARD_PROXY_URL")}
    if prefix is not None:
        env["JUPYTERHUB_SERVICE_PREFIX"] = prefix
    done = subprocess.run([str(BINDER / "start"), "printenv", "TENSORBOARD_PROXY_URL"], env=env,
                          capture_output=True, text=True, timeout=30)
    assert done.returncode == 0, done.stderr
    expected = f"{prefix or '/'}proxy/%PORT%/"
    assert done.stdout.strip() == expected
    # the same value course_utils works out inside a kernel (notebook 06)
    assert proxy_url_hint({"JUPYTERHUB_SERVICE_PREFIX": prefix or "/"}) == expected


def test_start_passes_the_commands_exit_status_through():
    assert subprocess.run([str(BINDER / "start"), "bash", "-c", "exit 3"], timeout=30).returncode == 3


def test_readme_links_binder_to_the_first_notebook_in_jupyterlab():
    readme = (ROOT / "README.md").read_text()
    links = re.findall(r"https://mybinder\.org/v2/gh/[^\s)\]]+", readme)
    assert links, "README: an Open in Binder link"
    assert all(link.endswith(f"?urlpath=lab/tree/{FIRST_NOTEBOOK}") for link in links), links
    assert (ROOT / FIRST_NOTEBOOK).is_file()
    assert "https://mybinder.org/badge_logo.svg" in readme
