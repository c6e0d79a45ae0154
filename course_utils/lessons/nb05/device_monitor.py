"""Watching the devices while a model trains (notebook 05): GPU utilisation and memory from NVML, CPU utilisation
from psutil, sampled by one background thread and drawn against time.

NVML is the library under ``nvidia-smi`` (https://docs.nvidia.com/deploy/nvml-api/), bound by nvidia-ml-py
(``pynvml``). Every ``interval_s`` each GPU's ``nvmlDeviceGetUtilizationRates(h).gpu`` (nvidia-smi's
``utilization.gpu``) and ``nvmlDeviceGetMemoryInfo(h, version=nvmlMemory_v2).used``: version 2 leaves out what the
driver reserves, as nvidia-smi's ``memory.used`` does
(https://docs.nvidia.com/deploy/nvml-api/structnvmlMemory__t.html; rust-nvml/nvml-wrapper#57). A reading the GPU
does not support is None. Where NVML cannot start (no nvidia-ml-py, driver or GPU) the monitor samples the CPU
only and says why in ``gpu_error``. ``with DeviceMonitor() as monitor:`` stops the thread and NVML even when
training fails.
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from types import ModuleType
from typing import Any

import psutil

from course_utils.core.i18n import translator

_ = translator("course")

MIB = 2**20


@dataclass
class GpuSample:
    seconds: float  # since the monitor started
    index: int  # NVML's index, as nvidia-smi numbers the GPU
    utilization: float | None  # percent
    memory_mib: float | None


def start_nvml() -> tuple[ModuleType | None, list[tuple[int, Any]], str | None]:
    """NVML started: (pynvml, [(index, handle)] of each GPU, None), or (None, [], why not)."""
    try:
        import pynvml  # lazy: only a monitor of GPUs needs nvidia-ml-py; `import course_utils` stays light
    except ImportError as error:
        return None, [], _("nvidia-ml-py is not installed ({error}): pip install nvidia-ml-py").format(error=error)
    try:
        pynvml.nvmlInit()
    except pynvml.NVMLError as error:  # no NVIDIA library (no driver, a Mac), or a driver that does not answer
        return None, [], _("NVML did not start: {error}").format(error=error)
    try:
        handles = [(i, pynvml.nvmlDeviceGetHandleByIndex(i)) for i in range(pynvml.nvmlDeviceGetCount())]
    except pynvml.NVMLError as error:
        handles, why = [], _("NVML did not list the GPUs: {error}").format(error=error)
    else:
        why = None if handles else _("NVML sees no GPU")
    if why:
        pynvml.nvmlShutdown()
        return None, [], why
    return pynvml, handles, None


def _supported(nvml: ModuleType, reading: Callable[[], float]) -> float | None:
    """A reading of one GPU, or None where the GPU does not support it (where nvidia-smi prints [N/A])."""
    try:
        return float(reading())
    except nvml.NVMLError_NotSupported:
        return None


@dataclass
class DeviceMonitor:
    """Samples the GPUs (through NVML, unless ``gpus`` is False) and the CPU every ``interval_s`` until ``stop()``."""

    gpus: bool = True
    interval_s: float = 0.5
    clock: Callable[[], float] = time.perf_counter
    cpu_percent: Callable[[], float] = psutil.cpu_percent  # the whole machine, since the last call
    gpu: list[GpuSample] = field(default_factory=list)
    cpu: list[tuple[float, float]] = field(default_factory=list)  # (seconds, percent)
    gpu_error: str | None = None  # why the GPUs are not (or no longer) sampled although ``gpus`` asks
    started_at: float | None = None

    def __post_init__(self) -> None:
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._nvml: ModuleType | None = None
        self._handles: list[tuple[int, Any]] = []

    def seconds(self, at: float | None = None) -> float:
        """``at`` (a reading of ``clock``, default now) as seconds since the monitor started."""
        return (self.clock() if at is None else at) - (self.started_at or 0.0)

    def start(self) -> DeviceMonitor:
        self.gpu, self.cpu = [], []
        self._nvml, self._handles, self.gpu_error = start_nvml() if self.gpus else (None, [], None)
        self._stop.clear()
        self.started_at = self.clock()
        self._thread = threading.Thread(target=self._sample, daemon=True)
        self._thread.start()
        return self

    def stop(self) -> DeviceMonitor:
        """End the sampler thread, then NVML; safe to call twice."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=5)
            self._thread = None
        if self._nvml is not None:
            with contextlib.suppress(self._nvml.NVMLError):  # stopping never hides what ended the block
                self._nvml.nvmlShutdown()
            self._nvml = None
        return self

    def __enter__(self) -> DeviceMonitor:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def describe(self) -> str:
        """What this monitor samples, or why it samples the CPU only: a line for the notebook to print."""
        if self._handles:
            return _("NVML reads GPU {indices} (the numbers nvidia-smi shows) and psutil the CPU, every {interval} s."
                     ).format(indices=", ".join(str(i) for i, _handle in self._handles), interval=self.interval_s)
        if self.gpu_error:
            return _("The monitor samples the CPU only ({reason}).").format(reason=self.gpu_error)
        return _("No GPU: the monitor samples the CPU only.")

    def _sample(self) -> None:
        """Every ``interval_s``: the CPU, and each GPU NVML reads, stamped with the same time."""
        self.cpu_percent()  # the first call only starts psutil's interval
        while not self._stop.wait(self.interval_s):
            now = self.seconds()
            self.cpu.append((now, float(self.cpu_percent())))
            if self._handles:
                self._sample_gpus(now)

    def _sample_gpus(self, now: float) -> None:
        nvml = self._nvml
        try:
            for index, h in self._handles:
                busy = _supported(nvml, lambda h=h: nvml.nvmlDeviceGetUtilizationRates(h).gpu)
                used = _supported(nvml, lambda h=h: nvml.nvmlDeviceGetMemoryInfo(h, version=nvml.nvmlMemory_v2).used)
                self.gpu.append(GpuSample(now, index, busy, None if used is None else used / MIB))
        except nvml.NVMLError as error:  # a GPU lost or reset mid-run: the CPU samples go on
            self.gpu_error = _("NVML stopped answering: {error}").format(error=error)
            self._handles = []


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
