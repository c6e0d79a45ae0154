"""course_utils.doctor.checks: the live-machine checks, each on a machine built as a file tree."""

from __future__ import annotations

import ast
import importlib
import json
import shutil
import sys
from pathlib import Path

import pytest

from course_utils.doctor import Machine, check_findings, diagnose, finding_groups, probe
from course_utils.doctor import checks as checks_module
from course_utils.doctor.checks import (
    CHECK_FINDINGS,
    GROUP_KERNELS,
    GROUP_LIBRARIES,
    GROUP_WSL,
    env_prefix,
    find_pip_libraries,
    has_tensorflow,
    installed_driver_packages,
    is_wsl,
    kernel_checks,
    live_checks,
    load_libraries,
    loader_conf_dirs,
    nvidia_library_checks,
    python_wheel_check,
    wsl_checks,
)
from course_utils.doctor.recommend import Note
from course_utils.doctor.versions import load
from course_utils.errors import ChildError

from ..conftest import ROOT

ON_LINUX = sys.platform.startswith("linux")


def codes(notes: list[Note]) -> list[str]:
    return [n.code for n in notes]


def touch(path: Path, text: str = "") -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def wheel(site: Path, folder: str, name: str, package: str | None = None, text: str = "not a shared library") -> Path:
    """A file named like a pip NVIDIA wheel's library (a fake one does not load), with its RECORD entry."""
    lib = touch(site / "nvidia" / folder / "lib" / name, text)
    if package:
        record = site / f"{package.replace('-', '_')}-1.0.dist-info" / "RECORD"
        touch(record, f"nvidia/{folder}/lib/{name},sha256=x,1\n")
    return lib


def loadable_shared_object() -> Path:
    """A real shared object that loads in any Python process: one of the interpreter's own extension modules."""
    for name in ("_ctypes", "_json", "zlib", "_struct"):
        path = getattr(importlib.import_module(name), "__file__", None)
        if path and ".so" in path:
            return Path(path)
    pytest.fail("no extension module of this Python is a shared object")


# ----------------------------------------------------------------- pip NVIDIA libraries


def test_a_library_that_does_not_load_is_named_with_its_package(tmp_path):
    site = tmp_path / "site-packages"
    wheel(site, "cudnn", "libcudnn.so.9", "nvidia-cudnn-cu12")
    wheel(site, "cublas", "libcublas.so.12")
    notes = nvidia_library_checks([site], ld_library_path="", ld_so_conf=None)
    assert codes(notes) == ["nvidia-lib-fails-to-load", "nvidia-lib-fails-to-load"]
    cublas, cudnn = notes  # load order: cuBLAS before cuDNN
    assert (
        "libcudnn.so.9" in cudnn.text and "package nvidia-cudnn-cu12" in cudnn.text and "does not load:" in cudnn.text
    )
    assert "wheel folder nvidia/cublas" in cublas.text
    [finding, _] = check_findings(notes, python="/env/bin/python")
    assert finding.severity == "error" and "/env/bin/python -m pip install --force-reinstall" in finding.fix


@pytest.mark.skipif(not ON_LINUX, reason="the pip NVIDIA wheels and this check exist on Linux only")
def test_real_libraries_load(tmp_path):
    site = tmp_path / "site-packages"
    real = loadable_shared_object()
    shutil.copy(real, wheel(site, "cuda_runtime", "libcudart.so.12"))
    shutil.copy(real, wheel(site, "cublas", "libcublasLt.so.12"))
    (site / "nvidia" / "cublas" / "lib" / "libcublasLt.so").symlink_to("libcublasLt.so.12")  # the same file: once
    notes = nvidia_library_checks([site], ld_library_path="", ld_so_conf=None)
    assert codes(notes) == ["nvidia-libs-load"]
    assert "All 2 NVIDIA libraries" in notes[0].text and "cublas, cuda_runtime" in notes[0].text


