"""Run All twice in one kernel: what a student does after changing a parameter (the README says "run it again").

The second run must pass as the first did - no warning that TensorFlow shows once per process, no
configuration refused because the runtime has started, no stale file. Each notebook here runs all its
cells twice in one kernel (nbclient, smoke mode, offline), and its checkpoint must pass both times.
"""

from __future__ import annotations

import json

import nbformat
import pytest
from nbclient import NotebookClient

from ..conftest import ROOT

pytestmark = [pytest.mark.notebook, pytest.mark.timeout(600)]
# The English notebooks: a Chinese notebook runs the same code (tests/test_translations.py compares the syntax
# trees), and what a second run can trip over - per-process state - is in the code, not in its words.
AGAIN = ["01_install_versions", "02_verify_gpu", "03_memory", "04_dense_noise_vs_zeros", "05_cnn_cpu_vs_gpu",
         "06_tensorboard", "07_beyond_one_gpu"]


@pytest.mark.parametrize("name", AGAIN)
def test_run_all_twice_in_one_kernel(name, tmp_path, monkeypatch):
    monkeypatch.setenv("COURSE_SMOKE", "1")
    record = tmp_path / "results" / f"{name.replace('/', '-')}.json"
    monkeypatch.setenv("COURSE_RESULTS_FILE", str(record))
    path = ROOT / "notebooks" / f"{name}.ipynb"
    notebook = nbformat.read(path, as_version=4)
    client = NotebookClient(notebook, timeout=300, kernel_name="python3", resources={"metadata": {"path": path.parent}})
    passed = []
    with client.setup_kernel():
        for _ in range(2):
            for index, cell in enumerate(notebook.cells):
                client.execute_cell(cell, index)  # raises CellExecutionError, with the cell, on any error
            passed.append(json.loads(record.read_text(encoding="utf-8"))["results"]["checkpoint_passed"])
            record.unlink()
    assert passed == [True, True]
