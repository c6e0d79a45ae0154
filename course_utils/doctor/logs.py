"""Reading a pasted TensorFlow log: which lines are harmless, which one is the problem, and what to do.

TensorFlow prints many lines at start-up that look like failures and are not ("Unable to register
cuDNN factory", NUMA, TensorRT, oneDNN, CPU instructions), and a few that are the real reason the
GPU is not used. ``classify(text)`` gives each line a verdict from ``RULES`` - one regular
expression (or a few) per ``code``, with what the line means, the fix and a public source:

- ``harmless``: nothing to do;
- ``problem``: this line is why it fails;
- ``depends``: harmless on a machine without an NVIDIA GPU, the problem on one that has it
  ("Could not find cuda drivers on your machine" is both). ``classify(text, gpu=...)`` settles it;
  without ``gpu`` a line that only a machine with a GPU prints (a NUMA read, a created GPU device)
  settles it, else the verdict stays ``depends``;
- ``unknown``: a TensorFlow log line no rule knows - read it yourself.

``read_log(data)`` turns the bytes of a pasted file into text: UTF-8 or UTF-16 (PowerShell's ``>``
writes UTF-16 LE with a byte-order mark), CRLF, ANSI colour codes; an empty or binary file is an
``InputError`` that says what happened and what to do. ``course doctor --log FILE`` is the command.

A rule's ``meaning`` and ``fix`` are English, marked ``N_`` (``course_utils.doctor.texts``); a
``LogEntry`` shows them, and the report its lines, in the language at that moment (``COURSE_LANG``, else the
locale: ``course_utils.i18n.language``).
"""

from __future__ import annotations

import codecs
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from course_utils.doctor.texts import N_
from course_utils.errors import InputError
from course_utils.i18n import translator

_ = translator("doctor")

VERDICTS = ("problem", "depends", "harmless", "unknown")

PIP_GUIDE = "https://www.tensorflow.org/install/pip"
# The fix of every rule that means "TensorFlow found no CUDA runtime": the same words, one catalogue entry.
CUDA_IN_THIS_ENVIRONMENT = N_(
    'With a GPU: on Linux or WSL2, `pip install "tensorflow[and-cuda]"` in the environment that runs '
    "TensorFlow (TF 2.14 and later bring CUDA and cuDNN as pip wheels; only the NVIDIA driver comes from the "
    "system); if the GPU is still missing, follow the symlink step in https://www.tensorflow.org/install/pip "
    "and run `course doctor` on that machine. Without one: nothing to do."
)


@dataclass(frozen=True)
class LogRule:
    """What one kind of log line means: ``code`` is stable (tools match on it), the rest is for people.

    ``meaning`` and ``fix`` (English, marked ``N_``) may name the patterns' groups (``{library}``);
    ``gpu_evidence``: only a machine where TensorFlow found an NVIDIA GPU prints this line.
    """

    code: str
    verdict: str  # "harmless", "problem" or "depends"
    patterns: tuple[str, ...]
    meaning: str
    fix: str
    source: str
    gpu_evidence: bool = False

    def __post_init__(self) -> None:
        if self.verdict not in ("harmless", "problem", "depends"):
            raise ValueError(f"rule {self.code}: verdict {self.verdict!r}")

    def match(self, message: str) -> re.Match[str] | None:
        for pattern in self.patterns:
            found = re.search(pattern, message)
            if found:
                return found
        return None


