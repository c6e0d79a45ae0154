"""The nbval tier's second run (tests/tiers/nbval_again.py): the cells again in the same kernel, each run's checkpoint
read from the notebook's record - shown on small planted notebooks, one that passes and one whose second run fails."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys

import nbformat
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


def outcomes(tmp_path, *paths, **variables):
    """Each test's name and outcome, from ``pytest --nbval -p tests.tiers.nbval_again -v`` on the notebooks."""
    env = dict(os.environ, COURSE_RESULTS_DIR=str(tmp_path / "results"), PYTHONPATH=str(ROOT), **variables)
    done = subprocess.run([sys.executable, "-m", "pytest", "--nbval", "-p", "tests.tiers.nbval_again", "-v",
                           "-p", "no:cacheprovider", "--rootdir", str(tmp_path), "-c", os.devnull, *map(str, paths)],
                          cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
    found = re.findall(r"::(?:ipynb::)?(.+?) (PASSED|FAILED|ERROR)", done.stdout)
    assert found, done.stdout + done.stderr
    return found


def test_each_notebook_runs_twice_in_one_kernel_and_each_checkpoint_is_read(tmp_path):
    # "runs" survives from the first run only when the second runs in the same kernel
    good = notebook(tmp_path, "good", "runs = globals().get('runs', 0) + 1",
                    RECORD.format(name="good", passed="True"))
    once = notebook(tmp_path, "once", "runs = globals().get('runs', 0) + 1",
                    RECORD.format(name="once", passed="runs == 1"),  # the checkpoint fails in the second run
                    "assert runs == 1, 'a second run in the same kernel'")
    assert outcomes(tmp_path, good, once) == [
        ("Cell 0", "PASSED"), ("Cell 1", "PASSED"), ("checkpoint, first run", "PASSED"),
        ("Cell 0 again", "PASSED"), ("Cell 1 again", "PASSED"), ("checkpoint, second run", "PASSED"),
        ("Cell 0", "PASSED"), ("Cell 1", "PASSED"), ("Cell 2", "PASSED"), ("checkpoint, first run", "PASSED"),
        ("Cell 0 again", "PASSED"), ("Cell 1 again", "PASSED"), ("Cell 2 again", "FAILED"),
        ("checkpoint, second run", "FAILED"),
    ]
    assert not list((tmp_path / "results").glob("*.json")), "each check removes the record it read"


def test_a_notebook_that_wrote_no_record_fails_its_checkpoint(tmp_path):
    silent = notebook(tmp_path, "silent", "x = 1")
    assert outcomes(tmp_path, silent)[1] == ("checkpoint, first run", "FAILED")


def test_the_first_run_is_kept_as_an_executed_notebook_and_its_record(tmp_path):
    kept = tmp_path / "kept"
    shown = notebook(tmp_path, "shown", "runs = globals().get('runs', 0) + 1\nprint('run', runs)",
                     "# NBVAL_SKIP\nprint('never')", "runs * 10", RECORD.format(name="shown", passed="True"))
    assert [outcome for _, outcome in outcomes(tmp_path, shown, COURSE_NBVAL_KEEP=str(kept))].count("FAILED") == 0
    executed = nbformat.read(kept / "executed" / "shown.ipynb", as_version=4)
    cells = executed.cells
    assert [c.execution_count for c in cells] == [1, None, 2, 3], "the skipped cell has no number"
    assert cells[0].outputs[0].text == "run 1\n", "the first run's output, not the second's"
    assert cells[1].outputs == [] and cells[2].outputs[0].data["text/plain"] == "10"
    nbformat.validate(executed)
    assert json.loads((kept / "results" / "shown.json").read_text())["results"]["checkpoint_passed"] is True
    assert not list((tmp_path / "results").glob("*.json")), "the second run's record is removed as before"
