"""Checks on a live machine, where real machines fail: libraries that do not load, WSL2's plumbing, kernels.

Each check returns ``Note(code, text)``s; ``CHECK_FINDINGS`` turns a code (never the wording) into a finding's
severity, fix and report group. The checks live in a module each, named for what they look at - ``libraries``
(the pip ``nvidia-*`` wheels load, no system CUDA shadows them), ``wsl`` (``/dev/dxg``, the Windows driver's
libcuda, no Linux driver inside), ``kernels`` (the Jupyter kernels' Pythons) - plus ``python_wheel_check`` here.
Every place a check looks is a parameter, so tests build the machine as a file tree; ``live_checks`` runs them all
with this machine's paths.
"""

from __future__ import annotations

import sys
from typing import NamedTuple

from course_utils.core.i18n import translator
from course_utils.doctor.kernels import kernel_checks
from course_utils.doctor.libraries import nvidia_library_checks
from course_utils.doctor.recommend import Note
from course_utils.doctor.texts import N_
from course_utils.doctor.versions import load, parse_version
from course_utils.doctor.wsl import is_wsl, wsl_checks

_ = translator("doctor")


class FindingRule(NamedTuple):
    """How a note becomes a finding, by its code: the severity, the fix (English, marked ``N_``: translated and filled
    in when the finding is made), a live check's report group, and the finding's code where it is not the note's."""

    severity: str
    fix: str
    group: str | None = None
    code: str | None = None


# The groups' names are English (the JSON's "group"); the report shows them translated.
GROUP_LIBRARIES = N_("NVIDIA libraries from pip")
GROUP_WSL = N_("WSL2")
GROUP_KERNELS = N_("Jupyter kernels")
GROUP_PYTHON = N_("Python")

