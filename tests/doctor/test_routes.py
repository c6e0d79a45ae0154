"""routes(): a platform's recommendation, then its alternatives - WSL2 next to native Windows, Apple's Metal plugin
and the Intel-Mac line next to macOS."""

from __future__ import annotations

import re

import pytest

from course_utils.doctor.recommend import routes
from course_utils.doctor.versions import load

from .test_recommend import note


def test_qa_post_wsl2_route_needs_a_newer_windows_driver():
    native, wsl = routes("windows", None, "512.77")
    assert native.platform == "windows" and wsl.platform == "wsl2"
    assert wsl.tensorflow == "tensorflow[and-cuda]==2.21.*"
    assert wsl.driver_min == "528.33" and wsl.driver_ok is False
    # TF 2.14 (CUDA 11.8) runs on a CUDA 11 driver; its [and-cuda] extra no longer installs (tensorrt==8.5.3.1 is
    # gone from PyPI), so the fallback is the plain wheel with a system CUDA 11.8 / cuDNN 8.7; it caps NumPy itself
    assert wsl.fallback == "tensorflow==2.14.*"
    assert wsl.fallback_install == 'pip install "tensorflow==2.14.*"'
    assert "CUDA 11.8 and cuDNN 8.7" in note(wsl, "driver-too-old").text
    assert wsl.fallback_install in note(wsl, "driver-too-old").text
    assert "2.14" in note(wsl, "keras-2-only").text  # the fallback comes with Keras 2
    assert note(wsl, "wsl2").text == load().rule("wsl2")["text"]  # names Windows 10 19044 and the driver


def test_macos_runs_the_course_on_the_cpu_and_offers_metal_as_its_own_route():
    course, metal, intel = routes("macos", "3.12")
    assert course.tensorflow == "tensorflow==2.21.*" and not course.gpu and course.driver_min is None
    assert 'pip install "tensorflow==2.21.*"' in course.commands and course.note_codes() == ["macos"]
    assert not any("metal" in c for c in course.commands)  # the course's environment stays as tested
    assert (metal.route, metal.tensorflow, metal.python) == ("Apple silicon, Metal GPU", "tensorflow==2.18.*", "3.12")
    assert 'pip install "tensorflow==2.18.*" "tensorflow-metal==1.2.*"' in metal.commands
    assert metal.note_codes() == ["macos-metal"]
    assert (intel.route, intel.tensorflow) == ("Intel Mac", "tensorflow==2.16.*")
    assert 'pip install "tensorflow==2.16.*"' in intel.commands


@pytest.mark.parametrize("python", ["3.13", "3.8"])
def test_macos_with_a_python_the_metal_plugin_lacks_is_never_told_to_install_it(python):
    recs = routes("macos", python)
    assert [r.route for r in recs] == [None, "Intel Mac"]  # no Metal route
    assert not any(re.search(r"pip install[^\n`]*tensorflow-metal", r.text()) for r in recs)  # commands and notes
    assert "macos-no-metal-for-python" in recs[0].note_codes()
    assert python in note(recs[0], "macos-no-metal-for-python").text


def test_macos_3_13_gets_the_courses_tensorflow_on_the_cpu_and_intel_macs_a_tested_python():
    course, intel = routes("macos", "3.13")
    assert course.tensorflow == "tensorflow==2.21.*" and course.python == "3.13"
    assert intel.python == "3.12" and "no-gpu-build-for-python" in intel.note_codes()
    assert intel.commands[0] == "python3.12 -m venv tf"