# Order matters: the first rule that matches a line decides (specific rules before general ones).
RULES: tuple[LogRule, ...] = (
    LogRule(
        "cuda-plugin-registered-twice",
        "harmless",
        (r"Unable to register (?P<plugin>cuDNN|cuFFT|cuBLAS) factory: Attempting to register factory for plugin",),
        N_(
            "The {plugin} plugin is registered twice at start-up and the second registration is refused; TensorFlow "
            "still finds and uses the GPU (TensorFlow's maintainers in the issue thread)."
        ),
        N_("Nothing to do."),
        "https://github.com/tensorflow/tensorflow/issues/62075",
    ),
    LogRule(
        "tensorrt-not-found",
        "harmless",
        (
            r"TF-TRT Warning: Could not find TensorRT",
            r"Could not load dynamic library 'libnvinfer",
            r"Cannot dlopen some TensorRT libraries",
        ),
        N_(
            "TF-TRT, TensorFlow's optional TensorRT integration for faster inference, found no TensorRT libraries. "
            "Training and ordinary GPU use do not need TensorRT (TF 2.18 removed TensorRT support from its wheels)."
        ),
        N_("Nothing to do."),
        "https://github.com/tensorflow/tensorflow/releases/tag/v2.18.0",
    ),
    LogRule(
        "numa-node-unknown",
        "harmless",
        (r"successful NUMA node read from SysFS had negative value",),
        N_(
            "The GPU's PCI device reports NUMA node -1 ('unknown', as Linux documents for this sysfs file); TensorFlow "
            "uses node 0. Usual on desktops, laptops and WSL2 - and a sign that TensorFlow found a GPU."
        ),
        N_("Nothing to do."),
        "https://github.com/tensorflow/tensorflow/issues/58428",
        gpu_evidence=True,
    ),
    LogRule(
        "numa-node-unreadable",
        "harmless",
        (r"could not open file to read NUMA node", r"Your kernel may have been built without NUMA support"),
        N_(
            "The kernel (WSL2's, for one) offers no NUMA information for the GPU; TensorFlow uses node 0. A sign that "
            "TensorFlow found a GPU."
        ),
        N_("Nothing to do."),
        "https://github.com/microsoft/WSL/issues/10277",
        gpu_evidence=True,
    ),
    LogRule(
        "onednn-custom-operations",
        "harmless",
        (r"oneDNN custom operations are on",),
        N_(
            "TensorFlow uses oneDNN's optimised CPU kernels; results can differ in the last digits from a run without "
            "them."
        ),
        N_("Nothing to do; set TF_ENABLE_ONEDNN_OPTS=0 before Python starts to turn them off."),
        "https://github.com/tensorflow/tensorflow/blob/master/tensorflow/core/util/port.cc",
    ),
    LogRule(
        "cpu-instructions",
        "harmless",
        (
            r"This TensorFlow binary is optimized (?:to use available CPU instructions|with oneAPI Deep Neural)",
            r"^To enable (?:the following instructions|them in other operations)",
            r"Your CPU supports instructions that this TensorFlow binary was not compiled to use",
        ),
        N_(
            "Information about the CPU's instruction sets (AVX2, FMA, ...): the wheel uses them where it matters; "
            "only a build from source would use them everywhere."
        ),
        N_("Nothing to do."),
        "https://github.com/tensorflow/tensorflow/blob/master/tensorflow/core/platform/cpu_feature_guard.cc",
    ),
    LogRule(
        "absl-logging-notice",
        "harmless",
        (r"All log messages before absl::InitializeLog\(\) is called are written to STDERR",),
        N_("The logging library says where messages go before it is set up (standard error)."),
        N_("Nothing to do."),
        "https://github.com/abseil/abseil-cpp/tree/master/absl/log",
    ),
    LogRule(
        "gpu-device-created",
        "harmless",
        (r"Created (?:TensorFlow )?device \S*GPU:\d+",),
        N_("TensorFlow created a GPU device: it uses the GPU."),
        N_("Nothing to do."),
        "https://www.tensorflow.org/guide/gpu",
        gpu_evidence=True,
    ),
    LogRule(
        "cudnn-loaded",
        "harmless",
        (r"Loaded cuDNN version (?P<version>\d+)",),
        N_("TensorFlow loaded cuDNN (version number {version})."),
        N_("Nothing to do."),
        "https://github.com/openxla/xla/blob/main/xla/stream_executor/cuda/cuda_dnn.cc",
        gpu_evidence=True,
    ),
    LogRule(
        "is-gpu-available-deprecated",
        "harmless",
        (r"is_gpu_available \(from tensorflow\.python\.framework\.test_util\) is deprecated",),
        N_("tf.test.is_gpu_available() still works but is deprecated."),
        N_("Use tf.config.list_physical_devices('GPU') instead."),
        "https://www.tensorflow.org/api_docs/python/tf/test/is_gpu_available",
    ),
    LogRule(
        "executor-aborted-after-error",
        "harmless",
        (r"Executor start aborting \(this does not indicate an error",),
        N_(
            "A follow-up: TensorFlow stops the step because of an error reported on its own line (the message says it "
            "does not indicate an error by itself)."
        ),
        N_("Look for the problem line before it."),
        "https://github.com/tensorflow/text/issues/1167",
    ),
    LogRule(
        "cudnn-mismatch",
        "problem",
        (r"Loaded runtime CuDNN library: (?P<runtime>\S+) but source was compiled with: (?P<compiled>\d+(?:\.\d+)*)",),
        N_(
            "TensorFlow loaded cuDNN {runtime} but was built with {compiled}; it accepts only the same major version "
            "and an equal or higher minor version, so cuDNN is not used."
        ),
        N_(
            "Another package (often PyTorch) installed an older cuDNN into this environment: give TensorFlow an "
            'environment of its own with `pip install "tensorflow[and-cuda]"`, or install a cuDNN of the same major '
            "and at least the same minor version."
        ),
        "https://github.com/openxla/xla/blob/main/xla/stream_executor/cuda/cuda_dnn.cc",
        gpu_evidence=True,
    ),
    LogRule(
        "dnn-library-not-found",
        "problem",
        (r"DNN library is not found",),
        N_(
            "A convolution could not use cuDNN: cuDNN did not load, or its version does not fit (look for a 'Loaded "
            "runtime CuDNN library' line above it)."
        ),
        N_(
            'Give TensorFlow an environment of its own with `pip install "tensorflow[and-cuda]"`, which brings the '
            "cuDNN it was built with; do not mix it with packages that pin another cuDNN."
        ),
        "https://github.com/tensorflow/tensorflow/issues/55309",
        gpu_evidence=True,
    ),
    LogRule(
        "cudnn-failed-to-initialize",
        "problem",
        (r"Failed to get convolution algorithm\. This is probably because cuDNN failed to initialize",),
        N_(
            "cuDNN could not start: most often the GPU's memory was already taken, or CUDA and cuDNN do not fit "
            "together."
        ),
        N_(
            "Turn on memory growth before anything runs (tf.config.experimental.set_memory_growth(gpu, True), or "
            "TF_FORCE_GPU_ALLOW_GROWTH=true before the GPU is initialised); if it persists, fix the CUDA/cuDNN "
            "mismatch."
        ),
        "https://github.com/tensorflow/tensorflow/issues/36025",
        gpu_evidence=True,
    ),
    LogRule(
        "out-of-memory",
        "problem",
        (r"OOM when allocating tensor",),
        N_("The device ran out of memory for a tensor."),
        N_(
            "Use a smaller batch, turn on memory growth or mixed precision, and close other processes that hold the "
            "GPU (TensorFlow maps nearly all GPU memory by default)."
        ),
        "https://www.tensorflow.org/guide/gpu#limiting_gpu_memory_growth",
    ),
    LogRule(
        "devices-already-initialized",
        "problem",
        (r"(?:Physical|Visible|Virtual) devices cannot be modified after being initialized",),
        N_(
            "A device setting (memory growth, visible devices, a memory limit) came after TensorFlow had started its "
            "runtime."
        ),
        N_(
            "Configure devices before any tensor is created; in Jupyter restart the kernel and run the configuration "
            "cell first."
        ),
        "https://www.tensorflow.org/guide/gpu#limiting_gpu_memory_growth",
    ),
    LogRule(
        "numpy-2-abi",
        "problem",
        (r"A module that was compiled using NumPy 1\.x cannot be run in",),
        N_(
            "A compiled module - TensorFlow older than 2.18, for one - was built against NumPy 1 and pip installed "
            "NumPy 2 beside it: importing it fails."
        ),
        N_(
            'Install "numpy<2" together with a TensorFlow older than 2.18, or use TensorFlow 2.18 or newer (built '
            "with NumPy 2)."
        ),
        "https://github.com/tensorflow/tensorflow/issues/91042",
    ),
    LogRule(
        "ptxas-missing",
        "problem",
        (r"ptxas\S* not found", r"No PTX compilation provider is available", r"Failed to launch ptxas"),
        N_(
            "XLA - which Keras 3 turns on by itself when a GPU is present - compiles GPU code with ptxas, cannot find "
            "or start it, and the compiled function fails."
        ),
        N_(
            '`pip install "tensorflow[and-cuda]"` brings ptxas (the nvidia-cuda-nvcc-cu12 wheel); if XLA still does '
            "not find it, follow the symlink step for ptxas in https://www.tensorflow.org/install/pip; or compile "
            "without XLA (`model.compile(..., jit_compile=False)`)."
        ),
        "https://github.com/YoshitakaMo/localcolabfold/issues/70",
        gpu_evidence=True,
    ),
    LogRule(
        "ptxas-failed",
        "problem",
        (r"ptxas returned an error during compilation",),
        N_("XLA's ptxas step failed (the reason is on the line: a ptxas version XLA refuses, a full disk, ...)."),
        N_(
            'Use the ptxas that `pip install "tensorflow[and-cuda]"` pins (not a system CUDA\'s on PATH), or compile '
            "without XLA (`model.compile(..., jit_compile=False)`)."
        ),
        "https://github.com/tensorflow/tensorflow/issues/68966",
        gpu_evidence=True,
    ),
    LogRule(
        "ptxas-fallback-to-driver",
        "harmless",
        (r"Couldn't get ptxas(?:/nvlink)? version", r"Relying on driver to perform ptx compilation"),
        N_(
            "XLA could not run ptxas and lets the NVIDIA driver compile its PTX instead. That works when the driver "
            "supports the PTX version XLA writes; if ptxas is needed after all, a later line fails."
        ),
        N_(
            'If a later line reports a ptxas or PTX error: `pip install "tensorflow[and-cuda]"` (it brings ptxas), '
            "then the symlink step for ptxas in https://www.tensorflow.org/install/pip, or update the NVIDIA driver."
        ),
        "https://github.com/tensorflow/tensorflow/issues/60737",
        gpu_evidence=True,
    ),
    LogRule(
        "cupti-insufficient-privileges",
        "problem",
        (r"CUPTI_ERROR_INSUFFICIENT_PRIVILEGES", r"Insufficient privilege to run libcupti"),
        N_(
            "The profiler could not start CUPTI, the NVIDIA library it traces the GPU with: the NVIDIA driver lets "
            "only administrators use the GPU's performance counters. Training still runs on the GPU, but the trace has "
            "no GPU kernels."
        ),
        N_(
            "Run the profiled program once as an administrator, or let every user profile: on Linux, put `options "
            "nvidia NVreg_RestrictProfilingToAdminUsers=0` in a file in /etc/modprobe.d and reboot (in a container, "
            "allow it on the host); on Windows and for WSL2, choose 'Allow access to the GPU performance counters to "
            "all users' in the NVIDIA Control Panel."
        ),
        "https://developer.nvidia.com/CUPTI_ERROR_INSUFFICIENT_PRIVILEGES",
        gpu_evidence=True,
    ),
    LogRule(
        "gpu-libraries-not-loaded",
        "problem",
        (r"Cannot dlopen some GPU libraries", r"Skipping registering GPU devices"),
        N_("TensorFlow could not load the CUDA/cuDNN libraries it needs, so it registers no GPU and runs on the CPU."),
        N_(
            'On Linux or WSL2, `pip install "tensorflow[and-cuda]"` in the environment that runs TensorFlow (TF 2.14 '
            "and later bring CUDA and cuDNN as pip wheels; only the NVIDIA driver comes from the system); if the GPU "
            "is still missing, follow the symlink step in https://www.tensorflow.org/install/pip and run "
            "`course doctor` on that machine."
        ),
        "https://github.com/tensorflow/tensorflow/issues/63362",
    ),
    LogRule(
        "cuinit-no-device",
        "depends",
        (r"failed call to cuInit:.*CUDA_ERROR_NO_DEVICE",),
        N_(
            "The CUDA driver answers but reports no usable GPU. Without an NVIDIA GPU that is expected and TensorFlow "
            "uses the CPU."
        ),
        N_(
            "With a GPU: check that `nvidia-smi` lists it and that CUDA_VISIBLE_DEVICES is not set to an empty or "
            "invalid value (it hides GPUs from CUDA). Without one: nothing to do."
        ),
        "https://github.com/tensorflow/tensorflow/issues/255",
    ),
    LogRule(
        "cuinit-unknown-error",
        "depends",
        (r"failed call to cuInit:.*(?:CUDA_ERROR_UNKNOWN|UNKNOWN ERROR \(999\))",),
        N_(
            "The CUDA driver failed to start. On a machine with a GPU this often follows a suspend and resume, or a "
            "driver update without a reboot."
        ),
        N_(
            "With a GPU: reboot (or reload the nvidia_uvm kernel module) and check `nvidia-smi`. Without one: nothing "
            "to do."
        ),
        "https://github.com/tensorflow/tensorflow/issues/5777",
    ),
    LogRule(
        "cuinit-failed",
        "depends",
        (r"(?i)failed call to cuInit: ?(?P<error>.*)",),
        N_(
            "CUDA could not be initialised ({error}). Without an NVIDIA GPU TensorFlow prints this while it looks for "
            "one, then uses the CPU."
        ),
        N_(
            "With a GPU: check that `nvidia-smi` works, then run `course doctor` on that machine. Without one: nothing "
            "to do."
        ),
        "https://github.com/tensorflow/tensorflow/issues/255",
    ),
    LogRule(
        "cuda-drivers-not-found",
        "depends",
        (r"Could not find cuda drivers on your machine, GPU will not be used",),
        N_(
            "TensorFlow could not load the CUDA runtime, so it uses the CPU. Without an NVIDIA GPU that is expected; "
            "with one, CUDA is missing from this environment."
        ),
        CUDA_IN_THIS_ENVIRONMENT,
        PIP_GUIDE,
    ),
    LogRule(
        "cudart-dlerror-notice",
        "depends",
        (r"Ignore above cudart dlerror if you do not have a GPU set up on your machine",),
        N_(
            "Older TensorFlow (2.10 and before) says so itself: the CUDA runtime error above it matters only on a "
            "machine with a GPU set up."
        ),
        N_("With a GPU: see the 'Could not load dynamic library' line above it. Without one: nothing to do."),
        "https://github.com/tensorflow/tensorflow/issues/35872",
    ),
    LogRule(
        "cupti-not-loaded",
        "depends",
        (r"Could not (?:load dynamic library|dlopen library) '(?P<library>libcupti[^']*)'", r"Failed to load libcupti"),
        N_(
            "The profiler could not load CUPTI, the NVIDIA library it traces the GPU with, so the trace has no GPU "
            "activity; training is not affected. Without an NVIDIA GPU there is nothing to trace."
        ),
        N_(
            'With a GPU: `pip install "tensorflow[and-cuda]"` in the environment that runs TensorFlow (it brings '
            "CUPTI, the nvidia-cuda-cupti-cu12 wheel); with a system CUDA instead, add its extras/CUPTI/lib64 folder "
            "to LD_LIBRARY_PATH. Without one: nothing to do."
        ),
        "https://www.tensorflow.org/guide/profiler",
    ),
    LogRule(
        "windows-dll-not-loaded",
        "depends",
        (r"Could not load dynamic library '(?P<library>[^']+\.dll)'(?:; dlerror: (?P<dlerror>.*))?",),
        N_(
            "TensorFlow could not load {library} (native Windows, TF 2.10 or older). Without an NVIDIA GPU that is "
            "expected."
        ),
        N_(
            "With a GPU: install the CUDA 11.2 / cuDNN 8.1 pair TF 2.10 was built with (`conda install -c conda-forge "
            'cudatoolkit=11.2 cudnn=8.1.0`, then `pip install "tensorflow<2.11"`), or use WSL2 for current '
            "TensorFlow; never download DLLs from third-party sites."
        ),
        "https://www.tensorflow.org/install/pip#windows-native",
    ),
    LogRule(
        "library-not-loaded",
        "depends",
        (r"Could not (?:load dynamic library|dlopen library) '(?P<library>[^']+)'(?:; dlerror: (?P<dlerror>.*))?",),
        N_(
            "TensorFlow could not load {library} ({dlerror}). Older TensorFlow prints this for the CUDA runtime on "
            "every machine; on a machine with a GPU it is why the GPU is not used."
        ),
        CUDA_IN_THIS_ENVIRONMENT,
        "https://github.com/tensorflow/tensorflow/issues/35872",
    ),
)

