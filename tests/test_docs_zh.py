"""The Chinese documents (docs/zh/) translate the English ones whole: same anchors in the same order, the same
commands and messages, every source kept - so a link, a notebook or the doctor can name one anchor in either.

Compared as structure, never as sentences: the anchors a page offers, its code blocks (messages exactly; commands
with their comments removed, since comments are translated), the https links it cites, the troubleshooting entries'
parts. docs/zh/mainland-china.md has no English twin; its English summary is in docs/instructors.md.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from course_utils.core.i18n import CHINESE_CHARACTERS

from .conftest import ROOT
from .test_wsl2_guide import slug

TRANSLATED = ("troubleshooting.md", "wsl2.md", "sources.md")
ZH = ROOT / "docs" / "zh"
FENCE = re.compile(r"^```(?P<lang>[^\n]*)\n(?P<body>.*?)^```", re.S | re.M)
EXPLICIT = re.compile(r'^<a id="(?P<id>[^"]+)"></a>\s*$')
HEADING = re.compile(r"^#{1,6} (?P<title>.+)$")
MESSAGE_BLOCKS = ("text", "")  # what a screen shows: compared exactly
URL = re.compile(r"https://[^\s)>\]]+")
CJK = re.compile(r"[\u4e00-\u9fff]")


def text(path: Path) -> str:
    return path.read_text(encoding="utf-8")


def offered_anchors(markdown: str) -> list[str]:
    """The anchors a page offers, in order: each explicit ``<a id>``, and GitHub's slug of each heading
    that has no explicit anchor on the line before it (the headings a link can only reach by their words)."""
    markdown = FENCE.sub("", markdown)
    found: list[str] = []
    before = ""
    for line in markdown.splitlines():
        if not line.strip():
            continue
        if anchor := EXPLICIT.match(line):
            found.append(anchor["id"])
        elif (heading := HEADING.match(line)) and not EXPLICIT.match(before):
            found.append(slug(heading["title"]))
        before = line
    return found


def without_comments(block: str) -> list[str]:
    """A command block's lines with ``#`` comments and blank lines removed (a comment starts a line or follows
    a space; the course's blocks have no ``#`` inside strings)."""
    lines = (re.sub(r"(^|\s)#.*$", "", line).rstrip() for line in block.splitlines())
    return [line for line in lines if line]


def comparable(markdown: str) -> list[tuple[str, object]]:
    """Each fenced block as (language, what must be equal): the text itself for a message, the lines for a command."""
    return [(m["lang"], m["body"] if m["lang"] in MESSAGE_BLOCKS else without_comments(m["body"]))
            for m in FENCE.finditer(markdown)]


def pair(name: str) -> tuple[str, str]:
    return text(ROOT / "docs" / name), text(ZH / name)


# ----------------------------------------------------------------- the helpers, on small samples


def test_offered_anchors_take_the_explicit_anchor_over_the_heading_words():
    english = '# A title\n\n<a id="entry"></a>\n### An entry\n\n## 7. Download it\n```text\n# not a heading\n```\n'
    chinese = ('<a id="a-title"></a>\n# 标题\n\n<a id="entry"></a>\n### 条目\n\n'
               '<a id="7-download-it"></a>\n## 7. 下载\n')
    assert offered_anchors(english) == ["a-title", "entry", "7-download-it"]
    assert offered_anchors(chinese) == offered_anchors(english)
    assert offered_anchors("# 标题\n") == ["标题"]  # a Chinese heading without an anchor offers only its own words


def test_command_blocks_compare_without_comments_and_messages_exactly():
    english = "```bash\nnvidia-smi    # which processes?\n```\n```text\nOOM when allocating\n```\n"
    chinese = "```bash\nnvidia-smi    # 哪些进程？\n```\n```text\nOOM when allocating\n```\n"
    assert comparable(english) == comparable(chinese)
    assert comparable(english) != comparable(chinese.replace("nvidia-smi", "nvidia-smi -L"))
    assert comparable(english) != comparable(chinese.replace("OOM when", "显存不足"))


# ----------------------------------------------------------------- the translations


def test_each_translated_page_exists_and_the_folder_holds_no_stray_page():
    assert {p.name for p in ZH.glob("*.md")} == {*TRANSLATED, "mainland-china.md"}


@pytest.mark.parametrize("name", TRANSLATED)
def test_the_translation_offers_the_same_anchors_in_the_same_order(name):
    english, chinese = pair(name)
    en, zh = offered_anchors(english), offered_anchors(chinese)
    assert len(en) >= 3
    assert zh == en, f"docs/zh/{name}: missing {sorted(set(en) - set(zh))}, extra {sorted(set(zh) - set(en))}"


@pytest.mark.parametrize("name", TRANSLATED)
def test_the_translation_says_at_the_top_which_english_page_it_translates(name):
    head = "\n".join(text(ZH / name).splitlines()[:6])
    assert f"](../{name})" in head and "翻译" in head


