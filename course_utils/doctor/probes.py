"""Looking at a machine: this one (``probe``: its platform, Python, ``nvidia-smi``, ``nvcc``, TensorFlow and the live
checks) or one described by captured text (``describe``), as a ``model.Machine`` for ``diagnose``."""

from __future__ import annotations

import platform as _platform
import sys
from pathlib import Path

from course_utils.doctor.checks import live_checks
from course_utils.doctor.model import Machine, TensorFlowInfo
from course_utils.doctor.nvidia import parse_nvcc, parse_nvidia_smi, probe_nvcc, probe_nvidia_smi, windows_evidence
from course_utils.doctor.recommend import normalize_python
from course_utils.doctor.versions import check_platform
from course_utils.i18n import translator
from course_utils.tf_setup import quiet_tensorflow, startup_log

_ = translator("doctor")


def detect_platform() -> str:
    """This machine's platform: linux, wsl2, windows or macos."""
    if sys.platform == "darwin":
        return "macos"
    if sys.platform.startswith("win"):
        return "windows"
    text = _platform.release().lower()
    try:
        text += Path("/proc/version").read_text(encoding="utf-8", errors="replace").lower()
    except OSError:
        pass
    return "wsl2" if "microsoft" in text or "wsl" in text else "linux"


def guess_platform(smi_text: str | bytes | None) -> tuple[str, str]:
    """Guess the platform of captured nvidia-smi text: (platform, why).

    Native Windows when the capture shows it (``nvidia.windows_evidence``: the WDDM/TCC column, a
    ``C:\\`` path or prompt, the console banner, a cmd or PowerShell error); else Linux.
    """
    evidence = windows_evidence(smi_text)
    if evidence:
        return "windows", _("assumed native Windows from {evidence} (pass --platform to change it)").format(
            evidence=evidence
        )
    return "linux", _("assumed Linux (pass --platform wsl2, windows or macos to change it)")


def probe_tensorflow() -> TensorFlowInfo:
    """Import TensorFlow quietly (its start-up log captured) and read its build and devices."""

    try:
        tf = quiet_tensorflow()
    except Exception as error:  # noqa: BLE001 - a missing or broken install is a finding, not a crash
        return TensorFlowInfo(False, error=f"{type(error).__name__}: {error}")
    info = TensorFlowInfo(True, version=getattr(tf, "__version__", None), startup_log=startup_log())
    try:
        build = dict(tf.sysconfig.get_build_info())
        info.built_with_cuda = bool(tf.test.is_built_with_cuda())
        info.cuda_version = build.get("cuda_version")
        info.cudnn_version = build.get("cudnn_version")
        info.compute_capabilities = list(build.get("cuda_compute_capabilities", []) or [])
        for gpu in tf.config.list_physical_devices("GPU"):
            details = tf.config.experimental.get_device_details(gpu)
            cc = details.get("compute_capability")
            info.gpus.append(
                {"name": details.get("device_name", gpu.name), "compute_capability": f"{cc[0]}.{cc[1]}" if cc else None}
            )
    except Exception as error:  # noqa: BLE001
        info.error = f"{type(error).__name__}: {error}"
    return info


def probe(
    platform: str | None = None, python: str | None = None, *, tensorflow: bool = True, checks: bool = True
) -> Machine:
    """This machine: platform, Python, nvidia-smi, nvcc, (unless ``tensorflow=False``) TensorFlow and (unless
    ``checks=False``) the live checks."""
    where = check_platform(platform) if platform else detect_platform()
    smi = probe_nvidia_smi()
    gpu = smi.status == "ok" and bool(smi.gpus)
    return Machine(
        platform=where,
        python=normalize_python(python) or normalize_python(_platform.python_version()),
        smi=smi,
        nvcc=probe_nvcc(),
        tensorflow=probe_tensorflow() if tensorflow else None,
        live=True,
        checks=live_checks(where, gpu=gpu) if checks else None,
    )


def describe(
    platform: str | None = None,
    python: str | None = None,
    nvidia_smi: str | bytes | None = None,
    nvcc: str | bytes | None = None,
    tensorflow: TensorFlowInfo | None = None,
) -> Machine:
    """A machine described by captured ``nvidia-smi`` / ``nvcc --version`` text (either may be None)."""
    note = None
    if platform is None:
        platform, note = guess_platform(nvidia_smi)
    return Machine(
        platform=check_platform(platform),
        python=normalize_python(python),
        smi=parse_nvidia_smi(nvidia_smi) if nvidia_smi is not None else None,
        nvcc=parse_nvcc(nvcc) if nvcc is not None else None,
        tensorflow=tensorflow,
        platform_note=note,
    )
