"""Checks on a live machine, where real machines fail: libraries that do not load, WSL2's plumbing, kernels.

Each check returns ``Note(code, text)``s; ``CHECK_FINDINGS`` (findings.json's ``checks``) turns a code (never the
wording) into a finding's severity, fix and report group; ``NOTE_FINDINGS`` (its ``notes``) does the same for a
recommendation's notes. The checks live in a module each (``libraries``, ``wsl``, ``kernels``), plus
``python_wheel_check`` here. Every place a check looks is a parameter, so tests build the machine as a file tree;
``live_checks`` runs them all with this machine's paths.
"""

from __future__ import annotations

import sys
from typing import Any

from course_utils.core.i18n import N_, translator
from course_utils.doctor.kernels import kernel_checks
from course_utils.doctor.libraries import nvidia_library_checks
from course_utils.doctor.texts import Note
from course_utils.doctor.versions import load, parse_version, read_data
from course_utils.doctor.wsl import is_wsl, wsl_checks

_ = translator("doctor")


# The groups' names are English (the JSON's "group"); the report shows them translated.
GROUP_LIBRARIES = N_("NVIDIA libraries from pip")
GROUP_WSL = N_("WSL2")
GROUP_KERNELS = N_("Jupyter kernels")
GROUP_PYTHON = N_("Python")
GROUPS = (GROUP_PYTHON, GROUP_LIBRARIES, GROUP_WSL, GROUP_KERNELS)


# How a note becomes a finding, by its code (findings.json): the severity, the fix (a text entry, shown in the
# language now and filled in when the finding is made), a live check's report group, and the finding's code where it
# is not the note's.
CHECK_FINDINGS: dict[str, dict[str, Any]] = read_data("findings")["checks"]
NOTE_FINDINGS: dict[str, dict[str, Any]] = read_data("findings")["notes"]


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
