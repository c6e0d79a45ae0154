"""``course preflight``: the record of a real run here (CPU only), a machine without TensorFlow, a GPU machine
described by captured nvidia-smi output, the problems and the exit status."""

from __future__ import annotations

import copy
import json
import sys
import tomllib
from pathlib import Path

import pytest

from course_tools.classroom import preflight
from course_tools.classroom.class_report import CELLS
from course_tools.classroom.preflight import SCHEMA, default_out, in_range
from course_tools.classroom.preflight_problems import find_problems

from ...conftest import ROOT

A100_CAPTURE = ROOT / "tests" / "fixtures" / "nvidia" / "smi_linux_580.126.09_2x_a100.txt"
RECORD_KEYS = {
    "schema", "created", "user", "host", "course_utils", "expect_cpu", "platform", "python", "cpu", "nvidia",
    "tensorflow", "tensorflow_error", "keras", "compute", "sizing", "data", "folders", "doctor", "problems",
}


def codes(record):
    return [p["code"] for p in record["problems"]]


def test_the_record_of_this_machine_has_every_section(real_run):
    record = real_run.record
    assert set(record) == RECORD_KEYS
    assert record["schema"] == SCHEMA and record["created"].endswith("Z")
    assert record["sizing"] is None  # no --students: a student's machine is not sized
    assert record["platform"]["kind"] in ("linux", "wsl2", "windows", "macos")
    assert record["platform"]["wsl2"] == (record["platform"]["kind"] == "wsl2")
    assert record["python"]["version"] == ".".join(map(str, sys.version_info[:3]))
    assert [d["dataset"] for d in record["data"]["datasets"]] == ["mnist", "fashion-mnist"]
    assert record["data"]["datasets"][0]["source"]  # the bundled sample at least
    assert {f["name"] for f in record["folders"]} == {"course home", "results", "TensorBoard logs"}
    assert all(f["writable"] for f in record["folders"])
    assert record["doctor"]["findings"] and all({"code", "severity", "message"} <= set(f)
                                                for f in record["doctor"]["findings"])


def test_tensorflow_is_recorded_with_its_build_and_the_course_range(real_run):
    import tensorflow as tf

    recorded = real_run.record["tensorflow"]
    assert recorded["version"] == tf.__version__
    assert recorded["is_cuda_build"] == tf.sysconfig.get_build_info().get("is_cuda_build", False)
    wanted = next(d for d in tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["dependencies"]
                  if d.startswith("tensorflow"))
    assert sorted(recorded["supported_range"].split(",")) == sorted(wanted.removeprefix("tensorflow").split(","))
    assert recorded["supported"] is True
    assert len(recorded["gpus"]) == len(tf.config.list_physical_devices("GPU"))


def test_the_cpu_product_is_timed_and_placed_on_the_cpu(real_run):
    result = real_run.record["compute"]
    assert result["size"] == 1024 and result["error"] is None
    cpu = result["cpu"]
    assert cpu["median_ms"] > 0 and len(cpu["times_ms"]) == result["repeats"]
    assert cpu["ran_on"].endswith("device:CPU:0") and cpu["placed"] is True
    gpu = result["gpu"]
    if real_run.record["tensorflow"]["gpus"]:  # a machine with a GPU: the first one is timed too
        assert gpu["ran_on"].endswith("device:GPU:0") and gpu["placed"] is True and gpu["median_ms"] > 0
    else:
        assert gpu is None


def test_no_gpu_is_an_error_exit_1_and_the_summary_ends_with_it(real_run):
    if real_run.record["tensorflow"]["gpus"]:
        assert "no-gpu" not in codes(real_run.record)
        return
    assert real_run.code == 1
    assert "no-gpu" in codes(real_run.record)
    no_gpu = next(p for p in real_run.record["problems"] if p["code"] == "no-gpu")
    assert no_gpu["severity"] == "error" and "--expect-cpu" in no_gpu["fix"]
    out = real_run.out
    assert out.index("Problems:") < out.index("[error] no-gpu") < out.index("Result: ")
    assert out.rstrip().endswith("(exit status 1).") and str(real_run.path) in out


def test_expect_cpu_exits_0_json_goes_to_stdout_and_compute_can_be_skipped(tmp_path, capsys):
    out = tmp_path / "sub" / "me.json"
    assert preflight.main(["--out", str(out), "--expect-cpu", "--no-compute", "--json"]) == 0
    captured = capsys.readouterr()
    record = json.loads(captured.out)  # standard output is the record alone
    assert record == json.loads(out.read_text())
    assert record["expect_cpu"] is True and "no-gpu" not in codes(record)
    assert not any(p["severity"] == "error" for p in record["problems"])
    assert record["compute"] == {"skipped": "--no-compute"}
    assert "Result: 0 error(s)" in captured.err


def test_without_tensorflow_the_record_says_so_and_nothing_crashes(tmp_path, monkeypatch, capsys):
    monkeypatch.setitem(sys.modules, "tensorflow", None)  # `import tensorflow` raises ImportError
    out = tmp_path / "r.json"
    assert preflight.main(["--out", str(out), "--expect-cpu"]) == 1
    record = json.loads(out.read_text())
    assert record["tensorflow"] is None and "tensorflow" in record["tensorflow_error"]
    missing = next(p for p in record["problems"] if p["code"] == "tensorflow-missing")
    assert missing["severity"] == "error" and "Activate" in missing["fix"]
    assert record["compute"] == {"skipped": "TensorFlow cannot be imported"}
    assert f"  TensorFlow: {CELLS['TensorFlow'](record)}\n" in capsys.readouterr().out  # the class report's cell


