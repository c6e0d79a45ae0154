"""Notebook 01's exercise checks, judged by tables written from each task's text: every answer the task allows is
right, every wrong one is wrong with a reason that is true for that answer."""

from __future__ import annotations

import pytest

from course_utils.doctor.versions import load
from course_utils.lessons import RIGHT, WRONG, nb01

from .solutions import judged, solved

NOTEBOOK = "01_install_versions"


# ----------------------------------------------------------------------------- Exercise 1.1

# Exercise 1.1's task: "Windows 11, with NVIDIA driver 512.77 and a 6 GB GeForce. Its owner wants to run this course
# on the GPU. Which route works? (a) native Windows with TF 2.10; (b) WSL2 with current TensorFlow, after a driver
# update; (c) `pip install tensorflow-gpu` on native Windows; (d) install the CUDA 12 toolkit on Windows."
# Only (b) runs this course (Keras 3, TF 2.16+) on that GPU. (Its spellings, and a letter not offered: multiple_choice,
# test_feedback.py.)
ACCEPT_1_1 = [("b", "WSL2 runs the Linux build; a driver update brings it to 528.33 or newer")]
REJECT_1_1 = [
    ("a", "it comes with Keras 2. The course needs Keras 3 (TF 2.16 or newer)"),  # TF 2.10: Keras 2 (the rules)
    ("C", "tensorflow-gpu is an empty package today"),  # versions.json rule tensorflow-gpu-removed
    ("(d)", "TensorFlow never calls the toolkit"),  # and native Windows has no GPU TensorFlow after 2.10
]


@pytest.mark.parametrize(("answer", "why"), ACCEPT_1_1)
def test_exercise_1_1_accepts(answer, why, capsys):
    result = judged(nb01.check_route, answer, capsys)
    assert result.status == RIGHT, (why, result)
    assert f"{load().min_driver(12, 'wsl2')} or newer" in result.messages[0]


@pytest.mark.parametrize(("answer", "reason"), REJECT_1_1)
def test_exercise_1_1_rejects(answer, reason, capsys):
    result = judged(nb01.check_route, answer, capsys)
    assert result.status == WRONG and reason in result.messages[0], result


# ----------------------------------------------------------------------------- Exercise 1.2

