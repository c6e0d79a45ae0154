"""What the course ships stands alone: a reader can follow every path and every name in it.

The team works from material that students and instructors never get: a folder of the two
source posts and a file of checked facts, both outside this repository. Shipped files must
not point there, and must not use the team's working names for that material. The posts
are "the Q&A post" and "the blog post" (docs/sources.md); each fact has a public source and
an anchor in docs/references.md.

The scanner reads every text file git would ship (tracked, or new and not ignored) and, for
a notebook, each cell's source. It names the file and the line of every finding. It leaves
the SEED parameter and random seeds alone: only the patterns below count.
"""

from __future__ import annotations

import json
import re
import subprocess
from dataclasses import dataclass
from pathlib import Path

import pytest

from .conftest import ROOT

# Each pattern is written so that its own source text does not match it (this file is scanned too).
OUTSIDE = {
    "a path into the team's shared folder": re.compile(r"\.\./shared\b|\bshared/(?:seeds|reference)\b"),
    "an absolute path on the team's machine": re.compile(r"(?<![\w.~/-])/wor[k]/"),
    "the file name of the team's fact list": re.compile(r"tf-gpu-fact[s]", re.I),
}
JARGON = {
    "a source post by number": re.compile(r"(?<![a-z])seeds?[\s_-]*0\d\d(?!\d)", re.I),
    "a plural name for the two posts": re.compile(r"\bthe\s+seeds\b", re.I),
    "a possessive name for one post": re.compile(r"(?<![a-z])seed['\u2019]s\b", re.I),
    "the name of the team's fact list": re.compile(r"\bfacts?\s+file\b", re.I),
    "a claim letter of the team's fact list": re.compile(
        r"\bclaims?\s+[b-h]\b|\bclaims?\s+a(?=\s*[),.;:]|\s+and\b)", re.I
    ),
    "a code name for a post's way": re.compile(
        r"(?<![a-z])seed\s+as\s+written\b|(?<![a-z])seed[\s_-](?:cnn|way|config(?:uration)?|arrays?|model|machine|post)\b"
        r"|_vs_s[e]ed\b",
        re.I,
    ),
}
PATTERNS = {**OUTSIDE, **JARGON}
# Folders that are never shipped, for a copy without git (an unpacked archive).
NOT_SHIPPED = {".git", ".venv", ".venv-hosted", "build", "__pycache__", ".ipynb_checkpoints", ".pytest_cache",
               ".ruff_cache", "node_modules"}


@dataclass(frozen=True)
class Finding:
    where: str  # "path:line", or "path cell N line M" for a notebook
    what: str
    text: str

    def __str__(self) -> str:
        return f"{self.where}: {self.what}: {self.text.strip()[:100]}"


def shipped_files(root: Path) -> list[Path]:
    """The files git would ship from ``root``: tracked ones, and new ones that are not ignored."""
    try:
        listed = subprocess.run(
            ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
            cwd=root, capture_output=True, check=True,
        ).stdout.decode("utf-8").split("\0")
    except (OSError, subprocess.CalledProcessError):
        listed = [str(p.relative_to(root)) for p in root.rglob("*")
                  if p.is_file() and not NOT_SHIPPED & set(p.relative_to(root).parts)]
    return sorted({root / name for name in listed if name and (root / name).is_file()})


def text_of(path: Path) -> str | None:
    """The file's text, or None for a binary file (an image, a UTF-16 capture)."""
    data = path.read_bytes()
    if b"\0" in data:
        return None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return None


def pieces(path: Path, text: str) -> list[tuple[str, str]]:
    """(label, text) to scan: the whole file, or each cell's source for a notebook."""
    if path.suffix == ".ipynb":
        cells = json.loads(text)["cells"]
        return [(f" cell {i} line", "".join(cell["source"])) for i, cell in enumerate(cells)]
    return [(":", text)]


def scan_text(name: str, text: str, patterns: dict[str, re.Pattern] = PATTERNS) -> list[Finding]:
    findings = []
    for what, pattern in patterns.items():
        for match in pattern.finditer(text):
            line = text.count("\n", 0, match.start()) + 1
            start = text.rfind("\n", 0, match.start()) + 1
            end = text.find("\n", match.end())
            findings.append((match.start(), Finding(f"{name}{line}", what, text[start:end if end >= 0 else None])))
    return [finding for _, finding in sorted(findings, key=lambda pair: pair[0])]


def scan(root: Path, files: list[Path] | None = None) -> list[Finding]:
    """Every finding in the shipped files under ``root`` (or in ``files``), in file and line order."""
    findings = []
    for path in files if files is not None else shipped_files(root):
        text = text_of(path)
        if text is None:
            continue
        rel = path.relative_to(root).as_posix()
        for label, piece in pieces(path, text):
            findings += scan_text(f"{rel}{label}" if label == ":" else f"{rel}{label} ", piece)
    return findings


# ----------------------------------------------------------------- the scanner, on small files


def join(*parts: str) -> str:
    """Jargon samples are built from parts, so that this file does not contain them."""
    return "".join(parts)


