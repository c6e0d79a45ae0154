"""recommend(): the TensorFlow and the exact commands for a platform, Python and driver."""

from __future__ import annotations

import functools
import itertools
import re

import pytest
from packaging.version import Version

from course_utils.doctor.recommend import VERIFY, Recommendation, recommend, routes
from course_utils.doctor.texts import Note
from course_utils.doctor.versions import PLATFORMS, load

from .note_codes import NOTE_CODES


def note(rec: Recommendation, code: str) -> Note:
    """The note with ``code`` (tests match notes by code, never by wording)."""
    matches = [n for n in rec.notes if n.code == code]
    assert matches, f"{code} not in {rec.note_codes()}"
    return matches[0]


def test_qa_post_native_windows_gets_tf_2_10_by_the_conda_recipe_with_numpy_1():
    # the Q&A post's machine: native Windows, driver 512.77, a GeForce whose name nvidia-smi cut off
    rec = recommend("windows", None, "512.77", "NVIDIA GeForce ...")
    assert rec.tensorflow == "tensorflow<2.11"
    assert (rec.build.tensorflow, rec.build.cuda, rec.build.cudnn) == ("2.10.0", "11.2", "8.1")
    assert rec.commands == [
        "conda create --name tf python=3.10",
        "conda activate tf",
        "conda install -c conda-forge cudatoolkit=11.2 cudnn=8.1.0",
        "pip install --upgrade pip",
        'pip install "tensorflow<2.11" "numpy<2"',  # TF 2.10 does not cap NumPy; NumPy 2 breaks its import
        VERIFY,
    ]
    assert rec.driver_min == "452.39" and rec.driver_ok is True and rec.python == "3.10"
    assert rec.note_codes() == ["windows-native-gpu-last", "numpy-2", "keras-2-only", "gpu-generation-unknown"]


@pytest.mark.parametrize("python, env", [("3.7", "3.7"), ("3.10", "3.10"), ("3.10.11", "3.10"),
                                         ("3.12", "3.10")])  # too new for TF 2.10: a 3.10 environment
def test_native_windows_keeps_a_supported_python_and_makes_3_10_for_a_newer_one(python, env):
    rec = recommend("windows", python)
    assert rec.commands[0] == f"conda create --name tf python={env}" and rec.tensorflow == "tensorflow<2.11"
    assert ("no-gpu-build-for-python" in rec.note_codes()) is (python == "3.12")


def test_linux_python_3_11_gets_current_tensorflow_with_cuda_wheels():
    rec = recommend("linux", "3.11", "535.113.01")
    assert rec.tensorflow == "tensorflow[and-cuda]==2.21.*"
    assert rec.commands == [
        "python3.11 -m venv tf",
        "source tf/bin/activate",
        "pip install --upgrade pip",
        'pip install "tensorflow[and-cuda]==2.21.*"',
        'pip install "tensorboard==2.21.*"',
        VERIFY,
    ]
    assert rec.driver_min == "525.60.13" and rec.driver_ok is True


@pytest.mark.parametrize(
    "python, requirement",
    [
        ("3.13", "tensorflow[and-cuda]==2.21.*"),
        ("3.9", "tensorflow[and-cuda]==2.20.*"),
        ("3.8", "tensorflow==2.13.*"),
    ],
)
def test_python_decides_the_newest_tensorflow(python, requirement):
    rec = recommend("linux", python)
    assert rec.tensorflow == requirement
    codes = rec.note_codes()
    if "[and-cuda]" not in requirement:
        assert "system-cuda-needed" in codes and "pip-symlink-step" not in codes
        assert rec.build.cuda in note(rec, "system-cuda-needed").text  # the versions to install, from the table
    else:
        assert "pip-symlink-step" in codes and "system-cuda-needed" not in codes
    assert ("python-limits-tensorflow" in codes) is (python != "3.13")


@pytest.mark.parametrize("python", ["3.14", "3.5"])
def test_untested_python_gets_an_environment_with_a_tested_one(python):
    rec = recommend("linux", python)
    assert rec.tensorflow == "tensorflow[and-cuda]==2.21.*" and rec.python == "3.13"
    assert rec.commands[0] == "python3.13 -m venv tf"
    assert "no-gpu-build-for-python" in rec.note_codes() and "python-limits-tensorflow" not in rec.note_codes()


@pytest.mark.parametrize(
    "platform, driver, driver_cuda, ok, fallback",
    [
        ("linux", "525.60.13", None, True, None),
        ("linux", "525.60.12", None, False, "tensorflow==2.14.*"),
        ("linux", "418.181.07", None, False, None),
        ("linux", "535.113.01", "11.8", False, "tensorflow==2.14.*"),  # nvidia-smi's CUDA Version is authoritative
        ("wsl2", "528.33", None, True, None),
        ("wsl2", "528.32", None, False, "tensorflow==2.14.*"),
        ("windows", "452.39", None, True, None),
        ("windows", "452.38", None, False, None),
    ],
)
def test_driver_check_and_fallback(platform, driver, driver_cuda, ok, fallback):
    rec = recommend(platform, "3.11" if platform != "windows" else "3.10", driver, driver_cuda=driver_cuda)
    assert rec.driver_ok is ok and rec.fallback == fallback
    assert ("driver-too-old" in rec.note_codes()) is (not ok)


