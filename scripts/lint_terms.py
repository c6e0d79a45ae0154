"""The Chinese edition says each thing with one word: the term list docs/zh/terms.toml, held against the Chinese
messages (course_utils/locale/zh_CN/LC_MESSAGES/*.po), the Chinese documents (docs/zh/*.md, README.zh-CN.md) and
the Chinese notebooks (notebooks/zh/).

What is checked is what a student reads: a message's translation; a page's prose and its commands' comments;
a notebook's markdown and its code's comments and strings. Code, `code spans`, URLs and {fields} are left out.
Part of scripts/course_lint.py (``RULES``); ``--rule zh-term`` lists every variant still used.
"""

from __future__ import annotations

import io
import re
import tokenize
import tomllib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from lint_base import Finding, Rule, cells, notebooks, read, rel, rules_of, source

from course_utils.core.i18n import CHINESE_CHARACTERS

RULES: list[Rule] = []
rule = rules_of(RULES)

TERMS_FILE = "docs/zh/terms.toml"
NEAR = 12  # an English word is checked when a Chinese character is this close: it stands in a Chinese sentence
CJK = re.compile(f"[{CHINESE_CHARACTERS}]")
GLOSSED_BY = re.compile(f"[*_]*（[{CHINESE_CHARACTERS}]{{1,10}}）")  # *kernel*（内核）: a short Chinese term
FENCE_LINE = re.compile(r"^(\s*)(```|~~~)(?P<lang>[^\n`]*)$")
COMMENTED = {"bash", "sh", "shell", "console", "python", "py", "powershell", "bat", "cmd", "toml", "yaml", "ini"}
# Left out before matching (replaced by spaces, so columns stay): code spans, URLs and link targets, HTML tags,
# {fields} (str.format), %(fields)s
LEFT_OUT = re.compile(r"`[^`\n]*`|https?://[^\s)>\]}，。；、）]+|\]\([^)\s]*\)|</?[A-Za-z][^<>\n]*>|\{[^{}\n]*\}|%\([a-z_]+\)[sd]")
# The concepts a review found said two ways, and the word chosen for some of them.
REQUIRED = {"worker": "工作进程", "notebook": None, "the doctor": None, "finding": None, "batch": None,
            "batch size": None, "rung": None, "op": None, "GPU kernel": None, "pip extra": None,
            "troubleshooting": "故障排查", "image": "图像", "training step": "训练步骤", "replica": "副本",
            "checkpoint": "检查点", "GPU memory": "显存", "Tensor Core": None}


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


def load_terms(path: Path) -> list[Term]:
    data = tomllib.loads(read(path))
    return [Term(en=t["en"], zh=t["zh"], note=t.get("note", ""), reject=tuple(t.get("reject", ())),
                 patterns=tuple(re.compile(p) for p in t.get("pattern", ())), shows=tuple(t.get("shows", ())),
                 english=t.get("english"), allow=tuple(t.get("allow", ())))
            for t in data["term"]]


def _is_gloss(text: str, start: int, end: int) -> bool:
    """The English word glosses the Chinese term before it, 工作进程（worker）, or a short Chinese term after it
    glosses the word, *kernel*（内核）."""
    before = text[:start].rstrip("*_")
    if before.endswith(("（", "(")):
        term = before[:-1].rstrip("*_")
        return bool(term) and bool(CJK.match(term[-1]))
    return bool(GLOSSED_BY.match(text, end))


def check_text(text: str, terms: list[Term]) -> list[tuple[str, Term]]:
    """The rejected variants in one piece of prose (code spans, URLs and fields already in it are left out)."""
    clean = LEFT_OUT.sub(lambda m: " " * len(m.group(0)), text)
    found: list[tuple[str, Term]] = []
    for term in terms:
        plain = clean
        for variant in sorted(term.reject, key=len, reverse=True):  # 速度梯子 is one variant, not two
            found += [(variant, term)] * plain.count(variant)
            plain = plain.replace(variant, " " * len(variant))
        found += [(m.group(0), term) for pattern in term.patterns for m in pattern.finditer(clean)]
        word = term.english_word()
        if word is None:
            continue
        allowed = clean
        for phrase in term.allow:
            allowed = re.sub(re.escape(phrase), lambda m: " " * len(m.group(0)), allowed, flags=re.I)
        for m in word.finditer(allowed):
            near = CJK.search(allowed[max(0, m.start() - NEAR):m.end() + NEAR])
            if near and not _is_gloss(allowed, m.start(), m.end()):
                found.append((m.group(0), term))
    return found


