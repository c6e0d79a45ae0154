"""Rules on the Chinese edition: docs/zh/ translates its English pages whole, README.zh-CN.md the README, the Chinese
notebooks stay in step; Chinese prose links Chinese pages and never breaks a line between two Chinese characters.

Pages are compared as structure, never as sentences: the anchors a page offers, its code blocks (messages exactly;
commands without their comments, which are translated), its https sources. docs/zh/mainland-china.md has no English
twin; its English summary is in docs/instructors.md. Part of scripts/course_lint.py (``RULES``).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import translations  # scripts/translations.py: the Chinese notebooks against the English ones
from lint_base import (
    FENCE,
    Finding,
    Rule,
    blank_code,
    code_blocks,
    line_at,
    markdown_cells,
    notebooks,
    read,
    rel,
    rules_of,
    slug,
)
from lint_pages import entries, on_screen, relative_links

from course_utils.core.i18n import CHINESE_CHARACTERS

RULES: list[Rule] = []
rule = rules_of(RULES)

TRANSLATED = ("troubleshooting.md", "wsl2.md", "sources.md")
EXPLICIT = re.compile(r'^<a id="(?P<id>[^"]+)"></a>\s*$')
HEADING = re.compile(r"^#{1,6} (?P<title>.+)$")
MESSAGE_BLOCKS = ("text", "")  # what a screen shows: compared exactly
URL = re.compile(r"https://[^\s)>\]]+")
CJK = re.compile(f"[{CHINESE_CHARACTERS}]")
WIDE_BREAK = re.compile(f"[{CHINESE_CHARACTERS}]\n(?=[{CHINESE_CHARACTERS}])")
TENSORFLOW = re.compile(r"https://(?:www\.tensorflow\.org|tensorflow\.google\.cn)/([^?#]*)\S*")
# TensorFlow's pages that have a Chinese translation (tensorflow/docs-l10n, site/zh-cn): the Chinese edition links
# them with ?hl=zh-cn. Every other TensorFlow page it links on tensorflow.google.cn (which serves in mainland
# China) and marks （英文）.
TENSORFLOW_IN_CHINESE = {"guide/gpu", "guide/mixed_precision", "guide/profiler", "tutorials/images/cnn",
                         "guide/data_performance_analysis", "guide/distributed_training",
                         "tutorials/distribute/multi_worker_with_ctl", "tensorboard/tensorboard_in_notebooks"}


def offered_anchors(markdown: str) -> list[str]:
    """The anchors a page offers, in order: each explicit ``<a id>``, and GitHub's slug of each heading
    that has no explicit anchor on the line before it (the headings a link can only reach by their words)."""
    found: list[str] = []
    before = ""
    for line in FENCE.sub("", markdown).splitlines():
        if not line.strip():
            continue
        if anchor := EXPLICIT.match(line):
            found.append(anchor["id"])
        elif (heading := HEADING.match(line)) and not EXPLICIT.match(before):
            found.append(slug(heading["title"]))
        before = line
    return found


def without_comments(block: str) -> list[str]:
    """A command block's lines with ``#`` comments and blank lines removed."""
    lines = (re.sub(r"(^|\s)#.*$", "", line).rstrip() for line in block.splitlines())
    return [line for line in lines if line]


def comparable(markdown: str) -> list[tuple[str, object]]:
    """Each fenced block as (language, what must be equal): the text itself for a message, the lines for a command."""
    return [(m["lang"], m["body"] if m["lang"] in MESSAGE_BLOCKS else without_comments(m["body"]))
            for m in FENCE.finditer(markdown)]


def cited(url: str) -> str:
    """A source as cited: a TensorFlow page is the same source on www.tensorflow.org and tensorflow.google.cn,
    with or without its anchor (the Chinese page's anchors differ)."""
    page = TENSORFLOW.fullmatch(url)
    return f"tensorflow:{page[1]}" if page else url


def page_problems(english: str, chinese: str, name: str) -> Iterator[tuple[str, str]]:
    """(code, problem) for each way docs/zh/<name> is not the whole translation of docs/<name>."""
    en, zh = offered_anchors(english), offered_anchors(chinese)
    if zh != en:
        yield "zh-anchor", f"anchors differ: missing {sorted(set(en) - set(zh))}, extra {sorted(set(zh) - set(en))}"
    head = "\n".join(chinese.splitlines()[:6])
    if f"](../{name})" not in head or "翻译" not in head:
        yield "zh-anchor", f"the first lines do not say which English page (../{name}) this translates (翻译)"
    en_blocks, zh_blocks = comparable(english), comparable(chinese)
    if len(en_blocks) != len(zh_blocks):
        yield "zh-code", f"{len(zh_blocks)} code blocks, the English page has {len(en_blocks)}"
    else:
        yield from (("zh-code", f"code block {i} differs from the English page's: {b}")
                    for i, (a, b) in enumerate(zip(en_blocks, zh_blocks, strict=True)) if a != b)
    missing = {cited(u) for u in URL.findall(english)} - {cited(u) for u in URL.findall(chinese)}
    if missing:
        yield "zh-source", f"lost these sources: {sorted(missing)}"
    for paragraph in re.split(r"\n\s*\n", FENCE.sub("", chinese)):
        # a paragraph with English words has Chinese too; an anchor with its heading may be a name ("## XLA")
        if re.search(r"[A-Za-z]{4,}", paragraph) and not paragraph.lstrip().startswith("<a ") \
                and not CJK.search(paragraph):
            yield "zh-prose", f"not translated: {paragraph.strip()[:80]!r}"


