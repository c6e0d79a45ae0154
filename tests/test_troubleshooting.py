"""doctor.troubleshooting: the doctor links each code it explains to its entry of docs/troubleshooting.md, and maps
only codes it really gives (scripts/course_lint.py's ts-entry and ts-link check the page and every link into it)."""

from __future__ import annotations

import re

import pytest

from course_utils.core import variables
from course_utils.doctor import describe, diagnose
from course_utils.doctor.checks import CHECK_FINDINGS
from course_utils.doctor.log_rules import RULES
from course_utils.doctor.model import NOTE_FINDINGS
from course_utils.doctor.recommend import recommend
from course_utils.doctor.troubleshooting import ANCHORS, links, more_line, see

from .conftest import ROOT
from .doctor.note_codes import NOTE_CODES

NVIDIA = ROOT / "tests" / "fixtures" / "nvidia"


def test_the_doctor_maps_only_codes_it_really_gives():
    source = "".join(p.read_text(encoding="utf-8") for p in sorted((ROOT / "course_utils" / "doctor").glob("*.py")))
    findings = set(re.findall(r'(?:Note)?Finding\(\s*"([a-z0-9.-]+)"', source))
    known = findings | set(NOTE_CODES) | set(CHECK_FINDINGS) | {rule.code for rule in RULES}
    known |= {how.code for how in NOTE_FINDINGS.values() if how.code}
    assert {"driver-too-old", "no-nvidia-driver", "tensorflow-sees-no-gpu"} <= findings  # the pattern still reads
    assert set(ANCHORS) <= known, set(ANCHORS) - known


@pytest.mark.parametrize("lang, page, more", [(None, "docs/", "More: "), ("zh-CN", "docs/zh/", "详见：")])
def test_see_and_more_line_lead_to_the_page_in_the_language(monkeypatch, lang, page, more):
    if lang:
        monkeypatch.setenv(variables.LANG, lang)
    else:
        monkeypatch.delenv(variables.LANG, raising=False)
    assert see("out-of-memory") == f"{page}troubleshooting.md#oom"
    assert see("nvidia-driver") is None and see(None) is None
    assert more_line("out-of-memory", "  ") == [f"  {more}{page}troubleshooting.md#oom"]
    assert more_line("nvidia-driver") == []
    assert links(["cudnn-mismatch", "nvidia-driver", "cudnn-mismatch"]) == {
        "cudnn-mismatch": f"{page}troubleshooting.md#cudnn-mismatch"
    }


def report_lines(result) -> list[str]:
    return result.report().splitlines()


def test_an_old_driver_diagnosis_links_its_entry_under_the_finding():
    old = next(NVIDIA.glob("smi_*windows_512.77_wddm.txt"))  # the Q&A post's machine: driver 512.77
    result = diagnose(describe("wsl2", "3.11", old.read_text(encoding="utf-8")))
    lines = report_lines(result)
    at = next(i for i, line in enumerate(lines) if "[error] driver-too-old:" in line)
    assert lines[at + 1].strip().startswith("fix:")
    assert lines[at + 2] == "      More: docs/troubleshooting.md#driver-too-old"
    assert result.to_json()["see"]["driver-too-old"] == "docs/troubleshooting.md#driver-too-old"


def test_a_machine_without_nvidia_smi_links_the_not_found_entry():
    missing = (NVIDIA / "smi_missing_command_not_found.txt").read_text(encoding="utf-8")
    result = diagnose(describe("linux", "3.12", missing))
    assert "no-nvidia-driver" in result.codes()
    assert "      More: docs/troubleshooting.md#nvidia-smi-not-found" in report_lines(result)


def test_a_finding_the_page_does_not_explain_gets_no_link():
    ok = (NVIDIA / "smi_wsl2_555.99_rtx4070.txt").read_text(encoding="utf-8")
    lines = report_lines(diagnose(describe("wsl2", "3.12", ok)))
    at = next(i for i, line in enumerate(lines) if "[info] nvidia-driver:" in line)
    assert not lines[at + 2].strip().startswith("More:")


def test_a_recommendations_notes_link_their_entries():
    rec = recommend("windows", "3.10")  # TF 2.10 by the conda recipe: a numpy<2 note
    assert "numpy-2" in rec.note_codes()
    assert "  More: docs/troubleshooting.md#numpy-2" in rec.text().splitlines()


