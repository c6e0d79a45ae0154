"""Notebook 02's instruments: the placement log (a child process) and old snippets run safely."""

from __future__ import annotations

import logging
import sys
import warnings

import pytest

from course_utils.doctor import Finding
from course_utils.errors import ParameterError
from course_utils.verify import (
    PLACEMENT_PROGRAM,
    TROUBLESHOOTING_INDEX,
    Attempt,
    attempt,
    gpu_answer,
    parse_placement,
    placement_log,
    short_device,
)

# Captured from TF 2.21 on this project's CPU machine (set_log_device_placement(True), one matmul on CPU:0).
CAPTURED = """\
a: (_Arg): /job:localhost/replica:0/task:0/device:CPU:0
b: (_Arg): /job:localhost/replica:0/task:0/device:CPU:0
MatMul: (MatMul): /job:localhost/replica:0/task:0/device:CPU:0
product_RetVal: (_Retval): /job:localhost/replica:0/task:0/device:CPU:0
a: (_Arg): /job:localhost/replica:0/task:0/device:CPU:0
b: (_Arg): /job:localhost/replica:0/task:0/device:CPU:0
_MklMatMul: (_MklMatMul): /job:localhost/replica:0/task:0/device:CPU:0
product_RetVal: (_Retval): /job:localhost/replica:0/task:0/device:CPU:0
"""


def test_parse_placement_lines():
    records, lines = parse_placement(CAPTURED + "unrelated line\n")
    assert len(records) == len(lines) == 8
    assert [(r.node, r.op, short_device(r.device)) for r in records if "MatMul" in r.op] == [
        ("MatMul", "MatMul", "CPU:0"),
        ("_MklMatMul", "_MklMatMul", "CPU:0"),
    ]


def test_parse_eager_executing_lines():
    records, _ = parse_placement(
        "2026 I tensorflow/core/common_runtime/eager/execute.cc:1752] Executing op MatMul "
        "in device /job:localhost/replica:0/task:0/device:GPU:0\n"
    )
    assert [(r.op, short_device(r.device)) for r in records] == [("MatMul", "GPU:0")]


def test_placement_log_runs_in_a_child_process():
    log = placement_log(size=8)
    assert log.returncode == 0, log.stderr_tail
    assert ("/device:CPU:0", "/job:localhost/replica:0/task:0/device:CPU:0") in log.results
    assert "CPU:0" in log.devices_with_matmul()
    assert all(short_device(asked) == short_device(ran) for asked, ran in log.results)


def test_the_default_program_logs_placement_first():
    lines = [line for line in PLACEMENT_PROGRAM.splitlines() if line.strip()]
    assert lines[:2] == ["import tensorflow as tf",
                         "tf.debugging.set_log_device_placement(True)  # the first statement: log every placement "
                         "from here on"]
    assert "results.append((device.name, product.device))" in PLACEMENT_PROGRAM


def test_placement_log_runs_the_notebook_s_own_program_and_reads_its_results():
    log = placement_log(program="results = [('/device:CPU:0', 'ran/device:CPU:0')]\nprint('a: (MatMul): /job:x')\n")
    assert log.returncode == 0, log.stderr_tail
    assert log.results == [("/device:CPU:0", "ran/device:CPU:0")]
    assert [(r.node, r.op, r.device) for r in log.records] == [("a", "MatMul", "/job:x")]  # its output is the log


def test_a_program_that_fails_is_reported_not_raised():
    log = placement_log(program="raise ValueError('broken program')\n")
    assert log.returncode != 0 and log.results == []
    assert "broken program" in log.stderr_tail


def test_placement_log_reports_a_failed_child(monkeypatch):
    monkeypatch.setattr(sys, "executable", "/bin/sh")  # the child cannot even start Python
    log = placement_log(size=8)
    assert log.returncode == 2 and log.results == [] and log.records == []
    assert "The placement-log process exited with status 2" in log.stderr_tail


def test_attempt_returns_the_value_or_the_error():
    assert attempt("1 + 1", lambda: 1 + 1).value == 2
    failed = attempt("[][0]", lambda: [][0])
    assert not failed.ok and failed.error == "IndexError: list index out of range"
    assert "fails: IndexError" in str(failed)


