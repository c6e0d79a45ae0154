"""diagnose() over real captured outputs, and the doctor's command-line contract (run as a subprocess)."""

from __future__ import annotations

import importlib
import json
import os
import subprocess
import sys
import textwrap
from typing import Any

import pytest

from course_utils.doctor import Finding, TensorFlowInfo, describe, diagnose
from course_utils.doctor.model import NOTE_FINDINGS
from course_utils.doctor.probes import guess_platform
from course_utils.doctor.texts import Note

from ..conftest import ROOT
from .note_codes import NOTE_CODES

FIXTURES = ROOT / "tests" / "fixtures" / "nvidia"
QA_SMI = FIXTURES / "smi_qa_post_windows_512.77_wddm.txt"
QA_NVCC = FIXTURES / "nvcc_qa_post_windows_11.7.txt"
CONTRACT_KEYS = {"driver_version", "driver_cuda", "toolkit_cuda", "gpus", "tensorflow", "recommended_install",
                 "findings"}


def smi(name: str) -> str:
    return (FIXTURES / name).read_text()


def finding(result, code: str) -> Finding:
    matches = [f for f in result.findings if f.code == code]
    assert matches, f"{code} not in {result.codes()}"
    return matches[0]


def cuda_tf(**overrides) -> TensorFlowInfo:
    values = {"installed": True, "version": "2.21.0", "built_with_cuda": True, "cuda_version": "12.5.1",
              "cudnn_version": "9", "compute_capabilities": ["sm_60", "sm_70", "sm_80", "sm_89", "compute_90"]}
    return TensorFlowInfo(**{**values, **overrides})


@pytest.mark.parametrize("platform, name, nvcc, needs", [
    ("windows", "smi_qa_post_windows_512.77_wddm.txt", "nvcc_qa_post_windows_11.7.txt", "11.6"),  # the Q&A post's
    ("wsl2", "smi_qa_post_windows_512.77_wddm.txt", "nvcc_linux_12.6.txt", "528.33"),  # WSL2's CUDA 12 driver
    ("linux", "smi_linux_580.126.09_2x_a100.txt", "nvcc_linux_12.6.txt", None),
])
def test_a_toolkit_newer_than_the_driver_is_named_with_what_the_driver_needs(platform, name, nvcc, needs):
    result = diagnose(describe(platform, "3.11", smi(name), smi(nvcc)))
    found = [f for f in result.findings if f.code == "toolkit-newer-than-driver"]
    assert [(f.severity, needs in f.message) for f in found] == ([("warning", True)] if needs else [])


@pytest.mark.parametrize("platform, claims", [("linux", True), ("wsl2", True), ("windows", False)])
def test_a_system_toolkit_is_unused_by_tensorflow_and_off_windows_can_interfere(platform, claims):
    f = finding(diagnose(describe(platform, "3.11", smi("smi_qa_post_windows_512.77_wddm.txt"), QA_NVCC.read_text())),
                "nvcc-not-used")
    assert f.severity == "info" and ("LD_LIBRARY_PATH" in f.message + f.fix) is claims
    assert ("https://www.tensorflow.org/install/pip#linux" in f.fix) is claims


# ----------------------------------------------------------------- every required code fires on matching input


CUDNN_9_1 = ("E0000 00:00:1.0  7 cuda_dnn.cc:522] Loaded runtime CuDNN library: 9.1.0 but source was compiled with: "
             "9.3.0.  CuDNN library needs to have matching major version and equal or higher minor version.\n")
