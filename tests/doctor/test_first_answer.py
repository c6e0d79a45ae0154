"""The doctor's first answer is the one to follow (issue 38): the report starts with the verdict and the one install
block and fits a screen, ``--verbose`` shows the rest (that the short report loses nothing: test_doctor.py's sweep);
an empty or unreadable ``nvidia-smi`` capture is no driver and gets the CPU install; native Windows with an NVIDIA GPU
leads with WSL2; every install command the doctor can print for a TensorFlow that does not cap NumPy (2.11 and older)
pins ``numpy<2``."""

from __future__ import annotations

import contextlib
import json
import re
import sys

import pytest
from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.version import Version

from course_utils.doctor import cli as doctor_cli
from course_utils.doctor import describe, diagnose
from course_utils.doctor.logs import classify
from course_utils.doctor.model import Machine, TensorFlowInfo, log_findings
from course_utils.doctor.nvidia import parse_nvcc, parse_nvidia_smi
from course_utils.doctor.recommend import platform_name
from course_utils.doctor.texts import Note
from course_utils.doctor.versions import PLATFORMS, load

from ..conftest import ROOT
from .test_data_files import FILES, shipped, texts
from .test_doctor import cuda_tf
from .test_recommend import every_recommendation

sys.path.insert(0, str(ROOT / "scripts"))
import messages  # noqa: E402 - scripts/messages.py: the catalogues, every message the doctor can print

NVIDIA = ROOT / "tests" / "fixtures" / "nvidia"
TF_LOGS = ROOT / "tests" / "fixtures" / "tf_logs"
RTX_3060 = NVIDIA / "smi_wsl2_546.80_cuda_err.txt"  # a real capture: RTX 3060 laptop GPU, WSL2, driver 546.80
QA_SMI = NVIDIA / "smi_qa_post_windows_512.77_wddm.txt"  # native Windows, driver 512.77
SCREEN = 15


def cli(capsys, *args: str) -> tuple[int, str]:
    """``course doctor ARGS``: the exit status and what it printed."""
    status = doctor_cli.main(list(args))
    return status, capsys.readouterr().out


def live_rtx_3060(platform: str) -> Machine:
    """An RTX 3060 machine as ``course doctor`` sees it on itself: TensorFlow uses the GPU, a CUDA toolkit is on PATH
    (the nvcc finding alone used to be some 170 words), the live checks pass."""
    checks = [Note("nvidia-libs-load", "the pip NVIDIA libraries load"),
              Note("kernel-uses-this-environment", "the Jupyter kernel runs this environment")]
    if platform == "wsl2":
        checks.append(Note("wsl2-gpu-plumbing", "WSL2's GPU plumbing is in place"))
    return Machine(platform, "3.12", smi=parse_nvidia_smi(RTX_3060.read_text(encoding="utf-8")),
                   nvcc=parse_nvcc((NVIDIA / "nvcc_linux_12.6.txt").read_text(encoding="utf-8")),
                   tensorflow=cuda_tf(gpus=[{"name": "NVIDIA GeForce RTX 3060", "compute_capability": "8.6"}]),
                   live=True, checks=checks)


# ----------------------------------------------------------------- the default report: one screen


ONE_GPU = [
    pytest.param(lambda: describe("wsl2", None, RTX_3060.read_text(encoding="utf-8")), id="rtx3060-capture-wsl2"),
    pytest.param(lambda: live_rtx_3060("linux"), id="rtx3060-live-linux"),
]


@pytest.mark.parametrize("machine", ONE_GPU)
def test_a_one_gpu_machine_without_errors_gets_the_verdict_and_one_install_block_on_one_screen(machine):
    result = diagnose(machine())
    assert result.exit_code == 0 and len(result.machine.smi.gpus) == 1
    lines = result.summary().splitlines()
    assert len(lines) <= SCREEN, "\n".join(lines)
    assert lines[0].startswith("Verdict: ") and lines[1] == "Install ({}): tensorflow[and-cuda]==2.21.*".format(
        "WSL2" if result.machine.platform == "wsl2" else "Linux")
    commands = result.recommendation.commands
    assert lines[2:2 + len(commands)] == [f"    {command}" for command in commands]
    assert sum(line.startswith("    ") for line in lines) == len(commands)  # one install block, no other
    data = result.to_json()  # off native Windows the JSON's answer is the recommendation
    assert data["answer"]["install"] == data["recommended_install"] == commands


def test_the_live_rtx_3060_is_told_its_tensorflow_uses_the_gpu(capsys):
    result = diagnose(live_rtx_3060("wsl2"))
    verdict = result.summary().splitlines()[0]
    assert "uses the GPU" in verdict and "2.21.0" in verdict and "NVIDIA GeForce RTX 3060" in verdict
    verbose = result.report().splitlines()
    assert len(verbose) > 2 * SCREEN  # what the default leaves out is there


