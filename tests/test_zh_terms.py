"""The Chinese edition says each thing with one word: the term list docs/zh/terms.toml, held against the Chinese
messages (course_utils/locale/zh_CN/LC_MESSAGES/*.po), the Chinese documents (docs/zh/*.md, README.zh-CN.md) and
the Chinese notebooks named in NOTEBOOKS_CHECKED.

A failure names the file, the line (for a notebook: the cell number and its id), the variant found and the term to
use. What is checked is what a student reads: a message's translation; a page's prose and its commands' comments;
a notebook's markdown and its code's comments and strings. Code, `code spans`, URLs and {fields} are left out.

    python -m tests.test_zh_terms               # the term list as a table
    python -m tests.test_zh_terms --notebooks   # what each Chinese notebook still uses, checked or not
"""

from __future__ import annotations

import io
import json
import re
import sys
import tokenize
import tomllib
from dataclasses import dataclass
from pathlib import Path

import pytest

from course_utils.core.i18n import CHINESE_CHARACTERS

ROOT = Path(__file__).resolve().parents[1]  # not from .conftest: this file also runs as a script
TERMS_FILE = ROOT / "docs" / "zh" / "terms.toml"
CATALOGUES = sorted((ROOT / "course_utils" / "locale" / "zh_CN" / "LC_MESSAGES").glob("*.po"))
DOCUMENTS = [*sorted((ROOT / "docs" / "zh").glob("*.md")), ROOT / "README.zh-CN.md"]
ZH_NOTEBOOKS = ROOT / "notebooks" / "zh"

# The one switch for the notebooks: the Chinese notebooks (file names in notebooks/zh/) held to the term list.
# Add a notebook here once its text follows the list; `python -m tests.test_zh_terms --notebooks` shows what is left.
NOTEBOOKS_CHECKED: set[str] = {"01_install_versions.ipynb", "02_verify_gpu.ipynb", "03_memory.ipynb",
                                "04_dense_noise_vs_zeros.ipynb", "05_cnn_cpu_vs_gpu.ipynb", "06_tensorboard.ipynb",
                                "07_beyond_one_gpu.ipynb"}
# Terms added to the list after a checked notebook was written: {notebook: {term's zh}} not held against it yet.
# Delete an entry once the notebook follows the term; `--notebooks` lists every variant still there.
NOTEBOOKS_WAITING: dict[str, set[str]] = {}

NEAR = 12  # an English word is checked when a Chinese character is this close: it stands in a Chinese sentence
CJK = re.compile(f"[{CHINESE_CHARACTERS}]")
GLOSSED_BY = re.compile(f"[*_]*（[{CHINESE_CHARACTERS}]{{1,10}}）")  # *kernel*（内核）: a short Chinese term
FENCE = re.compile(r"^(\s*)(```|~~~)(?P<lang>[^\n`]*)$")
COMMENTED = {"bash", "sh", "shell", "console", "python", "py", "powershell", "bat", "cmd", "toml", "yaml", "ini"}
# Left out before matching (replaced by spaces, so columns stay): code spans, URLs and link targets, HTML tags,
# {fields} (str.format), %(fields)s
LEFT_OUT = re.compile(r"`[^`\n]*`|https?://[^\s)>\]}，。；、）]+|\]\([^)\s]*\)|</?[A-Za-z][^<>\n]*>|\{[^{}\n]*\}|%\([a-z_]+\)[sd]")


@dataclass(frozen=True)
class Term:
    en: str
    zh: str
    note: str
    reject: tuple[str, ...]
    patterns: tuple[re.Pattern[str], ...]
    shows: tuple[str, ...]
    english: str | None
    allow: tuple[str, ...]

    def english_word(self) -> re.Pattern[str] | None:
        """The English word (and its plural) where it stands alone: not part of an identifier, a path, a field,
        a hyphenated word, a quoted string or a code span."""
        if not self.english:
            return None
        word = re.escape(self.english)
        return re.compile(rf"(?<![\w.\-/`'\"{{\[<@$]){word}s?(?![\w.\-/`'\"}}\]>(=])", re.I)