# Exercise 1.2's task: "Windows 11 with WSL2 (Ubuntu), Python 3.12 inside Ubuntu, NVIDIA driver 560.94. Write the
# `pip install` command that installs TensorFlow with GPU support there", each requirement in double quotes (its task
# cell). It asks for no particular release: every release that runs there with its GPU is right - TF 2.16 to 2.21 are
# the rows with Python 3.12, all built with CUDA 12, which driver 560.94 runs - with [and-cuda], which brings CUDA and
# cuDNN (the machine has none). pip takes the newest release a pin allows that supports Python 3.12.
ACCEPT_1_2 = [
    ('pip install "tensorflow[and-cuda]==2.21.*"', "the doctor's command"),
    ('!pip install "tensorflow[and-cuda]==2.21.0"', "a notebook's shell escape; the one 2.21 release"),
    ('python3 -m pip install --upgrade "tensorflow[and-cuda]==2.21.*"', "pip run as a module, with an option"),
    ("pip3 install 'tensorflow[and-cuda]~=2.21.0'", "single quotes work as double quotes do; ~= keeps 2.21"),
    ('pip install "tensorflow[and-cuda]==2.20.*"', "TF 2.20 supports Python 3.12 and runs on this GPU"),
    ('pip install "tensorflow[and-cuda]==2.16.1"', "the oldest release with Python 3.12 (2.16.0 was never published)"),
    ('pip install "tensorflow[and-cuda]" "numpy<2"', "TF 2.21 accepts NumPy 1.26 (numpy>=1.26.0): the pin is harmless"),
    ('pip install "tensorflow[and-cuda]==2.17.*" "numpy<2"', "TF 2.17 caps NumPy below 2 itself: the pin is harmless"),
    ('pip install --extra-index-url https://pypi.nvidia.com "tensorflow[and-cuda]"', "an option with a value"),
]
REJECT_1_2 = [
    ("pip install tensorflow-gpu", "`tensorflow-gpu` is an empty package today"),
    ('pip install "tensorflow==2.21.*"', "On WSL2, add the extra [and-cuda]"),  # no CUDA or cuDNN on the machine
    ('pip install "tensorflow-cpu==2.21.*"', "`tensorflow-cpu` has no GPU support"),
    ('pip install "tf-nightly[and-cuda]"', "`tf-nightly` is an untested daily build"),
    ('pip install "tensorflow[and-cuda]==2.15.*"', "its newest, TF 2.15, was tested with Python 3.9-3.11"),
    ('pip install "tensorflow[and-cuda]==2.16.0"', "its TF 2.16 row starts at 2.16.1"),
    ('pip install "tensorflow[and-cuda]==3.0.*"', "allows no release in the table of tested builds (TF 2.4.0 to"),
    ("pip install tensorflow[and-cuda]==2.21.*", "Put tensorflow[and-cuda]==2.21.* in double quotes"),
    ("pip install tensorflow[and-cuda]>=2.16", "In a terminal, < and > without quotes redirect"),
    ('pip install "tensorflow[and-cuda]==2.21.*', "The quotes do not pair up"),
    ('pip install "tensorflow[and-cuda]" && python -c "import tensorflow"', "&& starts another command"),
    ('conda install "tensorflow[and-cuda]==2.21.*"', "starts with `pip install`"),
    ('pip install "numpy"', "the command has no TensorFlow in it"),
    ('pip install "tensorflow[and-cuda]=2.21"', "pip cannot read the requirement"),
    (42, "`answer` is not text"),
]


@pytest.mark.parametrize(("answer", "why"), ACCEPT_1_2)
def test_exercise_1_2_accepts(answer, why, capsys):
    result = judged(nb01.check_laptop_install, answer, capsys)
    assert result.status == RIGHT, (why, result)


def test_an_older_release_for_the_laptop_is_right_and_told_the_newest(capsys):
    result = judged(nb01.check_laptop_install, 'pip install "tensorflow[and-cuda]==2.20.*"', capsys)
    assert result.messages[0].startswith("TF 2.20 ") and 'TF 2.21: pip install "tensorflow[and-cuda]==2.21.*"' in (
        result.messages[0]), "the newest release that runs there, and its command"
    unneeded = judged(nb01.check_laptop_install, 'pip install "tensorflow[and-cuda]" "numpy<2"', capsys)
    assert '"numpy<2" is not needed' in unneeded.messages[0] and "TF 2.21 works with NumPy 2" in unneeded.messages[0]


# ----------------------------------------------------------------------------- Exercise 1.3

# Exercise 1.3's task: "A lab server runs Linux with Python 3.8, which you cannot change. Its NVIDIA driver is
# 535.183.01. Write the `pip install` command that gets it the newest TensorFlow that can use its GPU", each
# requirement in double quotes (its task cell). The newest row with Python 3.8 is TF 2.13 (CUDA 11.8, which the driver
# runs): any pin that makes pip take 2.13 is right, as is no pin (pip on Python 3.8 finds nothing newer). 2.13 has no
# [and-cuda] extra and caps NumPy itself, so "numpy<2" is allowed, not needed.
ACCEPT_1_3 = [
    ('pip install "tensorflow==2.13.1"', "2.13.1, the last patch of TF 2.13"),
    ('pip install "tensorflow==2.13.*" "numpy<2"', "the pin is allowed, not needed"),
    ("pip install tensorflow", "pip on Python 3.8 takes 2.13 by itself"),
]
REJECT_1_3 = [
    ('pip install "tensorflow==2.12.*"', "A newer tested release also supports Python 3.8"),
    ('pip install "tensorflow[and-cuda]==2.13.*"', "The extra [and-cuda] exists from TensorFlow 2.14 on"),
    ('pip install "tensorflow==2.13.*" "numpy>=2"', "The NumPy pin must keep NumPy 1"),
]


