"""The device monitor: nvidia-smi's CSV lines read as samples, a stand-in nvidia-smi, a clean stop, the plot.

The line format is nvidia-smi's ``--format=csv,noheader,nounits``: the fields in the order queried, separated by
", ", one line per GPU. Captured in public reports: two idle V100s print ``5, 16384`` each for
``memory.used,memory.total`` (Scionero/MaxContextFinder#6: split on "," the two lines gave ``' 16380\\n5'``);
a GB10 prints ``[N/A], [N/A], 0`` for ``memory.used,memory.total,utilization.memory`` (mostlygeek/llama-swap#782);
older GeForce cards print ``[Not Supported]`` for ``utilization.gpu`` (anderskm/gputil#2).
"""

from __future__ import annotations

import sys
import time

import psutil
import pytest

from course_utils import device_monitor
from course_utils.device_monitor import NVIDIA_SMI, DeviceMonitor, parse_gpu_line

# No test here counts the samples a stretch of time gives, nor bounds how long a start takes (a loaded CI machine
# is slow): each waits for the samples it checks, and this timeout only catches a hang.
pytestmark = pytest.mark.timeout(120)


def wait_until(check) -> None:
    """Wait until ``check()`` holds (the test's timeout catches a hang)."""
    while not check():
        time.sleep(0.01)


@pytest.mark.parametrize(("line", "sample"), [
    ("0, 97, 1234\n", (0, 97.0, 1234.0)),
    ("1, 0, 5", (1, 0.0, 5.0)),  # Kaggle's second T4, idle: its own line, told apart by the index
    ("0, [N/A], [N/A]", (0, None, None)),  # a GB10: memory.used not reported
    ("0, [Not Supported], 1024", (0, None, 1024.0)),  # an old GeForce: no utilisation
])
def test_a_line_of_nvidia_smi_becomes_a_sample(line, sample):
    assert parse_gpu_line(line) == sample


@pytest.mark.parametrize("line", ["", "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver.",
                                  "index, utilization.gpu [%], memory.used [MiB]", "97, 1234"])
def test_a_line_that_is_no_sample_is_skipped(line):
    assert parse_gpu_line(line) is None


def test_the_command_asks_for_the_three_fields_without_header_or_units_every_500_ms():
    assert NVIDIA_SMI[0] == "nvidia-smi" and "--query-gpu=index,utilization.gpu,memory.used" in NVIDIA_SMI
    assert "--format=csv,noheader,nounits" in NVIDIA_SMI and NVIDIA_SMI[-2:] == ("-lms", "500")


# A stand-in nvidia-smi: two GPUs, a sample every 20 ms, a header line and an [N/A] thrown in, forever.
FAKE_SMI = [sys.executable, "-u", "-c", (
    "import itertools, time\n"
    "print('index, utilization.gpu [%], memory.used [MiB]')\n"
    "for i in itertools.count():\n"
    "    print(f'0, {50 + i % 50}, {1000 + i}')\n"
    "    print('1, [N/A], 5')\n"
    "    time.sleep(0.02)\n")]


def pids_of(command_marker: str) -> list[int]:
    found = []
    for process in psutil.process_iter(["cmdline", "status"]):
        try:
            alive = process.info["status"] != psutil.STATUS_ZOMBIE
            if alive and command_marker in " ".join(process.info["cmdline"] or []):
                found.append(process.pid)
        except psutil.Error:
            pass
    return found


def test_the_monitor_reads_a_stand_in_nvidia_smi_and_the_cpu_then_stops_it():
    began = time.perf_counter()  # the monitor's own clock
    with DeviceMonitor(FAKE_SMI, interval_s=0.05) as monitor:
        process = monitor._process
        wait_until(lambda: min(sum(s.index == i for s in monitor.gpu) for i in (0, 1)) >= 5 and len(monitor.cpu) >= 5)
    took = time.perf_counter() - began
    assert process.poll() is not None, "nvidia-smi ended with the block"
    assert pids_of("itertools.count") == [], "no stand-in nvidia-smi left running"
    assert monitor._threads == [] and monitor.gpu_error is None
    gpu0 = [s for s in monitor.gpu if s.index == 0]
    assert len(gpu0) >= 5 and all(50 <= s.utilization < 100 and s.memory_mib >= 1000 for s in gpu0)
    assert {s.utilization for s in monitor.gpu if s.index == 1} == {None}
    seconds = [s.seconds for s in gpu0]
    assert seconds == sorted(seconds) and 0 <= seconds[0] and seconds[-1] <= took, "seconds since the start"
    assert all(0 <= p <= 100 for _, p in monitor.cpu)
    cpu_seconds = [t for t, _ in monitor.cpu]
    assert cpu_seconds == sorted(cpu_seconds) and 0 <= cpu_seconds[0] and cpu_seconds[-1] <= took
    monitor.stop()  # a second stop is harmless


