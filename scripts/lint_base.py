"""What every rule of scripts/course_lint.py shares: the finding, the rule, and the readers of the repository's files.

A rule is a function of the checkout's root that yields findings; each finding names the file and the line (a
notebook: the cell) and prints as ``path:line: CODE what is wrong - what to do``.
"""

from __future__ import annotations

import json
import re
import subprocess
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

import translations  # scripts/translations.py: a notebook's cells, their source and tags

from course_tools import links as notebook_links  # make links: which notebooks there are

ROOT = Path(__file__).resolve().parents[1]
source, tags = translations.source, translations.tags  # a cell's
FENCE = re.compile(r"^```(?P<lang>[^\n]*)\n(?P<body>.*?)^```", re.S | re.M)  # a fenced code block
# Folders that are never shipped, for a copy without git (an unpacked archive).
NOT_SHIPPED = {".git", ".venv", ".venv-hosted", "build", "__pycache__", ".ipynb_checkpoints", ".pytest_cache",
               ".ruff_cache", "node_modules"}


@dataclass(frozen=True)
class Finding:
    """One thing wrong: where (a path from the root, and a line number or ``cell N``), the rule's code, what, and
    what to do."""

    path: str
    line: int | str | None
    code: str
    what: str
    fix: str

    def __str__(self) -> str:
        where = self.path if self.line is None else f"{self.path}:{self.line}"
        return f"{where}: {self.code} {self.what} - {self.fix}"


@dataclass(frozen=True)
class Rule:
    code: str
    description: str
    check: Callable[[Path], Iterable[Finding]]


def rules_of(table: list[Rule]) -> Callable[[str, str], Callable]:
    """A decorator that adds a rule function, with its code and one-line description, to ``table``."""
    def register(code: str, description: str) -> Callable:
        def add(check: Callable[[Path], Iterable[Finding]]) -> Callable[[Path], Iterable[Finding]]:
            table.append(Rule(code, description, check))
            return check
        return add
    return register


# --------------------------------------------------------------------------- text


def read(path: Path) -> str:
    return path.read_text(encoding="utf-8")


def rel(path: Path, root: Path) -> str:
    return path.relative_to(root).as_posix()


def line_at(text: str, index: int) -> int:
    """The 1-based line number of ``text[index]``."""
    return text.count("\n", 0, index) + 1


def blank_code(markdown: str) -> str:
    """The text with its fenced code blocks blanked (their lines kept, so line numbers stay)."""
    return FENCE.sub(lambda m: "\n" * m.group(0).count("\n"), markdown)


def code_blocks(markdown: str) -> list[str]:
    """The fenced code blocks' contents."""
    return [m["body"] for m in FENCE.finditer(markdown)]


def slug(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens."""
    heading = re.sub(r"[`*_]", "", heading.strip().lower())
    return re.sub(r"[^\w\- ]", "", heading).replace(" ", "-")


def anchors(markdown: str) -> set[str]:
    """The headings' anchors and the explicit ones (``<a id="...">``) a Markdown text offers."""
    markdown = blank_code(markdown)
    explicit = set(re.findall(r"<a (?:id|name)=\"([^\"]+)\"", markdown))
    return {slug(h) for h in re.findall(r"^#{1,6} (.+)$", markdown, re.M)} | explicit


def markdown_pages(root: Path) -> list[Path]:
    """The Markdown pages readers open: both READMEs, CONTRIBUTING.md, docs/ and docs/zh/."""
    found = [root / "README.md", root / "README.zh-CN.md", root / "CONTRIBUTING.md",
             *sorted((root / "docs").glob("*.md")), *sorted((root / "docs" / "zh").glob("*.md"))]
    return [path for path in found if path.is_file()]


# --------------------------------------------------------------------------- notebooks


def notebooks(root: Path, chinese: bool = False) -> list[Path]:
    """The numbered notebooks of one edition, as tools/course_tools/links.py finds them."""
    return notebook_links.notebooks(root / "notebooks" / (notebook_links.ZH_FOLDER if chinese else ""))


def cells(path: Path) -> list[dict]:
    return translations.load(path)["cells"]


def markdown_cells(path: Path) -> Iterator[tuple[int, str]]:
    """(index, source) of each markdown cell."""
    return ((i, source(c)) for i, c in enumerate(cells(path)) if c["cell_type"] == "markdown")


# --------------------------------------------------------------------------- shipped files


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


def pieces(path: Path, text: str) -> list[tuple[str | None, str]]:
    """(cell label or None, text) to read: the whole file, or each cell's source for a notebook."""
    if path.suffix == ".ipynb":
        return [(f"cell {i}", source(cell)) for i, cell in enumerate(json.loads(text)["cells"])]

    return [(None, text)]
