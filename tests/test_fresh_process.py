"""fresh_process.try_settings: a configuration tried in a new Python process, and what it reports."""

from __future__ import annotations

import subprocess
import sys

import pytest

from course_utils import fresh_process
from course_utils.errors import CourseError, ParameterError
from course_utils.fresh_process import FreshRun, parse_memory_used


def test_in_fresh_process_configures_a_new_runtime():
    run = fresh_process.try_settings({"cpu_devices": 3}, allocate_mb=4)
    assert run.ok and run.error is None
    assert run.logical_devices[:3] == ["/device:CPU:0", "/device:CPU:1", "/device:CPU:2"]
    for name in run.logical_devices:
        assert run.placed[name].endswith(name.split("device:")[-1])
    assert "logical CPU devices: 1 -> 3" in run.report
    assert 0 < run.rss_mib <= run.peak_rss_mib


def test_in_fresh_process_shows_the_too_late_error():
    run = fresh_process.try_settings({"cpu_devices": 2}, initialise_first=True, allocate_mb=1)
    assert run.ok is False
    assert run.error["type"] == "ConfigurationTooLateError"
    assert "already initialised" in run.error["what"] and "Restart the kernel" in run.error["fix"]
    assert len([d for d in run.logical_devices if "CPU" in d]) == 1


def test_in_fresh_process_checks_settings_in_the_parent():
    with pytest.raises(ParameterError):
        fresh_process.try_settings({"memory_limit_mb": -5})
    with pytest.raises(ParameterError):
        fresh_process.try_settings({}, allocate_mb=0)


def test_in_fresh_process_reports_a_crashed_child(monkeypatch):
    monkeypatch.setattr(sys, "executable", "/bin/sh")  # the child cannot even start Python
    with pytest.raises(CourseError, match="exit code"):
        fresh_process.try_settings({})


def test_nvidia_smi_memory_parsing_and_gpu_taken():
    assert parse_memory_used("1234\n 80000 \n") == [1234.0, 80000.0]
    assert parse_memory_used("[N/A]\n") is None
    assert parse_memory_used("") is None
    run = FreshRun(
        settings={}, env={}, initialise_first=False, ok=True, error=None, report="", logical_devices=[], placed={},
        gpu_memory_mib={}, oversize=None, nvidia_smi_used_mib={"before": [500.0, 10.0], "after": [1524.0, 10.0]},
        rss_mib=1.0, peak_rss_mib=1.0, seconds=1.0,
    )
    assert run.gpu_taken_mib == 1024.0
    run.nvidia_smi_used_mib = None
    assert run.gpu_taken_mib is None


def test_nvidia_smi_absent_or_failing(monkeypatch):
    monkeypatch.setattr(fresh_process.shutil, "which", lambda name: None)
    assert fresh_process.nvidia_smi_used_mib() is None
    monkeypatch.setattr(fresh_process.shutil, "which", lambda name: "/usr/bin/nvidia-smi")

    def failing(*args, **kwargs):
        return subprocess.CompletedProcess(args, 9, stdout="", stderr="NVIDIA-SMI has failed")

    assert fresh_process.nvidia_smi_used_mib(run=failing) is None

    def working(*args, **kwargs):
        return subprocess.CompletedProcess(args, 0, stdout="2048\n", stderr="")

    assert fresh_process.nvidia_smi_used_mib(run=working) == [2048.0]


def test_environment_is_passed_and_removed(monkeypatch):
    monkeypatch.setenv("TF_FORCE_GPU_ALLOW_GROWTH", "1")  # a value TensorFlow ignores; configure notes it
    inherited = fresh_process.try_settings({}, allocate_mb=1)
    assert "neither 'true' nor 'false'" in inherited.report
    removed = fresh_process.try_settings({}, env={"TF_FORCE_GPU_ALLOW_GROWTH": None}, allocate_mb=1)
    assert "neither" not in removed.report and removed.env == {"TF_FORCE_GPU_ALLOW_GROWTH": None}
