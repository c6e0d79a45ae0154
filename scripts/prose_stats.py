"""How long each notebook is, and how much of its code is TensorFlow: the lesson budget.

    python scripts/prose_stats.py [NOTEBOOK ...]     (default: notebooks/*.ipynb)

Words, the budget's measure (``wc_words``): what `wc -w` counts in the markdown cells, with the badge cell
(tagged ``links``) and fenced code blocks left out, so anyone can check it with standard tools.

Prose: the text a student reads - markdown cells, without code blocks, URLs, tables' rules and
markup. A sentence ends at '.', '!' or '?' followed by a space or a line end, or at a blank
line or a list item. Per notebook: words, sentences, mean words per sentence, and how many
sentences have more than 25 words; the minutes the header promises a student.

Code (``code_stats``), over the code cells a student reads - not the generated hosted-setup cell,
not the parameters cell: calls of TensorFlow and Keras against calls of the course's helpers, and
the share of lines that are bookkeeping. A call counts by the name it starts from: ``tf``,
``keras`` and what was imported from them; ``course``, ``course_utils`` and what was imported
from it; and a variable assigned from such a call counts as its source (``model = keras.Sequential()``
makes ``model.fit()`` a Keras call). Bookkeeping lines: the ``course_utils.setup(...)`` statement with
its import, and every cell that starts with ``# course bookkeeping``; ``course.record`` and
``course.checkpoint`` belong in those cells (``misplaced`` lists any found elsewhere).
``scripts/lint_notebooks.py`` holds the limits (``make lint``).
"""

from __future__ import annotations

import ast
import json
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
LONG = 25
BOOKKEEPING = "# course bookkeeping"
TF_MODULES = ("tensorflow", "keras")
HELPER_MODULES = ("course_utils",)
_MINUTES = re.compile(r"About (\d+) minutes for a student")


def prose(notebook: Path) -> str:
    cells = json.loads(notebook.read_text(encoding="utf-8"))["cells"]
    text = "\n\n".join("".join(c["source"]) for c in cells if c["cell_type"] == "markdown")
    text = re.sub(r"```.*?```", " ", text, flags=re.S)  # code blocks
    text = re.sub(r"\[!\[[^\]]*\]\([^)]*\)\]\([^)]*\)", " ", text)  # badges
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", text)  # links: keep their words
    text = re.sub(r"https?://\S+", " ", text)
    text = re.sub(r"(?m)^\s*\|?[-:| ]+\|?\s*$", "\n\n", text)  # table rules
    text = re.sub(r"(?m)^\s*(#+|[-*]|\d+\.)\s+", "\n\n", text)  # headings and list items start sentences
    text = text.replace("|", "\n\n")  # table cells
    return re.sub(r"[*_`>]", "", text)


def wc_words(notebook: Path) -> int:
    """Words as `wc -w` counts them (runs of non-space) in the markdown cells, less the badge cell and code blocks."""
    cells = json.loads(notebook.read_text(encoding="utf-8"))["cells"]
    text = "\n".join("".join(c["source"]) for c in cells if c["cell_type"] == "markdown" and "links" not in _tags(c))
    return len(re.sub(r"```.*?```", " ", text, flags=re.S).split())


def sentences(text: str) -> list[list[str]]:
    found = []
    for block in re.split(r"\n\s*\n", text):
        for sentence in re.split(r"(?<=[.!?])\s+", " ".join(block.split())):
            words = re.findall(r"[A-Za-z0-9][\w'.,/+-]*", sentence)
            if words:
                found.append(words)
    return found


def stats(notebook: Path) -> dict[str, float]:
    found = sentences(prose(notebook))
    words = sum(len(s) for s in found)
    return {
        "words": words,
        "sentences": len(found),
        "mean": round(words / len(found), 1) if found else 0.0,
        "long": sum(len(s) > LONG for s in found),
    }


def minutes(notebook: Path) -> int | None:
    """The minutes the header cell promises a student ("About 30 minutes for a student"), or None."""
    cells = json.loads(notebook.read_text(encoding="utf-8"))["cells"]
    header = next((c for c in cells if c["cell_type"] == "markdown" and "links" not in _tags(c)), None)
    found = _MINUTES.search("".join(header["source"])) if header else None
    return int(found.group(1)) if found else None