@pytest.mark.parametrize(
    "driver, code", [("ERR!", "driver-unreadable"), ("", "driver-minimum")]
)
def test_unreadable_driver_is_a_note(driver, code):
    rec = recommend("linux", "3.11", driver)
    assert rec.driver_ok is None and rec.tensorflow == "tensorflow[and-cuda]==2.21.*"
    assert code in rec.note_codes() and rec.driver_min in note(rec, code).text


def test_a_cpu_only_windows_machine_gets_the_plain_wheel_in_a_venv():  # Linux: test_first_answer's empty captures
    windows = recommend("windows", "3.12", gpu=False)
    assert windows.tensorflow == "tensorflow==2.21.*" and windows.commands[:2] == [
        "py -3.12 -m venv tf",
        r"tf\Scripts\activate",
    ]


@functools.cache
def every_recommendation() -> tuple[Recommendation, ...]:
    """Every route ``routes()`` gives for each platform, a Python of each line (and bad ones), a driver on each side
    of each minimum (and junk) and each kind of GPU; made once, the tests only read them."""
    pythons = [None, "3.6", "3.7", "3.8", "3.9", "3.10", "3.11", "3.12", "3.13", "3.14", "x"]
    drivers = [None, "418.181.07", "452.39", "470.256.02", "512.77", "525.60.13", "528.33", "580.65.06", "junk"]
    gpus = [None, False, "NVIDIA GeForce GTX 960", "NVIDIA GeForce RTX 5090", "NVIDIA GeForce ...", "Tesla K80",
            "NVIDIA H100 80GB HBM3"]
    return tuple(rec for platform, python, driver, gpu in itertools.product(PLATFORMS, pythons, drivers, gpus)
                 for rec in routes(platform, python, driver, gpu))


def test_every_route_installs_its_tensorflow_and_verifies_it_and_the_sweep_crosses_every_line():
    for rec in every_recommendation():
        assert rec.commands[-1] == VERIFY and any(rec.tensorflow in command for command in rec.commands), rec.text()
        data = rec.to_dict()
        assert data["recommended_install"] == rec.commands and data["platform"] == rec.platform
        assert data["notes"] == [{"code": n.code, "text": n.text} for n in rec.notes]
    offered = {b.minor for rec in every_recommendation() for b in (rec.build, rec.fallback_build) if b}
    assert {"2.10", "2.11", "2.13", "2.14", "2.16", "2.21"} <= offered, sorted(offered)  # the NumPy and Keras lines


def test_every_note_code_is_registered_and_given_once():
    recs = every_recommendation()
    given = {code for rec in recs for code in rec.note_codes()}
    assert given == set(NOTE_CODES), "NOTE_CODES lists exactly the codes recommend() gives"
    for rec in recs:
        assert len(rec.note_codes()) == len(set(rec.note_codes())), f"a code given twice: {rec.note_codes()}"


def test_a_note_from_a_versions_rule_is_named_after_the_rule():
    rules = set(load().rules)
    for rec in every_recommendation():
        for n in rec.notes:
            if n.code in rules:
                assert load().rule(n.code)["text"] in n.text, n


# ----------------------------------------------------------------- Keras 2 lines are flagged where they are offered


def test_tensorflow_2_16_and_newer_gets_no_keras_2_note():
    for rec in every_recommendation():
        offered = [rec.build] if rec.build else []
        if all(Version(b.minor) >= Version("2.16") for b in offered) and rec.fallback is None:
            assert "keras-2-only" not in rec.note_codes(), rec.text()


# ----------------------------------------------------------------- the GPU's generation changes the answer


@pytest.mark.parametrize("python, gpu", [("3.13", "GeForce GTX 980"), ("3.12", "NVIDIA GeForce ...")])
def test_a_reported_maxwell_compute_capability_gets_tf_2_16_and_a_python_it_supports(python, gpu):
    # the captured GTX 960 named by nvidia-smi: test_doctor_gpus.py; here the compute capability given, the name cut
    rec = recommend("linux", python, None, gpu, compute_capability="5.2")
    assert rec.tensorflow == "tensorflow[and-cuda]==2.16.*" and rec.python == "3.12"
    assert ("no-gpu-build-for-python" in rec.note_codes()) is (python == "3.13")
    assert "gpu-generation-unknown" not in rec.note_codes()


def test_a_card_older_than_maxwell_is_told_no_tested_build_covers_it():
    rec = recommend("linux", "3.11", None, "Tesla K80")
    assert rec.tensorflow == "tensorflow[and-cuda]==2.21.*"
    assert "3.7" in note(rec, "gpu-too-old").text and "CPU" in note(rec, "gpu-too-old").text


@pytest.mark.parametrize("driver", [None, "527.41", "junk"])
def test_wsl2_answers_state_one_driver_minimum(driver):
    wsl_min = load().rule("wsl2")["driver_min"]
    rec = recommend("wsl2", "3.11", driver)
    assert rec.driver_min == wsl_min == "528.33"
    mentioned = set(re.findall(r"\b5\d\d\.\d\d\b", rec.text())) - {driver}
    assert mentioned == {wsl_min}, rec.text()


def test_no_recipe_installs_an_and_cuda_extra_that_pip_cannot_resolve():
    # tensorflow[and-cuda]==2.14.* pins tensorrt==8.5.3.1, which PyPI does not serve (pip: ResolutionImpossible)
    for rec in every_recommendation():
        for text in [*rec.commands, rec.fallback_install or "", *(n.text for n in rec.notes)]:
            assert 'pip install "tensorflow[and-cuda]==2.14.' not in text, rec.text()
