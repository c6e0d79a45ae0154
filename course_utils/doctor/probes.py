"""Looking at a machine: this one (``probe``: its platform, Python, ``nvidia-smi``, ``nvcc``, TensorFlow and the live
checks) or one described by captured text (``describe``), as a ``model.Machine`` for ``diagnose``.

The probes run the tools (``probe_nvidia_smi``, ``probe_nvcc``) and hand their output to the parsers in
``course_utils.doctor.nvidia``, which read text only - the same text a student pastes.

The live checks look where real machines fail: libraries that do not load, WSL2's plumbing, kernels. Each returns
``Note(code, text)``s, which ``model.CHECK_FINDINGS`` (findings.json's ``checks``) turns into findings by their code.
They live in a module each (``libraries``, ``wsl``, ``kernels``), plus ``python_wheel_check`` here; every place a
check looks is a parameter, so tests build the machine as a file tree; ``live_checks`` runs them all with this
machine's paths."""

from __future__ import annotations

import platform as _platform
import shutil
import subprocess
import sys
from pathlib import Path

from course_utils.core.i18n import translator
from course_utils.core.tf_setup import quiet_tensorflow, startup_log
from course_utils.doctor.kernels import kernel_checks
from course_utils.doctor.libraries import nvidia_library_checks
from course_utils.doctor.model import Machine, TensorFlowInfo
from course_utils.doctor.nvidia import (
    QUERY_FIELDS,
    NvccReport,
    SmiReport,
    gpus_from_query,
    memory_missing,
    parse_nvcc,
    parse_nvidia_smi,
    parse_query_gpu,
    windows_evidence,
)
from course_utils.doctor.recommend import normalize_python
from course_utils.doctor.texts import Note
from course_utils.doctor.versions import check_platform, load, parse_version
from course_utils.doctor.wsl import is_wsl, wsl_checks

_ = translator("doctor")

# Where WSL2 puts the Linux-side nvidia-smi (provided by the Windows driver); not always on PATH.
WSL_NVIDIA_SMI = Path("/usr/lib/wsl/lib/nvidia-smi")


def detect_platform() -> str:
    """This machine's platform: linux, wsl2, windows or macos."""
    if sys.platform == "darwin":
        return "macos"
    if sys.platform.startswith("win"):
        return "windows"
    return "wsl2" if is_wsl() else "linux"


def guess_platform(smi_text: str | bytes | None) -> tuple[str, str]:
    """Guess the platform of captured nvidia-smi text: (platform, why) - native Windows when the capture shows it
    (``nvidia.windows_evidence``), else Linux."""
    evidence = windows_evidence(smi_text)
    if evidence:
        return "windows", _("assumed native Windows from {evidence} (pass --platform to change it)").format(
            evidence=evidence)
    return "linux", _("assumed Linux (pass --platform wsl2, windows or macos to change it)")


def _run(command: list[str], timeout: float) -> tuple[int, str]:
    """Run a tool: its exit status and output (stdout, then stderr); -1 and the error when it cannot run."""
    try:
        done = subprocess.run(command, capture_output=True, text=True, errors="replace", timeout=timeout, check=False)
    except (OSError, subprocess.SubprocessError) as error:
        return -1, f"{type(error).__name__}: {error}"
    return done.returncode, (done.stdout or "") + (done.stderr or "")


def find_nvidia_smi() -> str | None:
    """The nvidia-smi executable: on PATH, or WSL2's /usr/lib/wsl/lib/nvidia-smi."""
    return shutil.which("nvidia-smi") or (str(WSL_NVIDIA_SMI) if WSL_NVIDIA_SMI.is_file() else None)


def probe_nvidia_smi(timeout: float = 30) -> SmiReport:
    """Run nvidia-smi on this machine: the table for driver and CUDA, --query-gpu for the GPUs."""
    exe = find_nvidia_smi()
    if exe is None:
        return SmiReport("missing", message=_("nvidia-smi is not on PATH"))
    code, text = _run([exe], timeout)
    report = parse_nvidia_smi(text)
    if code != 0 and report.status == "ok":
        report.problems.append(_("nvidia-smi exited with status {code}").format(code=code))
    if report.status != "ok":
        return report
    for fields in (QUERY_FIELDS, QUERY_FIELDS[:-1]):  # compute_cap is unknown to older drivers
        code, text = _run([exe, f"--query-gpu={','.join(fields)}", "--format=csv,noheader,nounits"], timeout)
        rows, problems = parse_query_gpu(text, fields) if code == 0 else ([], [text.strip()[:200]])
        if rows and not problems:
            table_memory = {memory_missing(gpu.index) for gpu in report.gpus}  # the table's, now read from here
            report.gpus = gpus_from_query(rows)
            report.problems = [p for p in report.problems if p not in table_memory]
            break
    return report


def probe_nvcc() -> NvccReport:
    """Run ``nvcc --version`` if a CUDA toolkit is on PATH."""
    exe = shutil.which("nvcc")
    if exe is None:
        problem = _("nvcc is not on PATH (no CUDA toolkit - TensorFlow does not need one)")
        return NvccReport("missing", problems=[problem])
    code, text = _run([exe, "--version"], 30)
    report = parse_nvcc(text)
    if code != 0 and report.status == "ok":
        report.problems.append(_("nvcc exited with status {code}").format(code=code))
    return report


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
            info.gpus.append({"name": details.get("device_name", gpu.name), "compute_capability": f"{cc[0]}.{cc[1]}"
                              if cc else None})
    except Exception as error:  # noqa: BLE001
        info.error = f"{type(error).__name__}: {error}"
    return info


def python_wheel_check(python: str | None = None) -> list[Note]:
    """Whether the course's TensorFlow (the newest build in versions.json) has a wheel for ``python``
    (default: this one)."""
    version = python or f"{sys.version_info.major}.{sys.version_info.minor}"
    build = load().newest("linux")
    if build is None or parse_version(version) is None or build.supports_python(version):
        return []
    text = _("TensorFlow {tensorflow}, the course's, has wheels for Python {low}-{high} only; this is Python {python}, "
             "so `pip install tensorflow` cannot install it here")
    fields = {"tensorflow": build.minor, "low": build.python_min, "high": build.python_max, "python": version}
    return [Note("no-tensorflow-wheel-for-python", text.format(**fields))]


def live_checks(platform: str, *, gpu: bool | None = None) -> list[Note]:
    """Every check, with this machine's paths (``platform``: linux, wsl2, windows or macos)."""
    notes = python_wheel_check()
    if platform in ("linux", "wsl2") and sys.platform.startswith("linux"):
        notes += nvidia_library_checks(gpu=gpu)
        if is_wsl():  # the machine itself, whatever --platform says
            notes += wsl_checks()
    try:
        notes += kernel_checks()
    except Exception as error:  # noqa: BLE001 - a broken Jupyter install is a finding, not the doctor's crash
        text = _("Jupyter's kernels could not be listed: {error}")
        notes.append(Note("kernels-unreadable", text.format(error=f"{type(error).__name__}: {error}")))
    return notes


def probe(platform: str | None = None, python: str | None = None) -> Machine:
    """This machine: platform, Python, nvidia-smi, nvcc, TensorFlow and the live checks."""
    where = check_platform(platform) if platform else detect_platform()
    smi = probe_nvidia_smi()
    gpu = smi.status == "ok" and bool(smi.gpus)
    return Machine(
        platform=where,
        python=normalize_python(python) or normalize_python(_platform.python_version()),
        smi=smi,
        nvcc=probe_nvcc(),
        tensorflow=probe_tensorflow(),
        live=True,
        checks=live_checks(where, gpu=gpu),
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
