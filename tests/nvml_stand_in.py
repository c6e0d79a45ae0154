"""A stand-in for nvidia-ml-py's ``pynvml``: the names the device monitor uses, on GPUs the test describes.

Put in place of the real module with ``monkeypatch.setitem(sys.modules, "pynvml", stand_in(...))``. Its error
classes mirror pynvml's: one ``NVMLError`` base and a subclass per NVML error code (pynvml builds them in
``_extractNVMLErrorsAsClasses``), each printing NVML's own words. ``test_device_monitor`` checks that the real
pynvml has every NVML name used here.
"""

from __future__ import annotations

from dataclasses import dataclass
from types import ModuleType, SimpleNamespace

MIB = 2**20
MEMORY_V2 = 0x02000028  # pynvml.nvmlMemory_v2: the version of nvmlMemory_v2_t


class NVMLError(Exception):
    words = "Unknown Error"

    def __str__(self) -> str:
        return self.words


class NVMLError_NotSupported(NVMLError):
    words = "Not Supported"


class NVMLError_LibraryNotFound(NVMLError):
    words = "NVML Shared Library Not Found"


class NVMLError_GpuIsLost(NVMLError):
    words = "GPU is lost"


@dataclass
class StandInGpu:
    """One GPU: its utilisation (%) and memory used (MiB); None: NVML_ERROR_NOT_SUPPORTED; an NVMLError: raised."""

    utilization: int | NVMLError | None = 0
    memory_mib: int | None = 0


def _read(value):
    if value is None:
        raise NVMLError_NotSupported()
    if isinstance(value, NVMLError):
        raise value
    return value


def stand_in(gpus: list[StandInGpu], *, init_error: NVMLError | None = None) -> ModuleType:
    """A ``pynvml`` whose NVML sees ``gpus`` (index = position), or whose ``nvmlInit`` raises ``init_error``.

    ``module.calls`` counts nvmlInit and nvmlShutdown; ``module.memory_versions`` holds the versions of
    nvmlMemory_t that nvmlDeviceGetMemoryInfo was asked for (None: version 1)."""
    module = ModuleType("pynvml")
    module.calls = {"nvmlInit": 0, "nvmlShutdown": 0}
    module.memory_versions = set()

    def init():
        module.calls["nvmlInit"] += 1
        if init_error is not None:
            raise init_error

    def shutdown():
        module.calls["nvmlShutdown"] += 1

    def memory_info(gpu, version=None):
        module.memory_versions.add(version)
        return SimpleNamespace(used=_read(None if gpu.memory_mib is None else gpu.memory_mib * MIB))

    module.__dict__.update(
        NVMLError=NVMLError, NVMLError_NotSupported=NVMLError_NotSupported,
        NVMLError_LibraryNotFound=NVMLError_LibraryNotFound, NVMLError_GpuIsLost=NVMLError_GpuIsLost,
        nvmlMemory_v2=MEMORY_V2, nvmlInit=init, nvmlShutdown=shutdown,
        nvmlDeviceGetCount=lambda: len(gpus), nvmlDeviceGetHandleByIndex=lambda index: gpus[index],
        nvmlDeviceGetUtilizationRates=lambda gpu: SimpleNamespace(gpu=_read(gpu.utilization)),
        nvmlDeviceGetMemoryInfo=memory_info,
    )
    return module

