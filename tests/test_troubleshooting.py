"""docs/troubleshooting.md: every entry is complete and sourced, and every way into it - the doctor's `More:` lines,
the notebooks, the docs and the README - lands on an entry that exists.

The page is read as structure, not as sentences: an entry is an ``<a id="...">`` anchor followed by a ``###``
heading; it must hold an "On screen" code block (the message, exactly), a cause, a fix and https sources.
"""

from __future__ import annotations

import json
import re

import pytest

from course_utils.doctor import describe, diagnose
from course_utils.doctor.checks import CHECK_FINDINGS
from course_utils.doctor.cli import main
from course_utils.doctor.log_rules import RULES
from course_utils.doctor.model import NOTE_FINDINGS
from course_utils.doctor.recommend import recommend
from course_utils.doctor.troubleshooting import ANCHORS, PAGE, links, more_line, see

from .conftest import ROOT
from .doctor.note_codes import NOTE_CODES

TROUBLESHOOTING = ROOT / PAGE
NVIDIA = ROOT / "tests" / "fixtures" / "nvidia"
TF_LOGS = ROOT / "tests" / "fixtures" / "tf_logs"
LINK = re.compile(r"troubleshooting\.md#([A-Za-z0-9_-]+)")
ENTRY = re.compile(r'^<a id="(?P<id>[^"]+)"></a>\n(?P<level>#{2,3}) (?P<title>.+)$', re.M)

# The errors the page must cover, each with a distinctive piece of the message it shows (checked in its block).
REQUIRED = {
    "tensorflow-gpu": "metadata-generation-failed",
    "no-matching-distribution": "No matching distribution found for tensorflow",
    "numpy-2": "A module that was compiled using NumPy 1.x cannot be run in",
    "windows-no-gpu": "[]",
    "driver-too-old": "CUDA driver version is insufficient for CUDA runtime version",
    "nvidia-smi-not-found": "nvidia-smi: command not found",
    "wsl2-no-gpu": "Command 'nvidia-smi' not found",
    "wsl2-linux-driver": "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver",
    "cannot-dlopen": "Cannot dlopen some GPU libraries",
    "cuda-drivers-not-found": "Could not find cuda drivers on your machine, GPU will not be used",
    "cudnn-mismatch": "Loaded runtime CuDNN library: 8.0.5 but source was compiled with: 8.6.0",
    "windows-dll": "Could not load dynamic library 'cudart64_110.dll'",
    "oom": "OOM when allocating tensor",
    "cudnn-init-failed": "Failed to get convolution algorithm",
    "too-late": "Physical devices cannot be modified after being initialized",
    "cuinit-303": "failed call to cuInit: INTERNAL: CUDA error: Failed call to cuInit: UNKNOWN ERROR (303)",
    "cpu-memory-stats": "Allocator stats not available for device 'CPU:0'",
    "variable-device": "AttributeError: 'Variable' object has no attribute 'device'",
    "softmax-from-logits": "`output` argument was produced by a Softmax activation and thus does not represent logits",
    "cupti-privileges": "failed with error CUPTI_ERROR_INSUFFICIENT_PRIVILEGES",
    "cupti-not-found": "Could not load dynamic library 'libcupti.so.10.1'",
    "jupyter-kernel": "ModuleNotFoundError: No module named 'tensorflow'",
    "ptxas": "Failed to launch ptxas",
    "libdevice": "libdevice not found at ./libdevice.10.bc",
    "hosted-pip-tensorflow": "pip's dependency resolver does not currently take into account",
    "colab-no-gpu": "Cannot connect to GPU backend",
    "kaggle-internet-off": "Temporary failure in name resolution",
}


def page() -> str:
    return TROUBLESHOOTING.read_text(encoding="utf-8")


def entries(markdown: str) -> dict[str, str]:
    """``{anchor: text}`` of each entry (an anchor before a ``###`` heading), up to the next anchor."""
    found = list(ENTRY.finditer(markdown))
    out = {}
    for i, match in enumerate(found):
        if match["level"] == "###":
            end = found[i + 1].start() if i + 1 < len(found) else len(markdown)
            out[match["id"]] = markdown[match.start() : end]
    return out


def page_anchors(markdown: str) -> set[str]:
    return set(re.findall(r'<a id="([^"]+)"></a>', markdown))


def on_screen(entry: str) -> str:
    """The first code block after "**On screen**": the message as it appears."""
    found = re.search(r"\*\*On screen\b[^\n]*\n+(?:[^`\n][^\n]*\n+)*?```[^\n]*\n(.*?)^```", entry, re.S | re.M)
    return found.group(1) if found else ""


