"""Where each doctor code is explained for students: one mapping from a code to an entry of docs/troubleshooting.md.

The doctor's findings, the notes on a recommendation, the live checks' notes and the log rules each
have a stable ``code``. When an entry of the troubleshooting page covers the problem behind a code,
``ANCHORS`` names that entry's anchor, and every report prints ``More: docs/troubleshooting.md#<anchor>``
with it. This is the only place that knows the anchors; ``scripts/course_lint.py`` (rule ``ts-link``) checks that
each one exists in the page, and ``tests/test_troubleshooting.py`` that each key is a code the doctor really gives.

In Chinese (``COURSE_LANG=zh-CN``, or a Chinese locale) the links lead to the Chinese page,
``docs/zh/troubleshooting.md``, which keeps the English page's anchors (``PAGES``;
``tests/doctor/test_doctor_chinese.py`` checks them).
"""

from __future__ import annotations

from collections.abc import Iterable

from course_utils.core.i18n import CHINESE, ENGLISH, language, translator

_ = translator("doctor")

PAGE = "docs/troubleshooting.md"
PAGES = {ENGLISH: PAGE, CHINESE: "docs/zh/troubleshooting.md"}  # the page in each language, same anchors


def page() -> str:
    """The troubleshooting page in the language now (English when there is none in it)."""
    return PAGES.get(language(), PAGE)


# code -> anchor of the entry in docs/troubleshooting.md that explains it (an <a id="..."> in the page)
ANCHORS: dict[str, str] = {
    # install
    "no-tensorflow-wheel-for-python": "no-matching-distribution",
    "no-gpu-build-for-python": "no-matching-distribution",
    "python-unsupported": "no-matching-distribution",
    "numpy-2": "numpy-2",
    "numpy-2-abi": "numpy-2",
    "windows-native-no-gpu-after-2.10": "windows-no-gpu",
    "windows-native-gpu-last": "windows-no-gpu",
    # driver
    "driver-too-old": "driver-too-old",
    "ptx-driver": "driver-too-old",
    "no-nvidia-driver": "nvidia-smi-not-found",
    # WSL2
    "wsl2": "wsl2-no-gpu",
    "wsl2-no-dxg": "wsl2-no-gpu",
    "wsl2-no-libcuda": "wsl2-no-gpu",
    "wsl2-no-linux-driver": "wsl2-linux-driver",
    "wsl2-linux-driver-installed": "wsl2-linux-driver",
    # libraries
    "gpu-libraries-not-loaded": "cannot-dlopen",
    "library-not-loaded": "cannot-dlopen",
    "tensorflow-sees-no-gpu": "cannot-dlopen",
    "nvidia-libs-not-installed": "cannot-dlopen",
    "nvidia-lib-fails-to-load": "cannot-dlopen",
    "nvidia-lib-load-crashed": "cannot-dlopen",
    "pip-symlink-step": "cannot-dlopen",
    "cuda-drivers-not-found": "cuda-drivers-not-found",
    "cuinit-failed": "cuinit-303",  # on a machine without the NVIDIA driver: error 303
    "cudnn-mismatch": "cudnn-mismatch",
    "dnn-library-not-found": "cudnn-mismatch",
    "system-cuda-shadows-pip": "cudnn-mismatch",
    "system-cuda-on-library-path": "cudnn-mismatch",
    "windows-dll-not-loaded": "windows-dll",
    "cudart-dlerror-notice": "windows-dll",
    # memory
    "out-of-memory": "oom",
    "cudnn-failed-to-initialize": "cudnn-init-failed",
    "devices-already-initialized": "too-late",
    # Jupyter
    "kernel-without-tensorflow": "jupyter-kernel",
    "jupyter-runs-elsewhere": "jupyter-kernel",
    "kernel-python-missing": "jupyter-kernel",
    "no-kernel-for-this-environment": "jupyter-kernel",
    # TensorBoard: the profiler's GPU trace
    "cupti-insufficient-privileges": "cupti-privileges",
    "cupti-not-loaded": "cupti-not-found",
    # XLA
    "ptxas-missing": "ptxas",
    "ptxas-failed": "ptxas",
}


def see(code: str | None) -> str | None:
    """``docs/troubleshooting.md#<anchor>`` (the page in the language now) for a code the page explains, else
    None."""
    anchor = ANCHORS.get(code) if code else None
    return f"{page()}#{anchor}" if anchor else None


def more_text(link: str) -> str:
    """``"More: <link>"`` in the language now."""
    return _("More: {link}").format(link=link)


def more_line(code: str | None, indent: str = "") -> list[str]:
    """The line a report prints under a finding or note with this code: ``[indent + "More: ..."]`` or ``[]``."""
    link = see(code)
    return [indent + more_text(link)] if link else []


def links(codes: Iterable[str | None]) -> dict[str, str]:
    """``{code: link}`` for the codes the page explains, in order, each once (for the JSON reports)."""
    out: dict[str, str] = {}
    for code in codes:
        link = see(code)
        if code and link and code not in out:
            out[code] = link
    return out
