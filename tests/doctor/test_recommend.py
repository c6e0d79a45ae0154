"""recommend(): the TensorFlow and the exact commands for a platform, Python and driver."""

from __future__ import annotations

import itertools
import re

import pytest

from course_utils.doctor.recommend import NOTE_CODES, VERIFY, Note, Recommendation, recommend, routes
from course_utils.doctor.versions import load


def note(rec: Recommendation, code: str) -> Note:
    """The note with ``code`` (tests match notes by code, never by wording)."""
    matches = [n for n in rec.notes if n.code == code]
    assert matches, f"{code} not in {rec.note_codes()}"
    return matches[0]


def test_seed_000_native_windows_gets_tf_2_10_by_the_conda_recipe():
    rec = recommend("windows", None, "512.77", "NVIDIA GeForce ...")
    assert rec.tensorflow == "tensorflow<2.11"
    assert (rec.build.tensorflow, rec.build.cuda, rec.build.cudnn) == ("2.10.0", "11.2", "8.1")
    assert rec.commands == [
        "conda create --name tf python=3.10",
        "conda activate tf",
        "conda install -c conda-forge cudatoolkit=11.2 cudnn=8.1.0",
        "pip install --upgrade pip",
        'pip install "tensorflow<2.11"',
        VERIFY,
    ]
    assert rec.driver_min == "452.39" and rec.driver_ok is True and rec.python == "3.10"
    assert rec.note_codes() == ["windows-native-gpu-last"]


def test_seed_000_wsl2_route_needs_a_newer_windows_driver():
    native, wsl = routes("windows", None, "512.77")
    assert native.platform == "windows" and wsl.platform == "wsl2"
    assert wsl.tensorflow == "tensorflow[and-cuda]==2.21.*"
    assert wsl.driver_min == "528.33" and wsl.driver_ok is False
    assert wsl.fallback == "tensorflow[and-cuda]==2.14.*"  # CUDA 11.8: runs on a CUDA 11 driver
    assert note(wsl, "wsl2").text == load().rule("wsl2")["text"]  # names Windows 10 19044 and the driver


@pytest.mark.parametrize("python", ["3.7", "3.8", "3.10", "3.10.11"])
def test_native_windows_keeps_a_supported_python(python):
    rec = recommend("windows", python)
    assert rec.commands[0] == f"conda create --name tf python={python[:4].rstrip('.')}"


def test_native_windows_with_a_too_new_python_creates_a_3_10_environment():
    rec = recommend("windows", "3.12")
    assert rec.commands[0] == "conda create --name tf python=3.10" and rec.tensorflow == "tensorflow<2.11"
    assert "no-gpu-build-for-python" in rec.note_codes()


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
        ("3.7", "tensorflow==2.11.*"),
        ("3.6", "tensorflow==2.6.*"),
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


@pytest.mark.parametrize("python", ["3.14", "3.5", "2.7"])
def test_untested_python_gets_an_environment_with_a_tested_one(python):
    rec = recommend("linux", python)
    assert rec.tensorflow == "tensorflow[and-cuda]==2.21.*" and rec.python == "3.13"
    assert rec.commands[0] == "python3.13 -m venv tf"
    assert "no-gpu-build-for-python" in rec.note_codes() and "python-limits-tensorflow" not in rec.note_codes()


@pytest.mark.parametrize(
    "platform, driver, ok, fallback",
    [
        ("linux", "525.60.13", True, None),
        ("linux", "525.60.12", False, "tensorflow[and-cuda]==2.14.*"),
        ("linux", "470.256.02", False, "tensorflow[and-cuda]==2.14.*"),
        ("linux", "450.80.02", False, "tensorflow[and-cuda]==2.14.*"),
        ("linux", "418.181.07", False, None),
        ("wsl2", "528.33", True, None),
        ("wsl2", "528.32", False, "tensorflow[and-cuda]==2.14.*"),
        ("windows", "452.39", True, None),
        ("windows", "452.38", False, None),
    ],
)
def test_driver_check_and_fallback(platform, driver, ok, fallback):
    rec = recommend(platform, "3.11" if platform != "windows" else "3.10", driver)
    assert rec.driver_ok is ok and rec.fallback == fallback
    assert ("driver-too-old" in rec.note_codes()) is (not ok)