def problems(anchor: str, entry: str) -> list[str]:
    """What an entry lacks: a heading, the message in a code block, a cause, a fix, an https source."""
    out = []
    if not re.search(r"^### \S", entry, re.M):
        out.append("a ### heading")
    if not on_screen(entry).strip():
        out.append("an 'On screen' code block with the message")
    cause = re.search(r"\*\*Cause\.\*\*(.*?)(?=\n\*\*Fix\.\*\*)", entry, re.S)
    if not cause or len(cause.group(1).split()) < 5:
        out.append("a cause (**Cause.** ... before **Fix.**)")
    fix = re.search(r"\*\*Fix\.\*\*(.*?)(?=\n\*\*Sources:\*\*)", entry, re.S)
    if not fix or len(fix.group(1).split()) < 5:
        out.append("a fix (**Fix.** ... before **Sources:**)")
    sources = entry.split("**Sources:**", 1)[1] if "**Sources:**" in entry else ""
    if not re.search(r"\]\(https://[^)\s]+\)", sources):
        out.append("an https source")
    return [f"{anchor}: no {what}" for what in out]


def broken(links_found: dict[str, list[str]], anchors: set[str]) -> list[str]:
    """``file: #anchor`` for each link whose anchor is not on the page."""
    return [f"{where}: #{anchor}" for where, found in links_found.items() for anchor in found if anchor not in anchors]


def repo_links() -> dict[str, list[str]]:
    """Every ``troubleshooting.md#anchor`` in the README, the docs, the notebooks' markdown and the package."""
    out: dict[str, list[str]] = {}
    for path in [ROOT / "README.md", ROOT / "README.zh-CN.md", *sorted((ROOT / "docs").glob("*.md")),
                 *sorted((ROOT / "docs" / "zh").glob("*.md"))]:  # docs/zh/troubleshooting.md has the same anchors
        out[path.relative_to(ROOT).as_posix()] = LINK.findall(path.read_text(encoding="utf-8"))
    for path in sorted((ROOT / "notebooks").glob("**/*.ipynb")):  # the Chinese notebooks (notebooks/zh/) too
        cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
        markdown = "\n".join("".join(c["source"]) for c in cells if c["cell_type"] == "markdown")
        out[path.relative_to(ROOT).as_posix()] = LINK.findall(markdown)
    for path in sorted((ROOT / "course_utils").rglob("*.py")):
        out[path.relative_to(ROOT).as_posix()] = LINK.findall(path.read_text(encoding="utf-8"))
    return out


# ----------------------------------------------------------------- the page


def test_every_entry_has_an_anchor_the_message_a_cause_a_fix_and_an_https_source():
    found = entries(page())
    assert len(found) >= len(REQUIRED)
    missing = [problem for anchor, entry in found.items() for problem in problems(anchor, entry)]
    assert not missing, missing


def test_the_entry_checker_finds_what_an_entry_lacks():
    good = (
        '<a id="x"></a>\n### A title\n\n**On screen:**\n\n```text\nthe message\n```\n\n'
        "**Cause.** It happens for a reason.\n\n**Fix.** Do this one thing now.\n\n"
        "**Sources:** [a thread](https://github.com/o/r/issues/1).\n"
    )
    assert problems("x", good) == []
    assert problems("x", good.replace("https://", "http://")) == ["x: no an https source"]
    assert problems("x", good.replace("```text\nthe message\n```", "")) == [
        "x: no an 'On screen' code block with the message"
    ]
    assert problems("x", good.replace("**Cause.** It happens for a reason.", "")) == [
        "x: no a cause (**Cause.** ... before **Fix.**)"
    ]


@pytest.mark.parametrize("anchor", sorted(REQUIRED))
def test_each_error_students_meet_has_its_entry_with_the_message_on_screen(anchor):
    found = entries(page())
    assert anchor in found, f"no entry #{anchor}"
    assert REQUIRED[anchor] in on_screen(found[anchor]), f"#{anchor} does not show {REQUIRED[anchor]!r}"


def test_anchors_are_unique_and_every_entry_is_in_the_index():
    markdown = page()
    ids = re.findall(r'<a id="([^"]+)"></a>', markdown)
    assert len(ids) == len(set(ids)), sorted({i for i in ids if ids.count(i) > 1})
    index = markdown.split("## Index", 1)[1].split("\n## ", 1)[0]
    listed = set(re.findall(r"\]\(#([^)]+)\)", index))
    assert listed == set(entries(markdown)), f"index vs entries: {listed ^ set(entries(markdown))}"


