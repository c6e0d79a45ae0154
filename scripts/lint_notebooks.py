"""Rules on the notebooks as stored: no outputs, the cells in their places, the header's parts, the lesson budget.

Both editions (notebooks/ and notebooks/zh/) unless a rule says otherwise; running them is the test tiers' job.
The budget's counts come from scripts/prose_stats.py. Part of scripts/course_lint.py (``RULES``).
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from pathlib import Path

import prose_stats  # scripts/prose_stats.py: the lesson budget's counts
from lint_base import Finding, Rule, cells, notebooks, rel, rules_of, source, tags

RULES: list[Rule] = []
rule = rules_of(RULES)

WORDS, COURSE_WORDS, MINUTES, BOOKKEEPING = 1400, 8000, 45, 0.15
# Notebook 01 is about installing: it runs pip, nvidia-smi and the doctor, not TensorFlow, so the calls rule
# (helpers <= TF/Keras) does not apply to it.
CALLS_EXEMPT = {"01_install_versions"}
LABEL = re.compile(r"(?m)^\*\*([^*\n]+)\*\*")  # a bold label that starts a line: **What you learn**
UPPER_NAME = re.compile(r"`([A-Z][A-Z0-9_]*)\b")


def both_editions(root: Path) -> list[Path]:
    return [*notebooks(root), *notebooks(root, chinese=True)]


@rule("nb-outputs", "notebooks are stored without outputs and execution counts")
def stored_outputs(root: Path) -> Iterator[Finding]:
    for path in both_editions(root):
        for index, cell in enumerate(cells(path)):
            if cell["cell_type"] == "code" and (cell["outputs"] or cell["execution_count"] is not None):
                yield Finding(rel(path, root), f"cell {index}", "nb-outputs", "stored with outputs",
                              "clear the outputs before committing")


def parameter_names(code: str) -> tuple[list[str], list[str]]:
    """(the names a parameters cell binds, what in it is not ``UPPER_CASE = literal``)."""
    names, wrong = [], []
    for node in ast.parse(code).body:
        if not isinstance(node, ast.Assign):
            wrong.append(ast.unparse(node)[:60])
            continue
        try:
            ast.literal_eval(node.value)
        except ValueError:
            wrong.append(ast.unparse(node)[:60])
        for target in node.targets:
            if isinstance(target, ast.Name) and target.id.isupper():
                names.append(target.id)
            else:
                wrong.append(ast.unparse(target))
    return names, wrong


def cell_problems(path: Path) -> Iterator[tuple[int | None, str]]:
    """(cell, problem) for each cell out of its place (CONTRIBUTING.md, "A notebook")."""
    found = cells(path)
    code = [i for i, c in enumerate(found) if c["cell_type"] == "code"]
    if found[0]["cell_type"] != "markdown" or tags(found[0]) != ["links"]:
        yield 0, "the first cell is not the badges cell tagged links"
    if found[1]["cell_type"] != "markdown" or not source(found[1]).startswith(f"# {path.stem[:2]} · "):
        yield 1, f"the second cell is not the title '# {path.stem[:2]} · ...'"
    at = [i for i, c in enumerate(found) if "parameters" in tags(c)]
    if len(at) != 1 or at[0] != code[1] or tags(found[code[0]]) != ["hosted-setup"] or code[0] != at[0] - 1:
        yield None, "the code starts: the hosted-setup cell, then the one cell tagged parameters"
        return
    if len([c for c in found if {"links", "hosted-setup"} & set(tags(c))]) != 2:
        yield None, "the generated cells (links, hosted-setup) are there more than once"
    _, wrong = parameter_names(source(found[at[0]]))
    yield from ((at[0], f"the parameters cell binds UPPER_CASE names to literals only: {w}") for w in wrong)
    setup = source(found[code[2]])
    language = "zh-CN" if path.parent.name == "zh" else "en"
    if not re.search(rf'course_utils\.setup\(\s*globals\(\), "{path.stem}"', setup) or \
            f'language="{language}"' not in setup:
        yield code[2], f'the setup cell does not call course_utils.setup(globals(), "{path.stem}", ' \
                       f'language="{language}")'
    if "smoke=" in setup or "key_results=" in setup:
        yield code[2], "smoke caps and key results belong in the lesson file"
    if "checkpoint(" not in source(found[code[-1]]):
        yield code[-1], "the last code cell is not the checkpoint"
    read = [source(found[i]) for i in code if "hosted-setup" not in tags(found[i])]
    if not any("import tensorflow as tf" in text.splitlines() for text in read) or any("course.tf" in t for t in read):
        yield None, "TensorFlow comes from the notebook's own `import tensorflow as tf`, not from setup()"


@rule("nb-cells", "each notebook's cells in their places: badges, title, hosted setup, parameters, setup, checkpoint")
def notebook_cells(root: Path) -> Iterator[Finding]:
    for path in both_editions(root):
        for index, problem in cell_problems(path):
            yield Finding(rel(path, root), None if index is None else f"cell {index}", "nb-cells", problem,
                          'follow CONTRIBUTING.md, "A notebook"')


def header_parts(header: str) -> list[tuple[str, str]]:
    """The title cell cut at its bold labels: (label, the text from it to the next label)."""
    found = list(LABEL.finditer(header))
    ends = [m.start() for m in found[1:]] + [len(header)]
    return [(m.group(1), header[m.start():end]) for m, end in zip(found, ends, strict=True)]


def english_header(header: str, parameters: list[str]) -> Iterator[str]:
    """What you learn, prerequisites, time (smoke, full, GPU, measured), at least two declared parameters to try."""
    if "**What you learn**" not in header or not re.search(r"\*\*(Prerequisites|Before you start)", header):
        yield "no **What you learn** or no **Prerequisites** / **Before you start**"
    if "**Time" not in header or "**Parameters to try" not in header:
        yield "no **Time** or no **Parameters to try**"
        return
    time = header[header.index("**Time"):header.index("**Parameters to try")]
    if not ("smoke" in time and "full" in time and "GPU" in time):
        yield "the time is not given for a smoke run, a full run and a GPU"
    if not re.search(r"\d+(\.\d+)?(-\d+)? ?(s|seconds?|minutes?)\b", time):
        yield "the time is not a measured time with its unit"
    to_try = re.findall(r"(?m)^- `([A-Z][A-Z0-9_]*)\b", header[header.index("**Parameters to try"):])
    if len(set(to_try)) < 2 or not set(to_try) <= set(parameters):
        yield f"parameters to try {to_try}: at least two of the notebook's {parameters}"


def chinese_header(english: str, chinese: str) -> Iterator[str]:
    """The English header's parts: as many points to learn, time (smoke, full, GPU, measured), the same parameters."""
    en, zh = header_parts(english), header_parts(chinese)
    if len(en) != len(zh):
        yield f"parts {[label for label, _ in zh]}; the English header has {[label for label, _ in en]}"
        return
    for (label, en_text), (zh_label, zh_text) in zip(en, zh, strict=True):
        if label == "What you learn" and zh_text.count("\n- ") != en_text.count("\n- "):
            yield f"{zh_label}: not as many points as {label!r}"
        elif label.startswith("Time") and not ("冒烟" in zh_text and "完整" in zh_text and "GPU" in zh_text
                                               and re.search(r"\d+(\.\d+)?(-\d+)? ?(秒|分钟|小时)", zh_text)):
            yield f"{zh_label}: a measured time, with its unit, for a smoke run (冒烟), a full run (完整) and a GPU"
        elif label.startswith("Parameters to try") and set(UPPER_NAME.findall(zh_text)) != set(
                UPPER_NAME.findall(en_text)):
            yield f"{zh_label}: not the English header's parameters"


