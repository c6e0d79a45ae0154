"""Watching the devices while a model trains: GPU utilisation and memory from ``nvidia-smi``, CPU utilisation
from psutil, sampled in the background and drawn against time (notebook 05).

``nvidia-smi --query-gpu=index,utilization.gpu,memory.used --format=csv,noheader,nounits -lms 500`` prints one
line per GPU every 500 ms, such as ``0, 97, 1234``: the GPU's index, the percent of the last sample period in
which a kernel ran on it, and the memory used in MiB (``nvidia-smi --help-query-gpu``). A field the GPU cannot
report reads ``[N/A]`` or ``[Not Supported]``; it becomes None here. The index keeps two GPUs apart (Kaggle's
two T4s print two lines per sample). psutil's ``cpu_percent`` gives the whole machine's CPU use.

``DeviceMonitor(command)`` starts the command (``nvidia-smi`` found as the doctor finds it, WSL2's
``/usr/lib/wsl/lib`` included; through ``core.processes``: its own process group, ended with
everything it started) and a CPU sampler thread; ``stop`` ends both. ``with DeviceMonitor(...) as monitor:``
stops them even when training fails. Without a command (no GPU) it samples the CPU only. If the parent dies
without stopping it, nvidia-smi ends at its next line: nobody reads the pipe any more.
"""

from __future__ import annotations

import subprocess
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

import psutil

from course_utils.core.i18n import translator
from course_utils.core.processes import start_in_group, stop_group
from course_utils.doctor.probes import find_nvidia_smi

_ = translator("course")

NVIDIA_SMI = ("nvidia-smi", "--query-gpu=index,utilization.gpu,memory.used", "--format=csv,noheader,nounits",
              "-lms", "500")


def _number(text: str) -> float | None:
    """'97' -> 97.0; '[N/A]', '[Not Supported]' or anything else that is not a number -> None."""
    try:
        return float(text.strip())
    except ValueError:
        return None


def parse_gpu_line(line: str) -> tuple[int, float | None, float | None] | None:
    """One line of ``NVIDIA_SMI``'s output -> (GPU index, utilisation %, memory used MiB); None if it is no sample."""
    fields = [f.strip() for f in line.strip().split(",")]
    if len(fields) != 3 or not fields[0].isdigit():
        return None
    return int(fields[0]), _number(fields[1]), _number(fields[2])


@dataclass
class GpuSample:
    seconds: float  # since the monitor started
    index: int
    utilization: float | None  # percent
    memory_mib: float | None