FLAGGED = {
    join("Seed ", "000 trains the same model twice."): "a source post by number",
    join("the model of seed", "004's CNN"): "a source post by number",
    join("fixture smi_seed", "000_windows.txt"): "a source post by number",
    join("The course models have the ", "seeds' architectures."): "a plural name for the two posts",
    join("fall short of the seed", "'s accuracy"): "a possessive name for one post",
    join("more than Binder has (facts ", "file, section 1)."): "the name of the team's fact list",
    join("as Keras warns (cla", "im e)."): "a claim letter of the team's fact list",
    join("three things are wrong (cla", "ims d and e)"): "a claim letter of the team's fact list",
    join("the first rung, seed ", "as written"): "a code name for a post's way",
    join("model = build_seed", "_cnn(logits=True)"): "a code name for a post's way",
    join('report["speedup_best_vs', '_seed"]'): "a code name for a post's way",
    join("see `../sha", "red/reference/facts.md`"): "a path into the team's shared folder",
    join("read /wo", "rk/main/README.md first"): "an absolute path on the team's machine",
    join("cite tf-gpu-", "facts.md"): "the file name of the team's fact list",
}
NOT_FLAGGED = [
    "SEED = 0",
    "keras.utils.set_random_seed(SEED)  # the same starting weights",
    "the same seed always gives the same numbers; a seeded generator",
    "the gap over several seeds, on the course's machine: | seeds | gap |; 2 of 15 seeds",
    "seed_everything(seed, deterministic=True); noise from (seed, image, channel)",
    "under build/work/07_beyond_one_gpu/, or OUT/work/NAME/ under `course run`",
    "we claim a small speedup; section 5 explains; the Q&A post and the blog post",
    "docs/references.md#keras-3-device and docs/sources.md",
]


@pytest.mark.parametrize("sample", list(FLAGGED))
def test_the_scanner_names_the_file_and_line_of_each_kind(tmp_path, sample):
    path = tmp_path / "lesson.md"
    path.write_text(f"# A lesson\n\nSome text.\n{sample}\n", encoding="utf-8")
    found = scan(tmp_path, [path])
    assert [(f.where, f.what) for f in found] == [("lesson.md:4", FLAGGED[sample])], found
    assert sample.strip() in str(found[0])


def test_the_scanner_leaves_random_seeds_and_the_course_s_own_paths_alone(tmp_path):
    path = tmp_path / "module.py"
    path.write_text("\n".join(NOT_FLAGGED) + "\n", encoding="utf-8")
    assert scan(tmp_path, [path]) == []


def test_the_scanner_reads_notebook_cells_and_names_the_cell(tmp_path):
    cells = [
        {"cell_type": "markdown", "metadata": {}, "source": ["# 99 · Title\n", "\n", "SEED = 0 is fine.\n"]},
        {"cell_type": "code", "metadata": {}, "outputs": [], "execution_count": None,
         "source": ["x = 1\n", join("# as in seed ", "004, section 3\n")]},
    ]
    path = tmp_path / "99_demo.ipynb"
    path.write_text(json.dumps({"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5}), encoding="utf-8")
    found = scan(tmp_path, [path])
    assert [(f.where, f.what) for f in found] == [("99_demo.ipynb cell 1 line 2", "a source post by number")]


def test_the_scanner_skips_binary_files_and_lists_new_files_git_would_ship(tmp_path):
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    (tmp_path / ".gitignore").write_text("ignored/\n", encoding="utf-8")
    (tmp_path / "ignored").mkdir()
    (tmp_path / "ignored" / "notes.md").write_text(join("facts ", "file\n"), encoding="utf-8")
    (tmp_path / "capture.txt").write_bytes(join("facts ", "file\n").encode("utf-16"))  # NUL bytes: binary
    (tmp_path / "new.md").write_text(join("\nSee the facts ", "file.\n"), encoding="utf-8")
    assert {p.name for p in shipped_files(tmp_path)} == {".gitignore", "capture.txt", "new.md"}
    assert [f.where for f in scan(tmp_path)] == ["new.md:2"]


# ----------------------------------------------------------------- the repository


def test_the_repository_ships_its_own_files_only():
    files = shipped_files(ROOT)
    assert ROOT / "README.md" in files and ROOT / "tests" / "test_standalone.py" in files
    assert any(p.suffix == ".ipynb" for p in files)
    assert ROOT / "README.zh-CN.md" in files and ROOT / "docs" / "zh" / "troubleshooting.md" in files  # Chinese
    findings = scan(ROOT, files)
    assert not findings, "Replace with the public source, an anchor in docs/references.md, or the names in " \
                         "docs/sources.md:\n" + "\n".join(map(str, findings))


ANCHOR = re.compile(r'<a id="([\w-]+)"></a>')
LINKED_ANCHOR = re.compile(r"\b(references|sources)\.md#([\w-]+)")


def test_every_link_into_references_and_sources_names_an_anchor_that_exists():
    anchors = {name: set(ANCHOR.findall((ROOT / "docs" / f"{name}.md").read_text(encoding="utf-8")))
               for name in ("references", "sources")}
    assert len(anchors["references"]) > 40, "docs/references.md gives each fact an anchor"
    missing = []
    for path in shipped_files(ROOT):
        text = text_of(path)
        for target, anchor in LINKED_ANCHOR.findall(text or ""):
            if anchor not in anchors[target]:
                missing.append(f"{path.relative_to(ROOT).as_posix()}: {target}.md#{anchor}")
    assert not missing, missing


def test_each_notebook_that_names_a_post_links_docs_sources_at_the_first_mention():
    for path in sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb")):
        cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
        text = "\n".join("".join(c["source"]) for c in cells if c["cell_type"] == "markdown")
        mention = re.search(r"\b(?:the\s+)?(?:Q&A\s+post|blog\s+post|source\s+posts)\b", text, re.I)
        if mention:
            assert "](../docs/sources.md)" in text[mention.start():mention.end() + 40], (path.name, mention.group())