def load_terms(path: Path = TERMS_FILE) -> list[Term]:
    data = tomllib.loads(path.read_text(encoding="utf-8"))
    return [Term(en=t["en"], zh=t["zh"], note=t.get("note", ""), reject=tuple(t.get("reject", ())),
                 patterns=tuple(re.compile(p) for p in t.get("pattern", ())), shows=tuple(t.get("shows", ())),
                 english=t.get("english"), allow=tuple(t.get("allow", ())))
            for t in data["term"]]


@dataclass(frozen=True)
class Finding:
    where: str  # "course.po:610" (its msgid's line), "docs/zh/wsl2.md:117", "05_....ipynb cell 38 (id ...), line 3"
    found: str  # the variant as written
    term: Term
    text: str  # the line it is in

    def __str__(self) -> str:
        return f"{self.where}: {self.found!r} -> use {self.term.zh!r} ({self.term.en}): {self.text.strip()[:160]}"


def _is_gloss(text: str, start: int, end: int) -> bool:
    """The English word glosses the Chinese term before it, 工作进程（worker）, or a short Chinese term after it
    glosses the word, *kernel*（内核）."""
    before = text[:start].rstrip("*_")
    if before.endswith(("（", "(")):
        term = before[:-1].rstrip("*_")
        return bool(term) and bool(CJK.match(term[-1]))
    return bool(GLOSSED_BY.match(text, end))


def _near_chinese(text: str, start: int, end: int) -> bool:
    return bool(CJK.search(text[max(0, start - NEAR):end + NEAR]))


def check_text(text: str, terms: list[Term]) -> list[tuple[str, Term]]:
    """The rejected variants in one piece of prose (code spans, URLs and fields already in it are left out)."""
    clean = LEFT_OUT.sub(lambda m: " " * len(m.group(0)), text)
    found: list[tuple[str, Term]] = []
    for term in terms:
        plain = clean
        for variant in sorted(term.reject, key=len, reverse=True):  # 速度梯子 is one variant, not two
            found += [(variant, term)] * plain.count(variant)
            plain = plain.replace(variant, " " * len(variant))
        for pattern in term.patterns:
            found += [(m.group(0), term) for m in pattern.finditer(clean)]
        word = term.english_word()
        if word is None:
            continue
        allowed = clean
        for phrase in term.allow:
            allowed = re.sub(re.escape(phrase), lambda m: " " * len(m.group(0)), allowed, flags=re.I)
        for m in word.finditer(allowed):
            if _near_chinese(allowed, m.start(), m.end()) and not _is_gloss(allowed, m.start(), m.end()):
                found.append((m.group(0), term))
    return found


def markdown_prose(markdown: str) -> list[tuple[int, str]]:
    """(line number, text) for what a reader reads in a markdown text: the prose, and the comments of the command
    blocks (a message block, ```text, is what a screen shows: English, not checked)."""
    out: list[tuple[int, str]] = []
    fence: str | None = None
    for number, line in enumerate(markdown.splitlines(), 1):
        opening = FENCE.match(line)
        if fence is None and opening:
            fence = opening["lang"].strip().lower()
            continue
        if fence is not None:
            if opening or line.strip() in ("```", "~~~"):
                fence = None
            elif fence in COMMENTED and (comment := re.search(r"(?:^|\s)(#|//|::|REM\s).*$", line)):
                out.append((number, comment.group(0)))
            continue
        out.append((number, line))
    return out


def code_reading(source: str) -> list[tuple[int, str]]:
    """(line number, text) for the comments and strings of a notebook's code cell (magics and shell lines blanked)."""
    lines = ["" if line.lstrip().startswith(("%", "!")) else line for line in source.splitlines()]
    try:
        tokens = list(tokenize.generate_tokens(io.StringIO("\n".join(lines) + "\n").readline))
    except (tokenize.TokenError, IndentationError, SyntaxError):
        return list(enumerate(source.splitlines(), 1))  # not Python: read it all
    return [(tok.start[0], tok.string) for tok in tokens if tok.type in (tokenize.COMMENT, tokenize.STRING)]