def test_a_crash_while_loading_names_the_library_and_does_not_raise(monkeypatch):
    calls = []

    def fake_run_python(target, payload, **kwargs):
        calls.append(payload["paths"])
        if any("crash" in p for p in payload["paths"]):
            raise ChildError("the child died", "fix", ended="signal SIGSEGV", returncode=-11)
        return type("Run", (), {"value": [{"path": p, "ok": True, "error": None} for p in payload["paths"]]})()

    monkeypatch.setattr(checks_module, "run_python", fake_run_python)
    results = load_libraries(["/a/libcudart.so.12", "/b/libcrash.so.9"])
    assert calls == [["/a/libcudart.so.12", "/b/libcrash.so.9"], ["/a/libcudart.so.12"], ["/b/libcrash.so.9"]]
    assert [r["ok"] for r in results] == [True, False]
    assert results[1]["crashed"] and "signal SIGSEGV" in results[1]["error"]


def test_a_crashed_load_becomes_its_own_finding(tmp_path, monkeypatch):
    site = tmp_path / "site-packages"
    lib = wheel(site, "nccl", "libnccl.so.2", "nvidia-nccl-cu12")
    crashed = [{"path": str(lib), "ok": False, "error": "the process ended by signal SIGSEGV", "crashed": True}]
    monkeypatch.setattr(checks_module, "load_libraries", lambda paths, timeout_s: crashed)
    [note] = nvidia_library_checks([site], ld_library_path="", ld_so_conf=None)
    assert note.code == "nvidia-lib-load-crashed" and "SIGSEGV" in note.text and "nvidia-nccl-cu12" in note.text
    assert check_findings([note])[0].severity == "error"


def test_pip_libraries_in_load_order_each_file_once(tmp_path):
    site = tmp_path / "site-packages"
    for folder, name in [
        ("cudnn", "libcudnn.so.9"),
        ("cuda_runtime", "libcudart.so.12"),
        ("nvjitlink", "libnvJitLink.so.12"),
    ]:
        wheel(site, folder, name)
    (site / "nvidia" / "cudnn" / "lib" / "libcudnn.so").symlink_to("libcudnn.so.9")
    touch(site / "nvidia" / "cudnn" / "lib" / "README.txt")
    touch(site / "nvidia" / "cudnn" / "include" / "cudnn.h")
    found = find_pip_libraries([site, site])
    assert [lib.path.name for lib in found] == ["libcudart.so.12", "libnvJitLink.so.12", "libcudnn.so"]
    assert find_pip_libraries([tmp_path / "empty"]) == []


def test_no_pip_libraries_matters_only_next_to_a_gpu(tmp_path):
    assert nvidia_library_checks([tmp_path], ld_library_path="", ld_so_conf=None, gpu=False) == []
    [note] = nvidia_library_checks([tmp_path], ld_library_path="", ld_so_conf=None, gpu=True)
    assert note.code == "nvidia-libs-not-installed"
    assert 'pip install "tensorflow[and-cuda]"' in check_findings([note])[0].fix


def test_a_system_cuda_on_ld_library_path_shadows_the_pip_wheels(tmp_path, monkeypatch):
    monkeypatch.setattr(
        checks_module,
        "load_libraries",
        lambda paths, timeout_s: [{"path": p, "ok": True, "error": None, "crashed": False} for p in paths],
    )
    site = tmp_path / "site-packages"
    wheel(site, "cublas", "libcublas.so.12")
    wheel(site, "cuda_runtime", "libcudart.so.12")
    wheel(site, "cudnn", "libcudnn.so.9")
    system = tmp_path / "usr/local/cuda-12.2/lib64"
    touch(system / "libcublas.so.12.2.5.6")
    touch(system / "libcublas.so.12")  # the soname the loader looks for
    old = tmp_path / "usr/local/cuda-11.8/lib64"
    touch(old / "libcudart.so.11.0")
    conf_dir = tmp_path / "etc/ld.so.conf.d"
    cudnn_dir = tmp_path / "usr/lib/cudnn9"
    touch(cudnn_dir / "libcudnn.so.9")
    touch(conf_dir / "zz-cudnn.conf", f"# cuDNN from a .deb\n{cudnn_dir}\n")
    conf = touch(tmp_path / "etc/ld.so.conf", "include ld.so.conf.d/*.conf\n")
    ld_path = f"{system}:{old}:{site / 'nvidia/cublas/lib'}:{tmp_path / 'missing'}"
    notes = nvidia_library_checks([site], ld_library_path=ld_path, ld_so_conf=conf)
    assert codes(notes) == [
        "nvidia-libs-load",
        "system-cuda-shadows-pip",
        "system-cuda-on-library-path",
        "system-cuda-on-library-path",
    ]
    shadow = notes[1].text
    assert str(system) in shadow and "libcublas.so.12" in shadow and "TensorFlow loads the system copy" in shadow
    assert "libcudart.so.11.0 (another major version than the pip wheels' libcudart.so.12: not used)" in notes[2].text
    assert str(cudnn_dir) in notes[3].text and "used only if TensorFlow does not find the pip copy" in notes[3].text
    findings = {f.code: f for f in check_findings(notes)}
    assert findings["system-cuda-shadows-pip"].severity == "warning"
    assert "LD_LIBRARY_PATH" in findings["system-cuda-shadows-pip"].fix
    assert findings["system-cuda-on-library-path"].severity == "info"


