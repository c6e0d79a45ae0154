"""Binder, checked without Binder: the files parse and the scripts run.

tests/test_pins.py checks binder/requirements.txt (the course's versions, ``tensorflow-cpu`` for
``tensorflow``, plus ``jupyter-server-proxy``); tests/test_notebook_links.py the README's Binder badge.
"""

from __future__ import annotations

import os
import subprocess

import pytest

from .conftest import ROOT

BINDER = ROOT / "binder"


def test_post_build_parses_and_is_executable():  # binder/start runs in the next test
    path = BINDER / "postBuild"
    assert path.read_text().startswith("#!/usr/bin/env bash\n")
    assert subprocess.run(["bash", "-n", str(path)]).returncode == 0
    assert os.access(path, os.X_OK), "binder/postBuild must be executable (git update-index --chmod=+x)"


@pytest.mark.parametrize("prefix", ["/user/ann-course-abc123/", None])
def test_start_sets_the_tensorboard_proxy_url_then_runs_the_server_command_with_its_exit_status(prefix):
    env = {k: v for k, v in os.environ.items() if k not in ("JUPYTERHUB_SERVICE_PREFIX", "TENSORBOARD_PROXY_URL")}
    if prefix is not None:
        env["JUPYTERHUB_SERVICE_PREFIX"] = prefix
    done = subprocess.run([str(BINDER / "start"), "sh", "-c", "printenv TENSORBOARD_PROXY_URL; exit 3"], env=env,
                          capture_output=True, text=True, timeout=30)
    assert done.returncode == 3, done.stderr
    expected = f"{prefix or '/'}proxy/%PORT%/"
    assert done.stdout.strip() == expected
