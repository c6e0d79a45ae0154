"""Looking at a machine: this one (``probe``: its platform, Python, ``nvidia-smi``, ``nvcc``, TensorFlow and the live
checks) or one described by captured text (``describe``), as a ``model.Machine`` for ``diagnose``.

The probes run the tools (``probe_nvidia_smi``, ``probe_nvcc``) and hand their output to the parsers in
``course_utils.doctor.nvidia``, which read text only - the same text a student pastes.

The live checks look where real machines fail: libraries that do not load, WSL2's plumbing, kernels. Each returns
``Note(code, text)``s, which ``model.CHECK_FINDINGS`` (findings.json's ``checks``) turns into findings by their code.
The pip wheels' libraries are checked in ``libraries``, the rest here (``python_wheel_check``, ``wsl_checks``,
``kernel_checks``); every place a check looks is a parameter, so tests build the machine as a file tree;
``live_checks`` runs them all with this machine's paths.

On WSL2 the Windows NVIDIA driver provides CUDA to Linux through ``/dev/dxg`` and ``/usr/lib/wsl/lib/libcuda.so*``;
a Linux driver installed inside replaces that libcuda and breaks it (``wsl_checks``). A notebook fails with "No module
named tensorflow" when its kernel runs another Python than the one TensorFlow was installed into: a kernelspec that
names another environment's Python, a stale one whose Python is gone, or a bare ``python`` started by a ``jupyter``
from elsewhere on PATH (``kernel_checks``)."""

from __future__ import annotations

import importlib.util
import os
import platform as _platform
import re
import shutil
import subprocess
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from course_utils.core.i18n import translator
from course_utils.core.tf_setup import quiet_tensorflow, startup_log
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
from course_utils.doctor.versions import check_platform, load, parse_version, read_data

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
        rows, problems = parse_query_gpu(text, fields)
        if code == 0 and rows and not problems:
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


def is_wsl(proc_version: Path = Path("/proc/version"), environ: Mapping[str, str] | None = None) -> bool:
    """True inside WSL: /proc/version names Microsoft's kernel, or WSL_DISTRO_NAME is set."""
    environ = os.environ if environ is None else environ
    if environ.get("WSL_DISTRO_NAME"):
        return True
    try:
        return "microsoft" in Path(proc_version).read_text(encoding="utf-8", errors="replace").lower()
    except OSError:
        return False


_DRIVER_PACKAGES = [re.compile(shape) for shape in read_data("words")["linux_driver_packages"]["shapes"]]


def installed_driver_packages(dpkg_status: Path) -> list[str]:
    """Linux NVIDIA driver packages that dpkg lists as installed (``Status: install ok installed``)."""
    try:
        text = Path(dpkg_status).read_text(encoding="utf-8", errors="replace")
    except OSError:
        return []
    found = []
    for stanza in re.split(r"\n\s*\n", text):
        package = re.search(r"^Package:\s*(\S+)", stanza, re.M)
        status = re.search(r"^Status:\s*(.+)$", stanza, re.M)
        if package and status and status.group(1).strip().endswith(" installed"):
            if any(shape.match(package.group(1)) for shape in _DRIVER_PACKAGES):
                found.append(package.group(1))
    return found


