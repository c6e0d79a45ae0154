"""The doctor's words in the student's language: the marker for table text, sentence endings, and notes.

Each doctor module takes the marker ``_ = translator("doctor")`` (``course_utils.core.i18n``) and
translates a message where it builds it, so it follows ``COURSE_LANG`` at that moment. Text kept
in a module-level table - a log rule's meaning and fix, a live check's fix - is built once, at
import, when the language may not be chosen yet. It is marked ``N_("...")`` where the table
defines it (GNU gettext's ``gettext_noop``: ``scripts/messages.py`` extracts it, the table keeps
the English) and passed through ``_()`` where it is shown.

A note on a recommendation is a ``Note(code, text)``: the code (kebab-case, listed in ``NOTE_CODES``) is what
programs match on; the text is for people, in the language at the time it was made.
"""

from __future__ import annotations

from dataclasses import dataclass

from course_utils.core.i18n import CHINESE, N_, language

__all__ = ["NOTE_CODES", "N_", "Note", "join", "sentence"]  # N_'s home is course_utils.core.i18n

_ENDS = (".", "!", "?", "。", "！", "？")
_WIDE_ENDS = ("。", "！", "？", "）", "；", "：")  # Chinese punctuation: the next sentence follows without a space


def sentence(text: str) -> str:
    """A note or log line as a finding's message: capital first letter, and a full stop of the language now
    (``。`` in Chinese) unless it ends with one already."""
    text = text[:1].upper() + text[1:]
    if text.endswith(_ENDS):
        return text
    return text + ("。" if language() == CHINESE else ".")


def join(*sentences: str) -> str:
    """Sentences as one text: a space after an English sentence, none after a Chinese one (``。``)."""
    out = ""
    for text in sentences:
        if out and text:
            out += "" if out.endswith(_WIDE_ENDS) else " "
        out += text
    return out


# Every note code ``recommend()`` and ``routes()`` give, and what it means. A code whose text is a rule of
# versions.json (``table.rule(code)["text"]``) is named after that rule.
NOTE_CODES: dict[str, str] = {
    "python-unreadable": "the Python version given is not a version; any supported Python is assumed",
    "no-gpu-build-for-python": "no tested build supports the Python asked for; the commands use a tested Python",
    "python-limits-tensorflow": "the Python asked for gets an older TensorFlow than the newest tested one",
    "tested-python-range": "no Python was asked for: the Pythons the recommended build was tested with",
    "macos": "rule 'macos': no CUDA on macOS; TensorFlow, and the course, run on the CPU there",
    "macos-metal": "rule 'macos-metal': Apple's Metal plugin needs TF <= 2.18 and Python 3.9-3.12, in its own env",
    "macos-no-metal-for-python": "tensorflow-metal has no wheel for the Python asked for: no Metal GPU with it",
    "macos-intel": "rule 'macos-intel': TF 2.16 was the last release for Intel Macs",
    "intel-mac-python": "TF 2.16 (Intel Macs) does not support the Python asked for; the commands use a tested one",
    "windows-native-gpu-last": "rule 'windows-native-gpu-last', plus the build's tested CUDA, cuDNN and Python",
    "system-cuda-needed": "the build predates tensorflow[and-cuda]: CUDA and cuDNN must be installed on the system",
    "pip-symlink-step": "rule 'pip-symlink-step': the pip guide's symlink step if the GPU is still not found",
    "wsl2": "rule 'wsl2': the Windows build and Windows NVIDIA driver WSL2 needs",
    "wsl2-no-linux-driver": "rule 'wsl2-no-linux-driver': no Linux NVIDIA driver inside WSL2",
    "cpu-only-install": "no NVIDIA GPU on the machine: the CPU-only wheel",
    "numpy-2": "rule 'numpy-2': the commands pin numpy<2 for a TensorFlow built against NumPy 1",
    "keras-2-only": "rule 'keras-2-only': the TensorFlow offered (or its fallback) has Keras 2; the course needs 3",
    "gpu-too-old": "the GPU's generation is older than the newest builds cover: what still covers it, or what to do",
    "gpu-known-failure": "the GPU's generation is a known failure with the current wheels (issue threads)",
    "gpu-generation-unknown": "the GPU's name does not tell its generation: how to read its compute capability",
    "driver-unreadable": "the driver version given is not a version; the route's minimum is stated",
    "driver-minimum": "no driver version given: the minimum NVIDIA driver the route needs",
    "driver-too-old": "the driver given is older than the route needs; names the fallback build if one runs",
    "ptx-driver": "rule 'ptx-driver': a GPU covered only by the build's PTX needs a driver of the build's CUDA",
}


def _is_kebab(code: str) -> bool:
    """'no-gpu-build-for-python' yes; 'No_GPU', 'a--b', '-a', '' no."""
    return all(part and part.isascii() and part.isalnum() and part == part.lower() for part in code.split("-"))


@dataclass(frozen=True)
class Note:
    """A note on a recommendation: ``code`` is stable (programs match on it), ``text`` is for people."""

    code: str  # kebab-case, one of NOTE_CODES
    text: str

    def __post_init__(self) -> None:
        if not _is_kebab(self.code):
            raise ValueError(f"note code {self.code!r} is not kebab-case")

    def __str__(self) -> str:
        return self.text

    def to_dict(self) -> dict[str, str]:
        return {"code": self.code, "text": self.text}
