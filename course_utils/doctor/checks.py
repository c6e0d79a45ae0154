"""Checks on a live machine, where real machines fail: libraries that do not load, WSL2's plumbing, kernels.

Each check returns ``Note(code, text)``s (``course_utils.doctor.recommend.Note``): the ``code`` is
what programs match on, and ``CHECK_FINDINGS`` turns a code into a finding's severity, fix and
report group - never the wording. Every place a check looks is a parameter, so tests build the
machine as a file tree:

- ``nvidia_library_checks``: the pip ``nvidia-*`` wheels' libraries (``site-packages/nvidia/*/lib``)
  are each loaded with ctypes in a child process (a crash there cannot take the doctor down), and a
  system CUDA on the loader's path that would be loaded instead of them is named
  (tensorflow/tensorflow#63362, #65842; ld.so(8): LD_LIBRARY_PATH comes before a library's RUNPATH).
- ``wsl_checks``: on WSL2, ``/dev/dxg`` and the Windows driver's ``/usr/lib/wsl/lib/libcuda.so*``
  are there, and no Linux NVIDIA driver is installed inside.
- ``kernel_checks``: the Jupyter kernels' Pythons, and whether TensorFlow is installed where they run.
- ``python_wheel_check``: whether the course's TensorFlow has a wheel for this Python at all.

``live_checks(platform, gpu=...)`` runs them all with this machine's paths. A note's text is in the
language at the time of the check (``COURSE_LANG``); a rule's fix and group are English, marked ``N_``,
and translated where a finding or the report shows them.
"""

from __future__ import annotations

import ctypes
import importlib.util
import os
import re
import shutil
import site
import sys
from collections.abc import Iterable, Mapping, Sequence
from glob import glob
from pathlib import Path
from typing import Any, NamedTuple

from course_utils.doctor.recommend import Note
from course_utils.doctor.texts import N_
from course_utils.doctor.versions import load, parse_version
from course_utils.errors import ChildError
from course_utils.i18n import translator
from course_utils.system.child import run_python

_ = translator("doctor")


class CheckRule(NamedTuple):
    """How a check's note becomes a finding: severity, fix and report group. The fix's ``{python}`` is this
    Python, ``{wsl_driver_min}`` and ``{wsl_windows_build}`` come from versions.json's "wsl2" rule; fix and group
    are English (translated where they are shown)."""

    severity: str
    fix: str
    group: str


# The groups' names are English (the JSON's "group"); the report shows them translated.
GROUP_LIBRARIES = N_("NVIDIA libraries from pip")
GROUP_WSL = N_("WSL2")
GROUP_KERNELS = N_("Jupyter kernels")
GROUP_PYTHON = N_("Python")

