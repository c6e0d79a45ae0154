"""Words and sentence lengths of each notebook's markdown: how easy the prose is to read.

    python scripts/prose_stats.py [NOTEBOOK ...]     (default: notebooks/*.ipynb)

Counts the text a student reads: markdown cells, without code blocks, URLs, tables' rules and
markup. A sentence ends at '.', '!' or '?' followed by a space or a line end, or at a blank
line or a list item. Prints per notebook: words, sentences, mean words per sentence, and how
many sentences have more than 25 words.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
LONG = 25


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


def main(argv: list[str]) -> int:
    paths = [Path(a) for a in argv] or sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb"))
    print(f"{'notebook':<32} {'words':>6} {'sentences':>9} {'mean':>5} {'>' + str(LONG) + ' words':>9}")
    for path in paths:
        s = stats(path)
        print(f"{path.stem:<32} {s['words']:>6} {s['sentences']:>9} {s['mean']:>5} {s['long']:>9}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
