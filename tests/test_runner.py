"""The papermill runner: runs, records, keeps failures, and goes on."""

from __future__ import annotations

import json

from course_utils.runner import main, run_notebook

from .conftest import ROOT

FIXTURES = ROOT / "tests" / "fixtures"


def test_a_passing_run_reads_its_record(tmp_path):
    record = run_notebook(FIXTURES / "ok.ipynb", tmp_path, parameters={"N": 21})
    assert record.status == "ok" and record.error is None
    assert record.results == {"doubled": 42} and record.parameters == {"N": 21}
    assert (tmp_path / "executed" / "ok.ipynb").is_file()


def test_a_failing_run_keeps_its_notebook_and_names_the_error(tmp_path):
    record = run_notebook(FIXTURES / "fails.ipynb", tmp_path, parameters={"N": 3})
    assert record.status == "failed"
    assert "ValueError: deliberate failure with N=3" in record.error and record.error.startswith("cell ")
    executed = json.loads((tmp_path / "executed" / "fails.ipynb").read_text())
    assert any(o["output_type"] == "error" for c in executed["cells"] if c["cell_type"] == "code" for o in c["outputs"])


def test_batch_goes_on_after_a_failure_and_exits_1(tmp_path, capsys):
    code = main([str(FIXTURES / "fails.ipynb"), str(FIXTURES / "ok.ipynb"), "--out", str(tmp_path)])
    assert code == 1
    rows = json.loads((tmp_path / "results.json").read_text())
    assert [(r["notebook"], r["status"]) for r in rows] == [("fails", "failed"), ("ok", "ok")]
    summary = (tmp_path / "summary.md").read_text()
    assert "| fails | failed: cell" in summary and "| ok | ok |" in summary and "doubled=2" in summary
    assert "Results summary:" in capsys.readouterr().out


def test_unknown_notebook_is_rejected_before_running(tmp_path, capsys):
    import pytest

    with pytest.raises(SystemExit, match="no notebook 'nope'"):
        main(["nope", "--out", str(tmp_path)])
    assert not (tmp_path / "executed").exists()
