"""fresh_process.try_settings: a configuration tried in a new Python process, and what it reports."""

from __future__ import annotations

import subprocess
import sys

import pytest

from course_utils import fresh_process
from course_utils.errors import ChildError, CourseError, ParameterError
from course_utils.fresh_process import FreshRun, parse_memory_used

from .conftest import isolated


@pytest.fixture(scope="module")
def three_cpus(tmp_path_factory) -> FreshRun:
    """One fresh process for two tests: three logical CPUs, with TF_FORCE_GPU_ALLOW_GROWTH set in this process
    and removed for the child (``test_environment_is_passed_and_removed``)."""
    with isolated(tmp_path_factory.mktemp("fresh")) as monkeypatch:
        monkeypatch.setenv("TF_FORCE_GPU_ALLOW_GROWTH", "1")  # a value TensorFlow ignores; configure notes it
        return fresh_process.try_settings({"cpu_devices": 3}, env={"TF_FORCE_GPU_ALLOW_GROWTH": None}, allocate_mb=4)


def test_in_fresh_process_configures_a_new_runtime(three_cpus):
    run = three_cpus
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
    with pytest.raises(CourseError, match="The fresh TensorFlow process exited with status 2") as info:
        fresh_process.try_settings({})
    assert isinstance(info.value, ChildError) and info.value.tail  # its last output lines come along
    assert info.value.tail in info.value.what


def test_in_fresh_process_stops_a_child_past_its_time():
    with pytest.raises(ChildError, match="did not finish within 0.5 s"):
        fresh_process.try_settings({}, timeout_s=0.5)  # TensorFlow alone takes longer to import


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


def test_environment_is_passed_and_removed(monkeypatch, three_cpus):
    monkeypatch.setenv("TF_FORCE_GPU_ALLOW_GROWTH", "1")  # a value TensorFlow ignores; configure notes it
    inherited = fresh_process.try_settings({}, allocate_mb=1)
    assert "neither 'true' nor 'false'" in inherited.report
    removed = three_cpus  # run with the same value set in this process and env={"TF_FORCE_GPU_ALLOW_GROWTH": None}
    assert "neither" not in removed.report and removed.env == {"TF_FORCE_GPU_ALLOW_GROWTH": None}


class _FakeTensor:
    def __init__(self, device: str, mib: float):
        self.device, self.mib = f"/job:localhost/replica:0/task:0/device:{device.split('device:')[-1].lstrip('/')}", mib

    def __getitem__(self, index):
        return 1.0


class _FakeTF:
    """Just enough of TensorFlow for the child's GPU branch: two logical GPUs, a 1024 MiB cap on GPU:0."""

    float32 = "float32"

    class errors:  # noqa: N801 - mirrors tf.errors
        class ResourceExhaustedError(Exception):
            pass

    def __init__(self):
        from contextlib import contextmanager
        from types import SimpleNamespace

        self.in_use = {"GPU:0": 0.0, "GPU:1": 0.0}
        self.current_device = "/device:CPU:0"
        devices = [SimpleNamespace(name=n, device_type=n.split(":")[1]) for n in
                   ("/device:CPU:0", "/device:GPU:0", "/device:GPU:1")]
        info = lambda name: {"current": int(self.in_use[name] * 2**20), "peak": int(self.in_use[name] * 2**20)}  # noqa: E731
        self.config = SimpleNamespace(
            list_logical_devices=lambda kind=None: devices,
            experimental=SimpleNamespace(get_memory_info=info),
        )

        @contextmanager
        def device(name):
            saved, self.current_device = self.current_device, name
            try:
                yield
            finally:
                self.current_device = saved

        self.device = device

    def ones(self, shape, dtype):
        mib = shape[0] * 4 / 2**20
        gpu = self.current_device.split("device:")[-1].lstrip("/")
        if gpu in self.in_use:
            if gpu == "GPU:0" and self.in_use[gpu] + mib > 1024:
                raise self.errors.ResourceExhaustedError("OOM when allocating tensor")
            self.in_use[gpu] += mib
        return _FakeTensor(self.current_device, mib)


