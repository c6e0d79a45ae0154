"""course_utils.doctor.probes: running nvidia-smi and nvcc on this machine, with the tools stubbed on PATH."""

from __future__ import annotations

import os
import shutil
import stat
from pathlib import Path

import pytest

from course_utils.doctor import probes

from ..conftest import ROOT

FIXTURES = ROOT / "tests" / "fixtures" / "nvidia"
CAT = shutil.which("cat") or "/bin/cat"
pytestmark = pytest.mark.skipif(os.name != "posix", reason="stub tools are shell scripts")


def _tool(folder: Path, name: str, script: str) -> None:
    """A stub executable; PATH holds only its folder, so it names cat by absolute path."""
    path = folder / name
    path.write_text("#!/bin/sh\n" + script.replace("cat ", f"{CAT} "))
    path.chmod(path.stat().st_mode | stat.S_IEXEC)


@pytest.fixture
def bin_dir(tmp_path, monkeypatch):
    folder = tmp_path / "bin"
    folder.mkdir()
    monkeypatch.setenv("PATH", str(folder))
    monkeypatch.setattr(probes, "WSL_NVIDIA_SMI", tmp_path / "no-wsl" / "nvidia-smi")
    return folder


def test_probe_reads_the_table_then_the_query(bin_dir):
    table = FIXTURES / "smi_linux_440.33.01_2x_gv100.txt"
    # A stub that behaves like a driver too old for the compute_cap field: that query fails, the next works.
    _tool(
        bin_dir,
        "nvidia-smi",
        f"""
case "$1" in
  *compute_cap*) echo 'Field "compute_cap" is not a valid field to query.'; exit 2;;
  --query-gpu=*) printf '0, Quadro GV100, 32508\\n1, Quadro GV100, 32500\\n';;
  *) cat "{table}";;
esac
""",
    )
    report = probes.probe_nvidia_smi()
    assert (report.status, report.driver_version, report.driver_cuda) == ("ok", "440.33.01", "10.2")
    assert [(g.index, g.name, g.memory_mib) for g in report.gpus] == [
        (0, "Quadro GV100", 32508),
        (1, "Quadro GV100", 32500),
    ]


def test_probe_reports_failures(bin_dir):
    assert probes.probe_nvidia_smi().status == "missing"
    assert probes.probe_nvcc().status == "missing"
    _tool(bin_dir, "nvidia-smi", f'cat "{FIXTURES / "smi_no_driver.txt"}"; exit 9\n')
    _tool(bin_dir, "nvcc", f'cat "{FIXTURES / "nvcc_linux_12.6.txt"}"\n')
    assert probes.probe_nvidia_smi().status == "no-driver"
    assert probes.probe_nvcc().release == "12.6"


def test_off_path_the_probe_runs_wsl2s_nvidia_smi(bin_dir, tmp_path, monkeypatch):
    wsl_lib = tmp_path / "usr/lib/wsl/lib"
    wsl_lib.mkdir(parents=True)
    _tool(wsl_lib, "nvidia-smi", f'cat "{FIXTURES / "smi_no_driver.txt"}"\n')
    monkeypatch.setattr(probes, "WSL_NVIDIA_SMI", wsl_lib / "nvidia-smi")
    assert probes.find_nvidia_smi() == str(wsl_lib / "nvidia-smi")
    assert probes.probe_nvidia_smi().status == "no-driver"