CPU_ONLY = cuda_tf(built_with_cuda=False, cuda_version=None)
# (platform, Python, nvidia-smi capture, TensorFlow found live, the finding's code, its severity)
FINDINGS = [
    ("linux", "3.11", "smi_missing_command_not_found.txt", None, "no-nvidia-driver", "warning"),
    ("linux", "3.11", "smi_no_driver.txt", None, "no-nvidia-driver", "error"),
    ("linux", "3.11", "smi_no_devices.txt", None, "no-nvidia-gpu", "warning"),
    ("linux", "3.11", "smi_wsl2_546.80_cuda_err.txt", None, "nvidia-smi-partly-read", "info"),
    ("linux", "3.11", "smi_linux_535.113.01_cut_in_driver_version.txt", None, "nvidia-smi-partly-read", "warning"),
    ("linux", "3.11", "smi_linux_535.113.01_gtx1650.txt", None, "minor-version-compatibility", "info"),
    ("wsl2", "3.11", "smi_qa_post_windows_512.77_wddm.txt", None, "driver-too-old", "error"),  # below WSL2's 528.33
    # before CUDA 11: no tested build (test_recommend)
    ("linux", "3.11", "smi_linux_418.181.07_gtx1080.txt", None, "driver-too-old", "error"),
    ("linux", "3.11", "smi_linux_535.113.01_gtx1650.txt", CPU_ONLY, "cpu-only-build", "error"),  # next to a GPU
    ("linux", "3.11", "smi_missing_command_not_found.txt", CPU_ONLY, "cpu-only-build", "info"),  # without one
    ("windows", "3.11", "smi_windows_517.48_2x_wddm.txt", cuda_tf(built_with_cuda=False),
     "windows-native-no-gpu-after-2.10", "error"),  # an installed TF 2.11+ on native Windows
    ("linux", "3.11", "smi_linux_550.135_tesla_p4.txt", cuda_tf(startup_log=CUDNN_9_1), "cudnn-mismatch", "error"),
    ("linux", "3.11", None, TensorFlowInfo(False, error="ModuleNotFoundError"), "tensorflow-not-installed", "info"),
    ("linux", "3.14", None, None, "python-unsupported", "warning"),
    ("linux", "3.8", None, None, "python-limits-tensorflow", "warning"),
    ("macos", "3.12", None, None, "macos-no-cuda", "info"),
    (None, None, "smi_qa_post_windows_512.77_wddm.txt", None, "platform-assumed", "info"),  # guessed: Windows
]


@pytest.mark.parametrize("platform, python, name, tensorflow, code, severity", FINDINGS,
                         ids=[f"{row[4]}-{n}" for n, row in enumerate(FINDINGS)])
def test_a_machine_gets_its_finding(platform, python, name, tensorflow, code, severity):
    result = diagnose(describe(platform, python, smi(name) if name else None, tensorflow=tensorflow))
    assert finding(result, code).severity == severity
    assert result.exit_code == ("error" in {f.severity for f in result.findings})


# ----------------------------------------------------------------- TensorFlow's own view (live machines): the rules of
# course_utils.doctor.rules.tensorflow_findings (and FINDINGS' rows with an installed TensorFlow)


def test_gpu_visible_and_compute_capability_check():
    tf = cuda_tf(gpus=[{"name": "NVIDIA GeForce GTX 960M", "compute_capability": "5.0"}])
    result = diagnose(describe("linux", "3.11", smi("smi_linux_550.135_tesla_p4.txt"), tensorflow=tf))
    assert "tensorflow-uses-gpu" in result.codes()
    unsupported = finding(result, "compute-capability-unsupported")
    assert unsupported.severity == "error" and "5.0" in unsupported.message
    assert 'pip install "tensorflow[and-cuda]==2.16.*"' in unsupported.fix  # the last line with 5.x
    assert result.recommendation.tensorflow == "tensorflow[and-cuda]==2.16.*"  # the answer follows the GPU
    ok = cuda_tf(gpus=[{"name": "Tesla P4", "compute_capability": "6.1"}])  # sm_60 code runs on 6.1
    assert "compute-capability-unsupported" not in diagnose(describe("linux", "3.11", tensorflow=ok)).codes()