def test_the_loader_configuration_follows_includes(tmp_path):
    touch(tmp_path / "conf.d/a.conf", "/opt/a\n# comment\n\n/opt/b  # trailing comment\n")
    touch(tmp_path / "abs/b.conf", "/opt/c\n")
    conf = touch(tmp_path / "ld.so.conf", f"include conf.d/*.conf\ninclude {tmp_path}/abs/*.conf\n/opt/a\nhwcap 0 x\n")
    assert loader_conf_dirs(conf) == [Path("/opt/a"), Path("/opt/b"), Path("/opt/c")]
    assert loader_conf_dirs(tmp_path / "absent.conf") == []


# ----------------------------------------------------------------- WSL2


def test_wsl_is_told_from_proc_version_or_the_environment(tmp_path):
    wsl2 = touch(tmp_path / "v1", "Linux version 5.15.167.4-microsoft-standard-WSL2 (root@f9c826d3017f)")
    plain = touch(tmp_path / "v2", "Linux version 6.8.0-45-generic (buildd@lcy02-amd64-075)")
    assert is_wsl(wsl2, environ={}) and not is_wsl(plain, environ={})
    assert is_wsl(plain, environ={"WSL_DISTRO_NAME": "Ubuntu-22.04"})
    assert not is_wsl(tmp_path / "absent", environ={})


def wsl_machine(tmp_path: Path, *, dxg: bool = True, libcuda: bool = True) -> dict:
    if dxg:
        touch(tmp_path / "dev/dxg")
    wsl_lib = tmp_path / "usr/lib/wsl/lib"
    wsl_lib.mkdir(parents=True)
    if libcuda:
        touch(wsl_lib / "libcuda.so.1.1")
        (wsl_lib / "libcuda.so.1").symlink_to("libcuda.so.1.1")
    linux = tmp_path / "usr/lib/x86_64-linux-gnu"
    linux.mkdir(parents=True)
    status = touch(
        tmp_path / "var/lib/dpkg/status",
        "Package: nvidia-driver-535\nStatus: deinstall ok config-files\nVersion: 535.183.01\n\n"
        "Package: nvidia-cuda-toolkit\nStatus: install ok installed\n\n"
        "Package: python3\nStatus: install ok installed\n",
    )
    return {"dxg": tmp_path / "dev/dxg", "wsl_lib": wsl_lib, "linux_lib_dirs": [linux], "dpkg_status": status}


def test_wsl2_with_its_plumbing_in_place(tmp_path):
    where = wsl_machine(tmp_path)
    (where["linux_lib_dirs"][0] / "libcuda.so.1").symlink_to(where["wsl_lib"] / "libcuda.so.1")  # points at WSL's
    [note] = wsl_checks(**where)
    assert note.code == "wsl2-gpu-plumbing" and "libcuda.so.1" in note.text
    assert check_findings([note])[0].severity == "info"


