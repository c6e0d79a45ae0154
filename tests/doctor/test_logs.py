"""course_utils.doctor.logs and `course doctor --log`: each pasted TensorFlow log line gets its verdict."""

from __future__ import annotations

import codecs
import dataclasses
import io
import json
import sys
from pathlib import Path

import pytest

from course_utils import InputError
from course_utils.doctor import TensorFlowInfo, describe, diagnose
from course_utils.doctor import logs as logs_module
from course_utils.doctor.cli import main
from course_utils.doctor.logs import RULES, classify, decode_log, read_log, strip_prefix
from course_utils.doctor.model import log_findings
from course_utils.doctor.versions import load

from ..conftest import ROOT

LOGS = ROOT / "tests" / "fixtures" / "tf_logs"
SMI = ROOT / "tests" / "fixtures" / "nvidia"


def fixture(name: str) -> str:
    return (LOGS / name).read_text(encoding="utf-8")


def verdicts(report) -> dict[str, str]:
    return {e.code: e.verdict for e in report.entries if e.code}


# ----------------------------------------------------------------- the fixtures, as a student pastes them


@pytest.mark.parametrize(
    "name, problem, gpu",
    [
        ("numpy2_old_tensorflow_composed.txt", "numpy-2-abi", None),
        ("wsl2_gpu_working_composed.txt", None, True),
    ],
)
def test_each_fixture_names_its_problem_line(name, problem, gpu):
    report = classify(fixture(name))
    assert (report.problem.code if report.problem else None) == problem
    assert report.gpu is gpu


def test_the_problem_is_the_first_problem_line_and_the_harmless_lines_around_it_stay_harmless():
    report = classify(fixture("linux_gpu_missing_cudnn_composed.txt"))
    assert report.problem.lines == [8] and "libcudnn.so.9" in report.problem.message
    assert report.problem.details["library"] == "libcudnn.so.9"
    found = verdicts(report)
    for code in ("cuda-plugin-registered-twice", "cpu-instructions", "tensorrt-not-found", "numa-node-unknown"):
        assert found[code] == "harmless", code
    assert found["gpu-libraries-not-loaded"] == "problem"
    numa = next(e for e in report.entries if e.code == "numa-node-unknown")
    assert numa.lines == [7, 11]  # the same message twice: one entry, both lines
    assert report.other_lines == 1  # the program's own output, "[]"


def test_without_gpu_the_captured_tf_2_21_log_is_all_harmless():
    text = fixture("linux_no_gpu_tf2.21_captured.txt")
    unknown = classify(text)
    assert unknown.problem is None and unknown.gpu is None and unknown.problem_if_gpu.code == "cuda-drivers-not-found"
    assert {"cuda-drivers-not-found", "cuinit-failed"} <= {e.code for e in unknown.entries if e.verdict == "depends"}
    no_gpu = classify(text, gpu=False)
    assert {e.verdict for e in no_gpu.entries} == {"harmless"}
    with_gpu = classify(text, gpu=True)
    assert with_gpu.problem.code == "cuda-drivers-not-found" and "tensorflow[and-cuda]" in with_gpu.problem.fix


def test_a_line_only_a_gpu_machine_prints_decides_the_depends_lines():
    text = fixture("linux_no_gpu_tf2.21_captured.txt") + "\n" + fixture("wsl2_gpu_working_composed.txt")
    report = classify(text)
    assert report.gpu is True and "line" in report.gpu_reason
    assert report.problem.code == "cuda-drivers-not-found"
    assert classify(text, gpu=False).problem is None  # what the caller says wins over the evidence


def test_an_unknown_tensorflow_line_is_listed_as_unknown_and_other_text_is_only_counted():
    report = classify(fixture("xla_ptxas_composed.txt"))
    unknown = [e for e in report.entries if e.verdict == "unknown"]
    assert [e.message for e in unknown] == ["Device interconnect StreamExecutor with strength 1 edge matrix:"]
    assert verdicts(report)["ptxas-fallback-to-driver"] == "harmless"
    assert classify("Epoch 1/5\nhello\n").entries == []