def test_coverage_follows_the_installed_builds_own_list():
    # a build with only sm_80 code: a 7.5 card is not covered, whatever the table says about TF 2.21
    tf = cuda_tf(compute_capabilities=["sm_80"], gpus=[{"name": "Tesla T4", "compute_capability": "7.5"}])
    message = finding(diagnose(describe("linux", "3.11", tensorflow=tf)), "compute-capability-unsupported").message
    assert "sm_80" in message and "7.5" in message


# ----------------------------------------------------------------- notes become findings by code, never by wording


def test_each_note_rule_of_findings_json_is_a_note_code_the_recommendations_give():
    # NOTE_CODES: exactly the codes recommend() gives (test_recommend); the severities: findings.schema.json
    assert set(NOTE_FINDINGS) <= set(NOTE_CODES)


@pytest.mark.parametrize("python", ["3.6", "3.8", "3.11", "3.14", None])
@pytest.mark.parametrize("platform", ["linux", "wsl2", "windows", "macos"])
def test_rewording_every_note_changes_no_finding_code(monkeypatch, platform, python):
    machine = describe(platform, python, QA_SMI.read_text(), QA_NVCC.read_text())
    before = sorted(diagnose(machine).codes())
    for name in ("recommend", "gpus"):  # the modules that make notes, not the function
        monkeypatch.setattr(importlib.import_module(f"course_utils.doctor.{name}"), "Note",
                            lambda code, text: Note(code, f"reworded {code}"))
    reworded = diagnose(machine)
    assert sorted(reworded.codes()) == before
    assert all(n.text == f"reworded {n.code}" for n in reworded.recommendation.notes)


# ----------------------------------------------------------------- robustness over every fixture


@pytest.mark.parametrize("name", sorted(p.name for p in FIXTURES.glob("smi_*.txt")))
@pytest.mark.parametrize("platform", [None, "linux", "wsl2", "windows", "macos"])
def test_every_real_output_gets_a_json_answer_and_a_short_report_that_loses_nothing(name, platform):
    result = diagnose(describe(platform, "3.11", (FIXTURES / name).read_bytes(), QA_NVCC.read_text()))
    data = json.loads(json.dumps(result.to_json()))
    assert CONTRACT_KEYS <= data.keys()
    assert data["recommended_install"] and data["tensorflow"]
    assert all(set(f) == {"code", "severity", "message", "fix"} for f in data["findings"])
    assert all(f["severity"] in ("info", "warning", "error") for f in data["findings"])
    assert all(set(g) >= {"name", "memory_mib"} for g in data["gpus"])
    assert result.exit_code == (1 if any(f["severity"] == "error" for f in data["findings"]) else 0)
    assert "Findings:" in result.report()
    if result.machine.platform == "wsl2":  # 527.41: NVIDIA's CUDA 12 minimum for native Windows, not WSL2's 528.33
        assert "527.41" not in result.report() + json.dumps(data)
    short = result.summary()  # the default report: the lead route's commands, every finding named, errors in full
    assert all(f"    {command}" in short.splitlines() for command in result.ordered_routes()[0].commands)
    for f in result.findings:
        assert f.code in short, f.code  # in full, or named in the --verbose line
        if f.severity == "error":
            assert f"  [error] {f.code}: {f.message}" in short and f"      fix: {f.fix}" in short
    assert short.splitlines()[0] == f"Verdict: {result.verdict()}" == f"Verdict: {data['answer']['verdict']}"


# ----------------------------------------------------------------- the command line, as other tools run it


def run_cli(*args: str, **run: Any) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "course_utils", "doctor", *args], capture_output=True, text=True,
                          cwd=ROOT, timeout=120, **run)


