"""The nbval tier's second run (tests/tiers/nbval_again.py): the cells again in the same kernel, each run's checkpoint
read from the notebook's record - shown on small planted notebooks, one that passes and one whose second run fails."""

from __future__ import annotations

import os
import re
import subprocess
import sys

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


def outcomes(tmp_path, *paths):
    """Each test's name and outcome, from ``pytest --nbval -p tests.tiers.nbval_again -v`` on the notebooks."""
    env = dict(os.environ, COURSE_RESULTS_DIR=str(tmp_path / "results"), PYTHONPATH=str(ROOT))
    done = subprocess.run([sys.executable, "-m", "pytest", "--nbval", "-p", "tests.tiers.nbval_again", "-v",
                           "-p", "no:cacheprovider", "--rootdir", str(tmp_path), "-c", os.devnull, *map(str, paths)],
                          cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
    found = re.findall(r"::(?:ipynb::)?(.+?) (PASSED|FAILED|ERROR)", done.stdout)
    assert found, done.stdout + done.stderr
    return found


@pytest.fixture(scope="module")
def planted(tmp_path_factory) -> tuple[list[tuple[str, str]], list]:
    """The outcomes of one nbval run (one pytest, one kernel start each) on three planted notebooks, and the records
    left after it: "good" passes twice; "once" fails its second run; "silent" writes no record."""
    folder = tmp_path_factory.mktemp("nbval")
    # "runs" survives from the first run only when the second runs in the same kernel
    good = notebook(folder, "good", "runs = globals().get('runs', 0) + 1", RECORD.format(name="good", passed="True"))
    once = notebook(folder, "once", "runs = globals().get('runs', 0) + 1",
                    RECORD.format(name="once", passed="runs == 1"),  # the checkpoint fails in the second run
                    "assert runs == 1, 'a second run in the same kernel'")
    silent = notebook(folder, "silent", "x = 1")
    return outcomes(folder, good, once, silent), list((folder / "results").glob("*.json"))


def test_each_notebook_runs_twice_in_one_kernel_and_each_checkpoint_is_read(planted):
    found, left = planted
    assert found[:14] == [
        ("Cell 0", "PASSED"), ("Cell 1", "PASSED"), ("checkpoint, first run", "PASSED"),
        ("Cell 0 again", "PASSED"), ("Cell 1 again", "PASSED"), ("checkpoint, second run", "PASSED"),
        ("Cell 0", "PASSED"), ("Cell 1", "PASSED"), ("Cell 2", "PASSED"), ("checkpoint, first run", "PASSED"),
        ("Cell 0 again", "PASSED"), ("Cell 1 again", "PASSED"), ("Cell 2 again", "FAILED"),
        ("checkpoint, second run", "FAILED"),
    ]
    assert left == [], "each check removes the record it read"


def test_a_notebook_that_wrote_no_record_fails_its_checkpoint(planted):
    found, _ = planted
    assert found[14:16] == [("Cell 0", "PASSED"), ("checkpoint, first run", "FAILED")]
