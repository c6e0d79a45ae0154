"""Compare two `course run` reports, leaving out what differs between any two runs of the same plan.

Used by tests/tools/batch/test_shard.py (merged shards against an unsharded run) and by `make slurm`
(scripts/slurm_check.sh): ``python -m tests.tools.batch.report_diff WHOLE_OUT MERGED_OUT`` prints the
differences and exits 1 when there are any.

Left out: times (``started``, ``finished``, ``duration_s``, the "time (s)" columns, the summary's
"s in all"), peak memory, process ids, and each report's own output folder, written as ``OUT``.
Compared: ``results.json`` and ``report.md`` in full otherwise, the names of the chart files and
the bytes of each chart that does not show memory (matplotlib draws the same numbers the same way).
"""

from __future__ import annotations

import difflib
import hashlib
import json
import re
import sys
from pathlib import Path
from typing import Any

VOLATILE_KEYS = {"started", "finished", "duration_s", "peak_rss_mib", "pid"}
BLANK = "<varies>"


def volatile(name: str) -> bool:
    """Whether a field, column or chart named ``name`` holds a time or a memory peak (any "... memory (MiB)")."""
    return name in VOLATILE_KEYS or name.endswith("time (s)") or "memory" in name


def blank_json(value: Any, out: Path) -> Any:
    """``value`` with every volatile field blanked and ``out`` written as ``OUT``."""
    if isinstance(value, dict):
        return {k: BLANK if volatile(k) else blank_json(v, out) for k, v in value.items()}
    if isinstance(value, list):
        return [blank_json(v, out) for v in value]
    if isinstance(value, str):
        return value.replace(str(out), "OUT")
    return value


def _cells(line: str) -> list[str]:
    """A Markdown table row's cells (``\\|`` inside a cell is not a border)."""
    return [c.strip() for c in re.split(r"(?<!\\)\|", line.strip())[1:-1]]


def blank_markdown(text: str, out: Path) -> str:
    """report.md with the volatile table columns, times and ``out`` blanked."""
    text = text.replace(str(out), "OUT")
    text = re.sub(r"[\d.]+ s in all", f"{BLANK} s in all", text)
    text = re.sub(r"Started \S+, output", f"Started {BLANK}, output", text)
    lines, header = [], None
    for line in text.splitlines():
        if not line.startswith("|"):
            header = None
        elif header is None:
            header = _cells(line)
        elif not line.startswith("|---"):
            cells = _cells(line)
            cells = [BLANK if i < len(header) and volatile(header[i]) else c for i, c in enumerate(cells)]
            line = "| " + " | ".join(cells) + " |"
        lines.append(line)
    return "\n".join(lines)


def differences(first: Path, second: Path) -> list[str]:
    """Unified-diff lines between the two reports once blanked; empty when they agree."""
    first, second = Path(first), Path(second)
    found: list[str] = []
    pairs = {
        "results.json": lambda out: json.dumps(
            blank_json(json.loads((out / "results.json").read_text(encoding="utf-8")), out), indent=1, sort_keys=True
        ),
        "report.md": lambda out: blank_markdown((out / "report.md").read_text(encoding="utf-8"), out),
        "charts/": lambda out: "\n".join(  # each chart's name; its bytes too unless it shows memory
            f"{p.name} {'' if volatile(p.name) else hashlib.sha256(p.read_bytes()).hexdigest()}"
            for p in sorted((out / "charts").glob("*.png"))
        ),
    }
    for name, read in pairs.items():
        a, b = read(first).splitlines(), read(second).splitlines()
        found += difflib.unified_diff(a, b, f"{first}/{name}", f"{second}/{name}", lineterm="", n=1)
    return found


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        print("usage: python -m tests.tools.batch.report_diff FIRST_OUT SECOND_OUT", file=sys.stderr)
        return 2
    found = differences(Path(argv[0]), Path(argv[1]))
    print("\n".join(found) if found else f"the reports agree: {argv[0]} and {argv[1]}")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
