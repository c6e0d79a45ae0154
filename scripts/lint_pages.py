"""Rules on the pages themselves: links and anchors, what shipped files may name, the glossary, troubleshooting.

Part of scripts/course_lint.py (``RULES``).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import prose_stats  # scripts/prose_stats.py: sentences as the lesson budget counts them
from lint_base import (
    Finding,
    Rule,
    anchors,
    blank_code,
    line_at,
    markdown_cells,
    markdown_pages,
    notebooks,
    pieces,
    read,
    rel,
    rules_of,
    shipped_files,
    text_of,
)

RULES: list[Rule] = []
rule = rules_of(RULES)

# ----------------------------------------------------------------- links


def relative_links(markdown: str) -> list[tuple[int, str]]:
    """(line, target) of each Markdown link and image outside code, except web and mail addresses."""
    markdown = re.sub(r"`[^`\n]*`", "", blank_code(markdown))
    return [(line_at(markdown, m.start()), m[1]) for m in re.finditer(r"\]\(([^)\s]+)\)", markdown)
            if not re.match(r"[a-z][a-z0-9+.-]*:", m[1], re.I)]


@rule("link", "every relative link in the READMEs, CONTRIBUTING.md and docs/ reaches a file, and in Markdown an anchor")
def broken_links(root: Path) -> Iterator[Finding]:
    for path in markdown_pages(root):
        for line, link in relative_links(read(path)):
            target, _, anchor = link.partition("#")
            file = (path.parent / target).resolve() if target else path
            if not file.is_file():
                yield Finding(rel(path, root), line, "link", f"{link}: no file {target}", "link a file that exists")
            elif anchor and file.suffix == ".md" and anchor not in anchors(read(file)):
                yield Finding(rel(path, root), line, "link", f"{link}: no heading or <a id> #{anchor} in {file.name}",
                              "link an anchor the page has")


ANCHOR = re.compile(r'<a id="([\w-]+)"></a>')
LINKED_ANCHOR = re.compile(r"\b(references|sources)\.md#([\w-]+)")


@rule("reference-anchor", "every references.md#... and sources.md#... in a shipped file names an anchor there")
def reference_anchors(root: Path) -> Iterator[Finding]:
    offered = {name: set(ANCHOR.findall(read(root / "docs" / f"{name}.md"))) for name in ("references", "sources")}
    for path in shipped_files(root):
        text = text_of(path) or ""
        for m in LINKED_ANCHOR.finditer(text):
            if m[2] not in offered[m[1]]:
                yield Finding(rel(path, root), line_at(text, m.start()), "reference-anchor",
                              f"{m[0]}: docs/{m[1]}.md has no anchor {m[2]!r}", "name an anchor that exists")


@rule("sources-link", "a notebook that names a source post links docs/sources.md at its first mention")
def sources_links(root: Path) -> Iterator[Finding]:
    for path in notebooks(root):
        text = "\n".join(text for _, text in markdown_cells(path))
        mention = re.search(r"\b(?:the\s+)?(?:Q&A\s+post|blog\s+post|source\s+posts)\b", text, re.I)
        if mention and "](../docs/sources.md)" not in text[mention.start():mention.end() + 40]:
            yield Finding(rel(path, root), None, "sources-link", f"{mention[0]!r} without a link",
                          "link it to ../docs/sources.md right there")


# ----------------------------------------------------------------- shipped files stand alone

# Each pattern is written so that its own source text does not match it (this file is shipped too).
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
        r"\bclaims?\s+[b-h]\b|\bclaims?\s+a(?=\s*[),.;:]|\s+and\b)", re.I),
    "a code name for a post's way": re.compile(
        r"(?<![a-z])seed\s+as\s+written\b|(?<![a-z])seed[\s_-](?:cnn|way|config(?:uration)?|arrays?|model|machine|post)\b"
        r"|_vs_s[e]ed\b", re.I),
}
# The students' guides name no seed at all, not even a random one.
GUIDES = {"docs/wsl2.md", "docs/routes.md", "docs/troubleshooting.md"}
IN_A_GUIDE = {"a seed, in a guide for students": re.compile(r"\bs[e]eds?\b", re.I)}
FIX = "name the public source, an anchor in docs/references.md, or the posts as docs/sources.md names them"


def scan_text(name: str, label: str | None, text: str, code: str, patterns: dict[str, re.Pattern]) -> list[Finding]:
    """Each match of ``patterns`` in ``text``, in text order, with its line."""
    found = []
    for what, pattern in patterns.items():
        for m in pattern.finditer(text):
            line = line_at(text, m.start())
            start, end = text.rfind("\n", 0, m.start()) + 1, text.find("\n", m.end())
            quoted = text[start:end if end >= 0 else None].strip()[:100]
            found.append((m.start(), Finding(name, f"{label} line {line}" if label else line, code,
                                             f"{what}: {quoted}", FIX)))
    return [finding for _, finding in sorted(found, key=lambda pair: pair[0])]


def scan(root: Path, files: list[Path], code: str, patterns: dict[str, re.Pattern]) -> Iterator[Finding]:
    for path in files:
        text = text_of(path)
        if text is not None:
            for label, piece in pieces(path, text):
                yield from scan_text(rel(path, root), label, piece, code, patterns)


@rule("standalone-path", "no shipped file points outside the repository (the team's folders and files)")
def outside_paths(root: Path) -> Iterator[Finding]:
    yield from scan(root, shipped_files(root), "standalone-path", OUTSIDE)


@rule("standalone-name", "no shipped file uses the team's working names for the posts, their claims or facts")
def working_names(root: Path) -> Iterator[Finding]:
    yield from scan(root, shipped_files(root), "standalone-name", JARGON)
    yield from scan(root, [root / name for name in sorted(GUIDES) if (root / name).is_file()], "standalone-name",
                    IN_A_GUIDE)


# ----------------------------------------------------------------- the glossary

GLOSSARY_ENTRY = re.compile(r'^<a id="([a-z0-9-]+)"></a>\n### (.+)$', re.M)
# The terms the notebooks and the guides use without explaining them on the spot.
GLOSSARY_TERMS = {
    "GPU", "CUDA", "cuDNN", "Driver", "Wheel", "Virtual environment", "Kernel", "Logical device", "Physical device",
    "Runtime initialisation", "Memory growth", "Mixed precision", "XLA", "Epoch", "Batch", "Replica", "All-reduce",
    "Worker", "TF_CONFIG", "Smoke mode", "papermill", "Checkpoint",
}


def sort_key(term: str) -> str:
    return re.sub(r"[^a-z0-9]", "", term.lower())


@rule("glossary", "docs/glossary.md: each term anchored, short (1-3 sentences), in order; the needed terms; linked")
def glossary(root: Path) -> Iterator[Finding]:
    name = "docs/glossary.md"
    text = read(root / name)
    entries = [(m[1], m[2], line_at(text, m.start(2))) for m in GLOSSARY_ENTRY.finditer(text)]
    for m in re.finditer(r"^### (.+)$", text, re.M):
        if m[1] not in {term for _, term, _ in entries}:
            yield Finding(name, line_at(text, m.start()), "glossary", f"{m[1]}: no <a id> on the line before",
                          "add the anchor")
    seen: set[str] = set()
    for anchor, term, line in entries:
        wanted = re.sub(r"[^a-z0-9]+", "-", term.split(",")[0].lower()).strip("-")
        if anchor != wanted or anchor in seen:
            yield Finding(name, line, "glossary", f"{term}: anchor {anchor!r}", f"one anchor per term: {wanted!r}")
        seen.add(anchor)
    terms = [term for _, term, _ in entries]
    for (_, before, _), (_, term, line) in zip(entries, entries[1:], strict=False):
        if sort_key(term) < sort_key(before):
            yield Finding(name, line, "glossary", f"{term} comes after {before}", "keep the terms in ABC order")
    for term in sorted(GLOSSARY_TERMS - set(terms)):
        yield Finding(name, None, "glossary", f"no entry for {term!r}", "the notebooks use it: explain it here")
    for body in re.split(r"^<a id=.*$", text, flags=re.M)[1:]:
        heading, _, prose = body.strip().partition("\n")
        count = len(re.findall(r"[.!?](?:\s|$)", re.sub(r"\([^)]*\)", "", prose)))
        if not 1 <= count <= 3:
            yield Finding(name, line_at(text, text.index(heading)), "glossary", f"{heading}: {count} sentences",
                          "say it in one to three sentences")
    for page in ("README.md", "docs/instructors.md", "CONTRIBUTING.md"):
        if "glossary.md" not in read(root / page):
            yield Finding(page, None, "glossary", "no link to the glossary", "link docs/glossary.md")


# ----------------------------------------------------------------- the troubleshooting page

TROUBLESHOOTING = "docs/troubleshooting.md"
SENDERS = ("README.md", "docs/wsl2.md", "docs/routes.md", "notebooks/01_install_versions.ipynb",
           "notebooks/02_verify_gpu.ipynb")
TS_LINK = re.compile(r"troubleshooting\.md#([A-Za-z0-9_-]+)")
TS_ENTRY = re.compile(r'^<a id="(?P<id>[^"]+)"></a>\n(?P<level>#{2,3}) (?P<title>.+)$', re.M)
# The errors the page must cover, each with a distinctive piece of the message it shows.
TS_REQUIRED = {
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


def entries(markdown: str) -> dict[str, str]:
    """``{anchor: text}`` of each entry (an anchor before a ``###`` heading), up to the next anchor."""
    found = list(TS_ENTRY.finditer(markdown))
    out = {}
    for i, match in enumerate(found):
        if match["level"] == "###":
            out[match["id"]] = markdown[match.start(): found[i + 1].start() if i + 1 < len(found) else len(markdown)]
    return out


def on_screen(entry: str, label: str = "On screen") -> str:
    """The first code block after the bold "On screen" label: the message as it appears."""
    found = re.search(rf"\*\*{label}[^\n]*\n+(?:[^`\n][^\n]*\n+)*?```[^\n]*\n(.*?)^```", entry, re.S | re.M)
    return found.group(1) if found else ""


def lacks(entry: str) -> list[str]:
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
    return out


@rule("ts-entry", "each troubleshooting entry has its anchor, the message on screen, a cause, a fix, https sources")
def ts_entries(root: Path) -> Iterator[Finding]:
    page = read(root / TROUBLESHOOTING)
    found = entries(page)
    for anchor, entry in found.items():
        for what in lacks(entry):
            yield Finding(TROUBLESHOOTING, line_at(page, page.index(entry)), "ts-entry", f"#{anchor} has no {what}",
                          "complete the entry")
    for anchor, message in TS_REQUIRED.items():
        if message not in on_screen(found.get(anchor, "")):
            yield Finding(TROUBLESHOOTING, None, "ts-entry", f"no entry #{anchor} showing {message!r}",
                          "students meet this error: give it an entry with the message on screen")
    ids = re.findall(r'<a id="([^"]+)"></a>', page)
    for anchor in sorted({i for i in ids if ids.count(i) > 1}):
        yield Finding(TROUBLESHOOTING, None, "ts-entry", f"anchor #{anchor} twice", "one anchor per entry")
    index = page.split("## Index", 1)[1].split("\n## ", 1)[0] if "## Index" in page else ""
    listed = set(re.findall(r"\]\(#([^)]+)\)", index))
    for anchor in sorted(listed ^ set(found)):
        yield Finding(TROUBLESHOOTING, None, "ts-entry", f"#{anchor} is in the index or the entries, not both",
                      "list every entry in the index, and only entries")


def troubleshooting_links(root: Path) -> dict[str, list[tuple[int | str | None, str]]]:
    """Every ``troubleshooting.md#anchor`` in the READMEs, docs, notebooks' markdown and the package: {file: [...]}."""
    out: dict[str, list] = {}
    for path in [p for p in markdown_pages(root) if p.parent.name in ("docs", "zh") or p.name.startswith("README")]:
        text = read(path)
        out[rel(path, root)] = [(line_at(text, m.start()), m[1]) for m in TS_LINK.finditer(text)]
    for path in [*notebooks(root), *notebooks(root, chinese=True)]:
        out[rel(path, root)] = [(f"cell {i}", m[1]) for i, text in markdown_cells(path) for m in TS_LINK.finditer(text)]
    for path in sorted((root / "course_utils").rglob("*.py")):
        text = read(path)
        out[rel(path, root)] = [(line_at(text, m.start()), m[1]) for m in TS_LINK.finditer(text)]
    return out


@rule("ts-link", "every link into the troubleshooting pages, the doctor's included, lands on an entry")
def ts_links(root: Path) -> Iterator[Finding]:
    from course_utils.doctor.troubleshooting import ANCHORS  # the doctor's `More:` lines (standard library only)

    page = read(root / TROUBLESHOOTING)
    offered = set(re.findall(r'<a id="([^"]+)"></a>', page))
    for m in re.finditer(r"\]\(#([^)]+)\)", page):
        if m[1] not in offered:
            yield Finding(TROUBLESHOOTING, line_at(page, m.start()), "ts-link", f"#{m[1]}: no such anchor here",
                          "link an entry of this page")
    found = troubleshooting_links(root)
    for where, links in found.items():
        for line, anchor in links:
            if anchor not in offered:
                yield Finding(where, line, "ts-link", f"troubleshooting.md#{anchor}: no such entry",
                              "link an anchor docs/troubleshooting.md has")
    zh = root / "docs" / "zh" / "troubleshooting.md"
    for name, have in ((TROUBLESHOOTING, offered), (rel(zh, root), anchors(read(zh)) if zh.is_file() else set())):
        for code, anchor in sorted(ANCHORS.items()):
            if anchor not in have:
                yield Finding(name, None, "ts-link", f"the doctor links #{anchor} for {code}, which is not here",
                              "add the entry, or change the code's anchor in course_utils/doctor/findings.json (see)")
    for where in SENDERS:  # the places that send students here
        sends = found.get(where) if where.endswith(".ipynb") else "troubleshooting.md" in read(root / where)
        if not sends:
            yield Finding(where, None, "ts-link", "no link to the troubleshooting page",
                          "students start here: link docs/troubleshooting.md")


@rule("sentence-length", "the troubleshooting page speaks in short sentences: at most 25 words, about 16 on average")
def sentence_length(root: Path) -> Iterator[Finding]:
    text = re.sub(r"```.*?```", " ", read(root / TROUBLESHOOTING), flags=re.S)
    text = re.sub(r"\*\*Sources:\*\*.*?(?=\n\s*\n|\Z)", " ", text, flags=re.S)  # lists of links, not prose
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", text)
    text = "\n".join(line for line in text.splitlines() if not line.startswith(("|", "<a ")))
    text = re.sub(r"(?m)^\s*(#+|[-*]|\d+\.)\s+", "\n\n", text)
    sentences = prose_stats.sentences(text)
    mean = sum(map(len, sentences)) / max(1, len(sentences))
    if mean > 16:
        yield Finding(TROUBLESHOOTING, None, "sentence-length", f"{mean:.1f} words a sentence on average",
                      "at most 16: split sentences")
    for words in sentences:
        if len(words) > prose_stats.LONG:
            yield Finding(TROUBLESHOOTING, None, "sentence-length",
                          f"{len(words)} words: {' '.join(words)[:80]}...", f"at most {prose_stats.LONG}: split it")