def test_every_link_inside_the_page_lands_on_an_anchor():
    markdown = page()
    internal = re.findall(r"\]\(#([^)]+)\)", markdown)
    assert internal and set(internal) <= page_anchors(markdown), set(internal) - page_anchors(markdown)


def test_the_page_stands_alone():
    found = re.findall(r"\.\./shared|\bseeds?\b|seed\s+0\d\d|facts\s+file", page(), flags=re.I)
    assert not found, found


def test_the_prose_is_short_sentences():
    """Plain English: sentences of about 15 words, none very long (code, links and tables left out)."""
    text = re.sub(r"```.*?```", " ", page(), flags=re.S)
    text = re.sub(r"\*\*Sources:\*\*.*?(?=\n\s*\n|\Z)", " ", text, flags=re.S)  # lists of links, not prose
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", text)
    text = "\n".join(line for line in text.splitlines() if not line.startswith(("|", "<a ")))
    text = re.sub(r"(?m)^\s*(#+|[-*]|\d+\.)\s+", "\n\n", text)
    sentences = [
        words
        for block in re.split(r"\n\s*\n", text)
        for sentence in re.split(r"(?<=[.!?])\s+", " ".join(block.split()))
        if (words := re.findall(r"[A-Za-z0-9][\w'.,/+-]*", sentence))
    ]
    lengths = [len(s) for s in sentences]
    assert sum(lengths) / len(lengths) <= 16, sum(lengths) / len(lengths)
    long = [" ".join(s) for s in sentences if len(s) > 25]
    assert not long, long


# ----------------------------------------------------------------- the ways in


def test_every_anchor_the_doctor_prints_is_on_the_page():
    anchors = page_anchors(page())
    assert set(ANCHORS.values()) <= anchors, set(ANCHORS.values()) - anchors


def test_the_doctor_maps_only_codes_it_really_gives():
    source = "".join(p.read_text(encoding="utf-8") for p in sorted((ROOT / "course_utils" / "doctor").glob("*.py")))
    findings = set(re.findall(r'(?:Note)?Finding\(\s*"([a-z0-9.-]+)"', source))
    known = findings | set(NOTE_CODES) | set(CHECK_FINDINGS) | {rule.code for rule in RULES}
    known |= {how.code for how in NOTE_FINDINGS.values() if how.code}
    assert {"driver-too-old", "no-nvidia-driver", "tensorflow-sees-no-gpu"} <= findings  # the pattern still reads
    assert set(ANCHORS) <= known, set(ANCHORS) - known


def test_every_troubleshooting_link_in_the_repository_lands_on_an_entry():
    found = repo_links()
    assert not broken(found, page_anchors(page())), broken(found, page_anchors(page()))
    # the places that send students here
    for where in ("README.md", "docs/wsl2.md", "docs/routes.md"):
        assert found[where] or "troubleshooting.md" in (ROOT / where).read_text(encoding="utf-8"), where
    for notebook in ("notebooks/01_install_versions.ipynb", "notebooks/02_verify_gpu.ipynb"):
        assert found[notebook], f"{notebook}: no link to the troubleshooting page"


def test_the_link_check_fails_on_a_bad_anchor():
    assert broken({"x.md": ["oom", "no-such-entry"]}, {"oom"}) == ["x.md: #no-such-entry"]
    text = "see [it](../docs/troubleshooting.md#oom) and docs/troubleshooting.md#too-late."
    assert LINK.findall(text) == ["oom", "too-late"]


def test_see_and_more_line():
    assert see("out-of-memory") == "docs/troubleshooting.md#oom"
    assert see("nvidia-driver") is None and see(None) is None
    assert more_line("out-of-memory", "  ") == ["  More: docs/troubleshooting.md#oom"]
    assert more_line("nvidia-driver") == []
    assert links(["cudnn-mismatch", "nvidia-driver", "cudnn-mismatch"]) == {
        "cudnn-mismatch": "docs/troubleshooting.md#cudnn-mismatch"
    }


# ----------------------------------------------------------------- the doctor prints the links


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


def test_a_pasted_log_lists_the_entries_for_its_lines(capsys):
    assert main(["--log", str(TF_LOGS / "cudnn_mismatch_composed.txt")]) == 1
    out = capsys.readouterr().out
    assert "  cudnn-mismatch: docs/troubleshooting.md#cudnn-mismatch" in out.splitlines()


def test_the_doctor_prints_no_link_to_a_missing_anchor(monkeypatch):
    """With a bad anchor in the mapping, the page check above fails: the link would lead nowhere."""
    monkeypatch.setitem(ANCHORS, "out-of-memory", "no-such-entry")
    assert set(ANCHORS.values()) - page_anchors(page()) == {"no-such-entry"}