def _tags(cell: dict) -> list[str]:
    return cell.get("metadata", {}).get("tags", [])


def _python(source: str) -> str:
    """A cell as Python: a %%writefile cell is its program; other magic and shell lines become blank."""
    first, _, body = source.partition("\n")
    if first.startswith("%%writefile"):
        return body
    return "\n".join("" if line.lstrip().startswith(("%", "!")) else line for line in source.splitlines())


def _root(node: ast.AST) -> str | None:
    """The name an expression starts from: ``tf`` for ``tf.config.list_physical_devices``."""
    while isinstance(node, (ast.Attribute, ast.Call, ast.Subscript)):
        node = node.func if isinstance(node, ast.Call) else node.value
    return node.id if isinstance(node, ast.Name) else None


def _code_lines(source: str) -> int:
    return sum(1 for line in source.splitlines() if line.strip() and not line.strip().startswith("#"))


def code_stats(notebook: Path) -> dict[str, object]:
    """TensorFlow/Keras calls, helper calls, code lines and bookkeeping lines of a notebook (see the module doc)."""
    cells = json.loads(notebook.read_text(encoding="utf-8"))["cells"]
    kinds: dict[str, str] = {}  # name -> "tf" or "helper"
    counts = {"tf": 0, "helper": 0}
    lines = bookkeeping = 0
    misplaced = []
    for index, cell in enumerate(cells):
        if cell["cell_type"] != "code" or {"hosted-setup", "parameters"} & set(_tags(cell)):
            continue
        source = "".join(cell["source"])
        lines += _code_lines(source)
        keeping = source.lstrip().startswith(BOOKKEEPING)
        if keeping:
            bookkeeping += _code_lines(source)
        tree = ast.parse(_python(source))
        for node in ast.walk(tree):
            if isinstance(node, ast.Import | ast.ImportFrom):
                module = node.module if isinstance(node, ast.ImportFrom) else None
                for alias in node.names:
                    top = (module or alias.name).split(".")[0]
                    kind = "tf" if top in TF_MODULES else "helper" if top in HELPER_MODULES else None
                    if kind:
                        kinds[alias.asname or alias.name.split(".")[0]] = kind
            elif isinstance(node, ast.Assign) and isinstance(node.value, ast.Call):
                kind = kinds.get(_root(node.value) or "")
                for target in node.targets:
                    for name in ast.walk(target):
                        if isinstance(name, ast.Name) and kind:
                            kinds[name.id] = kind
        for node in ast.walk(tree):
            if isinstance(node, ast.Call):
                kind = kinds.get(_root(node.func) or "")
                if kind:
                    counts[kind] += 1
                called = ast.unparse(node.func)
                if called in ("course.record", "course.checkpoint") and not keeping:
                    misplaced.append(f"cell {index}: {called}")
            if not keeping and isinstance(node, ast.stmt) and "course_utils" in ast.unparse(node).split("(")[0] and (
                    isinstance(node, ast.Import) or "setup" in ast.unparse(node).split("(")[0]):
                bookkeeping += node.end_lineno - node.lineno + 1
    return {"tf_calls": counts["tf"], "helper_calls": counts["helper"], "code_lines": lines,
            "bookkeeping_lines": bookkeeping, "bookkeeping": round(bookkeeping / lines, 3) if lines else 0.0,
            "misplaced": misplaced}


def main(argv: list[str]) -> int:
    paths = [Path(a) for a in argv] or sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb"))
    print(f"{'notebook':<26} {'wc -w':>6} {'words':>6} {'sentences':>9} {'mean':>5} {'>' + str(LONG) + ' words':>9} "
          f"{'minutes':>7} {'helper/TF calls':>15} {'bookkeeping':>11}")
    total = 0
    for path in paths:
        s, c = stats(path), code_stats(path)
        total += wc_words(path)
        calls = f"{c['helper_calls']}/{c['tf_calls']}"
        share = f"{c['bookkeeping']:.0%} of {c['code_lines']}"
        print(f"{path.stem:<26} {wc_words(path):>6} {s['words']:>6} {s['sentences']:>9} {s['mean']:>5} {s['long']:>9} "
              f"{minutes(path) or '-':>7} {calls:>15} {share:>11}")
    print(f"{'all':<26} {total:>6}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
