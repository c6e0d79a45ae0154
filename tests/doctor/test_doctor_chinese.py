"""The doctor in Chinese (COURSE_LANG=zh-CN): findings, fixes, a log's verdicts and the links speak Chinese; codes,
commands and the JSON's structure stay as they are; without the switch the English is unchanged."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from course_utils.core import variables
from course_utils.core.i18n import ENGLISH, LANGUAGES
from course_utils.doctor import Machine, describe, diagnose
from course_utils.doctor.checks import CHECK_FINDINGS, GROUP_KERNELS, GROUP_WSL
from course_utils.doctor.cli import main
from course_utils.doctor.log_rules import RULES
from course_utils.doctor.logs import classify
from course_utils.doctor.model import MAIN_GROUP, NOTE_FINDINGS
from course_utils.doctor.nvidia import parse_nvidia_smi
from course_utils.doctor.recommend import PLATFORM_NAMES, Note
from course_utils.doctor.routes import INTEL_MAC_ROUTE, METAL_ROUTE
from course_utils.doctor.texts import join, sentence
from course_utils.doctor.troubleshooting import ANCHORS, more_line, see
from course_utils.doctor.versions import DATA_FILE, english_hash, load, localized

from ..conftest import ROOT
from .test_doctor import run_cli

sys.path.insert(0, str(ROOT / "scripts"))
import messages  # noqa: E402 - scripts/messages.py, the tool that keeps the catalogues

CJK = re.compile(r"[\u4e00-\u9fff]")
NVIDIA = ROOT / "tests" / "fixtures" / "nvidia"
QA_SMI = NVIDIA / "smi_qa_post_windows_512.77_wddm.txt"  # driver 512.77: too old for TF 2.21 on WSL2
QA_NVCC = NVIDIA / "nvcc_qa_post_windows_11.7.txt"
CUDNN_LOG = ROOT / "tests" / "fixtures" / "tf_logs" / "cudnn_mismatch_composed.txt"
ZH_PAGE = ROOT / "docs" / "zh" / "troubleshooting.md"
FINDING = re.compile(r"^\s*\[(info|warning|error)\] ([a-z0-9.-]+): (.*)$")


@pytest.fixture
def chinese(monkeypatch):
    monkeypatch.setenv(variables.LANG, "zh-CN")


@pytest.fixture
def english(monkeypatch):
    monkeypatch.delenv(variables.LANG, raising=False)


def course_doctor(*args: str, lang: str | None) -> subprocess.CompletedProcess:
    """``course doctor ARGS`` in a child process, with COURSE_LANG set to ``lang`` (None: unset)."""
    env = {k: v for k, v in os.environ.items() if k != variables.LANG}
    if lang:
        env[variables.LANG] = lang
    return run_cli(*args, env=env)


def findings_in(report: str) -> list[tuple[str, str, str]]:
    """``[(severity, code, message)]`` of the report's finding lines, in order."""
    return [m.groups() for m in map(FINDING.match, report.splitlines()) if m]


def shape(value):
    """The JSON's structure: keys kept, leaves replaced by their type (None kept apart)."""
    if isinstance(value, dict):
        return {key: shape(item) for key, item in value.items()}
    if isinstance(value, list):
        return [shape(item) for item in value]
    return type(value).__name__


# ----------------------------------------------------------------- the command line


def test_course_doctor_reports_in_chinese_with_the_codes_and_commands_unchanged():
    args = ("--nvidia-smi", str(QA_SMI), "--nvcc", str(QA_NVCC), "--platform", "wsl2", "--python", "3.11")
    zh, en = course_doctor(*args, lang="zh-CN"), course_doctor(*args, lang=None)
    assert zh.returncode == en.returncode == 1, zh.stderr  # driver-too-old is an error in both
    zh_found, en_found = findings_in(zh.stdout), findings_in(en.stdout)
    assert [f[:2] for f in zh_found] == [f[:2] for f in en_found]  # the same severities and codes, in order
    assert ("error", "driver-too-old") in [f[:2] for f in zh_found]
    assert all(CJK.search(message) for _, _, message in zh_found), zh_found
    fixes = [line.strip() for line in zh.stdout.splitlines() if line.strip().startswith("解决办法：")]
    assert len(fixes) == len(zh_found) and all(CJK.search(fix[5:]) for fix in fixes)
    assert "512.77" in zh.stdout and "528.33" in zh.stdout  # the versions stay
    assert 'pip install "tensorflow[and-cuda]==2.21.*"' in zh.stdout  # and the commands
    assert zh.stdout.startswith("诊断：NVIDIA 驱动 512.77 比 TF 2.21 所需的 528.33 更旧")  # the verdict first
    assert "结论：发现错误（退出状态 1）" in zh.stdout.splitlines()
    assert "详见：docs/zh/troubleshooting.md#driver-too-old" in zh.stdout
    assert "fix:" not in zh.stdout and "Result:" not in zh.stdout