def test_the_monitor_stops_even_when_training_fails():
    with pytest.raises(RuntimeError), DeviceMonitor(FAKE_SMI, interval_s=0.05) as monitor:
        process = monitor._process
        raise RuntimeError("training failed")
    assert process.poll() is not None and pids_of("itertools.count") == []


def test_without_a_gpu_it_samples_the_cpu_only():
    monitor = DeviceMonitor(None, interval_s=0.01, cpu_percent=lambda: 42.0)
    with monitor:
        wait_until(lambda: monitor.cpu)
    assert monitor.gpu == [] and monitor.gpu_error is None and monitor._process is None
    assert monitor.cpu and {p for _, p in monitor.cpu} == {42.0}


def test_a_missing_nvidia_smi_is_said_not_raised():
    with DeviceMonitor(["no-such-nvidia-smi-here", "-lms", "500"], interval_s=0.01) as monitor:
        wait_until(lambda: monitor.cpu)
    assert monitor.gpu == [] and "no-such-nvidia-smi-here" in monitor.gpu_error and monitor.cpu


def test_a_command_that_prints_nothing_useful_is_said():
    silent = [sys.executable, "-c", "print('NVIDIA-SMI has failed')"]
    with DeviceMonitor(silent, interval_s=0.01) as monitor:
        monitor._process.wait()  # it has printed all it prints, however long its start took
    assert monitor.gpu == [] and "gave no sample (exit code 0)" in monitor.gpu_error


def test_the_plot_has_a_gpu_panel_only_with_gpu_samples_and_marks_each_run():
    import matplotlib

    matplotlib.use("Agg")
    clock = iter([100.0]).__next__
    monitor = DeviceMonitor(None, clock=clock)
    monitor.started_at = 100.0
    monitor.cpu = [(0.5, 90.0), (1.0, 95.0), (1.5, 20.0)]
    runs = {"/CPU:0": [100.0, 100.6, 101.2], "/GPU:0": [101.3, 101.4, 101.5]}
    fig = device_monitor.plot_samples(monitor, runs, title="t")
    assert len(fig.axes) == 1 and fig.axes[0].get_ylabel() == "CPU utilisation (%)"
    assert [t.get_text() for t in fig.axes[0].texts] == ["/CPU:0", "/GPU:0"]
    assert len(fig.axes[0].lines) == 1 + 4, "the CPU line and one dotted line per epoch end"
    monitor.gpu = [device_monitor.GpuSample(0.5, 0, 10.0, 900.0), device_monitor.GpuSample(1.4, 0, 97.0, 1200.0),
                   device_monitor.GpuSample(1.4, 1, None, 5.0)]
    fig = device_monitor.plot_samples(monitor, runs)
    assert len(fig.axes) == 3  # GPU utilisation, its memory axis, the CPU
    assert fig.axes[0].get_ylabel() == "GPU utilisation (%)" and fig.axes[0].get_legend() is not None


def test_nvidia_smi_is_found_where_the_doctor_finds_it_wsl2_included(monkeypatch, tmp_path):
    """WSL2 keeps nvidia-smi in /usr/lib/wsl/lib, which need not be on PATH: the monitor asks doctor.probes."""
    from course_utils.doctor import probes

    stand_in = tmp_path / "nvidia-smi"
    stand_in.write_text(f"#!{sys.executable}\nprint('0, 97, 1234', flush=True)\n")
    stand_in.chmod(0o755)
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))  # not on PATH
    monkeypatch.setattr(probes, "WSL_NVIDIA_SMI", stand_in)
    with DeviceMonitor(NVIDIA_SMI, interval_s=0.01) as monitor:
        monitor._process.wait()
    assert monitor.gpu_error is None and [(s.index, s.utilization) for s in monitor.gpu] == [(0, 97.0)]
    monkeypatch.setattr(probes, "WSL_NVIDIA_SMI", tmp_path / "nowhere")
    with DeviceMonitor(NVIDIA_SMI, interval_s=0.01) as monitor:
        pass
    assert monitor.gpu == [] and monitor.gpu_error.startswith("nvidia-smi: ")