# The fixes are English templates, marked N_ and translated where a finding is made (doctor.check_findings).
CHECK_FINDINGS: dict[str, CheckRule] = {
    "nvidia-libs-load": CheckRule("info", N_("Nothing to do."), GROUP_LIBRARIES),
    "nvidia-lib-fails-to-load": CheckRule(
        "error",
        N_(
            "Reinstall the wheel it comes from: `{python} -m pip install --force-reinstall --no-deps PACKAGE` for "
            "the package named above. If the error names another library, that one is missing or broken: install "
            "or reinstall it the same way (see https://www.tensorflow.org/install/pip)."
        ),
        GROUP_LIBRARIES,
    ),
    "nvidia-lib-load-crashed": CheckRule(
        "error",
        N_(
            "Reinstall the wheel it comes from: `{python} -m pip install --force-reinstall --no-deps PACKAGE` for "
            "the package named above."
        ),
        GROUP_LIBRARIES,
    ),
    "nvidia-libs-not-installed": CheckRule(
        "warning",
        N_(
            '`{python} -m pip install "tensorflow[and-cuda]"` (Linux, WSL2): it brings CUDA and cuDNN as pip '
            "wheels (https://www.tensorflow.org/install/pip)."
        ),
        GROUP_LIBRARIES,
    ),
    "system-cuda-shadows-pip": CheckRule(
        "warning",
        N_(
            "Take the system CUDA folders out of LD_LIBRARY_PATH before starting Python or Jupyter (`unset "
            "LD_LIBRARY_PATH`, or remove the line that sets it in ~/.bashrc): the pip wheels bring every library "
            "TensorFlow needs (https://man7.org/linux/man-pages/man8/ld.so.8.html; tensorflow/tensorflow#63362)."
        ),
        GROUP_LIBRARIES,
    ),
    "system-cuda-on-library-path": CheckRule(
        "info",
        N_(
            "Nothing to do while the pip libraries load. If TensorFlow reports a library it cannot load, make sure "
            "the pip wheels are installed in this environment, so these are not needed."
        ),
        GROUP_LIBRARIES,
    ),
    "wsl2-gpu-plumbing": CheckRule("info", N_("Nothing to do."), GROUP_WSL),
    "wsl2-no-dxg": CheckRule(
        "error",
        N_(
            "In Windows: `wsl --update`, and `wsl -l -v` must show VERSION 2 for this distribution (`wsl "
            "--set-version NAME 2` if not); Windows 10 21H2 (build {wsl_windows_build}) or newer; then `wsl "
            "--shutdown` and start it again (https://docs.nvidia.com/cuda/wsl-user-guide/index.html)."
        ),
        GROUP_WSL,
    ),
    "wsl2-no-libcuda": CheckRule(
        "error",
        N_(
            "Install or update the NVIDIA driver in Windows (not in WSL) - the TensorFlow pip guide asks for "
            "{wsl_driver_min} or newer - then `wsl --shutdown` in Windows and start WSL again "
            "(https://docs.nvidia.com/cuda/wsl-user-guide/index.html)."
        ),
        GROUP_WSL,
    ),
    "wsl2-linux-driver-installed": CheckRule(
        "error",
        N_(
            "Remove the Linux NVIDIA driver from WSL2 (e.g. `sudo apt-get remove --purge PACKAGE` for the packages "
            "named above, or delete the libcuda files named above), then `wsl --shutdown` in Windows: the Windows "
            "driver provides CUDA to WSL2, and a Linux one inside breaks it "
            "(https://docs.nvidia.com/cuda/wsl-user-guide/index.html)."
        ),
        GROUP_WSL,
    ),
    "kernel-uses-this-environment": CheckRule("info", N_("Nothing to do."), GROUP_KERNELS),
    "kernel-python-missing": CheckRule(
        "warning",
        N_(
            "Remove the stale kernel (`jupyter kernelspec remove NAME`) or register it again from the environment "
            "it should use (https://ipython.readthedocs.io/en/stable/install/kernel_install.html"
            "#kernels-for-different-environments)."
        ),
        GROUP_KERNELS,
    ),
    "kernel-without-tensorflow": CheckRule(
        "warning",
        N_(
            "In Jupyter pick a kernel that runs the environment with TensorFlow (Kernel > Change Kernel). To add "
            'this one: `{python} -m ipykernel install --user --name course-tf --display-name "Python (TensorFlow)"` '
            "(https://ipython.readthedocs.io/en/stable/install/kernel_install.html"
            "#kernels-for-different-environments)."
        ),
        GROUP_KERNELS,
    ),
    "jupyter-runs-elsewhere": CheckRule(
        "warning",
        N_(
            "Start Jupyter from this environment (`{python} -m jupyter lab`), or register this environment as a "
            'kernel: `{python} -m ipykernel install --user --name course-tf --display-name "Python (TensorFlow)"` '
            "and pick it in Jupyter (https://ipython.readthedocs.io/en/stable/install/kernel_install.html"
            "#kernels-for-different-environments)."
        ),
        GROUP_KERNELS,
    ),
    "no-kernel-for-this-environment": CheckRule(
        "info",
        N_(
            'Register it: `{python} -m ipykernel install --user --name course-tf --display-name "Python '
            '(TensorFlow)"`, then pick that kernel in Jupyter (https://ipython.readthedocs.io/en/stable/install/'
            "kernel_install.html#kernels-for-different-environments)."
        ),
        GROUP_KERNELS,
    ),
    "kernels-unreadable": CheckRule(
        "info", N_("Run `jupyter kernelspec list` to see what is wrong with the kernelspecs."), GROUP_KERNELS
    ),
    "no-tensorflow-wheel-for-python": CheckRule(
        "error",
        N_(
            "Create the environment with one of those Pythons (e.g. `python3.12 -m venv .venv`, or `uv python "
            "install 3.12`), then install again (https://www.tensorflow.org/install/pip)."
        ),
        GROUP_PYTHON,
    ),
}
GROUPS = (GROUP_PYTHON, GROUP_LIBRARIES, GROUP_WSL, GROUP_KERNELS)


