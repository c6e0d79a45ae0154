"""course_utils.doctor.logs.RULES: a line of each kind gets its rule's code and verdict, and every rule has one here.

The data file itself (schema, patterns, translations) is tests/doctor/test_data_files.py's."""

from __future__ import annotations

import pytest

from course_utils.doctor.logs import RULES, classify

# (a line as TensorFlow prints it, without its prefix; the rule's code; its verdict with no word about the GPU)
LINES = [
    ("Unable to register cuDNN factory: Attempting to register factory for plugin cuDNN when one has already been "
     "registered", "cuda-plugin-registered-twice", "harmless"),
    ("TF-TRT Warning: Could not find TensorRT", "tensorrt-not-found", "harmless"),
    ("successful NUMA node read from SysFS had negative value (-1), but there must be at least one NUMA node, so "
     "returning NUMA node zero", "numa-node-unknown", "harmless"),
    ("Your kernel may have been built without NUMA support.", "numa-node-unreadable", "harmless"),
    ("oneDNN custom operations are on. You may see slightly different numerical results due to floating-point "
     "round-off errors from different computation orders.", "onednn-custom-operations", "harmless"),
    ("This TensorFlow binary is optimized to use available CPU instructions in performance-critical operations.",
     "cpu-instructions", "harmless"),
    ("WARNING: All log messages before absl::InitializeLog() is called are written to STDERR", "absl-logging-notice",
     "harmless"),
    ("Created device /job:localhost/replica:0/task:0/device:GPU:0 with 9558 MB memory", "gpu-device-created",
     "harmless"),
    ("Loaded cuDNN version 90300", "cudnn-loaded", "harmless"),
    ("is_gpu_available (from tensorflow.python.framework.test_util) is deprecated and will be removed",
     "is-gpu-available-deprecated", "harmless"),
    ("Executor start aborting (this does not indicate an error and you can ignore this message): UNIMPLEMENTED: DNN "
     "library is not found.", "executor-aborted-after-error", "harmless"),
    ("Couldn't get ptxas version string: INTERNAL: Couldn't invoke ptxas --version", "ptxas-fallback-to-driver",
     "harmless"),
    ("Loaded runtime CuDNN library: 8.0.5 but source was compiled with: 8.6.0.  CuDNN library needs to have matching "
     "major version", "cudnn-mismatch", "problem"),
    ("UNIMPLEMENTED: DNN library is not found.", "dnn-library-not-found", "problem"),
    ("Failed to get convolution algorithm. This is probably because cuDNN failed to initialize, so try looking to see "
     "if a warning log message was printed above.", "cudnn-failed-to-initialize", "problem"),
    ("OOM when allocating tensor with shape[256,32,28,28] and type float on /job:localhost/replica:0/task:0/"
     "device:GPU:0 by allocator GPU_0_bfc", "out-of-memory", "problem"),
    ("RuntimeError: Physical devices cannot be modified after being initialized", "devices-already-initialized",
     "problem"),
    ("A module that was compiled using NumPy 1.x cannot be run in", "numpy-2-abi", "problem"),
    ("ptxas returned an error during compilation of ptx to sass: 'INTERNAL: Failed to launch ptxas'", "ptxas-missing",
     "problem"),
    ("ptxas returned an error during compilation of ptx to sass: 'INTERNAL: ptxas 12.3.103 has a bug'", "ptxas-failed",
     "problem"),
    ("function Subscribe(&subscriber_, (CUpti_CallbackFunc)ApiCallback, this)failed with error "
     "CUPTI_ERROR_INSUFFICIENT_PRIVILEGES", "cupti-insufficient-privileges", "problem"),
    ("Cannot dlopen some GPU libraries. Please make sure the missing libraries mentioned above are installed properly.",
     "gpu-libraries-not-loaded", "problem"),
    ("failed call to cuInit: CUDA_ERROR_NO_DEVICE: no CUDA-capable device is detected", "cuinit-no-device", "depends"),
    ("failed call to cuInit: CUDA_ERROR_UNKNOWN: unknown error", "cuinit-unknown-error", "depends"),
    ("failed call to cuInit: INTERNAL: CUDA error: Failed call to cuInit: UNKNOWN ERROR (303)", "cuinit-failed",
     "depends"),
    ("Could not find cuda drivers on your machine, GPU will not be used.", "cuda-drivers-not-found", "depends"),
    ("Ignore above cudart dlerror if you do not have a GPU set up on your machine.", "cudart-dlerror-notice",
     "depends"),
    ("Could not load dynamic library 'libcupti.so.11.2'; dlerror: libcupti.so.11.2: cannot open", "cupti-not-loaded",
     "depends"),
    ("Could not load dynamic library 'cudart64_110.dll'; dlerror: cudart64_110.dll not found",
     "windows-dll-not-loaded", "depends"),
    ("Could not load dynamic library 'libcudnn.so.9'; dlerror: libcudnn.so.9: cannot open", "library-not-loaded",
     "depends"),
    ("Could not load dynamic library 'libcudart.so.11.0'; dlerror: libcudart.so.11.0: cannot open",
     "library-not-loaded", "depends"),  # the CUDA runtime beside libcupti keeps the general rule
]


@pytest.mark.parametrize("line, code, verdict", LINES, ids=[f"{code}-{n}" for n, (_, code, _) in enumerate(LINES)])
def test_a_line_gets_its_rules_code_and_verdict_and_depends_follows_the_gpu(line, code, verdict):
    [entry] = classify(line).entries
    assert (entry.code, entry.verdict) == (code, verdict)
    assert entry.meaning and entry.fix and entry.rule.source.startswith("https://")
    if verdict == "depends":
        assert [classify(line, gpu=gpu).entries[0].verdict for gpu in (False, True)] == ["harmless", "problem"]
    else:
        assert classify(line, gpu=False).entries[0].verdict == classify(line, gpu=True).entries[0].verdict == verdict


def test_every_rule_has_a_line_here():
    assert {code for _, code, _ in LINES} == {rule.code for rule in RULES}


def test_a_rules_groups_are_the_entrys_details_and_fill_its_meaning():  # a library's name: test_logs
    entry = classify(next(line for line, rule, _ in LINES if rule == "cudnn-mismatch")).entries[0]
    assert entry.details == {"runtime": "8.0.5", "compiled": "8.6.0"}
    assert "8.0.5" in entry.meaning and "8.6.0" in entry.meaning and "{" not in entry.meaning
