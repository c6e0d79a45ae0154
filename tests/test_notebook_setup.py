"""setup(), checkpoint() and the device choice - the cells every notebook starts and ends with."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from concurrent.futures import ThreadPoolExecutor

import pytest

import course_utils
from course_utils.core.errors import DeviceError, ParameterError
from course_utils.device import choose_device
from course_utils.notebook import CheckpointError, checkpoint, lesson_file, notebook_parameters
from course_utils.results import read_results

from .conftest import isolated
from .lessons.solutions import declared_parameters, solved


def test_setup_applies_smoke_records_and_reports_each_call_it_made(monkeypatch, tmp_path, capsys):
    """Nothing configured out of sight: the seed, and on a GPU the memory setting, shown as the calls made."""
    monkeypatch.setenv("COURSE_SMOKE", "1")
    monkeypatch.delenv("COURSE_GPU_MEMORY", raising=False)
    ns = {"EPOCHS": 10, "IMAGES": None, "SEED": 3, "DEVICE": "cpu", "lower": 1}
    course = course_utils.setup(ns, "99_test", smoke={"EPOCHS": 1, "IMAGES": 100})
    out = capsys.readouterr().out
    assert ns["EPOCHS"] == 1 and ns["IMAGES"] == 100
    assert "Smoke mode (COURSE_SMOKE=1): EPOCHS 10 -> 1, IMAGES None -> 100" in out
    assert "setup() made these calls:\n" in out and "    import tensorflow as tf\n" in out
    assert "    keras.utils.set_random_seed(3)  # Python, NumPy and TensorFlow\n" in out
    assert course.device.name == "/CPU:0" and "DEVICE='cpu'" in course.device.reason
    record = read_results(tmp_path / "results" / "99_test.json")  # smoke, tensorflow, device: the hosted tier's
    assert record["parameters"] == {"EPOCHS": 1, "IMAGES": 100, "SEED": 3, "DEVICE": "cpu"}
    line = "GPU memory: no GPU here, nothing to set"  # the CPU machine's answer; with a GPU: growth
    assert line in out and record["environment"]["gpu_memory"] == line
    course.record(accuracy=0.5)
    assert read_results(course.recorder.path)["results"]["accuracy"] == 0.5
    course = course_utils.setup({"DEVICE": "cpu"}, "99_test", gpu_memory=None)  # notebook 03 configures its own
    assert "GPU memory" not in capsys.readouterr().out


@pytest.mark.parametrize(("variable", "value"), [("COURSE_GPU_MEMORY", "half"), ("COURSE_SMOKE", "please")])
def test_a_bad_switch_stops_the_setup_naming_it(monkeypatch, variable, value):
    monkeypatch.setenv(variable, value)
    with pytest.raises(ParameterError, match=f"{variable}='{value}'"):
        course_utils.setup({"EPOCHS": 1, "DEVICE": "cpu"}, "99_test", smoke={"EPOCHS": 1})


# What a notebook's first cell does, in a fresh process: setup() (seeded), a device configuration - which fails
# once the runtime is initialised, so it must still be possible after setup - and a model's first weights.
SETUP_IN_A_FRESH_PROCESS = """
    import sys
    import course_utils
    course = course_utils.setup({"SEED": 7}, "99_setup")  # imports TensorFlow, its start-up logs captured
    import tensorflow as tf
    cpu = tf.config.list_physical_devices("CPU")[0]
    tf.config.set_logical_device_configuration(cpu, [tf.config.LogicalDeviceConfiguration()] * 2)
    print(len(tf.config.list_logical_devices("CPU")))
    from course_utils.core.tf_setup import startup_log
    print("captured", len(startup_log()) > 0, "oneDNN", course.recorder.data["environment"]["onednn"])
    print("start-up done", file=sys.stderr, flush=True)
    import keras
    m = keras.Sequential([keras.Input((4,)), keras.layers.Dense(3)])
    print(float(m.layers[0].kernel.numpy().sum()))
