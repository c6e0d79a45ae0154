"""docs/glossary.md: the words a student meets, in alphabetical order, each with an anchor that other pages link.

The link checker in tests/test_wsl2_guide.py checks the glossary's own links and every link into it.
"""

from __future__ import annotations

import re

from .conftest import ROOT

GLOSSARY = ROOT / "docs" / "glossary.md"
ENTRY = re.compile(r'^<a id="([a-z0-9-]+)"></a>\n### (.+)$', re.M)
# The terms the notebooks and the guides use without explaining them on the spot.
REQUIRED = {
    "GPU", "CUDA", "cuDNN", "Driver", "Wheel", "Virtual environment", "Kernel", "Logical device", "Physical device",
    "Runtime initialisation", "Memory growth", "Mixed precision", "XLA", "Epoch", "Batch", "Replica", "All-reduce",
    "Worker", "TF_CONFIG", "Smoke mode", "papermill", "Checkpoint",
}


def entries(text: str) -> list[tuple[str, str]]:
    """(anchor, term) for each entry: an explicit anchor on the line before its heading."""
    return ENTRY.findall(text)


def sort_key(term: str) -> str:
    return re.sub(r"[^a-z0-9]", "", term.lower())


def test_every_heading_is_an_entry_with_its_anchor():
    text = GLOSSARY.read_text(encoding="utf-8")
    found = entries(text)
    assert len(found) == len(re.findall(r"^### ", text, re.M)), "every term has <a id> on the line before it"
    assert len({anchor for anchor, _ in found}) == len(found), "anchors are unique"
    for anchor, term in found:
        assert anchor == re.sub(r"[^a-z0-9]+", "-", term.split(",")[0].lower()).strip("-"), (anchor, term)


def test_the_terms_are_in_alphabetical_order_and_the_required_ones_are_there():
    terms = [term for _, term in entries(GLOSSARY.read_text(encoding="utf-8"))]
    assert terms == sorted(terms, key=sort_key)
    assert not REQUIRED - set(terms), REQUIRED - set(terms)


def test_each_entry_is_short():
    text = GLOSSARY.read_text(encoding="utf-8")
    bodies = re.split(r"^<a id=.*$", text, flags=re.M)[1:]
    for body in bodies:
        heading, _, prose = body.strip().partition("\n")
        sentences = re.findall(r"[.!?](?:\s|$)", re.sub(r"\([^)]*\)", "", prose))
        assert 1 <= len(sentences) <= 3, (heading, len(sentences))


def test_the_readme_and_the_guides_link_the_glossary():
    for name in ("README.md", "docs/instructors.md", "CONTRIBUTING.md"):
        assert "glossary.md" in (ROOT / name).read_text(encoding="utf-8"), name


def test_the_entry_pattern_reads_an_entry():
    assert entries('<a id="tf-config"></a>\n### TF_CONFIG\n\nText.\n') == [("tf-config", "TF_CONFIG")]
    assert sort_key("TF_CONFIG") < sort_key("tf.data") < sort_key("Virtual environment")