# --------------------------------------------------------------------------- pip NVIDIA libraries

# The wheels' folders under site-packages/nvidia, in the order their libraries depend on each other.
LIBRARY_ORDER = (
    "cuda_runtime",
    "nvjitlink",
    "cuda_nvrtc",
    "cublas",
    "cufft",
    "curand",
    "cusparse",
    "cusolver",
    "cudnn",
    "nccl",
    "cuda_cupti",
)
_SONAME = re.compile(r"^(?P<stem>lib[\w+-]+?)\.so(?:\.(?P<major>\d+)(?:\.[\d.]+)?)?$")
CUDA_STEMS = (
    "libcudart",
    "libcublas",
    "libcublasLt",
    "libcufft",
    "libcurand",
    "libcusolver",
    "libcusparse",
    "libcudnn",
    "libnccl",
    "libnvJitLink",
    "libnvrtc",
    "libcupti",
)


class PipLibrary(NamedTuple):
    """One shared library of a pip NVIDIA wheel: its file, the wheel's folder and (if known) its package."""

    path: Path
    folder: str  # "cudnn" for site-packages/nvidia/cudnn/lib
    package: str | None  # "nvidia-cudnn-cu12", read from the wheel's RECORD


def default_site_dirs() -> list[Path]:
    """This Python's site-packages folders (where pip put the nvidia wheels)."""

    dirs = [*site.getsitepackages(), site.getusersitepackages()]
    dirs += [p for p in sys.path if p.endswith(("site-packages", "dist-packages"))]
    seen: list[Path] = []
    for d in dirs:
        path = Path(d)
        if path.is_dir() and path not in seen:
            seen.append(path)
    return seen


def _owners(site_dir: Path) -> dict[str, str]:
    """``{"nvidia/cudnn/lib/libcudnn.so.9": "nvidia-cudnn-cu12"}`` from the nvidia wheels' RECORD files."""
    owners: dict[str, str] = {}
    for record in site_dir.glob("nvidia_*.dist-info/RECORD"):
        name = record.parent.name.split("-")[0].replace("_", "-")
        try:
            lines = record.read_text(encoding="utf-8", errors="replace").splitlines()
        except OSError:
            continue
        for line in lines:
            owners[line.split(",")[0]] = name
    return owners


def find_pip_libraries(site_dirs: Iterable[Path]) -> list[PipLibrary]:
    """The shared libraries of the pip NVIDIA wheels (``nvidia/*/lib/*.so*``), each file once, in load order."""
    found: list[PipLibrary] = []
    seen: set[Path] = set()
    for site_dir in site_dirs:
        site_dir = Path(site_dir)
        owners = _owners(site_dir)
        for path in sorted(site_dir.glob("nvidia/*/lib/*.so*")):
            if not _SONAME.match(path.name) or not path.is_file():
                continue
            real = path.resolve()
            if real in seen:
                continue
            seen.add(real)
            folder = path.parent.parent.name
            found.append(PipLibrary(path, folder, owners.get(path.relative_to(site_dir).as_posix())))
    rank = {name: i for i, name in enumerate(LIBRARY_ORDER)}
    return sorted(found, key=lambda lib: (rank.get(lib.folder, len(rank)), lib.folder, lib.path.name))