def test_course_doctor_stays_english_without_the_switch():
    args = ("--nvidia-smi", str(QA_SMI), "--nvcc", str(QA_NVCC), "--platform", "windows")
    short, done = course_doctor(*args, lang=None), course_doctor(*args, "--verbose", lang=None)
    assert done.returncode == short.returncode == 0, done.stderr
    for out in (short.stdout, done.stdout):
        assert not CJK.search(out), [line for line in out.splitlines() if CJK.search(line)]
        assert out.startswith("Verdict: Native Windows has no GPU TensorFlow after 2.10: use WSL2")
    lines = done.stdout.splitlines()
    assert lines[1] == "Described machine: native Windows, Python (not given)"
    assert "      More: docs/troubleshooting.md#windows-no-gpu" in lines
    driver = "  [info] nvidia-driver: NVIDIA driver 512.77; it supports CUDA up to 11.6. GPU 0: NVIDIA GeForce ..."
    assert any(line.startswith(driver) for line in lines) and "      fix: Nothing to do." in lines
    assert lines[-1] == "Result: no errors (exit status 0)"


def test_a_pasted_logs_verdict_in_chinese(chinese, capsys):
    assert main(["--log", str(CUDNN_LOG)]) == 1
    out = capsys.readouterr().out.splitlines()
    assert out[0] == "问题所在："
    assert out[1].startswith("  [problem] cudnn-mismatch, 第 2 行: Loaded runtime CuDNN library: 8.0.5")  # as logged
    assert out[2] == (
        "      含义：TensorFlow 加载的 cuDNN 是 8.0.5，但构建时用的是 8.6.0；它只接受主版本相同、次版本相同或更高的 "
        "cuDNN，所以没有使用 cuDNN。"
    )
    assert out[3].startswith("      解决办法：") and 'pip install "tensorflow[and-cuda]"' in out[3]
    assert "GPU：TensorFlow 找到了 NVIDIA 显卡（只有这时才会打印第 2 行）" in out
    assert "  cudnn-mismatch: docs/zh/troubleshooting.md#cudnn-mismatch" in out
    assert out[-1] == "结论：找到了出问题的行（退出状态 1）"


def test_a_pasted_log_in_english_without_the_switch(english, capsys):
    assert main(["--log", str(CUDNN_LOG)]) == 1
    out = capsys.readouterr().out.splitlines()
    assert out[0] == "The problem:" and out[2].startswith("      means: TensorFlow loaded cuDNN 8.0.5")
    assert out[-1] == "Result: a problem line found (exit status 1)" and not any(CJK.search(line) for line in out[2:])


def test_a_bad_log_file_says_what_to_do_in_chinese(tmp_path):
    done = course_doctor("--log", str(tmp_path / "missing.txt"), lang="zh-CN")
    assert done.returncode == 2
    assert f"日志文件 {tmp_path / 'missing.txt'} 不存在。" in done.stderr and "解决办法：检查路径" in done.stderr


# ----------------------------------------------------------------- the JSON


