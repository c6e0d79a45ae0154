"""Do the pip NVIDIA wheels' libraries load, and does a system CUDA on the loader's path get in their way?

TensorFlow on Linux and WSL2 takes CUDA and cuDNN from the ``nvidia-*`` pip wheels
(``site-packages/nvidia/*/lib``). Each of their libraries is loaded with ctypes in a child process (a crash
there cannot take the doctor down), and a system CUDA on the loader's path that would be loaded instead is
named (tensorflow/tensorflow#63362, #65842; ld.so(8): LD_LIBRARY_PATH comes before a library's RUNPATH).
"""

from __future__ import annotations

import ctypes
import os
import re
import site
import sys
from collections.abc import Iterable, Sequence
from glob import glob
from pathlib import Path
from typing import Any, NamedTuple

from course_utils.core.errors import ChildError
from course_utils.core.i18n import translator
from course_utils.doctor.texts import Note
from course_utils.doctor.versions import read_data

_ = translator("doctor")

_WHEELS = read_data("words")["pip_nvidia"]  # the wheels' folders in load order, the CUDA libraries' names
_SONAME = re.compile(r"^(?P<stem>lib[\w+-]+?)\.so(?:\.(?P<major>\d+)(?:\.[\d.]+)?)?$")


class PipLibrary(NamedTuple):
    """One shared library of a pip NVIDIA wheel: its file, the wheel's folder and (if known) its package."""

    path: Path
    folder: str  # "cudnn" for site-packages/nvidia/cudnn/lib
    package: str | None  # "nvidia-cudnn-cu12", read from the wheel's RECORD


def default_site_dirs() -> list[Path]:
    """This Python's site-packages folders (where pip put the nvidia wheels), each once."""
    dirs = [*site.getsitepackages(), site.getusersitepackages()]
    dirs += [p for p in sys.path if p.endswith(("site-packages", "dist-packages"))]
    return list(dict.fromkeys(path for path in map(Path, dirs) if path.is_dir()))


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
    found: dict[Path, PipLibrary] = {}  # by the file it is, each once
    for site_dir in map(Path, site_dirs):
        owners = _owners(site_dir)
        for path in sorted(site_dir.glob("nvidia/*/lib/*.so*")):
            if _SONAME.match(path.name) and path.is_file():
                owner = owners.get(path.relative_to(site_dir).as_posix())
                found.setdefault(path.resolve(), PipLibrary(path, path.parent.parent.name, owner))
    rank = {name: i for i, name in enumerate(_WHEELS["folders"])}
    return sorted(found.values(), key=lambda lib: (rank.get(lib.folder, len(rank)), lib.folder, lib.path.name))


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
    from course_utils.core.child import run_python  # lazy: needs psutil, which the website's doctor (Pyodide) lacks

    what = "The library-loading check"
    target = "course_utils.doctor.libraries:_load_libraries"
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


def _soname(name: str) -> tuple[str, str] | None:
    """``("libcudnn", "9")`` for ``libcudnn.so.9.1.0``; None for a name without a major version (``libcudnn.so``)."""
    found = _SONAME.match(name)
    return (found.group("stem"), found.group("major")) if found and found.group("major") else None


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


def _cuda_files(folder: Path) -> dict[tuple[str, str], str]:
    """``{(stem, major): file name}`` for the CUDA libraries in a folder."""
    out: dict[tuple[str, str], str] = {}
    try:
        names = sorted(os.listdir(folder))
    except OSError:
        return out
    for name in names:
        key = _soname(name)
        if key and key[0] in _WHEELS["cuda_libraries"]:
            out.setdefault(key, name)
    return out


def system_cuda_notes(
    libraries: Sequence[PipLibrary], ld_library_path: str, conf_dirs: Sequence[Path]
) -> list[Note]:
    """A system CUDA on the loader's path: the same libraries as the pip wheels' (which win) or other versions."""
    pip = {}
    for lib in libraries:
        if key := _soname(lib.path.name):
            pip.setdefault(key, lib)
    pip_dirs = {lib.path.parent.resolve() for lib in libraries}
    notes: list[Note] = []
    places = [(Path(p), "LD_LIBRARY_PATH") for p in ld_library_path.split(os.pathsep) if p]
    places += [(d, _("the loader's configuration (ld.so.conf)")) for d in conf_dirs]
    others: dict[str, list[str]] = {}
    for folder, where in places:
        if not folder.is_dir() or folder.resolve() in pip_dirs:
            continue
        for (stem, major), name in _cuda_files(folder).items():
            lib = pip.get((stem, major))
            if lib is not None and where == "LD_LIBRARY_PATH":
                text = _("LD_LIBRARY_PATH's {folder} holds {name}, the same library as the pip wheel's {pip}: the "
                         "loader searches LD_LIBRARY_PATH before the folders TensorFlow's own libraries name, so "
                         "TensorFlow loads the system copy")
                notes.append(Note("system-cuda-shadows-pip", text.format(folder=folder, name=name, pip=lib.path)))
            elif lib is not None:
                text = _("{name} (used only if TensorFlow does not find the pip copy, as happened with TF 2.16.1)")
                others.setdefault(f"{folder} ({where})", []).append(text.format(name=name))
            elif any(k[0] == stem for k in pip):
                wanted = f"{stem}.so." + "/".join(sorted(k[1] for k in pip if k[0] == stem))
                text = _("{name} (another major version than the pip wheels' {library}: not used)")
                others.setdefault(f"{folder} ({where})", []).append(text.format(name=name, library=wanted))
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
        text = _("No NVIDIA libraries from pip wheels in this environment (site-packages/nvidia/*/lib): TensorFlow "
                 "finds CUDA and cuDNN only if they are installed on the system")
        return [Note("nvidia-libs-not-installed", text)] if gpu else []
    notes: list[Note] = []
    for lib, result in zip(libraries, load_libraries([str(lib.path) for lib in libraries]), strict=True):
        if result["ok"]:
            continue
        if lib.package:
            where = _("{path}, package {package}").format(path=lib.path, package=lib.package)
        else:
            where = _("{path}, wheel folder {folder}").format(path=lib.path, folder=f"nvidia/{lib.folder}")
        fields = {"name": lib.path.name, "where": where, "error": result["error"]}
        if result["crashed"]:
            text = _("Loading {name} ({where}) crashed the test process ({error})")
            notes.append(Note("nvidia-lib-load-crashed", text.format(**fields)))
        else:
            text = _("{name} ({where}) does not load: {error}")
            notes.append(Note("nvidia-lib-fails-to-load", text.format(**fields)))
    if not notes:
        text = _("All {count} NVIDIA libraries from pip wheels load ({folders})")
        folders = ", ".join(sorted({lib.folder for lib in libraries}))
        notes.append(Note("nvidia-libs-load", text.format(count=len(libraries), folders=folders)))
    conf_dirs = loader_conf_dirs(ld_so_conf) if ld_so_conf is not None else []
    return notes + system_cuda_notes(libraries, ld_library_path, conf_dirs)
