"""Runs at once never share a folder: notebook 06 at two grid points with ``--jobs 2``.

Notebook 06 writes TensorBoard logs into a relative ``LOG_DIR`` and empties each run's folder
first. Before every run had a log folder of its own, two runs at once wrote into, and emptied,
the same ``notebooks/logs``. Here the real ``course run`` runs two seeds side by side; each run
must read back exactly the logs it wrote, every file must stay inside ``--out``, and nothing
may appear next to the notebooks.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from datetime import datetime
from pathlib import Path

import pytest

from ..conftest import ROOT

pytestmark = [pytest.mark.notebook, pytest.mark.timeout(900)]


def _files(folder: Path) -> set[str]:
    return {str(p.relative_to(folder)) for p in folder.rglob("*") if ".ipynb_checkpoints" not in p.parts}


def test_two_runs_of_notebook_06_at_once_keep_their_own_logs(tmp_path):
    out = tmp_path / "out"
    grid = tmp_path / "seeds.yaml"
    grid.write_text("notebooks: [06_tensorboard]\nparameters:\n  SEED: [0, 1]\n")
    env = {k: v for k, v in os.environ.items() if k not in ("COURSE_LOG_DIR", "COURSE_RESULTS_DIR", "COURSE_SMOKE")}
    env.update(COURSE_OFFLINE="1", KERAS_HOME=str(tmp_path / "keras-home"), COURSE_HOME=str(tmp_path / "home"))
    before = _files(ROOT / "notebooks")

    done = subprocess.run(
        [sys.executable, "-m", "course_utils", "run", "--grid", str(grid), "--smoke", "--jobs", "2",
         "--out", str(out), "--timeout", "600"],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=840,
    )

    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    runs = json.loads((out / "results.json").read_text())["runs"]
    assert [r["parameters"]["SEED"] for r in runs] == [0, 1] and all(r["status"] == "ok" for r in runs)
    (first, first_s), (second, _) = sorted((datetime.fromisoformat(r["started"]), r["duration_s"]) for r in runs)
    assert len({r["name"] for r in runs}) == 2
    log_dirs = []
    for run in runs:
        log_dir = Path(run["results"]["log_dir"])
        log_dirs.append(log_dir)
        assert log_dir.is_relative_to(out / "tensorboard" / run["name"]), "each run's logs in its own folder"
        assert sorted(p.name for p in log_dir.iterdir()) == ["generator", "tf_data"]
        assert run["results"]["reader_matches_history"] is True, "the logs read back are this run's own"
    assert log_dirs[0] != log_dirs[1]
    assert (second - first).total_seconds() < first_s, "the two runs overlapped in time (--jobs 2)"
    assert _files(ROOT / "notebooks") == before, "nothing written next to the notebooks"
    assert not (tmp_path / "home").exists() or not any((tmp_path / "home").iterdir()), "nothing outside --out"