def catalogue_findings(path: Path, terms: list[Term]) -> list[Finding]:
    from babel.messages.pofile import read_po

    with path.open("rb") as fh:
        catalogue = read_po(fh)
    found = []
    for message in catalogue:
        if not message.id or not message.string:
            continue
        text = message.string if isinstance(message.string, str) else " / ".join(message.string)
        found += [Finding(f"{path.name}:{message.lineno}", variant, term, text)
                  for variant, term in check_text(text, terms)]
    return found


def document_findings(path: Path, terms: list[Term]) -> list[Finding]:
    name = path.relative_to(ROOT).as_posix()
    return [Finding(f"{name}:{number}", variant, term, text)
            for number, text in markdown_prose(path.read_text(encoding="utf-8"))
            for variant, term in check_text(text, terms)]


def notebook_findings(path: Path, terms: list[Term]) -> list[Finding]:
    found = []
    for index, cell in enumerate(json.loads(path.read_text(encoding="utf-8"))["cells"]):
        source = "".join(cell["source"])
        if cell["cell_type"] == "markdown":
            pieces = markdown_prose(source)
        elif cell["cell_type"] == "code":
            pieces = code_reading(source)
        else:
            continue
        for number, text in pieces:
            found += [Finding(f"{path.name} cell {index} (id {cell.get('id')}), line {number}", variant, term, text)
                      for variant, term in check_text(text, terms)]
    return found


# ----------------------------------------------------------------- the checker, on small samples

@pytest.fixture(scope="module")
def terms() -> list[Term]:
    return load_terms()


def found_in(text: str, terms: list[Term]) -> list[str]:
    return [variant for variant, _ in check_text(text, terms)]


def test_the_checker_finds_each_kind_of_variant(terms):
    assert found_in("请把 nvidia-smi 的输出交给医生。", terms) == ["医生"]
    assert found_in("本 notebook 会解释这一点。", terms) == ["notebook"]
    assert found_in("所有 workers 都已停止。", terms) == ["workers"]
    assert found_in("worker {index}（共 {count} 个）", terms) == ["worker"]  # a bracket after a field is no gloss
    assert found_in("本课程的 notebook（基于 Keras 3）无法运行。", terms) == ["notebook"]  # nor is an aside
    assert found_in("（例如 worker 0）", terms) == ["worker"]
    assert found_in("下一个批量已经准备好。", terms) == ["个批量"]
    assert found_in("TF 2.15 是最后一个带有 5.x GPU 内核的版本。", terms) == ["GPU 内核"]
    assert found_in("它包含跟踪的时间。", terms) == ["跟踪"]
    assert found_in("速度梯子的每一级", terms) == ["速度梯子"]


def test_the_checker_leaves_alone_what_is_right(terms):
    for text in ("课程的**工作进程**（worker）各自运行同一个程序。",  # a gloss after the term
                 "例如 *kernel*（内核）和 *epoch*（轮）。",  # an English word glossed by the Chinese one
                 "运行 `course doctor`，然后阅读诊断结果。",  # a code span
                 "见 https://example.org/notebook/worker 。",  # a URL
                 "{notebook} 没有声明参数。",  # a field
                 "worker_options 要以 worker_index 为键。",  # identifiers
                 "Multi-worker training with Keras",  # an English title
                 "TensorFlow 发现了 2 个 GPU；批量大小是 256；全局批量 {batch}。",  # the verb 发现; batch size
                 "重新加载 nvidia_uvm 内核模块，或者重启 Jupyter 内核；Linux 内核没有 NUMA 信息。",  # other kernels
                 "按操作系统的说明操作。",  # 操作 that is not a TensorFlow op
                 "在 Jupyter Notebook 中打开它。"):  # a product name
        assert found_in(text, terms) == [], text


