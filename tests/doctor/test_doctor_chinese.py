"""The doctor in Chinese (COURSE_LANG=zh-CN): findings, fixes, a log's verdicts and the links speak Chinese; codes,
commands and the JSON's structure stay as they are; without the switch the English is unchanged."""

from __future__ import annotations

import json
import re
import sys

import pytest

from course_utils.core import variables
from course_utils.doctor.cli import main
from course_utils.doctor.logs import classify
from course_utils.doctor.model import CHECK_FINDINGS, MAIN_GROUP
from course_utils.doctor.recommend import INTEL_MAC_ROUTE, METAL_ROUTE, PLATFORM_NAMES
from course_utils.doctor.texts import join, sentence
from course_utils.doctor.versions import load

from ..conftest import ROOT

sys.path.insert(0, str(ROOT / "scripts"))
import messages  # noqa: E402 - scripts/messages.py, the tool that keeps the catalogues

CJK = re.compile(r"[\u4e00-\u9fff]")
NVIDIA = ROOT / "tests" / "fixtures" / "nvidia"
QA_SMI = NVIDIA / "smi_qa_post_windows_512.77_wddm.txt"  # driver 512.77: too old for TF 2.21 on WSL2
QA_NVCC = NVIDIA / "nvcc_qa_post_windows_11.7.txt"
CUDNN_LOG = ROOT / "tests" / "fixtures" / "tf_logs" / "cudnn_mismatch_composed.txt"
def shape(value):
    """The JSON's structure: keys kept, leaves replaced by their type (None kept apart)."""
    if isinstance(value, dict):
        return {key: shape(item) for key, item in value.items()}
    if isinstance(value, list):
        return [shape(item) for item in value]
    return type(value).__name__


# ----------------------------------------------------------------- the command line


def course_doctor(monkeypatch, capsys, *args: str, lang: str | None) -> tuple[int, str, str]:
    """``course doctor ARGS`` with COURSE_LANG set to ``lang`` (None: unset): its status, output and errors."""
    if lang:
        monkeypatch.setenv(variables.LANG, lang)
    else:
        monkeypatch.delenv(variables.LANG, raising=False)
    status = main(list(args))
    return (status, *capsys.readouterr())


def test_course_doctor_in_chinese_keeps_the_codes_commands_and_the_jsons_structure(monkeypatch, capsys):
    args = ("--nvidia-smi", str(QA_SMI), "--nvcc", str(QA_NVCC), "--platform", "wsl2", "--python", "3.11")
    (zh_status, zh, _), (_, zh_json, _), (en_status, en, _), (_, en_json, _) = (
        course_doctor(monkeypatch, capsys, *args, *json_switch, lang=lang)
        for lang in ("zh-CN", None) for json_switch in ((), ("--json",)))
    assert zh_status == en_status == 1  # driver-too-old is an error in both
    assert not CJK.search(en), [line for line in en.splitlines() if CJK.search(line)]  # English without the switch
    zh_data, en_data = json.loads(zh_json), json.loads(en_json)
    assert shape(zh_data) == shape(en_data)
    assert [(f["code"], f["severity"]) for f in zh_data["findings"]] == [
        (f["code"], f["severity"]) for f in en_data["findings"]]  # the same codes and severities, in order
    assert [n["code"] for n in zh_data["recommended"]["notes"]] == [n["code"] for n in en_data["recommended"]["notes"]]
    assert (zh_data["recommended_install"], zh_data["tensorflow"]) == (en_data["recommended_install"],
                                                                       en_data["tensorflow"])
    assert all(CJK.search(f["message"]) and CJK.search(f["fix"]) for f in zh_data["findings"])
    assert all(not CJK.search(f["message"] + f["fix"]) for f in en_data["findings"])
    assert all(CJK.search(n["text"]) for n in zh_data["recommended"]["notes"])
    fixes = [line.strip() for line in zh.splitlines() if line.strip().startswith("解决办法：")]  # the report
    assert fixes and all(CJK.search(fix[5:]) for fix in fixes) and "fix:" not in zh and "Result:" not in zh
    assert "512.77" in zh and "528.33" in zh  # the versions stay
    assert 'pip install "tensorflow[and-cuda]==2.21.*"' in zh  # and the commands
    verdict, *_, result = zh.splitlines()
    assert CJK.search(verdict) and "528.33" in verdict and CJK.search(result)


@pytest.mark.parametrize("lang, page", [("zh-CN", "docs/zh/"), (None, "docs/")])
def test_a_pasted_logs_verdict_follows_the_language_and_keeps_the_logged_line(monkeypatch, capsys, lang, page):
    status, out, _ = course_doctor(monkeypatch, capsys, "--log", str(CUDNN_LOG), lang=lang)
    problem = classify(CUDNN_LOG.read_text(encoding="utf-8")).problem
    assert status == 1
    out = out.splitlines()
    assert out[1].startswith("  [problem] cudnn-mismatch, ") and problem.message[:100] in out[1]  # as logged
    assert problem.meaning in out[2] and problem.fix in out[3]
    assert f"  cudnn-mismatch: {page}troubleshooting.md#cudnn-mismatch" in out
    assert any(line.startswith("  [harmless] executor-aborted-after-error, ") for line in out)
    assert all(bool(CJK.search(line)) is bool(lang) for line in (out[0], out[2], out[3], out[-1]))
    assert lang or not any(CJK.search(line) for line in out)


def test_a_bad_log_file_says_what_to_do_in_chinese(monkeypatch, capsys, tmp_path):
    status, _, err = course_doctor(monkeypatch, capsys, "--log", str(tmp_path / "missing.txt"), lang="zh-CN")
    assert status == 2 and str(tmp_path / "missing.txt") in err
    assert all(CJK.search(line) for line in err.splitlines())


# ----------------------------------------------------------------- how the language is chosen


def test_the_language_is_read_when_a_message_is_shown_not_at_import(monkeypatch):
    entry, raw = classify(CUDNN_LOG.read_text(encoding="utf-8")).problem, load().rules["wsl2-no-linux-driver"]
    monkeypatch.delenv(variables.LANG, raising=False)
    assert entry.meaning == entry.rule.meaning["text"].format(**entry.details)
    assert load().rule("wsl2-no-linux-driver")["text"] == raw["text"]
    monkeypatch.setenv(variables.LANG, "zh-CN")  # the same log entry and versions.json rule, now in Chinese
    assert entry.meaning == entry.rule.meaning["translations"]["zh-CN"]["text"].format(**entry.details)
    rule = load().rule("wsl2-no-linux-driver")
    assert rule["text"] == raw["translations"]["zh-CN"]["text"] and rule["source"].startswith("https://")


def test_every_table_text_is_in_the_catalogue_with_a_translation():
    """Text that a table defines once (marked N_) is translated where it is shown: it must be in the catalogue (the
    fixes of findings.json carry their own translations: test_data_files.py)."""
    catalogue = messages.load("zh_CN", "doctor")
    texts = [rule["group"] for rule in CHECK_FINDINGS.values()]
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