@pytest.mark.parametrize(("answer", "why"), ACCEPT_1_3)
def test_exercise_1_3_accepts(answer, why, capsys):
    result = judged(nb01.check_server_install, answer, capsys)
    assert result.status == RIGHT, (why, result)
    assert "TF 2.13 comes with Keras 2" in result.messages[0]
    assert "Install CUDA 11.8 and cuDNN 8.6 on the system too." in result.messages[0]


@pytest.mark.parametrize(("check", "answer", "reason"), [(nb01.check_laptop_install, *r) for r in REJECT_1_2]
                         + [(nb01.check_server_install, *r) for r in REJECT_1_3])
def test_exercises_1_2_and_1_3_reject(check, answer, reason, capsys):
    result = judged(check, answer, capsys)
    assert result.status == WRONG and any(reason in m for m in result.messages), result


# ----------------------------------------------------------------------------- both install checks


def test_the_install_solutions_use_the_doctor_s_requirement():
    for exercise, machine in (("Exercise 1.2", nb01.LAPTOP), ("Exercise 1.3", nb01.SERVER)):
        answer = solved(NOTEBOOK, exercise)["answer"]
        requirement = answer.split('"')[1].split("==")[0]
        assert requirement in " ".join(machine.recommendation().commands), "the doctor's own requirement"


def test_the_expected_answer_follows_the_table(monkeypatch, capsys):
    """The checks read the answer from recommend(): a machine the table places elsewhere changes it."""
    monkeypatch.setattr(nb01, "LAPTOP", nb01.Machine("wsl2", "3.9", "560.94", "a WSL2 laptop with Python 3.9"))
    assert judged(nb01.check_laptop_install, 'pip install "tensorflow[and-cuda]==2.20.*"', capsys).ok
    result = judged(nb01.check_laptop_install, 'pip install "tensorflow[and-cuda]==2.21.*"', capsys)
    assert not result.ok and "tested with Python 3.10-3.13" in result.messages[0]


def test_a_release_that_does_not_cap_numpy_still_needs_the_pin(monkeypatch, capsys):
    """TF 2.11 and older let pip install NumPy 2 beside them: there the pin is required."""
    monkeypatch.setattr(nb01, "SERVER", nb01.Machine("linux", "3.7", "535.183.01", "a server with Python 3.7"))
    result = judged(nb01.check_server_install, 'pip install "tensorflow==2.11.*"', capsys)
    assert result.status == WRONG and any('Add "numpy<2"' in m for m in result.messages), result
    assert judged(nb01.check_server_install, 'pip install "tensorflow==2.11.*" "numpy<2"', capsys).ok


def test_where_the_driver_decides_no_pin_and_a_too_new_pin_say_so(capsys):
    """Driver 470 runs CUDA 11 only: on Python 3.10 pip would take TF 2.21 without a pin; TF 2.14 is the answer."""
    old = nb01.Machine("linux", "3.10", "470.256.02", "Linux, Python 3.10, driver 470.256.02")
    result = judged(lambda a: nb01.check_install("x", old, a, newest_only=True), 'pip install "tensorflow"', capsys)
    [message] = result.messages
    assert "pip takes the newest TensorFlow for Python 3.10: TF 2.21" in message and "needs TF 2.14" in message
    result = judged(lambda a: nb01.check_install("x", old, a, newest_only=False),
                    'pip install "tensorflow[and-cuda]==2.15.*"', capsys)
    assert "Driver 470.256.02 is too old for CUDA 12" in result.messages[0]
    assert judged(lambda a: nb01.check_install("x", old, a, newest_only=True), 'pip install "tensorflow==2.14.*"',
                  capsys).ok