def test_wsl2_without_dxg_or_the_windows_drivers_libcuda(tmp_path):
    notes = wsl_checks(**wsl_machine(tmp_path, dxg=False, libcuda=False))
    assert codes(notes) == ["wsl2-no-dxg", "wsl2-no-libcuda"]
    findings = check_findings(notes)
    assert all(f.severity == "error" for f in findings)
    wsl2 = load().rule("wsl2")
    assert f"build {wsl2['windows_build_min']}" in findings[0].fix and "wsl --set-version" in findings[0].fix
    assert "in Windows (not in WSL)" in findings[1].fix and f"{wsl2['driver_min']} or newer" in findings[1].fix


def test_a_linux_driver_inside_wsl2_is_named(tmp_path):
    where = wsl_machine(tmp_path)
    touch(where["linux_lib_dirs"][0] / "libcuda.so.535.183.01")
    where["dpkg_status"].write_text(
        where["dpkg_status"].read_text() + "\nPackage: nvidia-driver-550\nStatus: install ok installed\n\n"
        "Package: libnvidia-compute-550\nArchitecture: amd64\nStatus: install ok installed\n"
    )
    [note] = wsl_checks(**where)
    assert note.code == "wsl2-linux-driver-installed"
    assert "nvidia-driver-550, libnvidia-compute-550" in note.text and "libcuda.so.535.183.01" in note.text
    assert "nvidia-driver-535" not in note.text  # removed, only its configuration files are left
    [finding] = check_findings([note])
    assert finding.severity == "error" and "Windows" in finding.fix and "apt-get remove" in finding.fix


def test_driver_packages_from_dpkg_status(tmp_path):
    status = touch(
        tmp_path / "status",
        "Package: cuda-drivers\nStatus: install ok installed\n\nPackage: nvidia-dkms-550-open\n"
        "Status: install ok installed\n\nPackage: cuda-toolkit-12-5\nStatus: install ok installed\n",
    )
    assert installed_driver_packages(status) == ["cuda-drivers", "nvidia-dkms-550-open"]
    assert installed_driver_packages(tmp_path / "absent") == []


# ----------------------------------------------------------------- Jupyter kernels


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
    findings = {f.code: f for f in check_findings(notes, python=str(here))}
    assert findings["kernel-without-tensorflow"].severity == "warning"
    assert f"{here} -m ipykernel install --user" in findings["kernel-without-tensorflow"].fix
    assert finding_groups(list(findings.values())).keys() == {GROUP_KERNELS}


def test_a_kernel_named_python_runs_the_jupyter_on_path(tmp_path):
    here = environment(tmp_path / "envs/course", tensorflow=True)
    base = environment(tmp_path / "envs/base", tensorflow=False)
    bin_dir = tmp_path / "bin"
    jupyter = touch(bin_dir / "jupyter", f"#!{base}\nimport sys\n")
    jupyter.chmod(0o755)
    kernels = tmp_path / "kernels"
    kernel(kernels, "python3", "python")
    notes = kernel_checks(
        [kernels],
        executable=str(here),
        prefix=str(here.parent.parent),
        path_env=str(bin_dir),
        home=tmp_path / "home",
        tensorflow_here=True,
    )
    assert codes(notes) == ["jupyter-runs-elsewhere", "kernel-without-tensorflow", "no-kernel-for-this-environment"]
    assert str(jupyter) in notes[0].text and "the Python of the `jupyter` on PATH" in notes[1].text
    assert f"{here} -m jupyter lab" in check_findings(notes, python=str(here))[0].fix
    jupyter.write_text(f"#!{here}\n")  # Jupyter started from this environment: its python3 kernel is this one
    notes = kernel_checks(
        [kernels],
        executable=str(here),
        prefix=str(here.parent.parent),
        path_env=str(bin_dir),
        home=tmp_path / "home",
        tensorflow_here=True,
    )
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


# ----------------------------------------------------------------- a wheel for this Python


@pytest.mark.parametrize("python", ["3.9", "3.14"])
def test_a_python_without_a_tensorflow_wheel(python):
    build = load().newest("linux")
    [note] = python_wheel_check(python)
    assert note.code == "no-tensorflow-wheel-for-python"
    assert f"Python {build.python_min}-{build.python_max}" in note.text and f"Python {python}" in note.text
    [finding] = check_findings([note])
    assert finding.severity == "error" and "venv" in finding.fix


