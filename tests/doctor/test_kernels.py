"""probes.kernel_checks: the Jupyter kernels' Pythons, checked against the environment TensorFlow is in."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from course_utils.doctor.model import GROUP_KERNELS, check_findings, finding_groups
from course_utils.doctor.probes import env_prefix, has_tensorflow, kernel_checks

from .file_tree import codes, touch


def environment(root: Path, *, tensorflow: bool, version: str = "3.11") -> Path:
    touch(root / "bin" / "python")
    site = root / "lib" / f"python{version}" / "site-packages"
    site.mkdir(parents=True)
    if tensorflow:
        touch(site / "tensorflow" / "__init__.py")
    return root / "bin" / "python"


def kernel(kernels: Path, name: str, argv0: str, language: str = "python") -> None:
    spec = {
        "argv": [argv0, "-m", "ipykernel_launcher", "-f", "{connection_file}"],
        "display_name": name.title(),
        "language": language,
    }
    touch(kernels / name / "kernel.json", json.dumps(spec))


def test_kernels_are_checked_against_the_environment_tensorflow_is_in(tmp_path):
    here = environment(tmp_path / "envs/course", tensorflow=True)
    other = environment(tmp_path / "envs/base", tensorflow=False)
    with_tf = environment(tmp_path / "envs/tf", tensorflow=True, version="3.12")
    kernels = tmp_path / "share/jupyter/kernels"
    kernel(kernels, "course", str(here))
    kernel(kernels, "base", str(other))
    kernel(kernels, "tf", str(with_tf))
    kernel(kernels, "gone", str(tmp_path / "envs/deleted/bin/python"))
    kernel(kernels, "ir", "R", language="R")
    notes = kernel_checks(
        [kernels],
        executable=str(here),
        prefix=str(here.parent.parent),
        path_env="",
        home=tmp_path / "home",
        tensorflow_here=True,
    )
    assert sorted(codes(notes)) == [
        "kernel-python-missing",
        "kernel-uses-this-environment",
        "kernel-without-tensorflow",
    ]
    without = next(n for n in notes if n.code == "kernel-without-tensorflow")
    assert "'Base'" in without.text and str(tmp_path / "envs/base") in without.text
    findings = {f.code: f for f in check_findings(notes)}
    assert findings["kernel-without-tensorflow"].severity == "warning"
    assert f"{sys.executable} -m ipykernel install --user" in findings["kernel-without-tensorflow"].fix
    assert finding_groups(list(findings.values())).keys() == {GROUP_KERNELS}


def test_a_kernel_named_python_runs_the_jupyter_on_path(tmp_path):
    here = environment(tmp_path / "envs/course", tensorflow=True)
    base = environment(tmp_path / "envs/base", tensorflow=False)
    bin_dir = tmp_path / "bin"
    jupyter = touch(bin_dir / "jupyter", f"#!{base}\nimport sys\n")
    jupyter.chmod(0o755)
    kernels = tmp_path / "kernels"
    kernel(kernels, "python3", "python")

    def check():  # this environment, the kernels above, the `jupyter` on PATH in bin_dir
        return kernel_checks(
            [kernels],
            executable=str(here),
            prefix=str(here.parent.parent),
            path_env=str(bin_dir),
            home=tmp_path / "home",
            tensorflow_here=True,
        )

    notes = check()
    assert codes(notes) == ["jupyter-runs-elsewhere", "kernel-without-tensorflow", "no-kernel-for-this-environment"]
    assert str(jupyter) in notes[0].text and str(base.parent.parent) in notes[1].text  # the env it runs
    assert f"{sys.executable} -m jupyter lab" in check_findings(notes)[0].fix
    jupyter.write_text(f"#!{here}\n")  # Jupyter started from this environment: its python3 kernel is this one
    notes = check()
    assert codes(notes) == ["kernel-uses-this-environment"]


def test_tensorflow_in_the_user_site_or_a_system_site_venv_is_not_called_missing(tmp_path):
    env = environment(tmp_path / "system", tensorflow=False).parent.parent
    home = tmp_path / "home"
    assert has_tensorflow(env, home) is False
    touch(home / ".local/lib/python3.11/site-packages/tensorflow/__init__.py")
    assert has_tensorflow(env, home) is True
    venv = environment(tmp_path / "venv", tensorflow=False).parent.parent
    touch(venv / "pyvenv.cfg", "home = /usr/bin\ninclude-system-site-packages = true\n")
    assert has_tensorflow(venv, tmp_path / "nohome") is None
    windows = tmp_path / "win"
    touch(windows / "Lib/site-packages/tensorflow/__init__.py")
    assert has_tensorflow(windows) is True


def test_the_environment_of_a_python_executable():
    assert env_prefix(Path("/home/a/.venv/bin/python3.11")) == Path("/home/a/.venv")
    assert env_prefix(Path("C:/Users/a/tf/Scripts/python.exe")) == Path("C:/Users/a/tf")
    assert env_prefix(Path("C:/Users/a/miniconda3/envs/tf/python.exe")) == Path("C:/Users/a/miniconda3/envs/tf")