"""


@pytest.fixture(scope="module")
def two_fresh_setups(tmp_path_factory) -> list[subprocess.CompletedProcess]:
    """The same first cell in two fresh processes (TensorFlow's import is 3-4 CPU seconds each):
    each is checked for quiet start-up, and the two are compared for the seed."""
    with isolated(tmp_path_factory.mktemp("setup")):
        # one process with oneDNN's CPU kernels off (most laptops), one with them on (CPUs with AVX-512 VNNI, AMX)
        # both at once: each waits mostly for its own imports
        def first_cell(onednn: str) -> subprocess.CompletedProcess:
            return subprocess.run([sys.executable, "-c", textwrap.dedent(SETUP_IN_A_FRESH_PROCESS)],
                                  capture_output=True, text=True, timeout=300,
                                  env={**os.environ, "TF_ENABLE_ONEDNN_OPTS": onednn})

        with ThreadPoolExecutor() as pool:
            return list(pool.map(first_cell, ("0", "1")))


def test_setup_keeps_tensorflow_quiet_and_uninitialised(two_fresh_setups):
    # A fresh process: the C++ start-up logs must not reach stderr, and device configuration
    # (which fails once the runtime is initialised) must still be possible after setup.
    for result, onednn in zip(two_fresh_setups, (False, True), strict=True):
        assert result.returncode == 0, result.stderr
        assert result.stdout.strip().splitlines()[-3:-1] == ["2", f"captured True oneDNN {onednn}"]
        start_up = result.stderr.split("start-up done")[0]
        assert "oneDNN" not in start_up and "cuda" not in start_up.lower()


def test_seed_makes_weights_reproducible(two_fresh_setups):
    first, second = (result.stdout.splitlines()[-1] for result in two_fresh_setups)
    assert first == second


def test_device_choices():
    import tensorflow as tf

    auto = choose_device("auto")
    if tf.config.list_physical_devices("GPU"):
        assert auto.name == "/GPU:0" and choose_device("gpu").name == "/GPU:0"
    else:
        assert auto.name == "/CPU:0" and auto.reason.startswith("no GPU visible: ")
        with pytest.raises(DeviceError) as info:
            choose_device("gpu")
        assert "course doctor" in info.value.fix or "DEVICE='auto'" in info.value.fix


def test_checkpoint_passes_and_fails_naming_the_failed_checks_only(capsys):
    checkpoint({"a": True, "b": True})
    assert "Checkpoint passed: 2 of 2" in capsys.readouterr().out
    with pytest.raises(CheckpointError) as info:
        checkpoint({"loss went down": True, "accuracy above 0.9": False})
    assert "accuracy above 0.9" in info.value.what and "loss went down" not in info.value.what
    assert "[FAILED] accuracy above 0.9" in capsys.readouterr().out
    with pytest.raises(ValueError):
        checkpoint({})


def test_notebook_parameters_are_upper_case_plain_values():
    ns = {"EPOCHS": 1, "DATASET": "mnist", "lower": 2, "MODEL": object(), "_HIDDEN": 1}
    assert notebook_parameters(ns) == {"EPOCHS": 1, "DATASET": "mnist"}


def test_a_run_gets_a_fresh_work_folder_under_its_own_folder(tmp_path, monkeypatch):
    """Notebook 07's backups, checkpoints and worker logs: under the run's own folder (a run that failed half-way
    left /tmp/course07-* behind, one per run), emptied when the next run asks for it."""
    from course_utils.notebook import Course
    from course_utils.results import Recorder

    monkeypatch.delenv("COURSE_RESULTS_DIR")
    monkeypatch.setenv("COURSE_HOME", str(tmp_path / "out" / "work" / "07_x__N-1"))  # course run: the run's own home
    course = Course("07_x", device=None, recorder=Recorder("07_x", parameters={}, smoke=True))
    folder = course.work_dir()
    assert folder == tmp_path / "out" / "work" / "07_x__N-1" / "work" / "07_x"
    assert folder.is_dir() and list(folder.iterdir()) == []
    (folder / "workers").mkdir()
    (folder / "workers" / "worker-0.log").write_text("left by a run killed half-way", encoding="utf-8")
    assert course.work_dir() == folder and list(folder.iterdir()) == [], "the next run starts empty"
    (folder / "cnn_worker.py").write_text("a program the notebook wrote", encoding="utf-8")
    cluster = course.work_dir("cluster")
    (cluster / "worker-0.log").write_text("an earlier cluster's log", encoding="utf-8")
    assert course.work_dir("cluster") == folder / "cluster" and list(cluster.iterdir()) == []
    assert (folder / "cnn_worker.py").is_file(), "a subfolder is emptied alone: the program beside it stays"
    monkeypatch.setenv("COURSE_RESULTS_DIR", str(tmp_path / "results"))  # a notebook opened by hand: build/work/
    course = Course("07_x", device=None, recorder=Recorder("07_x", parameters={}, smoke=True))
    assert course.work_dir() == tmp_path / "work" / "07_x"


def test_bad_parameters_fail_in_the_setup_cell_before_tensorflow_is_imported(monkeypatch):
    """LEARNING_RATE nan or IMAGES 5 trained to the end and then failed the checkpoint; now setup says why."""
    import course_utils.notebook as notebook

    def not_imported():
        raise AssertionError("TensorFlow was imported before the parameters were checked")

    monkeypatch.setattr(notebook, "quiet_tensorflow", not_imported)
    for bad in ({"LEARNING_RATE": float("nan")}, {"IMAGES": 5, "EPOCHS": 10}):
        with pytest.raises(course_utils.ParameterError) as info:
            course_utils.setup({**declared_parameters("05_cnn_cpu_vs_gpu"), **bad}, "05_cnn_cpu_vs_gpu")
        assert "Change " in info.value.fix


@pytest.mark.parametrize("given", [{"smoke": {"IMAGES": 100}}, {"key_results": ["test_accuracy"]}])
def test_a_course_notebook_keeps_its_caps_and_key_results_out_of_its_setup_call(given):
    with pytest.raises(ParameterError) as info:
        course_utils.setup(declared_parameters("05_cnn_cpu_vs_gpu"), "05_cnn_cpu_vs_gpu", **given)
    assert "live in its lesson file" in info.value.what and "course_utils/lessons/nb05.py" in info.value.fix


def test_a_notebook_of_ones_own_has_no_lesson_file_and_a_renamed_course_notebook_is_refused():
    assert lesson_file("99_test") is None and lesson_file("scratch") is None  # a notebook of one's own
    with pytest.raises(ParameterError) as info:
        lesson_file("05_cnn")  # renamed, or an instructor's copy: it would run without 05's caps
    assert "'05_cnn_cpu_vs_gpu'" in info.value.fix


def test_setup_calls_show_the_gpu_memory_setting_only_with_a_gpu(monkeypatch):
    from course_utils.notebook import setup_calls

    monkeypatch.setenv("TF_CPP_MIN_LOG_LEVEL", "1")
    growth = setup_calls("growth", 2, None)
    assert growth[0].startswith('os.environ["TF_CPP_MIN_LOG_LEVEL"] = "1"')
    assert growth[-1] == ('for gpu in tf.config.list_physical_devices("GPU"): '
                          "tf.config.experimental.set_memory_growth(gpu, True)")
    limit = setup_calls(1024, 1, 0)
    assert limit[-1].endswith("[tf.config.LogicalDeviceConfiguration(memory_limit=1024)])")
    assert not any("memory" in call for call in setup_calls("growth", 0, None) + setup_calls("all", 1, 0))


def test_course_check_records_a_wrong_try_after_the_right_one_and_refuses_an_unknown_exercise(tmp_path, capsys):
    """Outcomes and attempts as a hand-in reads them: tests/tools/classroom/test_progress.py."""
    from course_utils.notebook import Course
    from course_utils.results import Recorder

    path = tmp_path / "03.json"
    course = Course("03_memory", device=None,
                    recorder=Recorder("03_memory", parameters={}, smoke=True, path=path))
    right = solved("03_memory", "Exercise 3.2")["answer"]
    assert course.check("3.2", right).ok and not course.check("3.2", 3).ok
    assert "Exercise 3.2" in capsys.readouterr().out, "the feedback is printed"
    exercises = json.loads(path.read_text())["exercises"]
    assert exercises == {"3.2": {"status": "wrong", "attempts": 2, "right_at": 1}}
    with pytest.raises(ParameterError, match="no exercise '9.9'") as error:
        course.check("9.9", 1)
    assert "3.1, 3.2" in error.value.fix
