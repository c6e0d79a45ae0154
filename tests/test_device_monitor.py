"""The device monitor: NVML's readings of each GPU as samples (a stand-in pynvml), the CPU-only cases with their
reason (the real pynvml here finds no NVIDIA library), a clean stop, the plot.

The stand-in (``tests/nvml_stand_in.py``) has the names the monitor calls; a test checks that the real pynvml has
them too, and that they fail here as the stand-in's ``nvmlInit`` is told to.
"""

from __future__ import annotations

import sys

import pytest

from course_utils.lessons.nb05 import device_monitor
from course_utils.lessons.nb05.device_monitor import DeviceMonitor, GpuSample

from . import nvml_stand_in
from .nvml_stand_in import StandInGpu, stand_in
from .process_checks import wait_until

# No test here counts the samples a stretch of time gives, nor bounds how long a start takes (a loaded CI machine
# is slow): each waits for the samples it checks, and this timeout only catches a hang.
pytestmark = pytest.mark.timeout(120)


def samples_of(monitor: DeviceMonitor, index: int) -> list[GpuSample]:
    return [s for s in monitor.gpu if s.index == index]


def test_the_stand_in_has_the_real_pynvml_s_names_which_here_find_no_nvidia_library():
    import pynvml

    names = [name for name in vars(stand_in([])) if name.lower().startswith("nvml")]
    missing = [name for name in names if not hasattr(pynvml, name)]
    assert missing == [], f"pynvml lacks {missing}: update the monitor and its stand-in"
    assert pynvml.nvmlMemory_v2 == nvml_stand_in.MEMORY_V2
    assert issubclass(pynvml.NVMLError_NotSupported, pynvml.NVMLError)
    assert str(pynvml.NVMLError_LibraryNotFound()) == str(nvml_stand_in.NVMLError_LibraryNotFound())
    # This machine has no NVIDIA driver: the real nvidia-ml-py gives the CPU-only path, with NVML's reason.
    try:
        pynvml.nvmlInit()
    except pynvml.NVMLError as error:
        reason = str(error)
    else:
        pynvml.nvmlShutdown()
        pytest.skip("this machine has NVML: the stand-in tests cover the GPU path")
    with DeviceMonitor(interval_s=0.01) as monitor:
        wait_until(lambda: monitor.cpu)
    assert monitor.gpu == [] and reason in monitor.gpu_error and monitor.cpu


def test_two_gpus_are_sampled_with_their_own_index_and_a_reading_not_supported_is_none(monkeypatch):
    """Kaggle's two T4s: GPU 0 busy, GPU 1 idle and, like an old GeForce, without a utilisation reading."""
    nvml = stand_in([StandInGpu(97, 14500), StandInGpu(None, 260)])
    monkeypatch.setitem(sys.modules, "pynvml", nvml)
    with DeviceMonitor(interval_s=0.01) as monitor:
        thread = monitor._thread
        wait_until(lambda: monitor.gpu_error or len(samples_of(monitor, 1)) >= 3 and len(monitor.cpu) >= 3)
        assert "0, 1" in monitor.describe()
    assert not thread.is_alive() and monitor._thread is None, "the sampler thread ended with the block"
    assert nvml.calls == {"nvmlInit": 1, "nvmlShutdown": 1}
    assert nvml.memory_versions == {nvml_stand_in.MEMORY_V2}, "memory.used as nvidia-smi shows it: version 2"
    assert monitor.gpu_error is None
    assert {(s.utilization, s.memory_mib) for s in samples_of(monitor, 0)} == {(97.0, 14500.0)}
    assert {(s.utilization, s.memory_mib) for s in samples_of(monitor, 1)} == {(None, 260.0)}
    assert [s.seconds for s in samples_of(monitor, 0)] == [s.seconds for s in samples_of(monitor, 1)]
    seconds = [s.seconds for s in monitor.gpu]
    assert seconds == sorted(seconds) and 0 <= seconds[0], "seconds since the start"
    assert all(0 <= p <= 100 for _, p in monitor.cpu)
    count = len(monitor.gpu)
    monitor.stop()  # a second stop is harmless
    assert nvml.calls["nvmlShutdown"] == 1 and len(monitor.gpu) == count