def test_child_gpu_branch_with_a_fake_tensorflow(monkeypatch):
    # No GPU here: the child's bookkeeping (placement, MiB, the oversized tensor, nvidia-smi) runs on a stand-in.
    fake = _FakeTF()
    monkeypatch.setattr(fresh_process, "quiet_tensorflow", lambda: fake)
    monkeypatch.setattr(fresh_process, "configure", lambda quiet, **settings: "configured")
    readings = iter([[500.0], [1800.0]])
    monkeypatch.setattr(fresh_process, "nvidia_smi_used_mib", lambda: next(readings))
    out = fresh_process._fresh_child({"settings": {}, "allocate_mb": 64, "oversize_mb": 2048})
    run = FreshRun(settings={}, env={}, initialise_first=False, **out)
    assert run.ok and run.report == "configured"
    assert run.placed["/device:GPU:1"].endswith("device:GPU:1")
    assert run.gpu_memory_mib == {"GPU:0": {"current": 64.0, "peak": 64.0}, "GPU:1": {"current": 64.0, "peak": 64.0}}
    assert run.oversize == {"mb": 2048, "result": "refused: ResourceExhaustedError"}
    assert run.gpu_taken_mib == 1300.0

    fake = _FakeTF()
    monkeypatch.setattr(fresh_process, "quiet_tensorflow", lambda: fake)
    monkeypatch.setattr(fresh_process, "nvidia_smi_used_mib", lambda: None)
    out = fresh_process._fresh_child({"settings": {}, "allocate_mb": 16, "oversize_mb": 512})
    assert out["oversize"] == {"mb": 512, "result": "allocated"} and out["nvidia_smi_used_mib"] is None


# --- run_code: plain TensorFlow code in a new process ---------------------------------------------------------


def test_run_code_reports_what_the_code_printed_and_raised_and_measures_after():
    code = "import tensorflow as tf\nprint('hello')\nx = tf.constant(1.0)\nraise KeyError('missing')\n"
    run = fresh_process.run_code(code, allocate_mb=2)
    assert run.printed == "hello\n" and run.ok is False
    assert run.error == {"type": "KeyError", "message": "'missing'", "line": 4}
    assert run.runtime_started is True, "the tensor on line 3 started the runtime"
    assert run.gpus == [] and run.memory_growth == {} and run.gpu_options is None and run.growth_in_effect is None
    assert run.stand_in_gpus == 0  # none asked for
    assert run.measured["logical_devices"] == ["/device:CPU:0"] and run.measure_error is None
    assert run.gpu_taken_mib is None  # no nvidia-smi here


def test_run_code_with_stand_in_gpus_meets_tensorflows_own_checks():
    code = "import tensorflow as tf\ngpus = tf.config.list_physical_devices('GPU')\n" \
           "tf.config.experimental.set_memory_growth(gpus[0], True)\n"
    run = fresh_process.run_code(code, stand_in_gpus=2, allocate_mb=2)
    assert run.stand_in_gpus == 2 and run.gpus == ["GPU:0", "GPU:1"]
    assert run.error is None and run.memory_growth == {"GPU:0": True, "GPU:1": False}
    assert run.gpu_options is None and run.gpu_options_error == (
        "ValueError: Memory growth cannot differ between GPU devices")
    assert run.ok is False and run.runtime_started is False
    assert run.measured is None, "nothing is measured on stand-in GPUs"


def test_run_code_growth_in_effect_follows_the_environment_variable_the_code_sets():
    code = ("import os\nimport tensorflow as tf\nfor gpu in tf.config.list_physical_devices('GPU'):\n"
            "    tf.config.experimental.set_memory_growth(gpu, True)\n"
            "os.environ['TF_FORCE_GPU_ALLOW_GROWTH'] = 'false'\n")
    run = fresh_process.run_code(code, stand_in_gpus=2, env={"TF_FORCE_GPU_ALLOW_GROWTH": None})
    assert run.ok and run.gpu_options == {"allow_growth": True, "virtual_mb": []}
    assert run.allow_growth_env == "false" and run.growth_in_effect is False, "the variable wins (gpu_bfc_allocator.cc)"


def test_run_code_checks_its_arguments_in_the_parent():
    with pytest.raises(TypeError):
        fresh_process.run_code(None)
    with pytest.raises(ValueError):
        fresh_process.run_code("pass", stand_in_gpus=-1)
    with pytest.raises(ParameterError):
        fresh_process.run_code("pass", allocate_mb=0)


def test_code_run_gpu_taken_and_growth_in_effect():
    run = fresh_process.CodeRun(
        code="", env={}, stand_in_gpus=0, error=None, printed="", runtime_started=True, gpus=["GPU:0"],
        memory_growth={"GPU:0": True}, logical_gpus_mb={"GPU:0": [1024]},
        gpu_options={"allow_growth": False, "virtual_mb": [[1024]]}, gpu_options_error=None,
        measured={"nvidia_smi_used_mib": {"before": [500.0], "after": [2100.0]}}, measure_error=None,
        allow_growth_env=None, seconds=1.0,
    )
    assert run.ok and run.gpu_taken_mib == 1600.0 and run.growth_in_effect is False
    run.allow_growth_env = "true"
    assert run.growth_in_effect is True
    run.allow_growth_env = "yes"  # TensorFlow ignores anything but true and false
    assert run.growth_in_effect is False
    run.measured = None
    assert run.gpu_taken_mib is None