@rule("zh-anchor", "docs/zh/ holds the translated pages; each offers its English page's anchors in order, says whose")
def zh_pages(root: Path) -> Iterator[Finding]:
    folder = root / "docs" / "zh"
    for name in sorted({p.name for p in folder.glob("*.md")} ^ {*TRANSLATED, "mainland-china.md"}):
        yield Finding(f"docs/zh/{name}", None, "zh-anchor", "a page the Chinese edition does not list, or lacks",
                      f"docs/zh/ translates {list(TRANSLATED)} and adds mainland-china.md")
    yield from translated_findings(root, "zh-anchor")


def translated_findings(root: Path, code: str) -> Iterator[Finding]:
    for name in TRANSLATED:
        if (root / "docs" / "zh" / name).is_file():
            found = page_problems(read(root / "docs" / name), read(root / "docs" / "zh" / name), name)
            yield from (Finding(f"docs/zh/{name}", None, c, what, f"keep it in step with docs/{name}")
                        for c, what in found if c == code)


@rule("zh-code", "a translated page has its English page's commands (comments aside) and messages, in order")
def zh_code(root: Path) -> Iterator[Finding]:
    yield from translated_findings(root, "zh-code")
    english, chinese = code_blocks(read(root / "README.md")), code_blocks(read(root / "README.zh-CN.md"))
    if english != chinese:
        yield Finding("README.zh-CN.md", None, "zh-code", "its code blocks are not the README's, in order",
                      "copy README.md's code blocks")


@rule("zh-source", "a translated page keeps every https source of its English page")
def zh_sources(root: Path) -> Iterator[Finding]:
    yield from translated_findings(root, "zh-source")


@rule("zh-prose", "a translated page is Chinese prose: a paragraph with English words has Chinese words too")
def zh_prose(root: Path) -> Iterator[Finding]:
    yield from translated_findings(root, "zh-prose")


@rule("zh-troubleshooting", "docs/zh/troubleshooting.md: each entry's English message on screen, cause, fix, sources")
def zh_troubleshooting(root: Path) -> Iterator[Finding]:
    name = "docs/zh/troubleshooting.md"
    english, chinese = entries(read(root / "docs" / "troubleshooting.md")), entries(read(root / name))
    if list(chinese) != list(english):
        yield Finding(name, None, "zh-troubleshooting", "its entries are not the English page's, in order",
                      "translate every entry")
    for anchor, entry in chinese.items():
        if anchor in english and on_screen(entry, "屏幕上显示") != on_screen(english[anchor]):
            yield Finding(name, None, "zh-troubleshooting", f"#{anchor}: not the English 'On screen' message",
                          "show the message under **屏幕上显示, as the English entry does")
        for part in ("**原因。**", "**修复。**", "**来源：**"):
            if part not in entry:
                yield Finding(name, None, "zh-troubleshooting", f"#{anchor}: no {part}", "give every part")


def chinese_prose(root: Path) -> Iterator[tuple[str, str, str]]:
    """(file, where, prose) of the Chinese pages and the Chinese notebooks' markdown cells, code blocks left out."""
    for path in [*sorted((root / "docs" / "zh").glob("*.md")), root / "README.zh-CN.md"]:
        yield rel(path, root), "", blank_code(read(path))
    for path in notebooks(root, chinese=True):
        for index, text in markdown_cells(path):
            yield rel(path, root), f"cell {index}", blank_code(text)


def where(label: str, text: str, index: int) -> int | str:
    return f"{label} line {line_at(text, index)}" if label else line_at(text, index)


