"""course_utils.doctor.log_rules: one line of each kind gets its rule's verdict, and every rule is well formed."""

from __future__ import annotations

import re

import pytest

from course_utils.doctor.log_rules import RULES
from course_utils.doctor.logs import classify

from ..conftest import ROOT

LOGS = ROOT / "tests" / "fixtures" / "tf_logs"

HARMLESS = [
    "Unable to register cuDNN factory: Attempting to register factory for plugin cuDNN when one has already been "
    "registered",
    "Unable to register cuFFT factory: Attempting to register factory for plugin cuFFT when one has already been "
    "registered",
    "Unable to register cuBLAS factory: Attempting to register factory for plugin cuBLAS when one has already been "
    "registered",
    "TF-TRT Warning: Could not find TensorRT",
    "successful NUMA node read from SysFS had negative value (-1), but there must be at least one NUMA node, so "
    "returning NUMA node zero",
    "Your kernel may have been built without NUMA support.",
    "oneDNN custom operations are on. You may see slightly different numerical results due to floating-point "
    "round-off errors from different computation orders. To turn them off, set the environment variable "
    "`TF_ENABLE_ONEDNN_OPTS=0`.",
    "This TensorFlow binary is optimized to use available CPU instructions in performance-critical operations.",
    "WARNING: All log messages before absl::InitializeLog() is called are written to STDERR",
    "Could not load dynamic library 'libnvinfer.so.7'; dlerror: libnvinfer.so.7: cannot open shared object file",
]
PROBLEM = [
    "Cannot dlopen some GPU libraries. Please make sure the missing libraries mentioned above are installed properly.",
    "Skipping registering GPU devices...",
    "UNIMPLEMENTED: DNN library is not found.",
    "A module that was compiled using NumPy 1.x cannot be run in",
    "OP_REQUIRES failed at xla_ops.cc:489 : Not found: ./bin/ptxas not found",
    "Failed to get convolution algorithm. This is probably because cuDNN failed to initialize, so try looking to see "
    "if a warning log message was printed above.",
    "RuntimeError: Physical devices cannot be modified after being initialized",
    "function Subscribe(&subscriber_, (CUpti_CallbackFunc)ApiCallback, this)failed with error "
    "CUPTI_ERROR_INSUFFICIENT_PRIVILEGES",
]
DEPENDS = [
    ("Could not find cuda drivers on your machine, GPU will not be used.", "cuda-drivers-not-found"),
    ("failed call to cuInit: CUDA_ERROR_NO_DEVICE: no CUDA-capable device is detected", "cuinit-no-device"),
    ("failed call to cuInit: CUDA_ERROR_UNKNOWN: unknown error", "cuinit-unknown-error"),
    ("Could not load dynamic library 'libcudnn.so.9'; dlerror: libcudnn.so.9: cannot open", "library-not-loaded"),
    (
        "Could not load dynamic library 'cudart64_110.dll'; dlerror: cudart64_110.dll not found",
        "windows-dll-not-loaded",
    ),
    ("Ignore above cudart dlerror if you do not have a GPU set up on your machine.", "cudart-dlerror-notice"),
    ("Could not load dynamic library 'libcupti.so.11.2'; dlerror: libcupti.so.11.2: cannot open", "cupti-not-loaded"),
]


@pytest.mark.parametrize("line", HARMLESS)
def test_lines_students_mistake_for_failures_are_harmless(line):
    [entry] = classify(line).entries
    assert entry.verdict == "harmless" and entry.rule.source.startswith("https://")


@pytest.mark.parametrize("line", PROBLEM)
def test_problem_lines_are_the_problem_with_a_fix(line):
    report = classify(line)
    assert report.problem is not None and report.problem.fix and report.problem.rule.source.startswith("https://")


@pytest.mark.parametrize("line, code", DEPENDS)
def test_lines_that_depend_on_a_gpu(line, code):
    assert classify(line).entries[0].code == code
    assert classify(line).entries[0].verdict == "depends"
    assert classify(line, gpu=False).entries[0].verdict == "harmless"
    assert classify(line, gpu=True).problem.code == code


def test_the_windows_dll_fix_is_the_native_windows_recipe_and_the_so_fix_the_pip_wheels():
    dll = classify(DEPENDS[4][0], gpu=True).problem
    assert "cudnn=8.1.0" in dll.fix and "third-party" in dll.fix and dll.details["library"] == "cudart64_110.dll"
    so = classify(DEPENDS[3][0], gpu=True).problem
    assert "tensorflow[and-cuda]" in so.fix


def test_every_rule_is_well_formed_and_reachable():
    codes = [r.code for r in RULES]
    assert len(codes) == len(set(codes))
    for rule in RULES:
        assert re.fullmatch(r"[a-z0-9]+(-[a-z0-9]+)*", rule.code) and rule.meaning and rule.fix
        assert rule.source.startswith("https://") and rule.verdict in ("harmless", "problem", "depends")
    examples = [*HARMLESS, *PROBLEM, *(line for line, _ in DEPENDS)]
    found = {classify(line).entries[0].code for line in examples}
    for name in LOGS.glob("*.txt"):
        found |= set(classify(name.read_text(encoding="utf-8")).codes())
    more = [
        "Created device /job:localhost/replica:0/task:0/device:GPU:0 with 9558 MB memory",
        "Loaded cuDNN version 90300",
        "is_gpu_available (from tensorflow.python.framework.test_util) is deprecated and will be removed",
        "OOM when allocating tensor with shape[256,32,28,28] and type float on /job:localhost/replica:0/task:0/"
        "device:GPU:0 by allocator GPU_0_bfc",
        "ptxas returned an error during compilation of ptx to sass: 'INTERNAL: ptxas 12.3.103 has a bug'",
        "could not open file to read NUMA node: /sys/bus/pci/devices/0000:01:00.0/numa_node",
    ]
    found |= {classify(line).entries[0].code for line in more}
    assert found == set(codes)
