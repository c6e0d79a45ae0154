"""doctor.troubleshooting: the doctor links each code it explains to its entry of docs/troubleshooting.md, and maps
only codes it really gives (scripts/course_lint.py's ts-entry and ts-link check the page and every link into it)."""

from __future__ import annotations

import re

import pytest

from course_utils.core import variables
from course_utils.doctor import describe, diagnose
from course_utils.doctor.logs import RULES
from course_utils.doctor.model import CHECK_FINDINGS, NOTE_FINDINGS
from course_utils.doctor.recommend import recommend
from course_utils.doctor.troubleshooting import ANCHORS, links, more_line, see

from .conftest import ROOT
from .doctor.note_codes import NOTE_CODES

NVIDIA = ROOT / "tests" / "fixtures" / "nvidia"


def test_the_doctor_maps_only_codes_it_really_gives():
    source = "".join(p.read_text(encoding="utf-8") for p in sorted((ROOT / "course_utils" / "doctor").glob("*.py")))
    findings = set(re.findall(r'(?:Note)?Finding\(\s*"([a-z0-9.-]+)"', source))
    known = findings | set(NOTE_CODES) | set(CHECK_FINDINGS) | {rule.code for rule in RULES}
    known |= {how["code"] for how in NOTE_FINDINGS.values() if "code" in how}
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


@pytest.mark.parametrize("platform, capture, code, anchor", [
    ("linux", "smi_missing_command_not_found.txt", "no-nvidia-driver", "nvidia-smi-not-found"),
    ("wsl2", "smi_wsl2_555.99_rtx4070.txt", "nvidia-driver", None),  # a finding the page does not explain
])
def test_a_finding_the_page_explains_links_its_entry_under_its_fix(platform, capture, code, anchor):
    result = diagnose(describe(platform, "3.12", (NVIDIA / capture).read_text(encoding="utf-8")))
    lines = result.report().splitlines()
    at = next(i for i, line in enumerate(lines) if f"] {code}: " in line)
    assert lines[at + 1].strip().startswith("fix:")
    link = f"docs/troubleshooting.md#{anchor}" if anchor else None
    assert (lines[at + 2] if lines[at + 2].strip().startswith("More:") else None) == (link and f"      More: {link}")
    assert result.to_json()["see"].get(code) == link


def test_a_recommendations_notes_link_their_entries():
    rec = recommend("windows", "3.10")  # TF 2.10 by the conda recipe: a numpy<2 note
    assert "numpy-2" in rec.note_codes()
    assert "  More: docs/troubleshooting.md#numpy-2" in rec.text().splitlines()
