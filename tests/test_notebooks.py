"""The course notebooks: stored clean and following the conventions (static checks; nothing is executed here).

The structural checks run over both editions: the English notebooks and the Chinese ones (notebooks/zh/).
The header's English wording is checked in English only; a Chinese header must have the same parts
(tests/test_translations.py checks that the rest of each Chinese notebook is in step).

Running them is the job of the tiers: papermill (tests/tiers/test_course_run.py, ``make papermill``),
nbval (``make nbval``) and the browser (tests/test_browser.py, ``make browser``).
"""

from __future__ import annotations

import ast
import json
import re

import pytest

from .conftest import NOTEBOOKS, ROOT, ZH_NOTEBOOKS

EDITIONS = [*NOTEBOOKS, *ZH_NOTEBOOKS]


def edition_id(path) -> str:
    return f"zh/{path.stem}" if path.parent.name == "zh" else path.stem


def load(path):
    return json.loads(path.read_text())


def code_cells(nb):
    return [c for c in nb["cells"] if c["cell_type"] == "code"]


def source(cell) -> str:
    return "".join(cell["source"])


def test_there_are_notebooks():
    assert NOTEBOOKS, "notebooks/ holds the course"


@pytest.mark.parametrize("path", EDITIONS, ids=edition_id)
def test_stored_without_outputs(path):
    for i, cell in enumerate(code_cells(load(path))):
        assert cell["outputs"] == [], f"{path.name} code cell {i} has stored outputs: strip them"
        assert cell["execution_count"] is None, f"{path.name} code cell {i} has an execution count"


@pytest.mark.parametrize("path", EDITIONS, ids=edition_id)
def test_conventions(path):
    nb = load(path)
    # cell 0 holds the Colab, Kaggle and Binder badges (generated: tests/test_notebook_links.py); the title follows
    title = nb["cells"][1]
    assert title["cell_type"] == "markdown" and source(title).startswith(f"# {path.stem[:2]} · "), "the title second"
    cells = code_cells(nb)
    # the generated hosted-setup cell comes first, then the parameters and the setup cell
    assert cells[0]["metadata"].get("tags", []) == ["hosted-setup"], "first code cell: the hosted setup"
    params, setup_cell = cells[1], cells[2]
    assert "parameters" in params["metadata"].get("tags", []), "second code cell is tagged 'parameters'"
    for node in ast.parse(source(params)).body:
        assert isinstance(node, ast.Assign), f"parameters cell holds assignments only: {ast.dump(node)[:60]}"
        ast.literal_eval(node.value)  # literals only, so papermill can override them
        assert all(isinstance(t, ast.Name) and t.id.isupper() for t in node.targets), "UPPER_CASE names"
    assert re.search(rf'course_utils\.setup\(\s*globals\(\), "{path.stem}"', source(setup_cell)), "setup is next"
    language = "zh-CN" if path.parent.name == "zh" else "en"
    assert f'language="{language}"' in source(setup_cell), f'the setup call says language="{language}"'
    call = source(setup_cell)
    assert "smoke=" not in call and "key_results=" not in call, "smoke caps and key results: in its lesson file"
    # papermill must see every parameter (it silently skips a line it cannot parse, e.g. "=" in a comment).
    import papermill

    declared = [t.id for node in ast.parse(source(params)).body for t in node.targets]
    assert sorted(papermill.inspect_notebook(str(path))) == sorted(declared), "papermill cannot parse a parameter line"
    assert "checkpoint(" in source(cells[-1]), "the last code cell is the checkpoint"


def test_tests_that_run_whole_notebooks_live_in_the_papermill_tier():
    """`make papermill` collects tests/tiers/ only and `make unit` skips `notebook` tests: elsewhere none would run."""
    tests = ROOT / "tests"
    stray = [
        str(path.relative_to(ROOT))
        for path in sorted(tests.rglob("test_*.py"))
        if path.relative_to(tests).parts[0] != "tiers" and re.search(r"mark\.notebook\b", path.read_text())
    ]
    assert stray == [], "move tests marked `notebook` to tests/tiers/"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_the_header_says_how_long_it_takes_and_which_parameters_to_try(path):
    """The title cell: what you learn, prerequisites, time (CPU smoke, CPU full, GPU), parameters to try."""
    import ast
    import re

    cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
    header = "".join(cells[1]["source"])
    assert header.startswith(f"# {path.name[:2]} · ")
    assert "**What you learn**" in header
    assert re.search(r"\*\*(Prerequisites|Before you start)", header), "say what to know or do first"
    time = header[header.index("**Time"):header.index("**Parameters to try")]
    assert re.search(r"smoke", time) and re.search(r"full", time) and "GPU" in time, time
    assert re.search(r"\d+(\.\d+)?(-\d+)? ?(s|seconds?|minutes?)\b", time), "a measured time, with its unit"
    (params,) = [c for c in cells if "parameters" in c.get("metadata", {}).get("tags", [])]
    names = {t.id for n in ast.parse("".join(params["source"])).body if isinstance(n, ast.Assign) for t in n.targets}
    to_try = re.findall(r"(?m)^- `([A-Z][A-Z0-9_]*)\b", header[header.index("**Parameters to try"):])
    assert len(set(to_try)) >= 2 and set(to_try) <= names, (to_try, sorted(names))


LABEL = re.compile(r"(?m)^\*\*([^*\n]+)\*\*")  # a bold label that starts a line: **What you learn**
UPPER_NAME = re.compile(r"`([A-Z][A-Z0-9_]*)\b")


def header_parts(header: str) -> list[tuple[str, str]]:
    """The title cell cut at its bold labels: (label, the text from it to the next label)."""
    found = list(LABEL.finditer(header))
    ends = [m.start() for m in found[1:]] + [len(header)]
    return [(m.group(1), header[m.start():end]) for m, end in zip(found, ends, strict=True)]


@pytest.mark.parametrize("path", ZH_NOTEBOOKS, ids=edition_id)
def test_the_chinese_header_has_the_parts_of_the_english_one(path):
    """What you learn (as many points), before you start, time (smoke, full, GPU, measured), parameters to try."""
    english = header_parts(source(load(path.parent.parent / path.name)["cells"][1]))
    chinese = header_parts(source(load(path)["cells"][1]))
    assert len(chinese) == len(english), ([label for label, _ in english], [label for label, _ in chinese])
    for (label, en_text), (zh_label, zh_text) in zip(english, chinese, strict=True):
        if label == "What you learn":
            assert zh_text.count("\n- ") == en_text.count("\n- "), f"{zh_label}: as many points as {label!r}"
        elif label.startswith("Time"):
            assert "冒烟" in zh_text and "完整" in zh_text and "GPU" in zh_text, f"{zh_label}: smoke, full run, GPU"
            measured = re.search(r"\d+(\.\d+)?(-\d+)? ?(秒|分钟|小时)", zh_text)
            assert measured, f"{zh_label}: a measured time, with its unit"
        elif label.startswith("Parameters to try"):
            assert set(UPPER_NAME.findall(zh_text)) == set(UPPER_NAME.findall(en_text)), f"{zh_label}: same parameters"
