"""What each kind of TensorFlow log line means: ``RULES``, one ``LogRule`` per kind, with its verdict and fix.

The table is data, kept apart from the code that reads and classifies a log (``course_utils.doctor.logs``), so
a new kind of line is one entry here. Each rule has a stable ``code``, a verdict (harmless, problem, or depends
on whether the machine has an NVIDIA GPU), one regular expression or a few, what the line means, the fix and a
public source. ``meaning`` and ``fix`` are English, marked ``N_`` (``course_utils.doctor.texts``), and
translated where a ``LogEntry`` shows them.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from course_utils.doctor.texts import N_

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
            "With a GPU: use WSL2, where the current TensorFlow uses it (TF 2.10, the last native-Windows GPU "
            "release, comes with Keras 2, on which the course's notebooks do not run); or, for TF 2.10 itself, install "
            "the CUDA 11.2 / cuDNN 8.1 pair it was built with (`conda install -c conda-forge cudatoolkit=11.2 "
            'cudnn=8.1.0`, then `pip install "tensorflow<2.11" "numpy<2"`). Never download DLLs from third-party '
            "sites."
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