def test_the_command_line_prints_the_short_report_by_default_and_everything_with_verbose(capsys):
    args = ("--nvidia-smi", str(RTX_3060), "--platform", "wsl2", "--nvcc", str(NVIDIA / "nvcc_linux_12.6.txt"))
    status, short = cli(capsys, *args)
    assert status == 0 and len(short.splitlines()) <= SCREEN
    status, verbose = cli(capsys, *args, "--verbose")
    assert status == 0 and verbose.startswith(short.splitlines()[0] + "\n")  # the same verdict first
    for line in ("  NVIDIA driver: 546.80", "Install:", "Findings:", "  [info] nvcc-not-used: ",
                 f"  note: {load().rule('wsl2')['text']}"):
        assert any(out.startswith(line) for out in verbose.splitlines()), line
        assert not any(out.startswith(line) for out in short.splitlines()), line
    status, json_default = cli(capsys, *args, "--json")
    status, json_verbose = cli(capsys, *args, "--json", "--verbose")
    assert json_default == json_verbose  # the JSON is the contract: --verbose changes nothing in it


# ----------------------------------------------------------------- an empty or unreadable capture: no driver


CAPTURES = {
    "empty file": b"",
    "a PowerShell file with nothing in it": b"\xff\xfe",
    "binary junk": bytes(range(256)) * 10,
    "another text": b"\n  Quelque chose d'autre\nsans tableau\n",
}


@pytest.mark.parametrize("platform", ["linux", "wsl2", "windows"])
@pytest.mark.parametrize("what", sorted(CAPTURES))
def test_an_empty_or_unreadable_capture_is_no_driver_and_gets_the_cpu_install(tmp_path, capsys, what, platform):
    path = tmp_path / "smi.txt"
    path.write_bytes(CAPTURES[what])
    status, out = cli(capsys, "--nvidia-smi", str(path), "--platform", platform)
    assert status == 0
    lines = out.splitlines()
    assert lines[1] == f"Install ({platform_name(platform)}): tensorflow==2.21.*"
    assert "and-cuda" not in out and "conda" not in out  # the CPU install, no GPU route
    assert "\n  [warning] no-nvidia-driver: " in out
    assert not re.search(r"[\x00-\x08\x0b-\x1f\x7f]", out)  # nothing of the junk reaches the terminal raw
    status, raw = cli(capsys, "--nvidia-smi", str(path), "--platform", platform, "--json")
    data = json.loads(raw)
    assert data["tensorflow"] == "tensorflow==2.21.*" and data["recommended"]["gpu"] is False
    missing = next(f for f in data["findings"] if f["code"] == "no-nvidia-driver")
    assert missing["severity"] == "warning" and "nvidia-smi > smi.txt" in missing["fix"]
    if platform == "wsl2":  # the Windows driver WSL2 needs, and no Linux one
        assert "528.33" in missing["fix"] and load().rule("wsl2-no-linux-driver")["text"] in missing["fix"]
    # nothing lost: what the capture was stays in the JSON and in the message
    expected = "empty" if not CAPTURES[what].strip(b" \r\n\t\xff\xfe") else "unreadable"
    assert data["nvidia_smi"]["status"] == expected
    if what == "another text":
        assert "\"Quelque chose d'autre\"" in missing["message"]


def test_query_rows_without_a_header_are_a_driver_that_answered_not_no_driver(capsys):
    # nvidia-smi printed these rows, so a driver answered: the GPU route, and what to give the doctor instead
    name = "query_gpustat_8x_titanx.csv"
    assert not parse_nvidia_smi((NVIDIA / name).read_bytes()).no_driver_found
    status, out = cli(capsys, "--nvidia-smi", str(NVIDIA / name), "--platform", "linux", "--python", "3.11")
    assert status == 0 and "no-nvidia-driver" not in out
    assert out.splitlines()[1] == "Install (Linux): tensorflow[and-cuda]==2.21.*"
    assert "  [warning] nvidia-smi-partly-read: " in out
    assert "--query-gpu=name,compute_cap,driver_version --format=csv" in out


@pytest.mark.parametrize("args, said", [
    (["--nvidia-smi", "{tmp}/absent.txt"], "cannot read {tmp}/absent.txt"),
    (["--python", "three"], "'three' is not a version like 3.11"),
    (["--gpu"], "--gpu/--no-gpu go with --log"),
])
def test_bad_arguments_are_a_usage_error_that_says_what_was_wrong(tmp_path, capsys, args, said):
    with pytest.raises(SystemExit) as stop:
        doctor_cli.main([arg.format(tmp=tmp_path) for arg in args])
    assert stop.value.code == 2 and said.format(tmp=tmp_path) in capsys.readouterr().err


