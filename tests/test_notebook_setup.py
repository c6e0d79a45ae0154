"""setup(), checkpoint() and the device choice - the cells every notebook starts and ends with."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

import course_utils
from course_utils.device import choose_device
from course_utils.errors import DeviceError, ParameterError
from course_utils.notebook import CheckpointError, checkpoint, notebook_parameters
from course_utils.results import read_results


def run_python(code: str, **env: str) -> subprocess.CompletedProcess:
    import os

    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True, env={**os.environ, **env}
    )


def test_setup_applies_smoke_records_and_reports(monkeypatch, tmp_path, capsys):
    monkeypatch.setenv("COURSE_SMOKE", "1")
    ns = {"EPOCHS": 10, "IMAGES": None, "SEED": 3, "DEVICE": "cpu", "lower": 1}
    course = course_utils.setup(ns, "99_test", smoke={"EPOCHS": 1, "IMAGES": 100})
    out = capsys.readouterr().out
    assert ns["EPOCHS"] == 1 and ns["IMAGES"] == 100
    assert "Smoke mode (COURSE_SMOKE=1): EPOCHS 10 -> 1, IMAGES None -> 100" in out
    assert course.device.name == "/CPU:0" and "DEVICE='cpu'" in course.device.reason
    record = read_results(tmp_path / "results" / "99_test.json")
    assert record["smoke"] is True
    assert record["parameters"] == {"EPOCHS": 1, "IMAGES": 100, "SEED": 3, "DEVICE": "cpu"}
    assert record["environment"]["tensorflow"] == course.tf.__version__
    assert record["environment"]["device"] == "/CPU:0"
    course.record(accuracy=0.5)
    assert read_results(course.recorder.path)["results"]["accuracy"] == 0.5


def test_setup_rejects_bad_smoke_switch(monkeypatch):
    monkeypatch.setenv("COURSE_SMOKE", "please")
    with pytest.raises(ParameterError):
        course_utils.setup({"EPOCHS": 1}, "99_test", smoke={"EPOCHS": 1})


def test_setup_keeps_tensorflow_quiet_and_uninitialised():
    # A fresh process: the C++ start-up logs must not reach stderr, and device configuration
    # (which fails once the runtime is initialised) must still be possible after setup.
    result = run_python(
        """
        import course_utils
        course = course_utils.setup({"SEED": 0}, "99_quiet")
        tf = course.tf
        cpu = tf.config.list_physical_devices("CPU")[0]
        tf.config.set_logical_device_configuration(cpu, [tf.config.LogicalDeviceConfiguration()] * 2)
        print(len(tf.config.list_logical_devices("CPU")))
        from course_utils.tf_setup import startup_log
        print("captured", len(startup_log()) > 0)
        """,
        COURSE_OFFLINE="1",
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip().splitlines()[-2:] == ["2", "captured True"]
    assert "oneDNN" not in result.stderr and "cuda" not in result.stderr.lower()


def test_seed_makes_weights_reproducible():
    code = """
        import course_utils, keras
        course_utils.setup({"SEED": 7}, "99_seed")
        m = keras.Sequential([keras.Input((4,)), keras.layers.Dense(3)])
        print(float(m.layers[0].kernel.numpy().sum()))
    """
    first, second = (run_python(code).stdout.splitlines()[-1] for _ in range(2))
    assert first == second


def test_device_choices():
    with pytest.raises(ParameterError, match="'tpu'"):
        choose_device("tpu")
    cpu = choose_device("cpu")
    assert cpu.name == "/CPU:0" and cpu.kind == "CPU" and cpu.description
    import tensorflow as tf

    auto = choose_device("auto")
    if tf.config.list_physical_devices("GPU"):
        assert auto.name == "/GPU:0" and choose_device("gpu").name == "/GPU:0"
    else:
        assert auto.name == "/CPU:0" and auto.reason.startswith("no GPU visible: ")
        with pytest.raises(DeviceError) as info:
            choose_device("gpu")
        assert "course doctor" in info.value.fix or "DEVICE='auto'" in info.value.fix


def test_checkpoint_passes_and_fails(capsys):
    checkpoint({"a": True, "b": True})
    assert "Checkpoint passed: 2 of 2" in capsys.readouterr().out
    with pytest.raises(CheckpointError, match="accuracy above 0.9"):
        checkpoint({"ran": True, "accuracy above 0.9": False})
    assert "[FAILED] accuracy above 0.9" in capsys.readouterr().out
    with pytest.raises(ValueError):
        checkpoint({})


def test_notebook_parameters_are_upper_case_plain_values():
    ns = {"EPOCHS": 1, "DATASET": "mnist", "lower": 2, "MODEL": object(), "_HIDDEN": 1}
    assert notebook_parameters(ns) == {"EPOCHS": 1, "DATASET": "mnist"}