def test_driver_cuda_from_nvidia_smi_is_authoritative():
    # A 12.x driver number but nvidia-smi says the driver stops at CUDA 11.x: trust nvidia-smi.
    rec = recommend("linux", "3.11", "535.113.01", driver_cuda="11.8")
    assert rec.driver_ok is False and rec.fallback == "tensorflow[and-cuda]==2.14.*"


@pytest.mark.parametrize(
    "driver, code", [("abc", "driver-unreadable"), ("", "driver-minimum"), ("ERR!", "driver-unreadable")]
)
def test_unreadable_driver_is_a_note(driver, code):
    rec = recommend("linux", "3.11", driver)
    assert rec.driver_ok is None and rec.tensorflow == "tensorflow[and-cuda]==2.21.*"
    assert code in rec.note_codes() and rec.driver_min in note(rec, code).text


def test_macos_uses_tensorflow_metal():
    rec = recommend("macos", "3.12")
    assert rec.tensorflow == "tensorflow" and not rec.gpu and rec.driver_min is None
    assert "pip install tensorflow-metal" in rec.commands
    assert rec.note_codes() == ["macos", "tensorboard-separate"]


def test_cpu_only_machines_get_the_plain_wheel():
    cpu = recommend("linux", "3.11", gpu=False)
    assert cpu.tensorflow == "tensorflow==2.21.*" and "cpu-only-install" in cpu.note_codes()
    windows = recommend("windows", "3.12", gpu=False)
    assert windows.tensorflow == "tensorflow==2.21.*" and windows.commands[:2] == [
        "py -3.12 -m venv tf",
        r"tf\Scripts\activate",
    ]


def test_unknown_platform_is_an_error():
    with pytest.raises(ValueError):
        recommend("solaris")


@pytest.mark.parametrize(
    "platform, python, driver",
    list(
        itertools.product(
            ["linux", "wsl2", "windows", "macos"],
            [None, "3.6", "3.9", "3.10", "3.11", "3.13", "3.14", "x"],
            [None, "390.25", "512.77", "528.33", "580.65.06", "junk"],
        )
    ),
)
def test_every_input_gets_commands(platform, python, driver):
    rec = recommend(platform, python, driver)
    assert rec.commands[-1] == VERIFY
    assert any(rec.tensorflow in command for command in rec.commands)
    data = rec.to_dict()
    assert data["recommended_install"] == rec.commands and data["platform"] == platform
    assert data["notes"] == [{"code": n.code, "text": n.text} for n in rec.notes]


# ----------------------------------------------------------------- notes are codes plus text


def every_recommendation() -> list[Recommendation]:
    platforms = ["linux", "wsl2", "windows", "macos"]
    pythons = [None, "3.6", "3.8", "3.11", "3.13", "3.14", "x"]
    drivers = [None, "418.181.07", "512.77", "580.65.06", "junk"]
    return [
        rec
        for platform, python, driver, gpu in itertools.product(platforms, pythons, drivers, [None, False])
        for rec in routes(platform, python, driver, gpu)
    ]


def test_every_note_code_is_kebab_case_registered_and_given():
    recs = every_recommendation()
    given = {code for rec in recs for code in rec.note_codes()}
    assert given == set(NOTE_CODES), "NOTE_CODES lists exactly the codes recommend() gives"
    for code in NOTE_CODES:
        assert re.fullmatch(r"[a-z0-9]+(-[a-z0-9]+)*", code), code
    assert len(set(NOTE_CODES.values())) == len(NOTE_CODES), "one meaning per code"
    for rec in recs:
        assert len(rec.note_codes()) == len(set(rec.note_codes())), f"a code given twice: {rec.note_codes()}"


def test_a_note_from_a_versions_rule_is_named_after_the_rule():
    rules = set(load().rules)
    for rec in every_recommendation():
        for n in rec.notes:
            if n.code in rules:
                assert load().rule(n.code)["text"] in n.text, n


def test_note_reads_as_its_text_and_rejects_a_code_that_is_not_kebab_case():
    n = Note("python-limits-tensorflow", "any words")
    assert str(n) == "any words" and n.to_dict() == {"code": "python-limits-tensorflow", "text": "any words"}
    for bad in ("Python limits", "python_limits", "-python", "python--limits", ""):
        with pytest.raises(ValueError):
            Note(bad, "text")
    rec = recommend("linux", "3.9")
    assert all(f"  note: {n.text}" in rec.text() for n in rec.notes)