# ----------------------------------------------------------------- native Windows with an NVIDIA GPU: WSL2 first


def test_windows_with_an_nvidia_gpu_leads_with_wsl2_and_marks_native_2_10():
    result = diagnose(describe("windows", None, QA_SMI.read_bytes()))
    wsl, native = result.ordered_routes()
    assert (wsl.platform, wsl.tensorflow, native.platform) == ("wsl2", "tensorflow[and-cuda]==2.21.*", "windows")
    assert native.tensorflow == "tensorflow<2.11" and not native.runs_course and wsl.runs_course
    short = result.summary().splitlines()
    assert short[0].index("528.33") < short[0].index("512.77")  # the verdict: WSL2's minimum, then this driver
    assert short[1] == "Install (WSL2): tensorflow[and-cuda]==2.21.*"
    assert not any(line.startswith("    conda") for line in short)  # one install block: WSL2's
    native_finding = next(f for f in result.findings if f.code == "windows-native-no-gpu-after-2.10")
    fix = native_finding.fix
    assert native_finding.severity == "warning"  # no TensorFlow installed yet: a warning, not an error
    assert fix.index("WSL2") < fix.index("conda") and '"tensorflow<2.11" "numpy<2"' in fix
    report = result.report().splitlines()
    assert report[report.index("Install:") + 1] == "WSL2: tensorflow[and-cuda]==2.21.*"
    assert report[report.index("Or:") + 1] == f"native Windows: tensorflow<2.11 ({native.mark()})"  # marked: Keras 2
    assert report.index("Install:") < report.index("Or:")
    data = result.to_json()
    assert data["answer"]["platform"] == "wsl2" and data["answer"]["install"] == wsl.commands
    # the contract follows the same order: WSL2 recommended (what the website page shows first), native Windows after
    assert data["tensorflow"] == "tensorflow[and-cuda]==2.21.*" and data["recommended_install"] == wsl.commands
    assert data["recommended"]["platform"] == "wsl2" and data["recommended"]["runs_course_notebooks"] is True
    assert data["alternatives"][0]["platform"] == "windows"
    assert data["alternatives"][0]["runs_course_notebooks"] is False


@pytest.mark.parametrize("name, cc, code", [("NVIDIA GeForce GTX 960", "5.2", "gpu-too-old"),
                                            ("NVIDIA GeForce RTX 5090", "12.0", "gpu-known-failure")])
def test_on_windows_the_short_report_warns_about_what_wsl2_cannot_do_with_the_gpu(name, cc, code):
    """The WSL2 route's own warnings are shown with it; native Windows' Python and Keras notes give way to them."""
    result = diagnose(describe("windows", "3.11", f"name, compute_cap, driver_version\n{name}, {cc}, 575.57.08\n"))
    short = result.summary()
    assert f"  [warning] {code}: " in short and name in short and cc in short
    assert "  [warning] python-unsupported:" not in short and "python-unsupported" in result.codes()  # TF 2.10's
    assert "python-unsupported" in short.splitlines()[-2]  # named in the --verbose line: nothing dropped silently


def test_a_cpu_only_tensorflow_on_windows_next_to_a_gpu_is_sent_to_wsl2_not_to_tf_2_10():
    tf = TensorFlowInfo(True, "2.21.0", built_with_cuda=False)
    result = diagnose(describe("windows", "3.12", QA_SMI.read_text(encoding="utf-8"), tensorflow=tf))
    cpu_only = next(f for f in result.findings if f.code == "cpu-only-build")
    assert cpu_only.severity == "error" and "WSL2" in cpu_only.fix
    assert "tensorflow[and-cuda]==2.21.*" in cpu_only.fix and "conda" not in cpu_only.fix


def test_elsewhere_the_recommendation_leads_and_a_keras_2_route_is_marked():
    linux = diagnose(describe("linux", "3.8"))
    assert linux.ordered_routes()[0] is linux.recommendation and linux.recommendation.tensorflow == "tensorflow==2.13.*"
    assert not linux.recommendation.runs_course and linux.recommendation.mark_suffix() in linux.summary()
    macos = diagnose(describe("macos", "3.12"))
    assert [r.route for r in macos.ordered_routes()] == [None, "Apple silicon, Metal GPU", "Intel Mac"]
    assert all(r.runs_course for r in macos.ordered_routes())


# ----------------------------------------------------------------- every fix is complete: numpy<2 with an old TF


