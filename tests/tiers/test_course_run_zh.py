"""The Chinese edition: every notebooks/zh/ notebook runs once, and speaks Chinese.

``make hosted`` runs this, in its environment with Colab's and Kaggle's versions (scripts/hosted.sh), after the
papermill tier's English run (tests/tiers/test_course_run.py): one run per edition. A module-scoped
fixture runs ``course run --smoke notebooks/zh/*.ipynb --out OUT`` (OUT: ``$COURSE_CI_ZH_OUT``, else
the English OUT with ``-zh`` added: ``build/ci/course-zh``), offline, as the English run is. Then:

- the command exits 0 and ran every Chinese notebook once, in smoke mode;
- each notebook passed its checkpoint, with no error output and every cell run;
- it recorded the same result names as the English notebook did in the English run (``$COURSE_CI_OUT``):
  result names are data the report and the tests read, never translated; and it declares the same key results;
- its executed output is Chinese: CJK characters, and the checkpoint line in Chinese ("检查点通过",
  course_utils's catalogue), because the setup cell says ``language="zh-CN"``;
- no plot drew boxes: matplotlib's "Glyph ... missing from font" warning appears in no output
  (the Chinese font: course_utils.core.plot_fonts; CI installs fonts-wqy-microhei).

The browser tier shows one of these executed notebooks in JupyterLab (tests/test_browser.py).
``COURSE_CI_REUSE=1`` checks the results already in OUT instead of running again.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

import pytest

from course_utils.notebook import lesson_file

from ..conftest import NOTEBOOKS, ZH_NOTEBOOKS
from .test_course_run import OUT as EN_OUT
from .test_course_run import (
    RUN_TIMEOUT_S,
    CourseRun,
    code_cells,
    passed,
    run_course,
    source,
)

OUT = Path(os.environ.get("COURSE_CI_ZH_OUT") or f"{EN_OUT}-zh").resolve()
CJK = re.compile(r"[\u4e00-\u9fff]")
CHECKPOINT_LINE = "检查点通过"  # "Checkpoint passed" in course_utils/locale/zh_CN/LC_MESSAGES/course.po

pytestmark = [pytest.mark.notebook, pytest.mark.timeout(RUN_TIMEOUT_S + 120)]


@pytest.fixture(scope="module")
def zh_run() -> CourseRun:
    return run_course([str(p) for p in ZH_NOTEBOOKS], OUT)


@pytest.fixture(scope="module")
def english_runs() -> dict[str, dict[str, Any]]:
    """The English run's records (this tier's first module wrote them), by notebook."""
    report = EN_OUT / "results.json"
    if not report.is_file():
        pytest.fail(f"no English run in {EN_OUT} to compare with: run make papermill (or "
                    f"pytest tests/tiers/test_course_run.py) first")
    return {run["notebook"]: run for run in json.loads(report.read_text())["runs"]}


def outputs_text(executed: dict[str, Any]) -> str:
    """Everything the notebook printed or showed as text, stdout and stderr."""
    parts = []
    for cell in code_cells(executed):
        for output in cell["outputs"]:
            if "text" in output:
                parts.append("".join(output["text"]))
            parts.append("".join(output.get("data", {}).get("text/plain", "")))
    return "".join(parts)


def test_course_run_of_the_chinese_notebooks_exits_0(zh_run):
    zh_run.check_exit_0()


def test_every_chinese_notebook_ran_once_in_smoke_mode(zh_run):
    assert [p.name for p in ZH_NOTEBOOKS] == [p.name for p in NOTEBOOKS], "a Chinese notebook for each English one"
    meta = zh_run.report["meta"]
    assert meta["smoke"] is True and meta["interrupted"] is False
    assert [run["notebook"] for run in zh_run.report["runs"]] == [p.stem for p in ZH_NOTEBOOKS]
    assert all(run["smoke"] and run["parameters"] == {} for run in zh_run.report["runs"])


@pytest.mark.parametrize("path", ZH_NOTEBOOKS, ids=lambda p: f"zh/{p.stem}")
def test_chinese_notebook_passed_and_speaks_chinese(zh_run, path):
    run = passed(zh_run, path.stem)
    results = run["results"]
    assert results.get("checkpoint_passed") is True, f"checkpoint failed: {results.get('checkpoint_failed')}"
    executed = json.loads(Path(run["executed"]).read_text())
    assert Path(run["executed"]) == zh_run.out / "executed" / path.name
    for i, cell in enumerate(code_cells(executed)):
        if "skip-execution" not in cell["metadata"].get("tags", []) and source(cell).strip():
            assert cell["execution_count"] is not None, f"code cell {i} did not run"
    outputs = [o for c in code_cells(executed) for o in c["outputs"]]
    assert [o for o in outputs if o["output_type"] == "error"] == []
    text = outputs_text(executed)
    assert len(CJK.findall(text)) >= 20, "the notebook's output is in Chinese"
    last = [c for c in code_cells(executed) if "checkpoint(" in source(c)][-1]
    assert CHECKPOINT_LINE in outputs_text({"cells": [last]}), "the checkpoint summary in Chinese"
    assert "missing from font" not in text, "a plot drew Chinese characters as boxes: no Chinese font"


@pytest.mark.parametrize("path", ZH_NOTEBOOKS, ids=lambda p: f"zh/{p.stem}")
def test_chinese_notebook_records_the_english_result_names(zh_run, english_runs, path):
    run = passed(zh_run, path.stem)
    english = english_runs.get(path.stem)
    assert english is not None, f"the English run in {EN_OUT} has no {path.stem}"
    assert run["key_results"] == english["key_results"] == list(lesson_file(path.stem).KEY_RESULTS)
    assert run["key_meanings"] == english["key_meanings"] == lesson_file(path.stem).KEY_RESULTS
    assert sorted(run["results"]) == sorted(english["results"]), "result names are data: never translated"
