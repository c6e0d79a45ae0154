"""The course's lint: the rules its pages, notebooks and translations follow, checked on the repository as it is.

Like TensorFlow's nblint (https://github.com/tensorflow/docs, tools/tensorflow_docs/tools/nblint): each rule is a
small function with a stable code and a one-line description; a finding prints as
``path:line: CODE what is wrong - what to do``. The tests check code; this checks what is written (wording, links,
terms, budgets, translations in step). ``make lint`` runs it after ruff.

    python scripts/course_lint.py                # every rule; exit 1 if anything is found
    python scripts/course_lint.py --list         # the rules: code and description
    python scripts/course_lint.py --rule zh-term # one rule (repeatable)
    python scripts/course_lint.py --root DIR     # another checkout (the tests use a copy)

The rules live in lint_pages.py (links, standalone files, glossary, troubleshooting), lint_claims.py (what the docs
say about the code), lint_zh.py and lint_terms.py (the Chinese edition), lint_notebooks.py (notebooks as stored).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import lint_claims
import lint_notebooks
import lint_pages
import lint_terms
import lint_zh
from lint_base import ROOT, Finding, Rule

RULES: list[Rule] = [*lint_pages.RULES, *lint_claims.RULES, *lint_zh.RULES, *lint_terms.RULES, *lint_notebooks.RULES]
CODES = {r.code: r for r in RULES}


def run(root: Path, codes: list[str] | None = None) -> list[Finding]:
    """Every finding of the rules named by ``codes`` (default: all) on the checkout at ``root``."""
    return [finding for r in RULES if codes is None or r.code in codes for finding in r.check(root)]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="course_lint", description=__doc__.split("\n\n")[0])
    parser.add_argument("--list", action="store_true", help="print the rules and exit")
    parser.add_argument("--rule", action="append", metavar="CODE", help="run only this rule (repeatable)")
    parser.add_argument("--root", type=Path, default=ROOT, help="the checkout (default: this one)")
    args = parser.parse_args(argv)
    if args.list:
        for r in RULES:
            print(f"{r.code:<20} {r.description}")
        return 0
    unknown = sorted(set(args.rule or ()) - set(CODES))
    if unknown:
        parser.error(f"no rule {', '.join(unknown)}: `--list` names them")
    found = run(args.root.resolve(), args.rule)
    for finding in found:
        print(finding)
    if found:
        print(f"course_lint: {len(found)} finding(s)", file=sys.stderr)
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