# TensorFlow before 2.18 was built against NumPy 1, but only 2.11 and older let pip install NumPy 2 beside them, on
# which `import tensorflow` fails (tensorflow/tensorflow#91042, checked with pip's resolver: tensorflow<2.11 on
# Windows/Python 3.10 gets NumPy 2.2.6); 2.12-2.17 cap NumPy below 2 themselves. So "numpy<2" goes with TF <= 2.11.
PIP = re.compile(r"pip install((?:[ \t]+(?:\"[^\"\n]*\"|'[^'\n]*'|[^\s`;&|()（）\"'，。]+))+)")
TOKEN = re.compile(r"\"([^\"]*)\"|'([^']*)'|(\S+)")
TENSORFLOW = re.compile(r"^tensorflow(?:-cpu|-gpu)?(?:\[[^\]]*\])?(?P<spec>(?:[<>=!~]=?[^,\s]*,?)*)$")


RELEASES = [Version(f"2.{minor}.{patch}") for minor in range(30) for patch in range(10)]  # any a specifier names


def unpinned(text: str) -> list[str]:
    """Each ``pip install`` in ``text`` that lets pip install a TensorFlow (the newest release its specifier allows)
    which needs ``"numpy<2"`` (rule 'numpy-2': the releases that do not cap NumPy themselves), without it."""
    found = []
    for match in PIP.finditer(text):
        tokens = ["".join(groups) for groups in TOKEN.findall(match.group(1))]
        pinned = any(re.fullmatch(r"numpy\s*<\s*2(?:\.0)*", token) for token in tokens)
        for requirement in filter(None, map(TENSORFLOW.match, tokens)):
            with contextlib.suppress(InvalidSpecifier):  # a placeholder: "tensorflow=={minor}.*"
                newest = max(SpecifierSet(requirement.group("spec")).filter(RELEASES), default=None)
                if newest and load().numpy_pin(str(newest)) and not pinned:
                    found.append(match.group(0))
    return found


def test_the_pin_check_catches_an_unpinned_old_tensorflow():
    assert unpinned('then `pip install "tensorflow<2.11"`), or') == ['pip install "tensorflow<2.11"']
    assert unpinned("pip install tensorflow-gpu==2.10.* -U") == ["pip install tensorflow-gpu==2.10.* -U"]
    assert unpinned('pip install "tensorflow<2.11" "numpy<2"') == []
    assert unpinned('pip install "tensorflow==2.13.*"') == []  # 2.12-2.17 cap NumPy themselves
    assert unpinned('pip install "tensorflow-metal==1.2.*" "tensorflow=={minor}.*"') == []


def catalogue_texts() -> list[str]:
    """Every message of the doctor, in English and in Chinese: the rules tables, the live checks' fixes, every
    sentence a finding or a note is built from."""
    return [text for m in messages.load("zh_CN", "doctor") if m.id for text in (m.id, m.string)]


def table_texts() -> list[str]:
    """Every text of the doctor's data files (versions.json, log_rules.json, findings.json) and its translation."""
    return [text for name in FILES for _, entry in texts(shipped(name))
            for text in (entry["text"], entry["translations"]["zh-CN"]["text"])]


def routes_texts() -> list[str]:
    """Every route of test_recommend's sweep: commands, fallbacks and notes."""
    return [text for rec in every_recommendation() for text in (*rec.commands, rec.text(), rec.fallback_install or "")]


def diagnosis_texts() -> list[str]:
    """What the doctor prints for every real capture on every platform (both reports and the JSON), and for the logs
    (with a GPU)."""
    texts = []
    for path in sorted(NVIDIA.glob("smi_*.txt")):
        for platform in PLATFORMS:
            for python in (None, "3.8", "3.11"):
                result = diagnose(describe(platform, python, path.read_bytes(),
                                           (NVIDIA / "nvcc_qa_post_windows_11.7.txt").read_text()))
                texts += [result.summary(), result.report(), json.dumps(result.to_json(), ensure_ascii=False)]
    for path in sorted(TF_LOGS.glob("*.txt")):
        report = classify(path.read_text(encoding="utf-8"), gpu=True)
        texts += [report.text(), *(f.fix for f in log_findings(report))]
    return texts


@pytest.mark.parametrize("source", [catalogue_texts, table_texts, routes_texts, diagnosis_texts])
def test_every_install_of_a_tensorflow_built_for_numpy_1_pins_numpy(source):
    texts = source()
    assert texts and any("pip install" in text for text in texts)
    found = sorted({command for text in texts for command in unpinned(text)})
    assert found == [], found


def test_a_windows_log_missing_cudart64_110_gets_a_complete_fix(capsys, tmp_path):
    log = tmp_path / "log.txt"
    log.write_text("2023-01-01 12:00:00.0: W tensorflow/stream_executor/platform/default/dso_loader.cc:64] Could not "
                   "load dynamic library 'cudart64_110.dll'; dlerror: cudart64_110.dll not found\n", encoding="utf-8")
    status, out = cli(capsys, "--log", str(log), "--gpu")
    assert status == 1 and 'pip install "tensorflow<2.11" "numpy<2"' in out and unpinned(out) == []
    assert out.index("WSL2") < out.index("conda install")
