"""The nbval tier's second run (tests/tiers/nbval_again.py): the cells again in the same kernel, each run's checkpoint
read from the notebook's record - shown on small planted notebooks, one that passes and one whose second run fails."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_notebook

from .conftest import ROOT

RECORD = """import json, os, pathlib
folder = pathlib.Path(os.environ["COURSE_RESULTS_DIR"]); folder.mkdir(parents=True, exist_ok=True)
(folder / "{name}.json").write_text(json.dumps({{"results": {{"checkpoint_passed": {passed}}}}}))"""


def notebook(folder, name, *sources):
    nb = new_notebook(cells=[new_code_cell(source) for source in sources])
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    path = folder / f"{name}.ipynb"
    nbformat.write(nb, path)
    return path


@pytest.fixture(scope="module")
def planted(tmp_path_factory) -> tuple[list[tuple[str, str]], list, Path]:
    """The outcomes of one ``pytest --nbval -p tests.tiers.nbval_again`` (one kernel start each) on three planted
    notebooks, the records left after it and the folder of the kept first runs: "once" fails its second run;
    "silent" writes no record; "shown" prints, skips a cell and shows a value, and passes twice."""
    folder = tmp_path_factory.mktemp("nbval")
    # "runs" survives from the first run only when the second runs in the same kernel
    once = notebook(folder, "once", "runs = globals().get('runs', 0) + 1",
                    RECORD.format(name="once", passed="runs == 1"),  # the checkpoint fails in the second run
                    "assert runs == 1, 'a second run in the same kernel'")
    silent = notebook(folder, "silent", "x = 1")
    shown = notebook(folder, "shown", "runs = globals().get('runs', 0) + 1\nprint('run', runs)",
                     "# NBVAL_SKIP\nprint('never')", "runs * 10", RECORD.format(name="shown", passed="True"))
    env = dict(os.environ, COURSE_RESULTS_DIR=str(folder / "results"), PYTHONPATH=str(ROOT),
               COURSE_NBVAL_KEEP=str(folder / "kept"))
    done = subprocess.run([sys.executable, "-m", "pytest", "--nbval", "-p", "tests.tiers.nbval_again", "-v",
                           "-p", "no:cacheprovider", "--rootdir", str(folder), "-c", os.devnull, once, silent, shown],
                          cwd=folder, env=env, capture_output=True, text=True, timeout=300)
    found = re.findall(r"::(?:ipynb::)?(.+?) (PASSED|FAILED|ERROR)", done.stdout)  # each test's name and outcome
    assert found, done.stdout + done.stderr
    return found, list((folder / "results").glob("*.json")), folder / "kept"


def test_each_notebook_runs_twice_in_one_kernel_and_each_checkpoint_is_read(planted):
    found, left, _ = planted
    assert found[:8] == [
        ("Cell 0", "PASSED"), ("Cell 1", "PASSED"), ("Cell 2", "PASSED"), ("checkpoint, first run", "PASSED"),
        ("Cell 0 again", "PASSED"), ("Cell 1 again", "PASSED"), ("Cell 2 again", "FAILED"),
        ("checkpoint, second run", "FAILED"),
    ]
    assert left == [], "each check removes the record it read (or keeps the first run's)"


def test_a_notebook_that_wrote_no_record_fails_its_checkpoint(planted):
    found, _, _ = planted
    assert found[8:10] == [("Cell 0", "PASSED"), ("checkpoint, first run", "FAILED")]


def test_the_first_run_is_kept_as_an_executed_notebook_and_its_record(planted):
    found, _, kept = planted
    assert found[12:] == [(name, "PASSED") for name in ("Cell 0", "Cell 2", "Cell 3", "checkpoint, first run",
                                                         "Cell 0 again", "Cell 2 again", "Cell 3 again",
                                                         "checkpoint, second run")], "NBVAL_SKIP: cell 1 skipped"
    executed = nbformat.read(kept / "executed" / "shown.ipynb", as_version=4)
    cells = executed.cells
    assert [c.execution_count for c in cells] == [1, None, 2, 3], "the skipped cell has no number"
    assert cells[0].outputs[0].text == "run 1\n", "the first run's output, not the second's"
    assert cells[1].outputs == [] and cells[2].outputs[0].data["text/plain"] == "10"
    nbformat.validate(executed)
    assert json.loads((kept / "results" / "shown.json").read_text())["results"]["checkpoint_passed"] is True
    # a run that wrote no record is kept too, as course run keeps a failed run: its outputs show where it stopped
    assert (kept / "executed" / "silent.ipynb").is_file() and not (kept / "results" / "silent.json").exists()