# In the fixes {python} is this Python; {wsl_driver_min} and {wsl_windows_build} come from versions.json's "wsl2" rule.
CHECK_FINDINGS: dict[str, FindingRule] = {
    "nvidia-libs-load": FindingRule("info", N_("Nothing to do."), GROUP_LIBRARIES),
    "nvidia-lib-fails-to-load": FindingRule(
        "error",
        N_(
            "Reinstall the wheel it comes from: `{python} -m pip install --force-reinstall --no-deps PACKAGE` for "
            "the package named above. If the error names another library, that one is missing or broken: install "
            "or reinstall it the same way (see https://www.tensorflow.org/install/pip)."
        ),
        GROUP_LIBRARIES,
    ),
    "nvidia-lib-load-crashed": FindingRule(
        "error",
        N_(
            "Reinstall the wheel it comes from: `{python} -m pip install --force-reinstall --no-deps PACKAGE` for "
            "the package named above."
        ),
        GROUP_LIBRARIES,
    ),
    "nvidia-libs-not-installed": FindingRule(
        "warning",
        N_(
            '`{python} -m pip install "tensorflow[and-cuda]"` (Linux, WSL2): it brings CUDA and cuDNN as pip '
            "wheels (https://www.tensorflow.org/install/pip)."
        ),
        GROUP_LIBRARIES,
    ),
    "system-cuda-shadows-pip": FindingRule(
        "warning",
        N_(
            "Take the system CUDA folders out of LD_LIBRARY_PATH before starting Python or Jupyter (`unset "
            "LD_LIBRARY_PATH`, or remove the line that sets it in ~/.bashrc): the pip wheels bring every library "
            "TensorFlow needs (https://man7.org/linux/man-pages/man8/ld.so.8.html; tensorflow/tensorflow#63362)."
        ),
        GROUP_LIBRARIES,
    ),
    "system-cuda-on-library-path": FindingRule(
        "info",
        N_(
            "Nothing to do while the pip libraries load. If TensorFlow reports a library it cannot load, make sure "
            "the pip wheels are installed in this environment, so these are not needed."
        ),
        GROUP_LIBRARIES,
    ),
    "wsl2-gpu-plumbing": FindingRule("info", N_("Nothing to do."), GROUP_WSL),
    "wsl2-no-dxg": FindingRule(
        "error",
        N_(
            "In Windows: `wsl --update`, and `wsl -l -v` must show VERSION 2 for this distribution (`wsl "
            "--set-version NAME 2` if not); Windows 10 21H2 (build {wsl_windows_build}) or newer; then `wsl "
            "--shutdown` and start it again (https://docs.nvidia.com/cuda/wsl-user-guide/index.html)."
        ),
        GROUP_WSL,
    ),
    "wsl2-no-libcuda": FindingRule(
        "error",
        N_(
            "Install or update the NVIDIA driver in Windows (not in WSL) - the TensorFlow pip guide asks for "
            "{wsl_driver_min} or newer - then `wsl --shutdown` in Windows and start WSL again "
            "(https://docs.nvidia.com/cuda/wsl-user-guide/index.html)."
        ),
        GROUP_WSL,
    ),
    "wsl2-linux-driver-installed": FindingRule(
        "error",
        N_(
            "Remove the Linux NVIDIA driver from WSL2 (e.g. `sudo apt-get remove --purge PACKAGE` for the packages "
            "named above, or delete the libcuda files named above), then `wsl --shutdown` in Windows: the Windows "
            "driver provides CUDA to WSL2, and a Linux one inside breaks it "
            "(https://docs.nvidia.com/cuda/wsl-user-guide/index.html)."
        ),
        GROUP_WSL,
    ),
    "kernel-uses-this-environment": FindingRule("info", N_("Nothing to do."), GROUP_KERNELS),
    "kernel-python-missing": FindingRule(
        "warning",
        N_(
            "Remove the stale kernel (`jupyter kernelspec remove NAME`) or register it again from the environment "
            "it should use (https://ipython.readthedocs.io/en/stable/install/kernel_install.html"
            "#kernels-for-different-environments)."
        ),
        GROUP_KERNELS,
    ),
    "kernel-without-tensorflow": FindingRule(
        "warning",
        N_(
            "In Jupyter pick a kernel that runs the environment with TensorFlow (Kernel > Change Kernel). To add "
            'this one: `{python} -m ipykernel install --user --name course-tf --display-name "Python (TensorFlow)"` '
            "(https://ipython.readthedocs.io/en/stable/install/kernel_install.html"
            "#kernels-for-different-environments)."
        ),
        GROUP_KERNELS,
    ),
    "jupyter-runs-elsewhere": FindingRule(
        "warning",
        N_(
            "Start Jupyter from this environment (`{python} -m jupyter lab`), or register this environment as a "
            'kernel: `{python} -m ipykernel install --user --name course-tf --display-name "Python (TensorFlow)"` '
            "and pick it in Jupyter (https://ipython.readthedocs.io/en/stable/install/kernel_install.html"
            "#kernels-for-different-environments)."
        ),
        GROUP_KERNELS,
    ),
    "no-kernel-for-this-environment": FindingRule(
        "info",
        N_(
            'Register it: `{python} -m ipykernel install --user --name course-tf --display-name "Python '
            '(TensorFlow)"`, then pick that kernel in Jupyter (https://ipython.readthedocs.io/en/stable/install/'
            "kernel_install.html#kernels-for-different-environments)."
        ),
        GROUP_KERNELS,
    ),
    "kernels-unreadable": FindingRule(
        "info", N_("Run `jupyter kernelspec list` to see what is wrong with the kernelspecs."), GROUP_KERNELS
    ),
    "no-tensorflow-wheel-for-python": FindingRule(
        "error",
        N_(
            "Create the environment with one of those Pythons (e.g. `python3.12 -m venv .venv`, or `uv python "
            "install 3.12`), then install again (https://www.tensorflow.org/install/pip)."
        ),
        GROUP_PYTHON,
    ),
}
GROUPS = (GROUP_PYTHON, GROUP_LIBRARIES, GROUP_WSL, GROUP_KERNELS)


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
