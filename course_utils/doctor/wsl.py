"""WSL2's GPU plumbing: the ``/dev/dxg`` device, the Windows driver's libcuda, and no Linux NVIDIA driver inside.

On WSL2 the Windows NVIDIA driver provides CUDA to Linux through ``/dev/dxg`` and ``/usr/lib/wsl/lib/libcuda.so*``;
a Linux driver installed inside replaces that libcuda and breaks it.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping, Sequence
from pathlib import Path

from course_utils.core.i18n import translator
from course_utils.doctor.texts import Note
from course_utils.doctor.versions import read_data

_ = translator("doctor")


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
              if wsl_real not in path.resolve().parents and path.resolve().parent != wsl_real]
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