def test_cuptis_two_refused_calls_are_one_finding_and_its_follow_up_is_left_unknown():
    report = classify(fixture("cupti_privileges_tf2.2_posted.txt"))  # the profiler refused the GPU's counters
    assert report.gpu is True  # only a machine where the profiler found a GPU prints these lines
    refused = [e for e in report.entries if e.code == "cupti-insufficient-privileges"]
    assert [e.lines for e in refused] == [[3], [4]]
    assert [(f.code, f.severity) for f in log_findings(report)] == [("cupti-insufficient-privileges", "error")]
    follow_up = report.entries[-1]
    assert follow_up.verdict == "unknown" and "CUPTI_ERROR_INVALID_PARAMETER" in follow_up.message


# ----------------------------------------------------------------- a line's prefix, and findings from its rule's code


@pytest.mark.parametrize(
    "raw, message, is_log",
    [
        ("I0000 00:00:1796305089.014581   29611 cudart_stub.cc:31] Could not find x", "Could not find x", True),
        ("2024-03-09 19:15:45.018171: I tensorflow/core/platform/cpu_feature_guard.cc:210] This is", "This is", True),
        ("[2026-08-25 09:34:11] E0000 00:00:1787664508.475936   18468 file.cc:93] msg", "msg", True),
        ("WARNING:tensorflow:From <stdin>:1: is_gpu_available", "From <stdin>:1: is_gpu_available", True),
        ("  Epoch 1/5  ", "Epoch 1/5", False),
    ],
)
def test_log_prefixes_are_removed(raw, message, is_log):
    assert strip_prefix(raw) == (message, is_log)


def test_findings_come_from_rule_codes_not_from_wording(monkeypatch):
    text = fixture("linux_gpu_missing_cudnn_composed.txt")
    before = [(f.code, f.severity) for f in log_findings(classify(text))]
    reworded = tuple(dataclasses.replace(r, meaning={"text": "reworded"}, fix={"text": "reworded"}) for r in RULES)
    monkeypatch.setattr(logs_module, "RULES", reworded)
    after = log_findings(classify(text))
    assert [(f.code, f.severity) for f in after] == before
    assert before[0] == ("library-not-loaded", "error") and ("cpu-instructions", "info") in before
    assert all(f.fix == "reworded" for f in after)


def test_the_startup_log_quotes_problem_lines_not_the_harmless_ones():
    log = fixture("linux_gpu_missing_cudnn_composed.txt")
    tf = TensorFlowInfo(True, version="2.21.0", built_with_cuda=True, cuda_version="12.5.1", startup_log=log)
    machine = describe("linux", "3.11", (SMI / "smi_linux_535.113.01_gtx1650.txt").read_text(), tensorflow=tf)
    sees_no_gpu = next(f for f in diagnose(machine).findings if f.code == "tensorflow-sees-no-gpu")
    message = sees_no_gpu.message
    assert sees_no_gpu.severity == "error" and load().rule("pip-symlink-step")["text"] in sees_no_gpu.fix
    assert "Cannot dlopen some GPU libraries" in message and "libcudnn.so.9" in message
    assert "Unable to register" not in message and "TensorRT" not in message


# ----------------------------------------------------------------- reading what students paste


def test_utf16_crlf_and_colours_read_the_same_as_plain_text():
    text = fixture("linux_gpu_missing_cudnn_composed.txt")
    plain = [(e.code, e.verdict, e.lines) for e in classify(decode_log(text.encode("utf-8"), "the log")).entries]
    coloured = "".join(f"\x1b[1;31m{line}\x1b[0m\n" for line in text.splitlines())
    variants = [
        codecs.BOM_UTF16_LE + text.replace("\n", "\r\n").encode("utf-16-le"),  # PowerShell 5.1: `>` / Out-File
        text.encode("utf-16-le"),  # no byte-order mark
        codecs.BOM_UTF8 + text.replace("\n", "\r\n").encode("utf-8"),
        coloured.encode("utf-8"),
    ]
    for data in variants:
        decoded = decode_log(data, "the log")
        assert "\x1b" not in decoded and "\ufeff" not in decoded
        assert [(e.code, e.verdict, e.lines) for e in classify(decoded).entries] == plain