@rule("nb-header", "the title cell: what you learn, before you start, the time (smoke, full, GPU), parameters to try")
def notebook_headers(root: Path) -> Iterator[Finding]:
    for path in notebooks(root):
        found = cells(path)
        parameters = next((source(c) for c in found if "parameters" in tags(c)), "")
        for problem in english_header(source(found[1]), parameter_names(parameters)[0]):
            yield Finding(rel(path, root), "cell 1", "nb-header", problem, 'follow CONTRIBUTING.md, "A notebook"')
    for path in notebooks(root, chinese=True):
        english = path.parent.parent / path.name
        if english.is_file():
            for problem in chinese_header(source(cells(english)[1]), source(cells(path)[1])):
                yield Finding(rel(path, root), "cell 1", "nb-header", problem, "give the English header's parts")


@rule("word-budget", f"at most {WORDS:,} words of markdown a notebook (as wc -w counts), {COURSE_WORDS:,} in all")
def word_budget(root: Path) -> Iterator[Finding]:
    words = {path: prose_stats.wc_words(path) for path in notebooks(root)}
    for path, count in words.items():
        if count > WORDS:
            yield Finding(rel(path, root), None, "word-budget", f"{count} words of markdown", f"at most {WORDS}: cut")
    if sum(words.values()) > COURSE_WORDS:
        yield Finding("notebooks", None, "word-budget", f"{sum(words.values())} words in all",
                      f"at most {COURSE_WORDS}: cut")


@rule("lesson-budget", f"lessons 01, 02, ...: at most {MINUTES} minutes, helpers <= TensorFlow calls, "
                       f"bookkeeping <= {BOOKKEEPING:.0%}, in its own cells")
def lesson_budget(root: Path) -> Iterator[Finding]:
    paths = notebooks(root)
    if [p.stem[:2] for p in paths] != [f"{n:02d}" for n in range(1, len(paths) + 1)] or not paths:
        yield Finding("notebooks", None, "lesson-budget", f"the lessons are {[p.stem[:2] for p in paths]}",
                      "number them 01, 02, ... without gaps")
    for path in paths:
        name, code, minutes = rel(path, root), prose_stats.code_stats(path), prose_stats.minutes(path)
        if minutes is None or minutes > MINUTES:
            yield Finding(name, "cell 1", "lesson-budget", f"promises {minutes} minutes",
                          f"say 'About N minutes for a student', N <= {MINUTES}")
        if path.stem not in CALLS_EXEMPT and code["helper_calls"] > code["tf_calls"]:
            yield Finding(name, None, "lesson-budget",
                          f"{code['helper_calls']} helper calls, {code['tf_calls']} TensorFlow/Keras calls",
                          "show TensorFlow's own calls instead of helpers")
        if code["bookkeeping"] > BOOKKEEPING:
            yield Finding(name, None, "lesson-budget", f"{code['bookkeeping']:.0%} of the code is bookkeeping",
                          f"at most {BOOKKEEPING:.0%}")
        for misplaced in code["misplaced"]:
            yield Finding(name, None, "lesson-budget", f"{misplaced} outside a '# course bookkeeping' cell",
                          "move it into the bookkeeping cell")