def test_attempt_collects_warnings_and_restores_the_logger():
    logger = logging.getLogger("tensorflow")
    level = logger.level

    seen = []

    class Spy(logging.Handler):
        def emit(self, record):
            seen.append(record)

    spy = Spy()
    logger.addHandler(spy)

    def noisy():
        logger.warning(
            "From /tmp/ipykernel_1/2.py:3: is_gpu_available is deprecated.\nInstructions for updating: use X"
        )
        warnings.warn("old API", DeprecationWarning, stacklevel=1)
        return False

    result = attempt("noisy()", noisy)
    assert isinstance(result, Attempt) and result.ok and result.value is False
    assert result.warnings == ["is_gpu_available is deprecated. Instructions for updating: use X", "old API"]
    assert logger.level == level and not any(type(h).__name__ == "_Collect" for h in logger.handlers)
    assert seen == [] and spy in logger.handlers  # the logger's own handlers were silenced, then restored
    logger.removeHandler(spy)


def test_keras_3_weights_device_snippets():
    import keras
    from keras import layers

    model = keras.Sequential([layers.Dense(4, activation="relu"), layers.Dense(2)])
    before = attempt("model.layers[0].weights[0].device", lambda: model.layers[0].weights[0].device)
    assert before.error == "IndexError: list index out of range"
    model.build((None, 3))
    after = attempt("model.layers[0].weights[0].device", lambda: model.layers[0].weights[0].device)
    assert after.error.startswith("AttributeError") and "'device'" in after.error
    fixed = attempt("w.value.device", lambda: model.layers[0].weights[0].value.device)
    assert fixed.ok and fixed.value.endswith(("CPU:0", "GPU:0"))


# ----------------------------------------------------------------------------- the answer

NO_DRIVER = Finding("no-nvidia-driver", "warning", "No NVIDIA driver was found.", "Install it.")
NO_GPU_SEEN = Finding("tensorflow-sees-no-gpu", "info", "TensorFlow sees no GPU.", "Nothing to do.")
DLOPEN = Finding("gpu-libraries-not-loaded", "error", "Cannot dlopen some GPU libraries.", "Install the wheels.")
ON_GPU = [("/device:CPU:0", "/job:localhost/replica:0/task:0/device:CPU:0"),
          ("/device:GPU:0", "/job:localhost/replica:0/task:0/device:GPU:0")]


def test_yes_needs_a_gpu_listed_and_a_product_that_ran_there():
    answer = gpu_answer(["NVIDIA H100 80GB HBM3"], ON_GPU, "unused")
    assert answer.usable and str(answer) == (
        "TensorFlow can use a GPU here: yes, because TensorFlow lists 1 GPU (NVIDIA H100 80GB HBM3), "
        "and a matrix product placed on GPU:0 ran there")
    assert answer.as_asked("gpu") and answer.as_asked("auto")
    assert answer.label("gpu").endswith("; DEVICE='gpu' requires a GPU")
    assert answer.advice().startswith("The GPU works")


def test_a_listed_gpu_that_did_not_run_the_product_is_a_no():
    moved = [("/device:GPU:0", "/job:localhost/replica:0/task:0/device:CPU:0")]
    answer = gpu_answer(["GPU"], moved, "unused", [NO_GPU_SEEN])
    assert not answer.usable and "lists 1 GPU(s), but no matrix product placed on a GPU ran there" in str(answer)
    assert not answer.as_asked("gpu") and answer.as_asked("auto") and answer.as_asked("cpu")


def test_no_gpu_gives_tensorflow_s_reason_and_the_worst_finding_s_entry():
    answer = gpu_answer([], ON_GPU[:1], "this TensorFlow build has no CUDA support", [NO_GPU_SEEN, NO_DRIVER])
    assert str(answer) == "TensorFlow can use a GPU here: no, because this TensorFlow build has no CUDA support"
    assert (answer.see, answer.finding) == ("docs/troubleshooting.md#nvidia-smi-not-found", "no-nvidia-driver")
    assert answer.advice() == (
        "No GPU: TensorFlow runs on the CPU here. The doctor's main finding is no-nvidia-driver. "
        "See docs/troubleshooting.md#nvidia-smi-not-found, or run `course doctor` in a terminal.")
    assert gpu_answer([], [], "x", [NO_DRIVER, DLOPEN]).see == "docs/troubleshooting.md#cannot-dlopen"  # error first
    assert not answer.as_asked("GPU") and answer.label("auto").endswith("; DEVICE='auto' accepts the CPU")


def test_without_a_finding_that_has_an_entry_the_index_is_named():
    answer = gpu_answer([], [], "no GPU", [Finding("nvcc-not-used", "info", "m", "f")])
    assert (answer.see, answer.finding) == (TROUBLESHOOTING_INDEX, None)
    assert "See docs/troubleshooting.md#index" in answer.advice()


def test_a_device_choice_that_is_not_one_is_refused():
    with pytest.raises(ParameterError):
        gpu_answer([], [], "no GPU").as_asked("tpu")
