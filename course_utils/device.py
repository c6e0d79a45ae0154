"""Choose the device a notebook trains on, and say in one line why.

Notebooks never assume a GPU: ``DEVICE = "auto"`` picks ``/GPU:0`` when TensorFlow can use one, else ``/CPU:0``;
``"cpu"`` forces the CPU; ``"gpu"`` insists, and fails with the reason and the fix when there is none.
"""

from __future__ import annotations

import platform
from dataclasses import dataclass
from pathlib import Path

from course_utils.core.errors import DeviceError, ParameterError
from course_utils.core.i18n import translator
from course_utils.core.tf_setup import quiet_tensorflow

_ = translator("course")

CHOICES = ("auto", "cpu", "gpu")


def check_device(value: object) -> str:
    """``value`` lower-cased if it is "auto", "cpu" or "gpu", else a ``ParameterError`` - the same everywhere."""
    choice = value.lower() if isinstance(value, str) else value
    if choice not in CHOICES:
        raise ParameterError(
            _("{name} = {value!r} is not a device choice.").format(name="DEVICE", value=value),
            _("Set {name} to 'auto' (a GPU when TensorFlow can use one), 'cpu' or 'gpu'.").format(name="DEVICE"),
        )
    return choice


@dataclass(frozen=True)
class DeviceChoice:
    name: str  # "/GPU:0" or "/CPU:0", for tf.device
    kind: str  # "GPU" or "CPU"
    description: str  # the hardware, e.g. "NVIDIA H100 (compute capability 9.0)"
    reason: str  # one line: why this device

    def __str__(self) -> str:
        return f"{self.name} ({self.description}) - {self.reason}"


def cpuinfo(*keys: str, text: str | None = None) -> str | None:
    """The value of the first line of /proc/cpuinfo (or ``text``) whose key starts with one of ``keys``; None
    without one (not Linux)."""
    if text is None:
        try:
            text = Path("/proc/cpuinfo").read_text(encoding="utf-8", errors="replace")
        except OSError:
            return None
    return next((line.split(":", 1)[1].strip() for line in text.splitlines() if line.lower().startswith(keys)), None)


def cpu_model() -> str:
    """The CPU's model name (Linux: /proc/cpuinfo), else what ``platform`` knows."""
    return cpuinfo("model name") or platform.processor() or platform.machine() or _("unknown CPU")


def why_no_gpu(tf) -> str:
    """The most likely reason TensorFlow sees no GPU, from what TensorFlow itself reports."""
    if not tf.test.is_built_with_cuda():
        system = platform.system()
        if system == "Darwin":
            return _("this is macOS: TensorFlow has no CUDA build there (Apple silicon: tensorflow-metal)")
        if system == "Windows":
            return _("native Windows has no GPU TensorFlow after 2.10 (use WSL2, or tensorflow<2.11)")
        return _("this TensorFlow build has no CUDA support (a CPU-only wheel such as tensorflow-cpu)")
    return _("TensorFlow is built with CUDA but found no usable NVIDIA GPU (no GPU, no driver, or missing CUDA "
             "libraries)")


def choose_device(prefer: str = "auto") -> DeviceChoice:
    """Pick ``/GPU:0`` or ``/CPU:0`` according to ``prefer`` ("auto", "cpu" or "gpu")."""
    prefer = check_device(prefer)

    tf = quiet_tensorflow()
    gpus = tf.config.list_physical_devices("GPU")
    if prefer == "cpu":
        reason = (_("DEVICE='cpu' asked for the CPU ({count} GPU(s) left unused)").format(count=len(gpus)) if gpus
                  else _("DEVICE='cpu' asked for the CPU"))
        return DeviceChoice("/CPU:0", "CPU", cpu_model(), reason)
    if gpus:
        details = tf.config.experimental.get_device_details(gpus[0])
        name = details.get("device_name", "GPU")
        cc = details.get("compute_capability")
        description = f"{name} (compute capability {cc[0]}.{cc[1]})" if cc else name
        return DeviceChoice("/GPU:0", "GPU", description,
                            _("{count} GPU(s) visible to TensorFlow; using the first").format(count=len(gpus)))
    reason = why_no_gpu(tf)
    if prefer == "gpu":
        raise DeviceError(
            _("DEVICE='gpu' was asked for, but no GPU is visible: {reason}.").format(reason=reason),
            _("Run `course doctor` for a diagnosis and the install command, or set DEVICE='auto' to run on the CPU."),
        )
    return DeviceChoice("/CPU:0", "CPU", cpu_model(), _("no GPU visible: {reason}").format(reason=reason))


def gpu_facts(tf) -> dict[str, object]:
    """The first GPU as a record states it (name, compute capability, memory, driver, the build's CUDA), from
    TensorFlow and ``nvidia-smi``: two records then say whether they ran on the same GPU.
    """
    gpus = tf.config.list_physical_devices("GPU")
    if not gpus:
        return {}
    details = tf.config.experimental.get_device_details(gpus[0])
    cc = details.get("compute_capability")
    from course_utils.doctor.probes import probe_nvidia_smi  # lazy: `import course_utils` loads no doctor

    smi = probe_nvidia_smi(timeout=10)
    first = smi.gpus[0] if smi.status == "ok" and smi.gpus else None
    build = tf.sysconfig.get_build_info()
    return {
        "name": details.get("device_name") or (first.name if first else "GPU"),
        "compute_capability": f"{cc[0]}.{cc[1]}" if cc else (first.compute_capability if first else None),
        "memory_mib": first.memory_mib if first else None,
        "driver": smi.driver_version if smi.status == "ok" else None,
        "cuda_build": build.get("cuda_version"),
        "count": len(gpus),
    }