@rule("zh-tf-link", "Chinese prose links tensorflow.google.cn (?hl=zh-cn, or marked 英文) and docs/zh/ pages")
def zh_tensorflow_links(root: Path) -> Iterator[Finding]:
    for name, label, prose in chinese_prose(root):
        for m in re.finditer(r"https://www\.tensorflow\.org[^)>\s]*", prose):
            yield Finding(name, where(label, prose, m.start()), "zh-tf-link", m[0], "link https://tensorflow.google.cn")
        for link in re.finditer(r"https://tensorflow\.google\.cn/([^?#)>\s]*)([^)>\s]*)[)>]", prose):
            if link[1] in TENSORFLOW_IN_CHINESE and not link[2].startswith("?hl=zh-cn"):
                yield Finding(name, where(label, prose, link.start()), "zh-tf-link", link[0],
                              "TensorFlow has this page in Chinese: add ?hl=zh-cn, no #anchor")
            elif link[1] not in TENSORFLOW_IN_CHINESE and not prose.startswith("（英文）", link.end()):
                yield Finding(name, where(label, prose, link.start()), "zh-tf-link", link[0],
                              "an English page: mark it （英文）")
        for link in re.finditer(r"\]\(\.\./\.\./docs/([\w.-]+\.md)[^)]*\)", prose if label else ""):
            if link[1] in TRANSLATED:
                yield Finding(name, label, "zh-tf-link", link[0], f"link the Chinese page ../../docs/zh/{link[1]}")
            elif not re.match(r"[（，]英文）", prose[link.end():]):
                yield Finding(name, label, "zh-tf-link", link[0], "an English page: mark it （英文）")
    readme = read(root / "README.zh-CN.md")
    links = {link.partition("#")[0] for _, link in relative_links(readme)}
    for page in TRANSLATED:
        if f"docs/{page}" in links or f"docs/zh/{page}" not in links:
            yield Finding("README.zh-CN.md", None, "zh-tf-link", f"does not link docs/zh/{page}",
                          "link the Chinese page, not the English one")


@rule("zh-line-break", "a Chinese paragraph is one line: no line break between two Chinese characters")
def zh_line_breaks(root: Path) -> Iterator[Finding]:
    for name, label, prose in chinese_prose(root):
        for m in WIDE_BREAK.finditer(prose):
            yield Finding(name, where(label, prose, m.start()), "zh-line-break",
                          f"{prose[max(0, m.start() - 20):m.end() + 20]!r}",
                          "join the lines: GitHub and browsers show the break as a space")


@rule("mirror-page", "the mainland China page and README section: the mirror as an option, its undo, the code's waits")
def mirror_page(root: Path) -> Iterator[Finding]:
    from course_utils.data import download as connect  # the measured limits (standard library only)

    deadline, pause = f"{connect.ANSWER_DEADLINE_S:g}", f"{connect.READ_TIMEOUT_S:g}"
    mirror = ["PIP_INDEX_URL=https://pypi.tuna.tsinghua.edu.cn/simple make venv",
              "pip config set global.index-url https://pypi.tuna.tsinghua.edu.cn/simple",
              "pip config unset global.index-url", "https://mirrors.tuna.tsinghua.edu.cn/help/pypi/",
              "https://mirrors.ustc.edu.cn/help/pypi.html", "COURSE_OFFLINE=1"]
    page = read(root / "docs" / "zh" / "mainland-china.md")
    readme = read(root / "README.zh-CN.md")
    section = readme.split('<a id="mainland-china"></a>', 1)[-1].split("\n## ", 2)[1] if "\n## " in readme else ""
    summary = read(root / "docs" / "instructors.md")
    needs = [("docs/zh/mainland-china.md", page, [*mirror, "course data fetch --cache-dir", "COURSE_DATA_DIR=",
                                                  f"最多等 {deadline} 秒", "`ANSWER_DEADLINE_S`", "`READ_TIMEOUT_S`",
                                                  f"连续 {pause} 秒收不到新数据"]),
             ("README.zh-CN.md", section, [*mirror, "不是默认设置", "course data fetch", "COURSE_DATA_DIR",
                                           "](docs/zh/mainland-china.md)", f"约 {deadline} 秒"]),
             ("docs/instructors.md", summary, [f"about {deadline} s", f"a {pause} s pause"])]
    for name, text, needed in needs:
        for piece in needed:
            if piece not in text:
                yield Finding(name, None, "mirror-page", f"does not say {piece!r}",
                              "state the option, its undo and the waits course_utils/data/download.py uses")
    if page.count(f"约 {deadline} 秒") < 3:
        yield Finding("docs/zh/mainland-china.md", None, "mirror-page", f"fewer than 3 cases wait 约 {deadline} 秒",
                      "the three cases that wait for the deadline say so")


@rule("translation", "each Chinese notebook is in step with its English one (scripts/translations.py status)")
def notebook_translations(root: Path) -> Iterator[Finding]:
    for problem in translations.status(root):
        line = None if problem.cell is None else f"cell {problem.cell}"
        yield Finding(problem.notebook, line, "translation", problem.what, problem.fix)