@pytest.mark.parametrize("name", TRANSLATED)
def test_the_translation_has_the_same_commands_and_messages(name):
    english, chinese = pair(name)
    en, zh = comparable(english), comparable(chinese)
    assert len(zh) == len(en), f"docs/zh/{name}: {len(zh)} code blocks, the English page has {len(en)}"
    differ = [i for i, (a, b) in enumerate(zip(en, zh, strict=True)) if a != b]
    assert not differ, f"docs/zh/{name}: code block(s) {differ} differ from the English page's: {zh[differ[0]]}"


TENSORFLOW = re.compile(r"https://(?:www\.tensorflow\.org|tensorflow\.google\.cn)/([^?#]*)\S*")
# TensorFlow's pages that have a Chinese translation (tensorflow/docs-l10n, site/zh-cn): the Chinese edition links
# them with ?hl=zh-cn. Every other TensorFlow page it links on tensorflow.google.cn (which serves in mainland
# China) and marks （英文）.
TENSORFLOW_IN_CHINESE = {"guide/gpu", "guide/mixed_precision", "guide/profiler", "tutorials/images/cnn",
                         "guide/data_performance_analysis", "guide/distributed_training",
                         "tutorials/distribute/multi_worker_with_ctl", "tensorboard/tensorboard_in_notebooks"}


def cited(url: str) -> str:
    """A source as cited: a TensorFlow page is the same source on www.tensorflow.org and tensorflow.google.cn,
    with or without its anchor (the Chinese page's anchors differ)."""
    page = TENSORFLOW.fullmatch(url)
    return f"tensorflow:{page[1]}" if page else url


@pytest.mark.parametrize("name", TRANSLATED)
def test_the_translation_keeps_every_source(name):
    english, chinese = pair(name)
    missing = {cited(u) for u in URL.findall(english)} - {cited(u) for u in URL.findall(chinese)}
    assert not missing, f"docs/zh/{name} lost these links: {sorted(missing)}"


def assert_tensorflow_links_in_chinese(name: str, prose: str) -> None:
    """No www.tensorflow.org link; a page TensorFlow has in Chinese with ?hl=zh-cn; any other marked （英文）."""
    found = re.findall(r"https://www\.tensorflow\.org[^)>\s]*", prose)
    assert not found, f"{name}: link https://tensorflow.google.cn instead of {found[:3]}"
    for link in re.finditer(r"https://tensorflow\.google\.cn/([^?#)>\s]*)([^)>\s]*)[)>]", prose):
        page, rest = link[1], link[2]
        if page in TENSORFLOW_IN_CHINESE:
            assert rest.startswith("?hl=zh-cn"), f"{name}: {link[0]} has a Chinese page: ?hl=zh-cn, no #anchor"
        else:
            assert prose.startswith("（英文）", link.end()), f"{name}: {link[0]} is English: mark it （英文）"


@pytest.mark.parametrize("path", sorted(ZH.glob("*.md")) + [ROOT / "README.zh-CN.md"], ids=lambda p: p.name)
def test_a_chinese_page_links_tensorflow_google_cn_in_chinese_where_it_can(path):
    assert_tensorflow_links_in_chinese(path.name, FENCE.sub("", text(path)))  # a message block shows the screen


@pytest.mark.parametrize("name", TRANSLATED)
def test_the_translation_is_chinese_prose(name):
    prose = FENCE.sub("", text(ZH / name))
    # every paragraph with English words has Chinese too; an anchor with its heading may be a name ("## XLA")
    paragraphs = [p for p in re.split(r"\n\s*\n", prose)
                  if re.search(r"[A-Za-z]{4,}", p) and not p.lstrip().startswith("<a ")]
    untranslated = [p for p in paragraphs if not CJK.search(p)]
    assert not untranslated, untranslated[:3]


def test_every_troubleshooting_entry_has_its_parts_in_chinese():
    from .test_troubleshooting import entries, on_screen

    english, chinese = (entries(page) for page in pair("troubleshooting.md"))
    assert list(chinese) == list(english)
    lacking = []
    for anchor, entry in chinese.items():
        shown = re.search(r"\*\*屏幕上显示[^\n]*\n+(?:[^`\n][^\n]*\n+)*?```[^\n]*\n(.*?)^```", entry, re.S | re.M)
        if not shown or shown.group(1) != on_screen(english[anchor]):
            lacking.append(f"{anchor}: the English 'On screen' message, under **屏幕上显示")
        for part in ("**原因。**", "**修复。**", "**来源：**"):
            if part not in entry:
                lacking.append(f"{anchor}: {part}")
    assert not lacking, lacking


