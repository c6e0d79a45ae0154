"""Notebook 06: its TensorBoard cell never runs unattended, and its recorded results hold what it teaches."""

from __future__ import annotations

import ast
import json
import os

import pytest

from course_utils.batch.runner import run_notebook

from .conftest import ROOT

NOTEBOOK = ROOT / "notebooks" / "06_tensorboard.ipynb"


def cells():
    return [c for c in json.loads(NOTEBOOK.read_text())["cells"] if c["cell_type"] == "code"]


def parameters() -> dict:
    source = "".join(cells()[0]["source"])
    return {n.targets[0].id: ast.literal_eval(n.value) for n in ast.parse(source).body}


def test_the_tensorboard_cell_is_guarded_three_ways():
    assert parameters()["LAUNCH_TENSORBOARD"] is False, "off unless a student turns it on"
    starting = [c for c in cells() if any(s in "".join(c["source"]) for s in ("%tensorboard", "TensorBoardServer("))]
    assert len(starting) == 1, "one cell starts a server"
    cell = starting[0]
    assert {"nbval-skip", "skip-execution"} <= set(cell["metadata"]["tags"])
    source = "".join(cell["source"])
    assert source.lstrip().splitlines()[1].startswith("if LAUNCH_TENSORBOARD:"), "the code checks too"


def test_logs_go_to_a_git_ignored_folder_by_default():
    assert parameters()["LOG_DIR"] == "logs"
    assert "notebooks/logs/" in (ROOT / ".gitignore").read_text().splitlines()


@pytest.mark.notebook
@pytest.mark.timeout(900)
def test_unattended_run_records_what_it_teaches_and_starts_no_server(tmp_path):
    psutil = pytest.importorskip("psutil")
    logs = tmp_path / "tb-logs"  # conftest's COURSE_LOG_DIR: a relative LOG_DIR lands here
    assert os.environ["COURSE_LOG_DIR"] == str(logs)
    # Even with the switch on, papermill (through nbclient) skips the cell tagged skip-execution.
    record = run_notebook(NOTEBOOK, tmp_path / "out", smoke=True, timeout=600, parameters={"LAUNCH_TENSORBOARD": True})
    assert record.status == "ok", f"{record.error} (see {record.executed})"
    results = record.results
    assert results["checkpoint_passed"] is True
    assert results["runs"] == ["cnn", "dense_noise", "dense_zeros"]
    assert results["reader_matches_history"] is True and results["series_compared"] == 12
    assert results["histogram_tags"]["dense_noise/train"] == 4 and results["histogram_tags"]["cnn/train"] == 10
    start, stop = results["profile_batch"]
    assert len(results["profiled_steps"]) == stop - start + 1
    trace = logs / "logs" / results["trace_file"]
    assert trace.is_file() and trace.stat().st_size == results["trace_bytes"] > 0
    assert trace.match("cnn/train/plugins/profile/*/*.xplane.pb")

    executed = json.loads((tmp_path / "out" / "executed" / NOTEBOOK.name).read_text())
    (cell,) = [c for c in executed["cells"] if c["cell_type"] == "code" and "%tensorboard" in "".join(c["source"])]
    assert cell["execution_count"] is None and cell["outputs"] == [], "the server cell did not run"
    servers = [p for p in psutil.process_iter(["cmdline"]) if any(str(logs) in a for a in (p.info["cmdline"] or []))]
    assert servers == [], "no TensorBoard was left serving the notebook's logs"
