"""``course data status|fetch``: which source each dataset would use, and verified downloads."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys

from course_utils import data
from course_utils.data import cli as data_cli

from .test_loaders import fake_mnist_npz


def test_status_says_which_source_each_dataset_would_use_offline():
    lines = data_cli.status()
    assert len(lines) == 2 and lines[0].startswith("mnist: 10,000 images") and "bundled-sample" in lines[0]
    assert lines[1].startswith("fashion-mnist")


def run_cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "course_utils", "data", *args], capture_output=True, text=True)


def test_cli_status_names_sources():
    result = run_cli("status")
    assert result.returncode == 0
    assert "mnist: 10,000 images" in result.stdout and "bundled-sample" in result.stdout


def test_cli_fetch_refuses_offline():
    result = run_cli("fetch", "mnist")
    assert result.returncode == 2 and "COURSE_OFFLINE=1" in result.stderr


def test_cli_fetch_downloads(monkeypatch, http_server, tmp_path):
    served = tmp_path / "served.npz"
    fake_mnist_npz(served)
    http_server.routes["/mnist.npz"] = (served.read_bytes(), None)
    # A child process cannot see monkeypatches: the real checksum must reject this fake file.
    env = {**os.environ, "COURSE_OFFLINE": "0"}
    code = (
        "import course_utils.data as d, sys; from course_utils.data.cli import main;"
        f"d.KERAS_ORIGIN = {http_server.url + '/'!r};"
        "sys.exit(main(['fetch', 'mnist', '--cache-dir', sys.argv[1]]))"
    )
    result = subprocess.run([sys.executable, "-c", code, str(tmp_path / "c")], capture_output=True, text=True, env=env)
    assert result.returncode == 1
    assert "expected " + data.MNIST_SHA256 in result.stderr
    assert not (tmp_path / "c" / "mnist.npz").exists()
    shutil.rmtree(tmp_path / "c", ignore_errors=True)