def _load_libraries(payload: dict[str, Any]) -> list[dict[str, Any]]:
    """Child side: load each library with ctypes (RTLD_GLOBAL, so later ones find earlier ones); a second
    pass retries the failures once all others are loaded. ``[{"path", "ok", "error"}]`` in the given order."""
    results = {path: "" for path in payload["paths"]}
    for _ in range(2):
        for path, error in results.items():
            if error == "ok":
                continue
            try:
                ctypes.CDLL(path, mode=ctypes.RTLD_GLOBAL)
                results[path] = "ok"
            except OSError as exc:
                results[path] = str(exc) or type(exc).__name__
    return [{"path": p, "ok": e == "ok", "error": None if e == "ok" else e} for p, e in results.items()]


def load_libraries(paths: Sequence[str], *, timeout_s: float = 120) -> list[dict[str, Any]]:
    """Load ``paths`` in a child process; a crash is reported per library, never raised.

    Returns ``[{"path", "ok", "error", "crashed"}]``. If the child crashes, each library is loaded
    in a child of its own, so the one that crashes is named.
    """
    what = "The library-loading check"
    target = "course_utils.doctor.checks:_load_libraries"
    try:
        run = run_python(target, {"paths": list(paths)}, timeout_s=timeout_s, what=what, name="load-libraries")
        return [{**r, "crashed": False} for r in run.value]
    except ChildError:
        pass
    out = []
    for path in paths:
        try:
            run = run_python(target, {"paths": [path]}, timeout_s=timeout_s, what=what, name="load-library")
            out.append({**run.value[0], "crashed": False})
        except ChildError as error:
            ended = _("the process ended by {how}").format(how=error.ended)
            out.append({"path": path, "ok": False, "error": ended, "crashed": True})
    return out


def _soname(name: str) -> tuple[str, str | None] | None:
    found = _SONAME.match(name)
    return (found.group("stem"), found.group("major")) if found else None


def loader_conf_dirs(conf: Path) -> list[Path]:
    """The folders an ``ld.so.conf`` lists, following its ``include`` lines (relative patterns: next to it)."""
    dirs: list[Path] = []

    def read(path: Path, depth: int) -> None:
        try:
            lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
        except OSError:
            return
        for line in lines:
            line = line.split("#", 1)[0].strip()
            if not line:
                continue
            if line.startswith("include ") and depth < 4:
                pattern = line[len("include ") :].strip()
                pattern = pattern if os.path.isabs(pattern) else str(path.parent / pattern)
                for included in sorted(glob(pattern)):
                    read(Path(included), depth + 1)
            elif not line.startswith(("include", "hwcap")) and Path(line) not in dirs:
                dirs.append(Path(line))

    read(Path(conf), 0)
    return dirs


def _cuda_files(folder: Path) -> dict[tuple[str, str | None], str]:
    """``{(stem, major): file name}`` for the CUDA libraries in a folder."""
    out: dict[tuple[str, str | None], str] = {}
    try:
        names = sorted(os.listdir(folder))
    except OSError:
        return out
    for name in names:
        key = _soname(name)
        if key and key[0] in CUDA_STEMS and key[1] is not None:
            out.setdefault(key, name)
    return out