def test_a_gpu_machine_from_captured_nvidia_smi_fills_driver_and_gpus(real_run, tmp_path, capsys):
    out = tmp_path / "gpu.json"
    assert preflight.main(["--out", str(out), "--no-compute", "--nvidia-smi", str(A100_CAPTURE)]) == 1
    nvidia = json.loads(out.read_text())["nvidia"]
    assert nvidia["source"] == f"captured: {A100_CAPTURE.name}" and nvidia["status"] == "ok"
    assert nvidia["driver_version"] == "580.126.09" and nvidia["driver_cuda"] == "13.0"
    assert [(g["name"], g["memory_mib"], g["compute_capability"]) for g in nvidia["gpus"]] == [
        ("NVIDIA A100-SXM4-40GB", 40960, "8.0")
    ] * 2
    record = json.loads(out.read_text())
    if not real_run.record["tensorflow"]["gpus"]:
        # TensorFlow here sees no GPU although nvidia-smi shows two: the doctor's error becomes a problem
        sees_none = next(p for p in record["problems"] if p["code"] == "tensorflow-sees-no-gpu")
        assert sees_none["severity"] == "error" and sees_none["source"] == "doctor"
    assert f"  GPU: {CELLS['GPU'](record)}\n" in capsys.readouterr().out  # the class report's cell


@pytest.mark.parametrize(
    "change, code, severity",
    [
        (lambda r: r["tensorflow"].update(version="2.10.1", supported=False), "tensorflow-unsupported", "error"),
        (lambda r: r["compute"].update(gpu={"device": "/GPU:0", "ran_on": "/job:localhost/replica:0/task:0/"
                                            "device:GPU:0", "placed": True, "median_ms": 1e6}),
         "gpu-slower-than-cpu", "warning"),
        (lambda r: r["compute"].update(gpu={"device": "/GPU:0", "ran_on": "/job:localhost/replica:0/task:0/"
                                            "device:CPU:0", "placed": False, "median_ms": 0.1}),
         "gpu-placement-failed", "error"),
        (lambda r: r["compute"].update(error="ResourceExhaustedError: OOM"), "compute-failed", "error"),
        (lambda r: r["folders"][1].update(writable=False, problem="The course cannot write into /x."),
         "folder-not-writable", "error"),
        (lambda r: r["data"]["datasets"][0].update(problem="corrupt: checksum mismatch", location="/d/mnist.npz"),
         "data-file-bad", "warning"),
        (lambda r: r["data"].update(data_dir_problem="COURSE_DATA_DIR=/nope does not exist"), "data-dir-missing",
         "warning"),
        (lambda r: r["doctor"]["findings"].append({"code": "driver-too-old", "severity": "error", "message": "m",
                                                   "fix": "f"}), "driver-too-old", "error"),
    ],
)
def test_each_check_finds_its_problem(real_run, change, code, severity):
    record = copy.deepcopy(real_run.record)
    assert code not in codes(record)
    change(record)
    found = [p for p in find_problems(record) if p["code"] == code]
    assert [p["severity"] for p in found] == [severity]
    assert found[0]["message"] and found[0]["fix"]


def test_errors_come_first_and_no_gpu_warnings_of_the_doctor_are_left_to_no_gpu(real_run):
    record = copy.deepcopy(real_run.record)
    record["doctor"]["findings"] = [
        {"code": "no-nvidia-driver", "severity": "warning", "message": "m", "fix": "f"},
        {"code": "toolkit-newer-than-driver", "severity": "warning", "message": "m", "fix": "f"},
        {"code": "nvcc-not-used", "severity": "info", "message": "m", "fix": "f"},
    ]
    found = find_problems(record)
    assert codes({"problems": found}) == ["no-gpu", "toolkit-newer-than-driver"]
    record["expect_cpu"] = True
    assert codes({"problems": find_problems(record)}) == ["toolkit-newer-than-driver"]


def test_version_range_check():
    assert in_range("2.21.0", ">=2.20,<2.22") is True
    assert in_range("2.21.0rc1", ">=2.20,<2.22") is True
    assert in_range("2.10.1", ">=2.20,<2.22") is False
    assert in_range(None, ">=2.20") is None and in_range("2.21.0", None) is None
    assert in_range("not a version", ">=2.20") is None


def test_the_default_file_name_has_only_safe_characters():
    assert default_out("a b/c", "<pc>.lan") == Path("preflight-a_b_c-pc_.lan.json")
    assert default_out("", "...") == Path("preflight-unknown-unknown.json")


def test_an_out_that_cannot_be_written_is_refused_before_anything_runs(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(preflight, "collect", lambda **_: pytest.fail("measured before checking --out"))
    (tmp_path / "file").write_text("x")
    assert preflight.main(["--out", str(tmp_path / "file" / "r.json")]) == 2
    assert "cannot be created" in capsys.readouterr().err
    assert preflight.main(["--out", str(tmp_path)]) == 2
    assert "is a folder" in capsys.readouterr().err
    assert preflight.main(["--nvidia-smi", str(tmp_path / "missing.txt"), "--out", str(tmp_path / "r.json")]) == 2
    assert "--nvidia-smi" in capsys.readouterr().err


def test_a_failed_write_prints_the_record_so_nothing_is_lost(real_run, tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(preflight, "collect", lambda **_: real_run.record)

    def full_disk(*_args, **_kwargs):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(preflight, "write_json_atomic", full_disk)
    assert preflight.main(["--out", str(tmp_path / "r.json")]) == 2
    captured = capsys.readouterr()
    assert json.loads(captured.out) == real_run.record
    assert "No space left on device" in captured.err