def test_cli_qa_post_json_contract():
    done = run_cli("--nvidia-smi", str(QA_SMI), "--nvcc", str(QA_NVCC), "--platform", "windows", "--python", "3.12",
                   "--json")
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    assert CONTRACT_KEYS <= data.keys()
    assert (data["driver_version"], data["driver_cuda"], data["toolkit_cuda"]) == ("512.77", "11.6", "11.7")
    assert data["gpus"] == [{"name": "NVIDIA GeForce ...", "memory_mib": 6144, "index": 0, "driver_model": "WDDM",
                             "compute_capability": None,  # "GeForce ..." is cut: no generation
                             "generation": {"compute_capability": None, "from": None, "family": None}}]
    codes = {f["code"] for f in data["findings"]}
    assert {"windows-native-no-gpu-after-2.10", "toolkit-newer-than-driver", "nvcc-not-used",
            "python-unsupported"} <= codes  # Python 3.12: none for native Windows' TF 2.10
    assert "wsl2" in [n["code"] for n in data["recommended"]["notes"]]
    assert "no-gpu-build-for-python" in [n["code"] for n in data["alternatives"][0]["notes"]]


def test_cli_reads_stdin():  # exit statuses and usage errors in this process: test_first_answer, test_doctor_chinese
    done = run_cli("--nvidia-smi", "-", "--json", input=smi("smi_no_devices.txt"))
    assert done.returncode == 0 and json.loads(done.stdout)["driver_version"] is None


FAKE_TF = '''
"""A stand-in for a CPU-only TensorFlow, so the live path can be tested fast and deterministically."""
import logging
from types import SimpleNamespace

__version__ = "2.21.0"
config = SimpleNamespace(list_physical_devices=lambda kind=None: [],
                         experimental=SimpleNamespace(get_device_details=lambda device: {}))
sysconfig = SimpleNamespace(get_build_info=lambda: {"is_cuda_build": False})
test = SimpleNamespace(is_built_with_cuda=lambda: False)
get_logger = lambda: logging.getLogger("fake-tensorflow")
'''


@pytest.mark.skipif(os.name != "posix", reason="stub tools are shell scripts")
def test_cli_live_machine_with_stub_tools(tmp_path):
    (tmp_path / "tensorflow").mkdir()
    (tmp_path / "tensorflow" / "__init__.py").write_text(textwrap.dedent(FAKE_TF))
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    stub = bin_dir / "nvidia-smi"
    table = FIXTURES / "smi_linux_535.113.01_gtx1650.txt"
    stub.write_text(f'#!/bin/sh\ncase "$1" in --query-gpu=*) exit 6;; *) /bin/cat "{table}";; esac\n')
    stub.chmod(0o755)
    env = {**os.environ, "PATH": str(bin_dir), "PYTHONPATH": os.pathsep.join([str(tmp_path), str(ROOT)])}
    done = run_cli("--json", env=env)
    data = json.loads(done.stdout)
    assert data["machine"] == "this machine" and data["driver_version"] == "535.113.01"
    assert [(g["name"], g["memory_mib"]) for g in data["gpus"]] == [("NVIDIA GeForce GTX 1650", 4096)]
    assert data["installed_tensorflow"]["version"] == "2.21.0"
    assert "cpu-only-build" in {f["code"] for f in data["findings"] if f["severity"] == "error"}
    assert done.returncode == 1


# --- captures as people save and paste them (issue 17) -------------------------------------------------------------


@pytest.mark.parametrize(
    "text, platform",
    [
        *(((FIXTURES / name).read_bytes(), "windows") for name in (
            "smi_qa_post_windows_512.77_wddm.txt", "smi_windows_517.48_2x_wddm_utf16le.txt",
            "smi_missing_windows_cmd_de.txt")),
        (smi("smi_linux_535.113.01_gtx1650.txt"), "linux"),
        ("Microsoft Windows [Version 10.0.19045.3570]\n(c) Microsoft Corporation. All rights reserved.\n", "windows"),
        ("'C:\\Program Files\\NVIDIA Corporation\\NVSMI\\nvidia-smi.exe' is not recognized as an internal or "
         "external command,\noperable program or batch file.", "windows"),
    ],
)
def test_the_platform_is_guessed_from_a_capture(text, platform):
    assert guess_platform(text)[0] == platform