def system_cuda_notes(
    libraries: Sequence[PipLibrary], ld_library_path: str | None, conf_dirs: Sequence[Path]
) -> list[Note]:
    """A system CUDA on the loader's path: the same libraries as the pip wheels' (which win) or other versions."""
    pip = {}
    for lib in libraries:
        key = _soname(lib.path.name)
        if key and key[1] is not None:
            pip.setdefault(key, lib)
    pip_dirs = {lib.path.parent.resolve() for lib in libraries}
    notes: list[Note] = []
    env_dirs = [Path(p) for p in (ld_library_path or "").split(os.pathsep) if p]
    places = [(d, "LD_LIBRARY_PATH") for d in env_dirs]
    places += [(d, _("the loader's configuration (ld.so.conf)")) for d in conf_dirs]
    others: dict[str, list[str]] = {}
    for folder, where in places:
        if not folder.is_dir() or folder.resolve() in pip_dirs:
            continue
        for (stem, major), name in _cuda_files(folder).items():
            lib = pip.get((stem, major))
            if lib is not None and where == "LD_LIBRARY_PATH":
                notes.append(
                    Note(
                        "system-cuda-shadows-pip",
                        _(
                            "LD_LIBRARY_PATH's {folder} holds {name}, the same library as the pip wheel's {pip}: the "
                            "loader searches LD_LIBRARY_PATH before the folders TensorFlow's own libraries name, so "
                            "TensorFlow loads the system copy"
                        ).format(folder=folder, name=name, pip=lib.path),
                    )
                )
            elif lib is not None:
                others.setdefault(f"{folder} ({where})", []).append(
                    _("{name} (used only if TensorFlow does not find the pip copy, as happened with TF 2.16.1)").format(
                        name=name
                    )
                )
            elif any(k[0] == stem for k in pip):
                wanted = sorted(k[1] for k in pip if k[0] == stem and k[1])
                others.setdefault(f"{folder} ({where})", []).append(
                    _("{name} (another major version than the pip wheels' {library}: not used)").format(
                        name=name, library=f"{stem}.so.{'/'.join(wanted)}"
                    )
                )
    for place, names in others.items():
        text = _("A system CUDA is on the loader's path: {place}: {files}").format(place=place, files=", ".join(names))
        notes.append(Note("system-cuda-on-library-path", text))
    return notes


def nvidia_library_checks(
    site_dirs: Iterable[Path] | None = None,
    *,
    ld_library_path: str | None = None,
    ld_so_conf: Path | None = Path("/etc/ld.so.conf"),
    gpu: bool | None = None,
    timeout_s: float = 120,
) -> list[Note]:
    """Do the pip NVIDIA wheels' libraries load, and does a system CUDA on the loader's path get in their way?

    ``site_dirs``: where to look (default: this Python's site-packages); ``ld_library_path``: the
    variable's value (default: this process's); ``ld_so_conf``: the loader's configuration (None: not read);
    ``gpu``: whether an NVIDIA GPU is present (only then is a missing wheel worth a note).
    """
    libraries = find_pip_libraries(default_site_dirs() if site_dirs is None else site_dirs)
    if ld_library_path is None:
        ld_library_path = os.environ.get("LD_LIBRARY_PATH", "")
    if not libraries:
        if gpu:
            return [
                Note(
                    "nvidia-libs-not-installed",
                    _(
                        "No NVIDIA libraries from pip wheels in this environment (site-packages/nvidia/*/lib): "
                        "TensorFlow finds CUDA and cuDNN only if they are installed on the system"
                    ),
                )
            ]
        return []
    notes: list[Note] = []
    results = load_libraries([str(lib.path) for lib in libraries], timeout_s=timeout_s)
    by_path = {r["path"]: r for r in results}
    failed = []
    for lib in libraries:
        result = by_path.get(str(lib.path), {"ok": False, "error": _("not tried"), "crashed": False})
        if result["ok"]:
            continue
        failed.append(lib)
        if lib.package:
            where = _("{path}, package {package}").format(path=lib.path, package=lib.package)
        else:
            where = _("{path}, wheel folder {folder}").format(path=lib.path, folder=f"nvidia/{lib.folder}")
        if result.get("crashed"):
            text = _("Loading {name} ({where}) crashed the test process ({error})")
            notes.append(
                Note("nvidia-lib-load-crashed", text.format(name=lib.path.name, where=where, error=result["error"]))
            )
        else:
            text = _("{name} ({where}) does not load: {error}")
            notes.append(
                Note("nvidia-lib-fails-to-load", text.format(name=lib.path.name, where=where, error=result["error"]))
            )
    if not failed:
        folders = sorted({lib.folder for lib in libraries})
        notes.append(
            Note(
                "nvidia-libs-load",
                _("All {count} NVIDIA libraries from pip wheels load ({folders})").format(
                    count=len(libraries), folders=", ".join(folders)
                ),
            )
        )
    conf_dirs = loader_conf_dirs(ld_so_conf) if ld_so_conf is not None else []
    return notes + system_cuda_notes(libraries, ld_library_path, conf_dirs)


