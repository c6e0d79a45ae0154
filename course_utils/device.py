"""Choose the device a notebook trains on, and say in one line why.

Notebooks never assume a GPU: they ask ``choose_device()`` and place work with
``with tf.device(choice.name):``. ``DEVICE = "auto"`` picks ``/GPU:0`` when TensorFlow
can use one, else ``/CPU:0``; ``"cpu"`` forces the CPU (useful for comparisons);
``"gpu"`` insists on a GPU and fails with the reason and the fix when there is none.
"""

from __future__ import annotations

import platform
from dataclasses import dataclass
from pathlib import Path

from course_utils.errors import DeviceError, ParameterError

CHOICES = ("auto", "cpu", "gpu")


def check_device(value: object, name: str = "DEVICE") -> str:
    """The one check of a DEVICE choice: ``value`` lower-cased if it is "auto", "cpu" or "gpu".

    Notebooks, ``course bench --device`` and the distribution helpers all call this, so a
    typo gets the same message everywhere (a ``ParameterError``).
    """
    choice = value.lower() if isinstance(value, str) else value
    if choice not in CHOICES:
        raise ParameterError(
            f"{name} = {value!r} is not a device choice.",
            f"Set {name} to 'auto' (a GPU when TensorFlow can use one), 'cpu' or 'gpu'.",
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


def cpu_model() -> str:
    """The CPU's model name (Linux: /proc/cpuinfo), else what ``platform`` knows."""
    try:
        for line in Path("/proc/cpuinfo").read_text(encoding="utf-8", errors="replace").splitlines():
            if line.lower().startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine() or "unknown CPU"


def why_no_gpu(tf) -> str:
    """The most likely reason TensorFlow sees no GPU, from what TensorFlow itself reports."""
    if not tf.test.is_built_with_cuda():
        system = platform.system()
        if system == "Darwin":
            return "this is macOS: TensorFlow has no CUDA build there (Apple silicon: tensorflow-metal)"
        if system == "Windows":
            return "native Windows has no GPU TensorFlow after 2.10 (use WSL2, or tensorflow<2.11)"
        return "this TensorFlow build has no CUDA support (a CPU-only wheel such as tensorflow-cpu)"
    return "TensorFlow is built with CUDA but found no usable NVIDIA GPU (no GPU, no driver, or missing CUDA libraries)"


def choose_device(prefer: str = "auto") -> DeviceChoice:
    """Pick ``/GPU:0`` or ``/CPU:0`` according to ``prefer`` ("auto", "cpu" or "gpu")."""
    prefer = check_device(prefer)
    from course_utils.tf_setup import quiet_tensorflow

    tf = quiet_tensorflow()
    gpus = tf.config.list_physical_devices("GPU")
    if prefer == "cpu":
        reason = "DEVICE='cpu' asked for the CPU" + (f" ({len(gpus)} GPU(s) left unused)" if gpus else "")
        return DeviceChoice("/CPU:0", "CPU", cpu_model(), reason)
    if gpus:
        details = tf.config.experimental.get_device_details(gpus[0])
        name = details.get("device_name", "GPU")
        cc = details.get("compute_capability")
        description = f"{name} (compute capability {cc[0]}.{cc[1]})" if cc else name
        return DeviceChoice("/GPU:0", "GPU", description, f"{len(gpus)} GPU(s) visible to TensorFlow; using the first")
    reason = why_no_gpu(tf)
    if prefer == "gpu":
        raise DeviceError(
            f"DEVICE='gpu' was asked for, but no GPU is visible: {reason}.",
            "Run `course doctor` for a diagnosis and the install command, "
            "or set DEVICE='auto' to run on the CPU.",
        )
    return DeviceChoice("/CPU:0", "CPU", cpu_model(), f"no GPU visible: {reason}")