def test_a_python_with_a_wheel_gets_no_note():
    build = load().newest("linux")
    assert python_wheel_check(build.python_min) == python_wheel_check(build.python_max) == []


# ----------------------------------------------------------------- findings from codes, grouped in the report


def noted_codes() -> set[str]:
    """Every code checks.py gives in a ``Note("code", ...)``."""
    tree = ast.parse((ROOT / "course_utils/doctor/checks.py").read_text())
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "Note" and node.args:
            if isinstance(node.args[0], ast.Constant):
                found.add(node.args[0].value)
    return found


def test_every_note_code_has_its_finding_and_every_finding_is_used():
    assert noted_codes() == set(CHECK_FINDINGS)
    for rule in CHECK_FINDINGS.values():
        fix = rule.fix.format(python="py", wsl_driver_min="1", wsl_windows_build="2")
        assert rule.severity in ("info", "warning", "error") and "{" not in fix


def test_a_note_gives_its_finding_whatever_its_text():
    [finding] = check_findings([Note("wsl2-no-dxg", "entirely reworded")])
    assert (finding.code, finding.severity, finding.message) == ("wsl2-no-dxg", "error", "Entirely reworded.")
    assert check_findings([Note("not-a-check-code", "no finding for codes nobody registered")]) == []


def test_the_report_groups_the_live_checks_and_the_json_lists_them():
    notes = [
        Note("nvidia-lib-fails-to-load", "libcudnn.so.9 does not load: file too short"),
        Note("wsl2-no-dxg", "/dev/dxg is missing"),
        Note("kernel-without-tensorflow", "The kernel 'Base' runs /envs/base/bin/python"),
    ]
    result = diagnose(Machine("linux", "3.11", live=True, checks=notes))
    assert {"nvidia-lib-fails-to-load", "wsl2-no-dxg", "kernel-without-tensorflow"} <= set(result.codes())
    assert result.exit_code == 1
    report = result.report()
    for group in (GROUP_LIBRARIES, GROUP_WSL, GROUP_KERNELS):
        assert f"\n  {group}:\n" in report
    libraries = report.index(f"  {GROUP_LIBRARIES}:")
    assert report.index("[error] nvidia-lib-fails-to-load") > libraries > report.index("Findings:")
    data = json.loads(json.dumps(result.to_json()))
    assert {"code": "wsl2-no-dxg", "text": "/dev/dxg is missing", "group": GROUP_WSL} in data["checks"]
    assert all(set(f) == {"code", "severity", "message", "fix"} for f in data["findings"])
    assert diagnose(Machine("linux", "3.11")).to_json()["checks"] is None


def test_live_checks_run_what_fits_the_platform(monkeypatch):
    ran = []
    monkeypatch.setattr(checks_module, "python_wheel_check", lambda: ran.append("python") or [])
    monkeypatch.setattr(checks_module, "nvidia_library_checks", lambda gpu: ran.append(f"libraries gpu={gpu}") or [])
    monkeypatch.setattr(checks_module, "is_wsl", lambda: True)
    monkeypatch.setattr(checks_module, "wsl_checks", lambda: ran.append("wsl") or [])

    def broken_kernels():
        raise ValueError("kernel.json is not JSON")

    monkeypatch.setattr(checks_module, "kernel_checks", broken_kernels)
    notes = live_checks("macos")
    assert ran == ["python"] and codes(notes) == ["kernels-unreadable"] and "not JSON" in notes[0].text
    ran.clear()
    live_checks("linux", gpu=True)
    assert ran == (["python", "libraries gpu=True", "wsl"] if ON_LINUX else ["python"])


def test_probe_runs_the_live_checks_on_this_machine():
    machine = probe("linux", tensorflow=False)
    assert isinstance(machine.checks, list) and all(isinstance(n, Note) for n in machine.checks)
    assert probe("linux", tensorflow=False, checks=False).checks is None
    data = diagnose(machine).to_json()
    assert [c["code"] for c in data["checks"]] == [n.code for n in machine.checks]