# --------------------------------------------------------------------------- WSL2


def is_wsl(proc_version: Path = Path("/proc/version"), environ: Mapping[str, str] | None = None) -> bool:
    """True inside WSL: /proc/version names Microsoft's kernel, or WSL_DISTRO_NAME is set."""
    environ = os.environ if environ is None else environ
    if environ.get("WSL_DISTRO_NAME"):
        return True
    try:
        return "microsoft" in Path(proc_version).read_text(encoding="utf-8", errors="replace").lower()
    except OSError:
        return False


# Debian/Ubuntu packages that install a Linux NVIDIA driver (kernel module or its libcuda).
_DRIVER_PACKAGE = re.compile(r"^(?:nvidia-driver-\S+|nvidia-dkms-\S+|libnvidia-compute-\S+|cuda-drivers(?:-\S+)?)$")


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
            if _DRIVER_PACKAGE.match(package.group(1)):
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
        notes.append(
            Note(
                "wsl2-no-dxg",
                _(
                    "{device} is missing: WSL2 exposes the GPU to Linux through this device, so no GPU is visible "
                    "(WSL 1, an old Windows build, or WSL not updated)"
                ).format(device=dxg),
            )
        )
    libcuda = sorted(Path(wsl_lib).glob("libcuda.so*"))
    if not libcuda:
        notes.append(
            Note(
                "wsl2-no-libcuda",
                _(
                    "No libcuda.so* in {folder}: the Windows NVIDIA driver puts it there, so it is missing or too old"
                ).format(folder=wsl_lib),
            )
        )
    wsl_real = Path(wsl_lib).resolve()
    inside = []
    for folder in linux_lib_dirs:
        for path in sorted(Path(folder).glob("libcuda.so*")):
            real = path.resolve()
            if wsl_real not in real.parents and real.parent != wsl_real:
                inside.append(str(path))
    packages = installed_driver_packages(dpkg_status)
    if inside or packages:
        what = []
        if packages:
            what.append(_("packages {names}").format(names=", ".join(packages)))
        if inside:
            what.append(_("files {names}").format(names=", ".join(inside)))
        notes.append(
            Note(
                "wsl2-linux-driver-installed",
                _(
                    "A Linux NVIDIA driver is installed inside WSL2 ({found}): its libcuda replaces the one the "
                    "Windows driver provides"
                ).format(found="; ".join(what)),
            )
        )
    if not notes:
        notes.append(
            Note(
                "wsl2-gpu-plumbing",
                _(
                    "WSL2's GPU plumbing is in place: {device}, {library} in {folder}, no Linux NVIDIA driver inside"
                ).format(device=dxg, library=libcuda[0].name, folder=wsl_lib),
            )
        )
    return notes


# --------------------------------------------------------------------------- Jupyter kernels


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
    patterns = [
        "lib/python3*/site-packages/tensorflow",
        "lib64/python3*/site-packages/tensorflow",
        "Lib/site-packages/tensorflow",
        "lib/site-packages/tensorflow",
    ]
    if any(any(prefix.glob(p)) for p in patterns):
        return True
    if home is not None:
        for version_dir in prefix.glob("lib/python3*"):
            if (Path(home) / ".local/lib" / version_dir.name / "site-packages/tensorflow").is_dir():
                return True
    cfg = prefix / "pyvenv.cfg"
    text = cfg.read_text(encoding="utf-8", errors="replace") if cfg.is_file() else ""
    if re.search(r"include-system-site-packages\s*=\s*true", text, re.I):
        return None
    return False