def wsl_checks(
    *,
    dxg: Path = Path("/dev/dxg"),
    wsl_lib: Path = Path("/usr/lib/wsl/lib"),
    linux_lib_dirs: Sequence[Path] = (Path("/usr/lib/x86_64-linux-gnu"), Path("/usr/lib64"), Path("/usr/lib")),
    dpkg_status: Path = Path("/var/lib/dpkg/status"),
) -> list[Note]:
    """WSL2's GPU plumbing: the /dev/dxg device, the Windows driver's libcuda, and no Linux driver inside."""
    notes: list[Note] = []
    if not os.path.exists(dxg):
        text = _("{device} is missing: WSL2 exposes the GPU to Linux through this device, so no GPU is visible "
                 "(WSL 1, an old Windows build, or WSL not updated)")
        notes.append(Note("wsl2-no-dxg", text.format(device=dxg)))
    libcuda = sorted(Path(wsl_lib).glob("libcuda.so*"))
    if not libcuda:
        text = _("No libcuda.so* in {folder}: the Windows NVIDIA driver puts it there, so it is missing or too old")
        notes.append(Note("wsl2-no-libcuda", text.format(folder=wsl_lib)))
    wsl_real = Path(wsl_lib).resolve()
    inside = [str(path) for folder in linux_lib_dirs for path in sorted(Path(folder).glob("libcuda.so*"))
              if wsl_real not in path.resolve().parents]
    packages = installed_driver_packages(dpkg_status)
    if inside or packages:
        what = [_("packages {names}").format(names=", ".join(packages))] if packages else []
        what += [_("files {names}").format(names=", ".join(inside))] if inside else []
        text = _("A Linux NVIDIA driver is installed inside WSL2 ({found}): its libcuda replaces the one the Windows "
                 "driver provides")
        notes.append(Note("wsl2-linux-driver-installed", text.format(found="; ".join(what))))
    if not notes:
        text = _("WSL2's GPU plumbing is in place: {device}, {library} in {folder}, no Linux NVIDIA driver inside")
        notes.append(Note("wsl2-gpu-plumbing", text.format(device=dxg, library=libcuda[0].name, folder=wsl_lib)))
    return notes


_TENSORFLOW_FOLDERS = read_data("words")["tensorflow_folders"]["names"]  # globs, relative to an environment's prefix


def env_prefix(python: Path) -> Path:
    """The environment a Python executable belongs to: ``ENV/bin/python`` and ``ENV\\Scripts\\python.exe`` ->
    ``ENV``; ``ENV\\python.exe`` (conda on Windows) -> ``ENV``."""
    parent = Path(python).parent
    return parent.parent if parent.name.lower() in ("bin", "scripts") else parent


def _same_dir(a: Path, b: Path) -> bool:
    try:
        return os.path.samefile(a, b)
    except OSError:
        return os.path.normcase(os.path.abspath(a)) == os.path.normcase(os.path.abspath(b))


def has_tensorflow(prefix: Path, home: Path | None = None) -> bool | None:
    """Whether an environment has TensorFlow installed (its site-packages, or the user's for that Python);
    None when it cannot be told (a venv that also sees the system's packages)."""
    prefix = Path(prefix)
    if any(any(prefix.glob(p)) for p in _TENSORFLOW_FOLDERS):
        return True
    if home is not None and any((Path(home) / ".local/lib" / version_dir.name / "site-packages/tensorflow").is_dir()
                                for version_dir in prefix.glob("lib/python3*")):
        return True
    cfg = prefix / "pyvenv.cfg"
    text = cfg.read_text(encoding="utf-8", errors="replace") if cfg.is_file() else ""
    return None if re.search(r"include-system-site-packages\s*=\s*true", text, re.I) else False


def kernel_specs(kernel_dirs: Sequence[Path] | None = None) -> list[dict[str, Any]]:
    """Jupyter's kernelspecs (``jupyter_client``): ``[{"display_name", "language", "argv", "dir"}]``."""
    from jupyter_client.kernelspec import KernelSpecManager

    kwargs: dict[str, Any] = {"ensure_native_kernel": False}  # the in-process one is this Python by definition
    if kernel_dirs is not None:
        kwargs["kernel_dirs"] = [str(d) for d in kernel_dirs]
    specs = KernelSpecManager(**kwargs).get_all_specs()
    return [
        {
            "display_name": entry["spec"].get("display_name", name),
            "language": entry["spec"].get("language", ""),
            "argv": list(entry["spec"].get("argv") or []),
            "dir": entry["resource_dir"],
        }
        for name, entry in sorted(specs.items())
    ]


def script_python(script: Path) -> Path | None:
    """The Python a console script (``jupyter``) runs with, from its ``#!`` line."""
    try:
        with open(script, "rb") as fh:
            first = fh.readline(512).decode("utf-8", errors="replace").strip()
    except OSError:
        return None
    parts = first[2:].split() if first.startswith("#!") else []
    if not parts:
        return None
    if Path(parts[0]).name == "env" and len(parts) > 1:
        found = shutil.which(parts[1])
        return Path(found) if found else None
    return Path(parts[0])


_BARE_PYTHON = re.compile(r"^python(?:3(?:\.\d+)?)?(?:\.exe)?$")