# Where a log line's own text starts: after an absl/glog prefix ("I0000 00:00:17.1  123 file.cc:31] ",
# "2024-05-10 11:33:14.068255: I tensorflow/core/file.cc:210] ") or a Python logger's ("WARNING:tensorflow:").
_LOG_PREFIX = re.compile(r"(?:^|\s)[IWEF](?:\d{4} \d\d:\d\d:[\d.]+\s+\d+)?\s+\S+?:\d+\]\s?")
_PY_PREFIX = re.compile(r"^(?:WARNING|INFO|ERROR):tensorflow:")
_ANSI = re.compile(r"\x1b\[[0-9;?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)")


def strip_prefix(line: str) -> tuple[str, bool]:
    """``(message, is_log_line)``: the line without its time/thread/file prefix, and whether it had one."""
    found = _LOG_PREFIX.search(line)
    if found:
        return line[found.end() :].strip(), True
    found = _PY_PREFIX.search(line.strip())
    if found:
        return line.strip()[found.end() :].strip(), True
    return line.strip(), False


# --------------------------------------------------------------------------- reading a file


def _looks_binary(text: str) -> bool:
    """True when a decoded text is mostly not text: NULs, or many control or undecodable characters."""
    if not text:
        return False
    if "\x00" in text:
        return True
    odd = sum(1 for c in text if (ord(c) < 32 and c not in "\t\n\r\x1b\x0c") or c == "\ufffd")
    return odd > max(8, len(text) // 20)


def decode_text(data: bytes) -> str:
    """The text of a saved capture or log: UTF-8 or UTF-16 (with or without a byte-order mark); never raises.

    Windows PowerShell 5.1's ``>`` and ``Out-File`` write UTF-16 LE with a byte-order mark
    ("Unicode", their default: https://learn.microsoft.com/powershell/module/microsoft.powershell.core/about/
    about_character_encoding?view=powershell-5.1), so ``nvidia-smi > smi.txt`` there is UTF-16.
    """
    if data.startswith(codecs.BOM_UTF8):
        return data[len(codecs.BOM_UTF8) :].decode("utf-8", errors="replace")
    if data.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        return data.decode("utf-16", errors="replace")
    if len(data) >= 4 and data[1::2].count(0) > len(data) // 4 and data[0::2].count(0) == 0:
        return data.decode("utf-16-le", errors="replace")  # UTF-16 without a byte-order mark
    if len(data) >= 4 and data[0::2].count(0) > len(data) // 4 and data[1::2].count(0) == 0:
        return data.decode("utf-16-be", errors="replace")
    return data.decode("utf-8", errors="replace")


def decode_log(data: bytes, name: str | None = None) -> str:
    """The text of a pasted log (``decode_text``), ANSI colours removed; ``name`` starts the error messages
    (default: "the log", in the language now).

    Raises ``InputError`` for an empty file or one that is not text.
    """
    name = name or _("the log")
    how = _("Save the output as plain text - e.g. `python train.py > log.txt 2>&1` - and pass that file.")
    if not data.strip():
        raise InputError(_("{name} is empty: there is no log to read.").format(name=name), how)
    text = decode_text(data)
    if _looks_binary(text):
        raise InputError(
            _("{name} is not a text log (it holds binary data - a compressed file, an image or a program?).").format(
                name=name
            ),
            how,
        )
    text = _ANSI.sub("", text)
    if not text.strip():
        raise InputError(
            _("{name} holds only colour codes and white space: there is no log to read.").format(name=name), how
        )
    return text


def read_log(path: str | Path) -> str:
    """Read a log file (``"-"``: standard input) with ``decode_log``; ``InputError`` when it cannot be read."""
    if str(path) == "-":
        return decode_log(sys.stdin.buffer.read(), _("The log on standard input"))
    where = Path(path)
    try:
        data = where.read_bytes()
    except IsADirectoryError:
        raise InputError(
            _("{path} is a folder, not a log file.").format(path=where), _("Pass the log file itself.")
        ) from None
    except FileNotFoundError:
        raise InputError(
            _("The log file {path} does not exist.").format(path=where), _("Check the path (or pass - to read stdin).")
        ) from None
    except OSError as error:
        raise InputError(
            _("The log file {path} cannot be read: {reason}.").format(path=where, reason=error.strerror),
            _("Check the file's permissions, or copy the log into a file you can read."),
        ) from None
    return decode_log(data, _("The log file {path}").format(path=where))


# --------------------------------------------------------------------------- classifying


class _Groups(dict):
    def __missing__(self, key: str) -> str:
        return "?"


@dataclass
class LogEntry:
    """One kind of message in the log: where it appears, its verdict and (when a rule knows it) what to do."""

    message: str
    lines: list[int]  # 1-based line numbers
    verdict: str
    rule: LogRule | None = None
    details: dict[str, str] = field(default_factory=dict)

    @property
    def code(self) -> str | None:
        return self.rule.code if self.rule else None

    @property
    def meaning(self) -> str:
        """What the line means, in the language now, with the line's values filled in."""
        return _(self.rule.meaning).format_map(_Groups(self.details)) if self.rule else ""

    @property
    def fix(self) -> str:
        """What to do, in the language now, with the line's values filled in."""
        return _(self.rule.fix).format_map(_Groups(self.details)) if self.rule else ""

    def to_dict(self) -> dict[str, Any]:
        return {
            "verdict": self.verdict,
            "code": self.code,
            "lines": list(self.lines),
            "message": self.message,
            "meaning": self.meaning or None,
            "fix": self.fix or None,
            "source": self.rule.source if self.rule else None,
        }


@dataclass
class LogReport:
    """A classified log: its entries in order of first appearance, and what was assumed about the GPU."""

    entries: list[LogEntry]
    total_lines: int
    other_lines: int  # lines that are not TensorFlow log lines (program output, tracebacks) - not classified
    gpu: bool | None  # the machine has an NVIDIA GPU: True, False, or None when unknown
    gpu_reason: str

    @property
    def problem(self) -> LogEntry | None:
        """The first line that is the problem, if any."""
        return next((e for e in self.entries if e.verdict == "problem"), None)

    @property
    def problem_if_gpu(self) -> LogEntry | None:
        """When no line is certainly the problem: the first that is, if the machine has an NVIDIA GPU."""
        return next((e for e in self.entries if e.verdict == "depends"), None)

    def codes(self, verdict: str | None = None) -> list[str]:
        """The rule codes found, in order, each once (only those with ``verdict`` if given)."""
        out: list[str] = []
        for e in self.entries:
            if e.code and e.code not in out and (verdict is None or e.verdict == verdict):
                out.append(e.code)
        return out

    def to_dict(self) -> dict[str, Any]:
        problem = self.problem
        maybe = self.problem_if_gpu if problem is None else None
        return {
            "problem": problem.to_dict() if problem else None,
            "problem_if_gpu": maybe.to_dict() if maybe else None,
            "gpu": self.gpu,
            "gpu_reason": self.gpu_reason,
            "total_lines": self.total_lines,
            "other_lines": self.other_lines,
            "entries": [e.to_dict() for e in self.entries],
        }

    def text(self) -> str:
        """A readable report: the problem and its fix first, then every classified line with its verdict."""
        out: list[str] = []
        problem = self.problem
        if problem is not None:
            out += [_("The problem:"), *_describe(problem, with_fix=True)]
        elif self.problem_if_gpu is not None:
            out += [
                _("No line is certainly the problem. If this machine has an NVIDIA GPU, this one is:"),
                *_describe(self.problem_if_gpu, with_fix=True),
            ]
        else:
            out.append(_("The problem: none of the known problem lines is in this log."))
        out += ["", _("GPU: {reason}").format(reason=self.gpu_reason), ""]
        counted = sum(len(e.lines) for e in self.entries)
        out.append(
            _(
                "Line by line ({counted} TensorFlow log line(s) of {total}; {other} other line(s), "
                "such as program output and tracebacks, not classified):"
            ).format(counted=counted, total=self.total_lines, other=self.other_lines)
        )
        for e in self.entries:
            out += _describe(e, with_fix=e.verdict in ("problem", "depends"))
        return "\n".join(out)


def _where(lines: list[int]) -> str:
    shown = ", ".join(str(n) for n in lines[:6]) + (", ..." if len(lines) > 6 else "")
    if len(lines) == 1:
        return _("line {number}").format(number=shown)
    return _("lines {numbers} ({count}x)").format(numbers=shown, count=len(lines))


def _describe(entry: LogEntry, *, with_fix: bool) -> list[str]:
    """An entry's lines in the report: ``[verdict] code, where: message``, then what it means and what to do
    (the verdicts and codes are the JSON's, in every language)."""
    message = entry.message if len(entry.message) <= 200 else entry.message[:197] + "..."
    code = f" {entry.code}" if entry.code else ""
    lines = [f"  [{entry.verdict}]{code}, {_where(entry.lines)}: {message}"]
    if entry.rule is not None:
        lines.append("      " + _("means: {meaning}").format(meaning=entry.meaning))
        if with_fix or entry.rule.fix != "Nothing to do.":
            lines.append("      " + _("fix: {fix}").format(fix=entry.fix))
        lines.append("      " + _("source: {url}").format(url=entry.rule.source))
    else:
        lines.append(
            "      " + _("means: no rule knows this line; read it yourself (a later line may be the problem).")
        )
    return lines


def _match(message: str) -> tuple[LogRule | None, dict[str, str]]:
    for rule in RULES:
        found = rule.match(message)
        if found:
            return rule, {k: v.strip() for k, v in found.groupdict().items() if v}
    return None, {}


def classify(text: str, gpu: bool | None = None) -> LogReport:
    """Classify every line of a TensorFlow log (already decoded text; see ``read_log`` for files).

    ``gpu``: whether the machine that printed it has an NVIDIA GPU (None: unknown - then a line only such
    a machine prints decides, else ``depends`` lines stay ``depends``).
    """
    entries: dict[str, LogEntry] = {}
    other = 0
    evidence: int | None = None
    lines = _ANSI.sub("", text).splitlines()
    for number, raw in enumerate(lines, start=1):
        if not raw.strip():
            continue
        message, is_log = strip_prefix(raw)
        rule, details = _match(message)
        if rule is None and not is_log:
            other += 1
            continue
        if rule is not None and rule.gpu_evidence and evidence is None:
            evidence = number
        key = message
        if key in entries:
            entries[key].lines.append(number)
        else:
            entries[key] = LogEntry(message, [number], rule.verdict if rule else "unknown", rule, details)
    if gpu is not None:
        reason = (
            _("this machine has an NVIDIA GPU (as given)") if gpu else _("this machine has no NVIDIA GPU (as given)")
        )
    elif evidence is not None:
        gpu = True
        reason = _("TensorFlow found an NVIDIA GPU (line {number} is printed only then)").format(number=evidence)
    else:
        reason = _(
            "unknown - lines marked 'depends' are harmless without an NVIDIA GPU and the problem with one "
            "(pass --gpu or --no-gpu, or --nvidia-smi with that machine's output)"
        )
    for entry in entries.values():
        if entry.verdict == "depends" and gpu is not None:
            entry.verdict = "problem" if gpu else "harmless"
    return LogReport(list(entries.values()), len(lines), other, gpu, reason)