def kernel_specs(kernel_dirs: Sequence[Path] | None = None) -> list[dict[str, Any]]:
    """Jupyter's kernelspecs (``jupyter_client``): ``[{"name", "display_name", "language", "argv", "dir"}]``."""
    from jupyter_client.kernelspec import KernelSpecManager

    kwargs: dict[str, Any] = {"ensure_native_kernel": False}  # the in-process one is this Python by definition
    if kernel_dirs is not None:
        kwargs["kernel_dirs"] = [str(d) for d in kernel_dirs]
    specs = KernelSpecManager(**kwargs).get_all_specs()
    return [
        {
            "name": name,
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
    if not first.startswith("#!"):
        return None
    parts = first[2:].split()
    if not parts:
        return None
    if Path(parts[0]).name == "env" and len(parts) > 1:
        found = shutil.which(parts[1])
        return Path(found) if found else None
    return Path(parts[0])


_BARE_PYTHON = re.compile(r"^python(?:3(?:\.\d+)?)?(?:\.exe)?$")


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
    if server_python is not None and not _same_dir(env_prefix(server_python), here):
        server_tf = has_tensorflow(env_prefix(server_python), home)
        if server_tf is False:
            notes.append(
                Note(
                    "jupyter-runs-elsewhere",
                    _(
                        "`jupyter` on PATH ({jupyter}) runs from {prefix}, another environment without "
                        "TensorFlow: a kernel named just 'python3' started by it runs there, not here"
                    ).format(jupyter=jupyter, prefix=env_prefix(server_python)),
                )
            )
    uses_here = False
    for spec in kernel_specs(kernel_dirs):
        if spec["language"].lower() != "python" or not spec["argv"]:
            continue
        first = spec["argv"][0]
        kernel = {"kernel": spec["display_name"], "dir": spec["dir"]}
        if _BARE_PYTHON.match(first):
            if server_python is None:
                continue  # Jupyter runs it with its own Python, which cannot be told from here
            python = server_python
            runs = _(
                "The kernel '{kernel}' ({dir}) runs '{command}', i.e. the Python of the `jupyter` on PATH ({python})"
            )
            runs = runs.format(**kernel, command=first, python=python)
        else:
            python = Path(first)
            runs = _("The kernel '{kernel}' ({dir}) runs {python}").format(**kernel, python=python)
            if not python.exists():
                text = _("The kernel '{kernel}' ({dir}) runs {python}, which does not exist")
                notes.append(Note("kernel-python-missing", text.format(**kernel, python=python)))
                continue
        prefix_of = env_prefix(python)
        if _same_dir(prefix_of, here):
            uses_here = True
            notes.append(Note("kernel-uses-this-environment", _("{runs}: this environment").format(runs=runs)))
            continue
        if has_tensorflow(prefix_of, home) is False:
            notes.append(
                Note(
                    "kernel-without-tensorflow",
                    _(
                        "{runs}, in {prefix} - another environment, without TensorFlow: `import tensorflow` fails there"
                    ).format(runs=runs, prefix=prefix_of),
                )
            )
    if tensorflow_here and not uses_here:
        notes.append(
            Note(
                "no-kernel-for-this-environment",
                _("No Jupyter kernel runs this environment ({prefix}), where TensorFlow is installed").format(
                    prefix=here
                ),
            )
        )
    return notes


# --------------------------------------------------------------------------- Python


def python_wheel_check(python: str | None = None) -> list[Note]:
    """Whether the course's TensorFlow (the newest build in versions.json) has a wheel for ``python``
    (default: this one)."""
    version = python or f"{sys.version_info.major}.{sys.version_info.minor}"
    build = load().newest("linux")
    if build is None or parse_version(version) is None or build.supports_python(version):
        return []
    return [
        Note(
            "no-tensorflow-wheel-for-python",
            _(
                "TensorFlow {tensorflow}, the course's, has wheels for Python {low}-{high} only; this is Python "
                "{python}, so `pip install tensorflow` cannot install it here"
            ).format(tensorflow=build.minor, low=build.python_min, high=build.python_max, python=version),
        )
    ]


# --------------------------------------------------------------------------- all of them


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
        notes.append(
            Note(
                "kernels-unreadable",
                _("Jupyter's kernels could not be listed: {error}").format(error=f"{type(error).__name__}: {error}"),
            )
        )
    return notes