def test_the_json_keeps_its_structure_and_codes_and_its_sentences_follow_the_language(monkeypatch):
    machine = describe("wsl2", "3.11", QA_SMI.read_text(encoding="utf-8"), QA_NVCC.read_text(encoding="utf-8"))
    monkeypatch.delenv(variables.LANG, raising=False)
    en = json.loads(json.dumps(diagnose(machine).to_json()))
    monkeypatch.setenv(variables.LANG, "zh-CN")
    zh = json.loads(json.dumps(diagnose(machine).to_json()))
    assert shape(zh) == shape(en)
    assert [f["code"] for f in zh["findings"]] == [f["code"] for f in en["findings"]]
    assert [n["code"] for n in zh["recommended"]["notes"]] == [n["code"] for n in en["recommended"]["notes"]]
    assert zh["recommended_install"] == en["recommended_install"] and zh["tensorflow"] == en["tensorflow"]
    assert all(CJK.search(f["message"]) and CJK.search(f["fix"]) for f in zh["findings"])
    assert all(not CJK.search(f["message"] + f["fix"]) for f in en["findings"])
    assert all(CJK.search(n["text"]) for n in zh["recommended"]["notes"])
    assert zh["see"]["driver-too-old"] == "docs/zh/troubleshooting.md#driver-too-old"
    assert en["see"]["driver-too-old"] == "docs/troubleshooting.md#driver-too-old"


# ----------------------------------------------------------------- how the language is chosen


def test_the_language_is_read_when_a_message_is_shown_not_at_import(monkeypatch):
    entry = classify(CUDNN_LOG.read_text(encoding="utf-8")).problem
    monkeypatch.delenv(variables.LANG, raising=False)
    assert entry.meaning.startswith("TensorFlow loaded cuDNN 8.0.5 but was built with 8.6.0")
    monkeypatch.setenv(variables.LANG, "zh-CN")
    assert entry.meaning.startswith("TensorFlow 加载的 cuDNN 是 8.0.5")  # the same entry, now in Chinese


def test_the_report_translates_the_group_headings_and_the_json_keeps_their_names(chinese):
    notes = [Note("wsl2-no-dxg", "/dev/dxg 不存在"), Note("kernel-without-tensorflow", "内核 'Base' 没有 TensorFlow")]
    result = diagnose(Machine("linux", "3.11", live=True, checks=notes))
    report = result.report()
    assert "\n  WSL2：\n" in report and "\n  Jupyter 内核：\n" in report
    assert report.splitlines()[0].startswith("诊断：") and report.splitlines()[1] == "这台机器：Linux，Python 3.11"
    groups = {check["code"]: check["group"] for check in result.to_json()["checks"]}
    assert groups == {"wsl2-no-dxg": GROUP_WSL, "kernel-without-tensorflow": GROUP_KERNELS}
    assert (GROUP_WSL, GROUP_KERNELS) == ("WSL2", "Jupyter kernels")


def test_every_table_text_is_in_the_catalogue_with_a_translation():
    """Text that a table defines once (marked N_) is translated where it is shown: it must be in the catalogue."""
    catalogue = messages.load("zh_CN", "doctor")
    texts = [text for rule in RULES for text in (rule.meaning, rule.fix)]
    texts += [rule.fix for rule in CHECK_FINDINGS.values()] + [rule.group for rule in CHECK_FINDINGS.values()]
    texts += [how.fix for how in NOTE_FINDINGS.values()]
    texts += [*PLATFORM_NAMES.values(), METAL_ROUTE, INTEL_MAC_ROUTE, MAIN_GROUP]
    missing = [text for text in texts if catalogue.get(text) is None or not catalogue.get(text).string]
    assert not missing, missing


def test_sentences_end_in_the_language_now(monkeypatch):
    monkeypatch.delenv(variables.LANG, raising=False)
    assert sentence("no driver") == "No driver." and sentence("done!") == "Done!"
    assert join("One.", "Two.") == "One. Two."
    monkeypatch.setenv(variables.LANG, "zh-CN")
    assert sentence("没有驱动") == "没有驱动。" and sentence("没有驱动。") == "没有驱动。"
    assert join("第一句。", "第二句。") == "第一句。第二句。" and join("第一句。", "") == "第一句。"


# ----------------------------------------------------------------- the version table's texts


def _texts(node: Any, where: str) -> Iterator[tuple[str, dict[str, Any]]]:
    """Every entry of the data with a ``text`` for people, and where it is (``rules[wsl2]``)."""
    if isinstance(node, dict):
        if isinstance(node.get("text"), str):
            yield where, node
        for key, value in node.items():
            if key != "translations":
                yield from _texts(value, f"{where}.{key}" if where else key)
    elif isinstance(node, list):
        for n, value in enumerate(node):
            name = value.get("id", n) if isinstance(value, dict) else n
            yield from _texts(value, f"{where}[{name}]")


