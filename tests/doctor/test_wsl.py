"""course_utils.doctor.probes.wsl_checks: WSL2's GPU plumbing, on a machine built as a file tree."""

from __future__ import annotations

from pathlib import Path

from course_utils.doctor.model import check_findings
from course_utils.doctor.probes import installed_driver_packages, is_wsl, wsl_checks
from course_utils.doctor.versions import load

from .file_tree import codes, touch


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
    assert wsl2["windows_build_min"] in findings[0].fix and "wsl --set-version" in findings[0].fix
    assert wsl2["driver_min"] in findings[1].fix


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
    assert finding.severity == "error" and "apt-get remove" in finding.fix
    assert installed_driver_packages(tmp_path / "absent") == []