def _kernel_note(spec: dict[str, Any], server_python: Path | None, here: Path, home: Path) -> Note | None:
    """What one Python kernelspec runs: this environment, a Python that is gone, or another environment without
    TensorFlow; None when there is nothing to say (or a bare ``python`` whose Jupyter cannot be told)."""
    first = spec["argv"][0]
    kernel = {"kernel": spec["display_name"], "dir": spec["dir"]}
    if _BARE_PYTHON.match(first):
        if server_python is None:
            return None  # Jupyter runs it with its own Python, which cannot be told from here
        python = server_python
        runs = _("The kernel '{kernel}' ({dir}) runs '{command}', i.e. the Python of the `jupyter` on PATH ({python})")
        runs = runs.format(**kernel, command=first, python=python)
    else:
        python = Path(first)
        runs = _("The kernel '{kernel}' ({dir}) runs {python}").format(**kernel, python=python)
        if not python.exists():
            text = _("The kernel '{kernel}' ({dir}) runs {python}, which does not exist")
            return Note("kernel-python-missing", text.format(**kernel, python=python))
    prefix_of = env_prefix(python)
    if _same_dir(prefix_of, here):
        return Note("kernel-uses-this-environment", _("{runs}: this environment").format(runs=runs))
    if has_tensorflow(prefix_of, home) is False:
        text = _("{runs}, in {prefix} - another environment, without TensorFlow: `import tensorflow` fails there")
        return Note("kernel-without-tensorflow", text.format(runs=runs, prefix=prefix_of))
    return None


def kernel_checks(
    kernel_dirs: Sequence[Path] | None = None,
    *,
    executable: str | None = None,
    prefix: str | None = None,
    path_env: str | None = None,
    home: Path | None = None,
    tensorflow_here: bool | None = None,
) -> list[Note]:
    """Do the Jupyter kernels run an environment that has TensorFlow?

    ``kernel_dirs``: where kernelspecs are (default: Jupyter's search path); ``executable``/``prefix``:
    the Python that runs the doctor (default: this one); ``path_env``: PATH, to find the ``jupyter``
    that starts kernels named only ``python``; ``home``: for user site-packages; ``tensorflow_here``:
    whether this environment has TensorFlow (default: import lookup).
    """
    if importlib.util.find_spec("jupyter_client") is None:
        return []
    executable = executable or sys.executable
    here = Path(prefix or sys.prefix)
    home = Path.home() if home is None else home
    if tensorflow_here is None:
        tensorflow_here = importlib.util.find_spec("tensorflow") is not None
    path_env = os.environ.get("PATH", "") if path_env is None else path_env
    beside = Path(executable).parent / "jupyter"
    jupyter = shutil.which("jupyter", path=path_env) or (str(beside) if beside.is_file() else None)
    server_python = script_python(Path(jupyter)) if jupyter else None
    notes: list[Note] = []
    elsewhere = env_prefix(server_python) if server_python is not None else None  # the `jupyter` on PATH's
    if elsewhere is not None and not _same_dir(elsewhere, here) and has_tensorflow(elsewhere, home) is False:
        text = _("`jupyter` on PATH ({jupyter}) runs from {prefix}, another environment without TensorFlow: a "
                 "kernel named just 'python3' started by it runs there, not here")
        notes.append(Note("jupyter-runs-elsewhere", text.format(jupyter=jupyter, prefix=elsewhere)))
    pythons = [spec for spec in kernel_specs(kernel_dirs) if spec["language"].lower() == "python" and spec["argv"]]
    notes += [note for spec in pythons if (note := _kernel_note(spec, server_python, here, home)) is not None]
    uses_here = any(note.code == "kernel-uses-this-environment" for note in notes)
    if tensorflow_here and not uses_here:
        text = _("No Jupyter kernel runs this environment ({prefix}), where TensorFlow is installed")
        notes.append(Note("no-kernel-for-this-environment", text.format(prefix=here)))
    return notes


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
    platform, note = guess_platform(nvidia_smi) if platform is None else (platform, None)
    return Machine(
        platform=check_platform(platform),
        python=normalize_python(python),
        smi=parse_nvidia_smi(nvidia_smi) if nvidia_smi is not None else None,
        nvcc=parse_nvcc(nvcc) if nvcc is not None else None,
        tensorflow=tensorflow,
        platform_note=note,
    )