def stale_translations(path: Path | None = None) -> list[str]:
    """Each ``text`` in versions.json without a current translation into every language the course speaks."""
    data = json.loads(Path(path or DATA_FILE).read_text(encoding="utf-8"))
    found = []
    for where, entry in _texts(data, ""):
        for lang in (lang for lang in LANGUAGES if lang != ENGLISH):
            translation = entry.get("translations", {}).get(lang)
            want = english_hash(entry["text"])
            if not translation or not translation.get("text"):
                found.append(f"{where}: no {lang} translation")
            elif translation.get("en_sha256") != want:
                found.append(f"{where}: the {lang} translation is of an older English text (en_sha256 now {want})")
    return found


def test_every_text_of_the_version_table_has_a_current_chinese_translation():
    assert stale_translations() == []


def test_a_rule_text_is_read_in_the_language_now(monkeypatch):
    rule = load().rule("wsl2-no-linux-driver")
    monkeypatch.delenv(variables.LANG, raising=False)
    assert rule["text"].startswith("Do not install a Linux NVIDIA driver inside WSL2")
    monkeypatch.setenv(variables.LANG, "zh-CN")
    assert rule["text"] == "不要在 WSL2 里安装 Linux 版 NVIDIA 驱动：WSL2 使用的 GPU 由 Windows 驱动提供。"
    assert rule["source"].startswith("https://")
    assert load().cudnn_rule["text"].startswith("TensorFlow 在运行时加载 cuDNN")


def test_a_changed_english_text_shows_the_english_until_the_translation_is_redone(tmp_path, monkeypatch):
    data = json.loads(DATA_FILE.read_text(encoding="utf-8"))
    entry = next(rule for rule in data["rules"] if rule["id"] == "macos")
    entry["text"] = entry["text"].replace("macOS has no CUDA", "macOS has never had CUDA")
    changed = tmp_path / "versions.json"
    changed.write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")
    [problem] = stale_translations(changed)
    assert problem.startswith("rules[macos]: the zh-CN translation is of an older English text")
    assert english_hash(entry["text"]) in problem
    monkeypatch.setenv(variables.LANG, "zh-CN")
    assert localized(entry) == entry["text"]  # the English, not a translation of what it used to say
    del entry["translations"]
    changed.write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")
    assert stale_translations(changed) == ["rules[macos]: no zh-CN translation"]


# ----------------------------------------------------------------- captured tool output


def test_nvidia_smi_problems_in_chinese_keep_the_cut_capture_rule(monkeypatch):
    cut = (NVIDIA / "smi_linux_535.113.01_cut_in_driver_version.txt").read_text(encoding="utf-8")
    monkeypatch.delenv(variables.LANG, raising=False)
    english = parse_nvidia_smi(cut)
    monkeypatch.setenv(variables.LANG, "zh-CN")
    chinese = parse_nvidia_smi(cut)
    assert (chinese.status, chinese.driver_version, chinese.driver_cuda) == (
        english.status,
        english.driver_version,
        english.driver_cuda,
    )
    assert len(chinese.problems) == len(english.problems) and any("截断" in p for p in chinese.problems)
    assert not any("CUDA Version" in p and "旧版驱动" in p for p in chinese.problems)  # a cut, not an old driver


# ----------------------------------------------------------------- the troubleshooting links


def test_the_links_lead_to_the_chinese_page_in_chinese(chinese):
    assert see("out-of-memory") == "docs/zh/troubleshooting.md#oom"
    assert more_line("out-of-memory", "  ") == ["  详见：docs/zh/troubleshooting.md#oom"]
    assert see("nvidia-driver") is None


def test_the_chinese_page_has_every_anchor_the_doctor_links_to():
    anchors = set(re.findall(r'<a id="([^"]+)"></a>', ZH_PAGE.read_text(encoding="utf-8")))
    assert set(ANCHORS.values()) <= anchors, set(ANCHORS.values()) - anchors