def markdown_prose(markdown: str) -> list[tuple[int, str]]:
    """(line number, text) for what a reader reads in a markdown text: the prose, and the comments of the command
    blocks (a message block, ```text, is what a screen shows: English, not checked)."""
    out: list[tuple[int, str]] = []
    fence: str | None = None
    for number, line in enumerate(markdown.splitlines(), 1):
        opening = FENCE_LINE.match(line)
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


def code_reading(code: str) -> list[tuple[int, str]]:
    """(line number, text) for the comments and strings of a notebook's code cell (magics and shell lines blanked)."""
    lines = ["" if line.lstrip().startswith(("%", "!")) else line for line in code.splitlines()]
    try:
        tokens = list(tokenize.generate_tokens(io.StringIO("\n".join(lines) + "\n").readline))
    except (tokenize.TokenError, IndentationError, SyntaxError):
        return list(enumerate(code.splitlines(), 1))  # not Python: read it all
    return [(tok.start[0], tok.string) for tok in tokens if tok.type in (tokenize.COMMENT, tokenize.STRING)]


def found(path: str, line: int | str, text: str, terms: list[Term]) -> list[Finding]:
    return [Finding(path, line, "zh-term", f"{variant!r} in {text.strip()[:100]!r}",
                    f"use {term.zh!r} ({term.en}; {TERMS_FILE})") for variant, term in check_text(text, terms)]


def catalogue_findings(root: Path, terms: list[Term]) -> Iterator[Finding]:
    from babel.messages.pofile import read_po  # lazy: Babel (the dev extra) reads the catalogues, as messages.py does

    for path in sorted((root / "course_utils" / "locale" / "zh_CN" / "LC_MESSAGES").glob("*.po")):
        with path.open("rb") as fh:
            catalogue = read_po(fh)
        for message in catalogue:
            if message.id and message.string:
                text = message.string if isinstance(message.string, str) else " / ".join(message.string)
                yield from found(rel(path, root), message.lineno, text, terms)


@rule("zh-term", "the Chinese messages, pages and notebooks use the words of docs/zh/terms.toml, one per concept")
def zh_terms(root: Path) -> Iterator[Finding]:
    terms = load_terms(root / TERMS_FILE)
    yield from catalogue_findings(root, terms)
    for path in [*sorted((root / "docs" / "zh").glob("*.md")), root / "README.zh-CN.md"]:
        for number, text in markdown_prose(read(path)):
            yield from found(rel(path, root), number, text, terms)
    for path in notebooks(root, chinese=True):
        for index, cell in enumerate(cells(path)):
            reading = {"markdown": markdown_prose, "code": code_reading}.get(cell["cell_type"])
            for number, text in reading(source(cell)) if reading else []:
                yield from found(rel(path, root), f"cell {index} line {number}", text, terms)


def list_problems(terms: list[Term]) -> Iterator[str]:
    """What is wrong with the term list itself."""
    for term in terms:
        if not term.zh or not (CJK.search(term.zh) or term.zh == term.en):  # or a name kept: Tensor Core
            yield f"{term.en}: no Chinese word"
        if not (term.reject or term.patterns or term.english):
            yield f"{term.en}: rejects nothing"
        if len(term.shows) != len(term.patterns):
            yield f"{term.en}: one example in `shows` for each pattern"
        for example, pattern in zip(term.shows, term.patterns, strict=False):
            if not pattern.search(example):
                yield f"{term.en}: {pattern.pattern!r} does not catch its example {example!r}"
        for text in (term.zh, term.note):
            if check_text(text, terms):
                yield f"{term.en}: {text!r} uses a rejected variant"
    chosen = {term.en.split(" (")[0]: term.zh for term in terms}
    for concept, word in REQUIRED.items():
        if concept not in chosen or (word is not None and chosen[concept] != word):
            yield f"{concept}: the list must choose {word or 'a word'}"
    if not any(term.en.startswith("tracing") for term in terms) or not any("倍" in term.zh for term in terms):
        yield "no term for tracing, or no rule for 'N 倍' comparisons"


@rule("zh-terms-list", "docs/zh/terms.toml: one Chinese word per term, each rejecting something, examples caught")
def zh_terms_list(root: Path) -> Iterator[Finding]:
    for problem in list_problems(load_terms(root / TERMS_FILE)):
        yield Finding(TERMS_FILE, None, "zh-terms-list", problem, "fix the term list")