@dataclass
class DeviceMonitor:
    """Samples the GPUs (``command``: ``NVIDIA_SMI`` or None) and the CPU every ``interval_s`` until ``stop()``."""

    command: Sequence[str] | None = NVIDIA_SMI
    interval_s: float = 0.5
    clock: Callable[[], float] = time.perf_counter
    cpu_percent: Callable[[], float] | None = None  # default: psutil.cpu_percent (whole machine, since last call)
    gpu: list[GpuSample] = field(default_factory=list)
    cpu: list[tuple[float, float]] = field(default_factory=list)  # (seconds, percent)
    gpu_error: str | None = None  # why there are no GPU samples although a command was given
    started_at: float | None = None

    def __post_init__(self) -> None:
        self._stop = threading.Event()
        self._threads: list[threading.Thread] = []
        self._process: subprocess.Popen | None = None

    def seconds(self, at: float | None = None) -> float:
        """``at`` (a reading of ``clock``, default now) as seconds since the monitor started."""
        return (self.clock() if at is None else at) - (self.started_at or 0.0)

    def start(self) -> DeviceMonitor:
        if self.cpu_percent is None:
            self.cpu_percent = psutil.cpu_percent
        self.gpu, self.cpu, self.gpu_error = [], [], None
        self._stop.clear()
        self.started_at = self.clock()
        self._threads = [threading.Thread(target=self._sample_cpu, daemon=True)]
        if self.command:
            command = list(self.command)
            if command[0] == "nvidia-smi":  # found as the doctor finds it: on PATH, or in WSL2's /usr/lib/wsl/lib
                command[0] = find_nvidia_smi() or command[0]
            try:
                self._process = start_in_group(command, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
            except OSError as error:  # nvidia-smi not installed, or not allowed to run
                self.gpu_error = f"{self.command[0]}: {error.strerror or error}"
            else:
                self._threads.append(threading.Thread(target=self._read_gpu, daemon=True))
        for thread in self._threads:
            thread.start()
        return self

    def stop(self) -> DeviceMonitor:
        """End the sampler thread and the command (and all it started); safe to call twice."""

        self._stop.set()
        code = stop_group(self._process, grace_s=2.0) if self._process is not None else None
        for thread in self._threads:  # the reader first reads what the command printed before it ended
            thread.join(timeout=5)
        self._threads = []
        if self._process is not None and not self.gpu and self.gpu_error is None:
            self.gpu_error = f"{self.command[0]} gave no sample (exit code {code})"
        self._process = None
        return self

    def __enter__(self) -> DeviceMonitor:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def _sample_cpu(self) -> None:
        self.cpu_percent()  # the first call only starts psutil's interval (psutil keeps one per thread)
        while not self._stop.wait(self.interval_s):
            self.cpu.append((self.seconds(), float(self.cpu_percent())))

    def _read_gpu(self) -> None:
        process = self._process
        for raw in process.stdout:  # one line per GPU and sample, as nvidia-smi prints them
            sample = parse_gpu_line(raw.decode("utf-8", "replace") if isinstance(raw, bytes) else raw)
            if sample is not None:
                self.gpu.append(GpuSample(self.seconds(), *sample))


def plot_samples(monitor: DeviceMonitor, runs: Mapping[str, Sequence[float]], *, title: str = ""):
    """GPU utilisation and memory (when sampled) above, CPU utilisation below, against time.

    ``runs`` maps a label (the device a model trained on) to the ``clock`` readings at the start of its
    training and at the end of each epoch: each run is shaded and labelled, each epoch end is a dotted line.
    Returns the figure (the notebook shows it).
    """
    import matplotlib.pyplot as plt

    panels = 2 if monitor.gpu else 1
    fig, axes = plt.subplots(panels, 1, figsize=(10, 2.6 * panels + 0.6), sharex=True, squeeze=False)
    axes = [row[0] for row in axes]
    if monitor.gpu:
        gpu_ax = axes[0]
        memory_ax = gpu_ax.twinx()
        for index in sorted({s.index for s in monitor.gpu}):
            mine = [s for s in monitor.gpu if s.index == index]
            gpu_ax.plot([s.seconds for s in mine], [s.utilization for s in mine],
                        label=_("GPU {index} utilisation").format(index=index))
            memory_ax.plot([s.seconds for s in mine], [s.memory_mib for s in mine], ls="--",
                           label=_("GPU {index} memory").format(index=index))
        gpu_ax.set(ylabel=_("GPU utilisation (%)"), ylim=(-3, 103))
        memory_ax.set_ylabel(_("GPU memory used (MiB)"))
        lines = gpu_ax.get_legend_handles_labels()[0] + memory_ax.get_legend_handles_labels()[0]
        gpu_ax.legend(lines, [line.get_label() for line in lines], loc="upper left", fontsize="small")
    cpu_ax = axes[-1]
    cpu_ax.plot([t for t, _ in monitor.cpu], [p for _, p in monitor.cpu], color="tab:green")
    cpu_ax.set(ylabel=_("CPU utilisation (%)"), xlabel=_("seconds"), ylim=(-3, 103))
    colors = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    for number, (label, times) in enumerate(runs.items()):
        start, ends = monitor.seconds(times[0]), [monitor.seconds(t) for t in times[1:]]
        for ax in axes:
            ax.axvspan(start, ends[-1] if ends else start, color=colors[number % len(colors)], alpha=0.08)
            for end in ends:
                ax.axvline(end, color="grey", lw=0.8, ls=":")
        axes[0].annotate(label, (start, 1.0), xycoords=("data", "axes fraction"), va="bottom", fontsize="small")
    for ax in axes:
        ax.grid(alpha=0.3)
    if title:
        fig.suptitle(title)
    fig.tight_layout()
    return fig
