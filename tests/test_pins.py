"""pyproject.toml, environment.yml and binder/requirements.txt pin the same versions."""

from __future__ import annotations

import subprocess
import tomllib

import yaml

from .conftest import ROOT


def pyproject_deps() -> list[str]:
    return tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["dependencies"]


def test_environment_yml_has_pyprojects_pins():
    env = yaml.safe_load((ROOT / "environment.yml").read_text())
    pip_section = next(d["pip"] for d in env["dependencies"] if isinstance(d, dict))
    pins = [p for p in pip_section if not p.startswith("-e")]
    assert pins == pyproject_deps()
    assert "-e .[dev]" in pip_section
    python = next(d for d in env["dependencies"] if isinstance(d, str) and d.startswith("python="))
    assert python == "python=3.11"


def test_binder_uses_tensorflow_cpu_with_the_same_pins():
    lines = [
        line.strip()
        for line in (ROOT / "binder" / "requirements.txt").read_text().splitlines()
        if line.strip() and not line.startswith("#")
    ]
    expected = [d.replace("tensorflow>=", "tensorflow-cpu>=", 1) if d.startswith("tensorflow>=") else d
                for d in pyproject_deps()]
    assert lines[: len(expected)] == expected
    assert lines[0].startswith("tensorflow-cpu>=2.21")


def test_gpu_extra_matches_the_tensorflow_pin():
    extras = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    tf_pin = next(d for d in pyproject_deps() if d.startswith("tensorflow>="))
    assert extras["gpu"] == [tf_pin.replace("tensorflow", "tensorflow[and-cuda]", 1)]


def test_binder_scripts_parse():
    for script in ("postBuild",):
        path = ROOT / "binder" / script
        assert subprocess.run(["bash", "-n", str(path)]).returncode == 0
        assert path.stat().st_mode & 0o111, f"binder/{script} must be executable"
    assert (ROOT / "binder" / "runtime.txt").read_text().strip() == "python-3.11"