@pytest.mark.parametrize(
    "data, said",
    [
        (b"", "is empty"),
        (b"\x1b[0m\x1b[1;31m\n", "only colour codes"),
        (bytes(range(256)) * 8, "not a text log"),
    ],
)
def test_bad_input_is_a_clear_error(tmp_path, data, said):
    path = tmp_path / "log.txt"
    path.write_bytes(data)
    with pytest.raises(InputError) as caught:
        read_log(path)
    assert said in caught.value.what and str(path) in caught.value.what
    assert "plain text" in caught.value.fix


def test_missing_folder_and_unreadable_files_are_clear_errors(tmp_path, monkeypatch):
    with pytest.raises(InputError, match="does not exist"):
        read_log(tmp_path / "absent.txt")
    with pytest.raises(InputError, match="is a folder"):
        read_log(tmp_path)
    locked = tmp_path / "locked.txt"
    locked.write_text("x")

    def denied(self):
        raise PermissionError(13, "Permission denied", str(self))

    monkeypatch.setattr(Path, "read_bytes", denied)
    with pytest.raises(InputError) as caught:
        read_log(locked)
    assert "cannot be read: Permission denied" in caught.value.what and "permissions" in caught.value.fix


# ----------------------------------------------------------------- the command line


def test_cli_log_json_names_the_problem_and_exits_1(capsys):
    assert main(["--log", str(LOGS / "linux_gpu_missing_cudnn_composed.txt"), "--json"]) == 1
    data = json.loads(capsys.readouterr().out)
    assert data["log"]["problem"]["code"] == "library-not-loaded" and data["log"]["problem"]["lines"] == [8]
    assert data["log"]["gpu"] is True
    assert all(set(f) == {"code", "severity", "message", "fix"} for f in data["findings"])
    assert data["findings"][0]["code"] == "library-not-loaded" and data["findings"][0]["severity"] == "error"
    entry = data["log"]["entries"][0]
    assert set(entry) == {"verdict", "code", "lines", "message", "meaning", "fix", "source"}


def test_cli_gpu_switches_and_nvidia_smi_decide_the_depends_lines(capsys):
    captured = str(LOGS / "linux_no_gpu_tf2.21_captured.txt")
    assert main(["--log", captured, "--no-gpu", "--json"]) == 0
    assert {e["verdict"] for e in json.loads(capsys.readouterr().out)["log"]["entries"]} == {"harmless"}
    assert main(["--log", captured, "--gpu"]) == 1
    capsys.readouterr()
    assert main(["--log", captured, "--nvidia-smi", str(SMI / "smi_no_devices.txt"), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["log"]["gpu"] is False
    assert main(["--log", captured, "--nvidia-smi", str(SMI / "smi_linux_535.113.01_gtx1650.txt"), "--json"]) == 1
    assert json.loads(capsys.readouterr().out)["log"]["problem"]["code"] == "cuda-drivers-not-found"


def test_cli_reads_a_powershell_utf16_log_from_stdin(monkeypatch, capsys):
    text = fixture("xla_ptxas_composed.txt").replace("\n", "\r\n")
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(codecs.BOM_UTF16_LE + text.encode("utf-16-le"))))
    assert main(["--log", "-", "--json"]) == 1
    assert json.loads(capsys.readouterr().out)["log"]["problem"]["code"] == "ptxas-missing"
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(b"")))
    assert main(["--log", "-"]) == 2 and "standard input is empty" in capsys.readouterr().err
