"""The rule table that turns the live checks' notes into findings (model.CHECK_FINDINGS), the Python wheel check, and
``probes.live_checks`` running what fits the platform (each check has its own test file)."""

from __future__ import annotations

import ast
import json
import sys

import pytest

from course_utils.core import variables
from course_utils.doctor import Machine, diagnose, probes
from course_utils.doctor.model import CHECK_FINDINGS, GROUP_KERNELS, GROUP_LIBRARIES, GROUP_WSL, check_findings
from course_utils.doctor.probes import live_checks, python_wheel_check
from course_utils.doctor.texts import Note
from course_utils.doctor.versions import load

from ..conftest import ROOT
from .file_tree import codes

ON_LINUX = sys.platform.startswith("linux")
# The modules whose notes CHECK_FINDINGS turns into findings.
CHECK_MODULES = ("probes", "libraries")


@pytest.mark.parametrize("python", ["3.9", "3.14"])
def test_a_python_without_a_tensorflow_wheel(python):
    build = load().newest("linux")
    [note] = python_wheel_check(python)
    assert note.code == "no-tensorflow-wheel-for-python"
    assert f"Python {build.python_min}-{build.python_max}" in note.text and f"Python {python}" in note.text
    [finding] = check_findings([note])
    assert finding.severity == "error" and "venv" in finding.fix


def test_a_python_with_a_wheel_gets_no_note():
    build = load().newest("linux")
    assert python_wheel_check(build.python_min) == python_wheel_check(build.python_max) == []


def noted_codes() -> set[str]:
    """Every code the check modules give in a ``Note("code", ...)``."""
    found = set()
    for name in CHECK_MODULES:
        tree = ast.parse((ROOT / f"course_utils/doctor/{name}.py").read_text())
        for node in ast.walk(tree):
            if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "Note" and node.args:
                if isinstance(node.args[0], ast.Constant):
                    found.add(node.args[0].value)
    return found


def test_every_note_code_has_its_finding_and_every_finding_is_used():
    assert noted_codes() == set(CHECK_FINDINGS)
    for rule in CHECK_FINDINGS.values():
        fix = rule["fix"]["text"].format(python="py", wsl_driver_min="1", wsl_windows_build="2")
        assert rule["severity"] in ("info", "warning", "error") and "{" not in fix


def test_a_note_gives_its_finding_whatever_its_text():
    [finding] = check_findings([Note("wsl2-no-dxg", "entirely reworded")])
    assert (finding.code, finding.severity, finding.message) == ("wsl2-no-dxg", "error", "Entirely reworded.")
    assert check_findings([Note("not-a-check-code", "no finding for codes nobody registered")]) == []


def test_the_report_groups_the_live_checks_and_the_json_lists_them(monkeypatch):
    notes = [
        Note("nvidia-lib-fails-to-load", "libcudnn.so.9 does not load: file too short"),
        Note("wsl2-no-dxg", "/dev/dxg is missing"),
        Note("kernel-without-tensorflow", "The kernel 'Base' runs /envs/base/bin/python"),
    ]
    result = diagnose(Machine("linux", "3.11", live=True, checks=notes))
    assert {"nvidia-lib-fails-to-load", "wsl2-no-dxg", "kernel-without-tensorflow"} <= set(result.codes())
    assert result.exit_code == 1
    report = result.report()
    for group in (GROUP_LIBRARIES, GROUP_WSL, GROUP_KERNELS):
        assert f"\n  {group}:\n" in report
    libraries = report.index(f"  {GROUP_LIBRARIES}:")
    assert report.index("[error] nvidia-lib-fails-to-load") > libraries > report.index("Findings:")
    data = json.loads(json.dumps(result.to_json()))
    assert {"code": "wsl2-no-dxg", "text": "/dev/dxg is missing", "group": GROUP_WSL} in data["checks"]
    assert all(set(f) == {"code", "severity", "message", "fix"} for f in data["findings"])
    assert diagnose(Machine("linux", "3.11")).to_json()["checks"] is None
    monkeypatch.setenv(variables.LANG, "zh-CN")  # the headings follow the language; the JSON keeps the groups' names
    chinese = diagnose(Machine("linux", "3.11", live=True, checks=notes))
    assert "\n  WSL2：\n" in chinese.report() and "\n  Jupyter 内核：\n" in chinese.report()
    assert chinese.to_json()["checks"] == data["checks"]


def test_live_checks_run_what_fits_the_platform(monkeypatch):
    ran = []
    monkeypatch.setattr(probes, "python_wheel_check", lambda: ran.append("python") or [])
    monkeypatch.setattr(probes, "nvidia_library_checks", lambda gpu: ran.append(f"libraries gpu={gpu}") or [])
    monkeypatch.setattr(probes, "is_wsl", lambda: True)
    monkeypatch.setattr(probes, "wsl_checks", lambda: ran.append("wsl") or [])

    def broken_kernels():
        raise ValueError("kernel.json is not JSON")

    monkeypatch.setattr(probes, "kernel_checks", broken_kernels)
    notes = live_checks("macos")
    assert ran == ["python"] and codes(notes) == ["kernels-unreadable"] and "not JSON" in notes[0].text
    ran.clear()
    live_checks("linux", gpu=True)
    assert ran == (["python", "libraries gpu=True", "wsl"] if ON_LINUX else ["python"])