def test_the_doctor_can_send_a_chinese_reader_to_every_anchor_it_names():
    from course_utils.doctor.troubleshooting import ANCHORS

    offered = set(offered_anchors(text(ZH / "troubleshooting.md")))
    assert set(ANCHORS.values()) <= offered, set(ANCHORS.values()) - offered


# ----------------------------------------------------------------- the page for slow or blocked networks


def test_the_network_page_states_the_measured_limits_the_code_uses():
    from course_utils.data import connect

    page = text(ZH / "mainland-china.md")
    assert f"最多等 {connect.ANSWER_DEADLINE_S:g} 秒" in page and "`ANSWER_DEADLINE_S`" in page
    assert f"连续 {connect.READ_TIMEOUT_S:g} 秒收不到新数据" in page and "`READ_TIMEOUT_S`" in page
    assert page.count(f"约 {connect.ANSWER_DEADLINE_S:g} 秒") >= 3  # the three cases that wait for the deadline
    summary = text(ROOT / "docs" / "instructors.md")
    assert f"about {connect.ANSWER_DEADLINE_S:g} s" in summary and f"a {connect.READ_TIMEOUT_S:g} s pause" in summary


def test_the_network_page_gives_the_mirror_as_an_option_with_its_undo_and_sources():
    page = text(ZH / "mainland-china.md")
    for needed in ("PIP_INDEX_URL=https://pypi.tuna.tsinghua.edu.cn/simple make venv",
                   "pip config set global.index-url https://pypi.tuna.tsinghua.edu.cn/simple",
                   "pip config unset global.index-url",
                   "https://mirrors.tuna.tsinghua.edu.cn/help/pypi/", "https://mirrors.ustc.edu.cn/help/pypi.html",
                   "course data fetch --cache-dir", "COURSE_DATA_DIR=", "COURSE_OFFLINE=1"):
        assert needed in page, needed


def test_no_mirror_is_the_default_anywhere_the_course_installs_from():
    """A mirror is the reader's choice: the files that install the course name none (PyPI stays the default)."""
    installers = [ROOT / "Makefile", ROOT / "pyproject.toml", ROOT / "environment.yml",
                  ROOT / "scripts" / "venv.sh", *sorted((ROOT / "constraints").glob("*.txt")),
                  *sorted((ROOT / "binder").glob("*")), *sorted((ROOT / ".ci").glob("*"))]
    found = [f"{p.relative_to(ROOT)}: {m.group(0)}" for p in installers if p.is_file()
             for m in re.finditer(r"index-url\S*|INDEX_URL\S*|tuna\.tsinghua|mirrors\.ustc|aliyun", text(p))]
    assert not found, found


WIDE_BREAK = re.compile(f"[{CHINESE_CHARACTERS}]\n(?=[{CHINESE_CHARACTERS}])")


@pytest.mark.parametrize("path", sorted(ZH.glob("*.md")) + [ROOT / "README.zh-CN.md"], ids=lambda p: p.name)
def test_a_chinese_paragraph_does_not_break_its_line_between_two_chinese_characters(path):
    """GitHub and Chromium show such a break as a space, which Chinese text has not: one paragraph, one line."""
    prose = FENCE.sub("", text(path))
    found = [prose[max(0, m.start() - 20):m.end() + 20] for m in WIDE_BREAK.finditer(prose)]
    assert not found, f"{path.name}: join these lines: {found[:3]}"


@pytest.mark.parametrize("path", sorted((ROOT / "notebooks" / "zh").glob("*.ipynb")), ids=lambda p: p.name)
def test_a_chinese_markdown_cell_does_not_break_its_line_between_two_chinese_characters(path):
    import json

    cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
    prose = "\n\n".join(FENCE.sub("", "".join(c["source"])) for c in cells if c["cell_type"] == "markdown")
    found = [prose[max(0, m.start() - 20):m.end() + 20] for m in WIDE_BREAK.finditer(prose)]
    assert not found, f"{path.name}: join these lines: {found[:3]}"


@pytest.mark.parametrize("path", sorted((ROOT / "notebooks" / "zh").glob("*.ipynb")), ids=lambda p: p.name)
def test_chinese_notebooks_link_chinese_pages(path):
    """The rule of the Chinese pages, on a Chinese notebook's markdown cells; and a link to the course's own
    docs goes to docs/zh/ where that page is translated, else to the English page marked 英文 right after it."""
    import json

    cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
    prose = "\n\n".join(FENCE.sub("", "".join(c["source"])) for c in cells if c["cell_type"] == "markdown")
    assert_tensorflow_links_in_chinese(path.name, prose)
    for link in re.finditer(r"\]\(\.\./\.\./docs/([\w.-]+\.md)[^)]*\)", prose):
        page = link[1]
        assert page not in TRANSLATED, f"{path.name}: {link[0]} has a Chinese page: link ../../docs/zh/{page}"
        assert re.match(r"[（，]英文）", prose[link.end():]), f"{path.name}: {link[0]} is English: mark it （英文）"