# The pairs the review found used two ways, and the "N 倍" rule: (text, the variants the checker must find).
CAUGHT = [
    ("请看故障排除页面。", ["故障排除"]),
    ("每张图片是 28 × 28 像素。", ["图片"]),
    ("全局批量：每个训练步的图像数", ["训练步"]),
    ("第一次 fit 又加了一份 float32 副本。", ["float32 副本"]),
    ("它不是 MNIST 的完好副本。", ["完好副本"]),
    ("再次启动集群：它从主节点最新的检查点继续。", ["最新的检查点"]),
    ("每个工作进程都保存检查点。", ["保存检查点"]),
    ("GPU 内存用完了。", ["GPU 内存"]),
    ("显卡的内存只有 4 GB。", ["显卡的内存"]),
    ("它的张量核心运行 float16。", ["张量核心"]),
    ("CPU 上慢 3 倍。", ["慢 3 倍"]),
    ("模型小四倍。", ["小四倍"]),
    ("时间减少了 2 倍。", ["少了 2 倍"]),
    ("XLA 快 3 倍。", ["快 3 倍"]),
    ("C：生成器，大 40 倍的模型", ["大 40 倍"]),
    ("吞吐量提高了两倍。", ["提高了两倍"]),
]
# The same words where they are right.
RIGHT = [
    "请看故障排查页面。",
    "每张图像是 28 × 28 像素；图中的中文字体。",
    "每个训练步骤的图像数；第 100 步，每步 12 毫秒，训练步数。",
    "每个副本、副本数、4 个同步的副本、每个 GPU 上的副本、各副本的梯度。",
    "第一次 fit 又加了一份 float32 拷贝；把结果复制到主内存。",
    "## 检查点：检查点通过，3 项检查中通过 3 项。它从主节点最新的训练检查点继续，每个工作进程都保存训练检查点。",
    "GPU 的显存用完了；主内存、CPU 内存、进程的常驻内存。",
    "它的 Tensor Core 运行 float16。",
    "时间减少到原来的 1/4；XLA 快到 3 倍；合计是前向传播的 3 倍；大了大约一倍；增加了一倍；大约 3 倍；至少 3 倍；"
    "最多相差六倍；相差不到 3 倍；时间可能是这里的 2 到 3 倍；快很多倍。",
]


@pytest.mark.parametrize(("text", "variants"), CAUGHT, ids=[v[0] for _, v in CAUGHT])
def test_each_pair_the_review_named_is_caught_where_it_is_wrong(text, variants, terms):
    assert found_in(text, terms) == variants


@pytest.mark.parametrize("text", RIGHT)
def test_each_pair_the_review_named_passes_where_it_is_right(text, terms):
    assert found_in(text, terms) == []


def test_markdown_prose_reads_command_comments_and_skips_messages():
    page = "正文\n```bash\nmake lab    # 启动 worker\n```\n```text\nworker 0 crashed\n```\n"
    assert markdown_prose(page) == [(1, "正文"), (3, " # 启动 worker")]


def test_code_reading_takes_comments_and_strings_only():
    source = "%%time\nworkers = 2  # 两个工作进程\nprint(f\"worker {i}\")\n!ls workers\n"
    assert [text for _, text in code_reading(source)] == ["# 两个工作进程", 'f"worker {i}"']


# ----------------------------------------------------------------- the list itself

def test_each_term_has_one_chinese_word_and_rejects_something(terms):
    assert len(terms) >= 10
    for term in terms:
        assert term.zh and (CJK.search(term.zh) or term.zh == term.en), term.en  # or a name kept: Tensor Core
        assert term.reject or term.patterns or term.english, f"{term.en}: nothing rejected"
        assert len(term.shows) == len(term.patterns), f"{term.en}: one example in `shows` for each pattern"
        for example, pattern in zip(term.shows, term.patterns, strict=True):
            assert pattern.search(example), f"{term.en}: {pattern.pattern!r} does not catch its example {example!r}"


def test_no_chosen_term_is_a_rejected_variant(terms):
    """A term's own word, and every other term's word, passes the checker."""
    for term in terms:
        assert found_in(term.zh, terms) == [], term.zh
        if term.note:
            assert found_in(term.note, terms) == [], f"{term.en}: its note uses a rejected variant"


