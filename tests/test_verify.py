"""Notebook 02's instruments: the placement log (a child process) and old snippets run safely."""

from __future__ import annotations

import logging
import sys
import warnings

from course_utils.verify import Attempt, attempt, parse_placement, placement_log, short_device

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