def test_the_monitor_stops_even_when_training_fails(monkeypatch):
    nvml = stand_in([StandInGpu(50, 1000)])
    monkeypatch.setitem(sys.modules, "pynvml", nvml)
    with pytest.raises(RuntimeError, match="training failed"), DeviceMonitor(interval_s=0.01) as monitor:
        thread = monitor._thread
        raise RuntimeError("training failed")
    assert not thread.is_alive() and nvml.calls == {"nvmlInit": 1, "nvmlShutdown": 1}


@pytest.mark.parametrize(("nvml", "reason", "calls"), [
    (lambda: stand_in([], init_error=nvml_stand_in.NVMLError_LibraryNotFound()), "NVML Shared Library Not Found",
     {"nvmlInit": 1, "nvmlShutdown": 0}),  # no shutdown of an NVML that did not start
    (lambda: stand_in([]), "NVML sees no GPU", {"nvmlInit": 1, "nvmlShutdown": 1}),
    (lambda: None, "pip install nvidia-ml-py", None),  # no nvidia-ml-py: import pynvml raises ImportError
], ids=["no-library", "no-gpu", "no-pynvml"])
def test_without_gpu_readings_it_samples_the_cpu_and_says_why(monkeypatch, nvml, reason, calls):
    module = nvml()
    monkeypatch.setitem(sys.modules, "pynvml", module)
    with DeviceMonitor(interval_s=0.01, cpu_percent=lambda: 42.0) as monitor:
        wait_until(lambda: monitor.cpu)
        line = monitor.describe()
    assert monitor.gpu == [] and {p for _, p in monitor.cpu} == {42.0}
    assert reason in monitor.gpu_error and monitor.gpu_error in line
    assert module is None or module.calls == calls


def test_a_gpu_lost_mid_run_ends_the_gpu_samples_and_the_cpu_ones_go_on(monkeypatch):
    nvml = stand_in([StandInGpu(80, 500), StandInGpu(nvml_stand_in.NVMLError_GpuIsLost(), 0)])
    monkeypatch.setitem(sys.modules, "pynvml", nvml)
    with DeviceMonitor(interval_s=0.01) as monitor:
        wait_until(lambda: monitor.gpu_error is not None)
        cpu_then = len(monitor.cpu)
        wait_until(lambda: len(monitor.cpu) > cpu_then)
    assert "GPU is lost" in monitor.gpu_error
    assert [(s.index, s.utilization) for s in monitor.gpu] == [(0, 80.0)], "GPU 0's sample of that round only"
    assert nvml.calls["nvmlShutdown"] == 1


def test_a_cpu_only_monitor_never_starts_nvml(monkeypatch):
    nvml = stand_in([StandInGpu(97, 14500)])
    monkeypatch.setitem(sys.modules, "pynvml", nvml)
    monitor = DeviceMonitor(gpus=False, interval_s=0.01, cpu_percent=lambda: 42.0)
    with monitor:
        wait_until(lambda: monitor.cpu)
    assert monitor.gpu == [] and monitor.gpu_error is None and nvml.calls["nvmlInit"] == 0
    assert monitor.cpu and {p for _, p in monitor.cpu} == {42.0}


def test_the_plot_has_a_gpu_panel_only_with_gpu_samples_and_marks_each_run():
    import matplotlib

    matplotlib.use("Agg")
    clock = iter([100.0]).__next__
    monitor = DeviceMonitor(gpus=False, clock=clock)
    monitor.started_at = 100.0
    monitor.cpu = [(0.5, 90.0), (1.0, 95.0), (1.5, 20.0)]
    runs = {"/CPU:0": [100.0, 100.6, 101.2], "/GPU:0": [101.3, 101.4, 101.5]}
    fig = device_monitor.plot_samples(monitor, runs, title="t")
    assert len(fig.axes) == 1 and fig.axes[0].get_ylabel() == "CPU utilisation (%)"
    assert [t.get_text() for t in fig.axes[0].texts] == ["/CPU:0", "/GPU:0"]
    assert len(fig.axes[0].lines) == 1 + 4, "the CPU line and one dotted line per epoch end"
    monitor.gpu = [GpuSample(0.5, 0, 10.0, 900.0), GpuSample(1.4, 0, 97.0, 1200.0), GpuSample(1.4, 1, None, 5.0)]
    fig = device_monitor.plot_samples(monitor, runs)
    assert len(fig.axes) == 3  # GPU utilisation, its memory axis, the CPU
    assert fig.axes[0].get_ylabel() == "GPU utilisation (%)" and fig.axes[0].get_legend() is not None