def test_the_list_names_the_terms_the_review_asked_for(terms):
    chosen = {term.en.split(" (")[0]: term.zh for term in terms}
    assert chosen["worker"] == "工作进程"
    for concept in ("notebook", "the doctor", "finding", "batch", "batch size", "rung", "op", "GPU kernel",
                    "pip extra", "troubleshooting", "image", "training step", "replica", "checkpoint", "GPU memory",
                    "Tensor Core"):
        assert concept in chosen, concept
    assert any(term.en.startswith("tracing") for term in terms)
    assert (chosen["troubleshooting"], chosen["image"], chosen["training step"], chosen["replica"],
            chosen["checkpoint"], chosen["GPU memory"]) == ("故障排查", "图像", "训练步骤", "副本", "检查点", "显存")
    assert any("倍" in term.zh for term in terms)  # the rule for "N 倍" comparisons


# ----------------------------------------------------------------- the Chinese edition

@pytest.mark.parametrize("path", CATALOGUES, ids=lambda p: p.name)
def test_the_chinese_messages_use_the_listed_terms(path, terms):
    found = catalogue_findings(path, terms)
    assert not found, f"{len(found)} rejected variant(s); see docs/zh/terms.toml:\n" + "\n".join(map(str, found))


@pytest.mark.parametrize("path", DOCUMENTS, ids=lambda p: p.name)
def test_the_chinese_documents_use_the_listed_terms(path, terms):
    found = document_findings(path, terms)
    assert not found, f"{len(found)} rejected variant(s); see docs/zh/terms.toml:\n" + "\n".join(map(str, found))


def test_the_notebooks_checked_are_chinese_notebooks(terms):
    assert NOTEBOOKS_CHECKED <= {p.name for p in ZH_NOTEBOOKS.glob("[0-9][0-9]_*.ipynb")}
    assert NOTEBOOKS_WAITING.keys() <= NOTEBOOKS_CHECKED
    assert set().union(*NOTEBOOKS_WAITING.values()) <= {term.zh for term in terms}


@pytest.mark.parametrize("name", sorted(NOTEBOOKS_CHECKED))
def test_a_checked_notebook_uses_the_listed_terms(name, terms):
    waiting = NOTEBOOKS_WAITING.get(name, set())
    found = notebook_findings(ZH_NOTEBOOKS / name, [term for term in terms if term.zh not in waiting])
    assert not found, f"{len(found)} rejected variant(s); see docs/zh/terms.toml:\n" + "\n".join(map(str, found))


def test_the_notebook_check_reads_every_chinese_notebook(terms):
    """Checked or not, each notebook can be read: its findings name a cell (so a notebook can join the list)."""
    for path in sorted(ZH_NOTEBOOKS.glob("[0-9][0-9]_*.ipynb")):
        assert all(" cell " in f.where for f in notebook_findings(path, terms)), path.name


# ----------------------------------------------------------------- as a script

def table(terms: list[Term]) -> str:
    rows = ["| English | 中文 | 不要用 | 说明 |", "|---|---|---|---|"]
    for term in terms:
        avoid = [*term.reject, *term.shows]
        if term.english:
            avoid.append(f"“{term.english}”（在中文句子里）")
        rows.append(f"| {term.en} | {term.zh} | {'、'.join(avoid)} | {term.note} |")
    return "\n".join(rows)


def main(argv: list[str]) -> int:
    terms = load_terms()
    if "--notebooks" not in argv:
        print(table(terms))
        return 0
    left = 0
    for path in sorted(ZH_NOTEBOOKS.glob("[0-9][0-9]_*.ipynb")):
        found = notebook_findings(path, terms)
        left += len(found)
        checked = "checked" if path.name in NOTEBOOKS_CHECKED else "not checked yet"
        print(f"{path.name} ({checked}): {len(found)}")
        for finding in found:
            print(f"  {finding}")
    return 1 if left else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
