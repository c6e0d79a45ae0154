"""The papermill runner: runs in fresh kernels, grids, failures kept, bad input stopped before anything runs."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from types import SimpleNamespace
from unittest.mock import Mock

import psutil
import pytest

import course_tools.batch.runner as runner
from course_tools.batch.notebook_run import (
    KERNEL_DIED,
    RunRecord,
    excerpt,
    execute_notebook,
    failing_line,
    run_notebook,
)
from course_tools.batch.report import cell_place, failure_excerpt
from course_tools.batch.runner import main

from ...conftest import ROOT, isolated, run_main
from ...process_checks import still_running, wait_until

FIXTURES = ROOT / "tests" / "fixtures"
# No test here bounds how long a run, a start or a stop takes (a loaded CI machine is slow): each waits for what
# it checks, and this timeout (or a test's own) only catches a hang.
pytestmark = pytest.mark.timeout(300)


def load(path):
    return json.loads(path.read_text())


def errors_in(notebook_path):
    cells = load(notebook_path)["cells"]
    return [o for c in cells if c["cell_type"] == "code" for o in c["outputs"] if o["output_type"] == "error"]


def kernel_notebook(path, *cells, markdown=None):
    """A notebook of ``cells`` (code), after one markdown cell if given, for the python3 kernel."""
    import nbformat
    from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

    nb = new_notebook(cells=[new_markdown_cell(markdown)] if markdown else [])
    nb.cells += [new_code_cell(c) for c in cells]
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nbformat.write(nb, path)
    return path


@pytest.fixture(scope="module")
def failing(tmp_path_factory):
    """``course run``'s own path (a runner process each, two at once) over four notebooks that fail in four ways,
    then one that passes: a ValueError on line 2 of the third cell (a markdown cell first, so its execution count is
    [2]), ``sys.exit`` (its error names no line), a kernel that dies and one that kills its runner process."""
    folder = tmp_path_factory.mktemp("failing")
    notebooks = [
        kernel_notebook(folder / "line_two.ipynb", "x = 1", "y = x + 1\nraise ValueError(f'y is {y}')\nz = 3",
                        markdown="# A notebook"),
        kernel_notebook(folder / "exits.ipynb", "import sys\nsys.exit(3)"),
        kernel_notebook(folder / "dies.ipynb", "import os", "os._exit(1)  # as if killed for memory", "1"),
        kernel_notebook(folder / "kills.ipynb", f"import os, signal\nopen({str(folder / 'kernel.pid')!r}, 'w').write("
                        "str(os.getpid()))", "os.kill(os.getppid(), signal.SIGKILL)  # its parent: the runner process\n"
                        "import time\ntime.sleep(30)"),
        FIXTURES / "ok.ipynb",
    ]
    out = folder / "out"
    with isolated(folder):
        done = run_main(main, *map(str, notebooks), "--out", str(out), "--jobs", "2", "--timeout", "60")
    runs = {r["name"]: r for r in load(out / "results.json")["runs"]}
    return SimpleNamespace(done=done, out=out, runs=runs, md=(out / "report.md").read_text(encoding="utf-8"))


def test_a_failing_run_keeps_its_notebook_and_names_the_error_and_the_batch_goes_on(failing):
    assert failing.done.returncode == 1 and "4 of 5 run(s) failed: line_two, exits, dies, kills" in failing.done.stderr
    assert [(name, r["status"]) for name, r in failing.runs.items()] == [
        ("line_two", "failed"), ("exits", "failed"), ("dies", "failed"), ("kills", "failed"), ("ok", "ok")]
    failed = failing.runs["line_two"]
    cell = failed["failed_cell"]
    assert (cell["error"], failed["error"]) == ("ValueError: y is 2", f"{cell_place(cell)}: ValueError: y is 2")
    assert "raise" in cell["source"]
    assert errors_in(failing.out / "executed" / "line_two.ipynb"), "the failing run's executed notebook is kept"
    assert "| ok | full | as in the notebook | ok | none |" in failing.md  # ok.ipynb records no checkpoint


def test_the_failing_line_is_recorded_and_the_log_keeps_the_traceback(failing):
    cell = failing.runs["line_two"]["failed_cell"]
    assert (cell["index"], cell["execution_count"], cell["line"]) == (2, 2, 2)
    assert cell["excerpt"] == ["      1 y = x + 1", "----> 2 raise ValueError(f'y is {y}')", "      3 z = 3"]
    log = Path(failing.runs["line_two"]["log"]).read_text(encoding="utf-8")
    assert "----> 2 raise ValueError(f'y is {y}')" in log and "ValueError: y is 2" in log, "the kernel's traceback"
    assert "\x1b[" not in log, "without its colour codes"
    assert failing.runs["exits"]["failed_cell"]["line"] is None  # SystemExit names no line


def test_a_kernel_that_dies_fails_the_run_and_the_cell_is_named(failing):
    record = failing.runs["dies"]
    assert "DeadKernelError" in record["error"] and "os._exit(1)" in record["failed_cell"]["source"]
    heading, shown = failure_excerpt(record)  # no traceback names a line: the cell's first lines, then the error
    assert heading.startswith("In cell 2 of the executed notebook (") and record["failed_cell"]["line"] is None
    assert shown == ["os._exit(1)  # as if killed for memory", "", "DeadKernelError: Kernel died"]
    assert "The run stopped in cell 2 of the executed notebook" in Path(record["log"]).read_text(encoding="utf-8")


def test_a_runner_process_killed_by_a_signal_fails_the_run_and_says_so(failing):
    record, log = failing.runs["kills"], failing.out / "logs" / "kills.log"
    assert record["error"].startswith("runner process ended by signal SIGKILL") and log.is_file()
    assert record["error"].endswith(f"(log: {log})") and record["log"] == str(log)
    wait_until(lambda: not still_running([int((failing.out.parent / "kernel.pid").read_text())]))  # the orphaned kernel


def test_a_cell_past_the_timeout_fails_the_run_and_is_named(tmp_path):
    record = run_notebook(FIXTURES / "sleeps.ipynb", tmp_path, timeout=2)
    assert record.status == "failed" and "CellTimeoutError" in record.error
    assert "time.sleep(SECONDS)" in record.failed_cell["source"] and record.failed_cell["execution_count"] == 2
    assert (tmp_path / "executed" / "sleeps.ipynb").is_file()


# The kernel's traceback as plain text, and the line of the cell it names (execution count 3).
NESTED = """ZeroDivisionError                         Traceback (most recent call last)
Cell In[3], line 4
      2     return a / 0
      3 z = 3
----> 4 print(f(1))

Cell In[3], line 2, in f(a)
----> 2     return a / 0

ZeroDivisionError: division by zero"""
SOURCE = "def f(a):\n    return a / 0\nz = 3\nprint(f(1))"


@pytest.mark.parametrize(("said", "source", "line"), [
    (NESTED, SOURCE, (4, "print(f(1))")),  # the cell's own line, not the line inside f
    ("  Cell In[3], line 2\n    b = (\n        ^\nSyntaxError: '(' was never closed", "a = 1\nb = (", (2, "b = (")),
    ("Cell In[1], line 2, in g()\n----> 2     raise KeyError\nKeyError: ''", "g()", None),  # only another cell's
    ("<ipython-input-3-0a1b> in <module>\n      1 a = 1\n----> 2 b = 1 / 0\n", "a = 1\nb = 1 / 0", (2, "b = 1 / 0")),
])
def test_the_failing_line_is_read_from_the_kernels_traceback(said, source, line):
    assert failing_line(said, source, 3) == line


def test_the_excerpt_of_a_long_cell_marks_the_line_or_is_cut():
    """(plain(), which strips a traceback's colour codes: the failing batch's log has none, its line is read.)"""
    source = "\n".join(f"line_{n} = {n}" for n in range(1, 12))
    assert excerpt(source, (10, "line_10 = 10")) == {"line": 10, "excerpt": [
        "       8 line_8 = 8", "       9 line_9 = 9", "----> 10 line_10 = 10", "      11 line_11 = 11"]}
    assert excerpt(source, None)["excerpt"][-1] == "...", "a long cell's first lines, cut"


def cell_running(executed, source):
    """Whether papermill has started the cell of ``source`` in the executed notebook it saves at each cell's start."""
    try:
        cells = load(executed)["cells"]
    except (OSError, ValueError):  # not written yet, or being written
        return False
    return any(source in "".join(c["source"]) and c["metadata"].get("papermill", {}).get("status") == "running"
               for c in cells)


def test_the_batch_size_grids_results_are_its_comparisons_columns(tmp_path, monkeypatch):
    """grids/batch_size.yaml on notebook 05, each run a stand-in: the grid's ``results`` reach the report and choose
    its columns; notebook 05 declares the grid's parameters with fitting types. A grid run in real kernels:
    test_shard.py; the smoke caps and each run's log folder: the course-run tier (tests/tiers/test_course_run.py)."""
    def stand_in(plan, out, **kw):
        return [RunRecord(s.notebook.stem, "ok", 1.0, "", s.parameters, smoke=False, name=s.name, point=s.point,
                          points=s.points, results={"test_accuracy": 0.9, "epoch_s": [2.0], "loss": 0.1})
                for s in plan.runs]

    monkeypatch.setattr(runner, "run_batch", stand_in)
    assert main(["--grid", str(ROOT / "grids" / "batch_size.yaml"), "--out", str(tmp_path)]) == 0
    (table,) = load(tmp_path / "results.json")["comparisons"]
    assert [row["BATCH_SIZE"] for row in table["rows"]] == [32, 64, 128, 256, 512]
    assert table["columns"] == ["test_accuracy", "epoch_s (median)", "peak host memory (MiB)", "time (s)"], \
        "the grid's results, in its order, and nothing else the notebook recorded"


@pytest.fixture
def no_runs(monkeypatch):
    """Fail the test if anything would be executed."""
    refuse = Mock(side_effect=AssertionError("a run started although the input was bad"))
    monkeypatch.setattr(runner, "run_notebook", refuse)
    monkeypatch.setattr(subprocess, "Popen", refuse)  # no runner process, no kernel


@pytest.mark.parametrize(
    "argv, message",
    [
        (["ok.ipynb", "-p", "NN", "2"], "ok.ipynb does not declare parameter NN - did you mean N?"),
        (["ok.ipynb", "--jobs", "0"], "--jobs must be at least 1"),
    ],
)
def test_bad_input_is_rejected_before_anything_runs(argv, message, tmp_path, capsys, no_runs):
    """Where each message comes from, and the rest of them: test_grid.py."""
    out = tmp_path / "out"
    assert main([str(FIXTURES / argv[0]), *argv[1:], "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and message in err
    assert not out.exists()


def test_good_values_of_each_declared_type_are_accepted(tmp_path, monkeypatch):
    seen = []
    monkeypatch.setattr(runner, "run_batch", lambda plan, out, **kw: seen.append(plan) or [])
    argv = ["-p", "N", "2", "-p", "SCALE", "3", "-p", "LABEL", "'7'", "-p", "FLAG", "true", "-p", "IMAGES", "500"]
    argv += ["-p", "SIZES", "[3, 4]", "--out", str(tmp_path)]
    assert main([str(FIXTURES / "curve.ipynb"), *argv]) == 0
    parameters = seen[0].runs[0].parameters
    assert parameters == {"N": 2, "SCALE": 3, "LABEL": "7", "FLAG": True, "IMAGES": 500, "SIZES": [3, 4]}


def test_a_runner_error_fails_that_run_only(tmp_path, monkeypatch):
    def flaky(notebook, out, **kw):
        if notebook.name == "fails.ipynb":
            raise OSError(28, "No space left on device")
        return RunRecord(notebook.stem, "ok", 0.1, "", {}, smoke=False, name=kw["name"])

    monkeypatch.setattr(runner, "run_notebook", flaky)
    assert main([str(FIXTURES / "fails.ipynb"), str(FIXTURES / "ok.ipynb"), "--out", str(tmp_path)]) == 1
    runs = load(tmp_path / "results.json")["runs"]
    assert runs[0]["error"] == "runner error: OSError: [Errno 28] No space left on device"
    assert (runs[1]["name"], runs[1]["status"]) == ("ok", "ok")


def test_more_jobs_than_cores_warns(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(runner, "available_cores", lambda: 2)
    monkeypatch.setattr(runner, "run_batch", lambda plan, out, **kw: [])
    assert main([str(FIXTURES / "ok.ipynb"), "--jobs", "3", "--out", str(tmp_path)]) == 0
    assert "warning: --jobs 3 is more than the 2 CPU core(s)" in capsys.readouterr().out


@pytest.mark.skipif(os.name == "nt", reason="POSIX signals")
@pytest.mark.timeout(240)  # catches a hang - and a stop that waited for the 600 s cell
@pytest.mark.parametrize(
    ("signals", "status", "why"),
    [((signal.SIGTERM,), 128 + signal.SIGTERM, "SIGTERM"), ((signal.SIGINT, signal.SIGINT), 130, "Ctrl-C"),
     ((signal.SIGKILL,), -signal.SIGKILL, None)],
    ids=["sigterm", "ctrl-c-twice", "sigkill"],
)
def test_one_runner_per_out_and_a_stop_keeps_the_report_and_leaves_nothing_running(tmp_path, capsys, monkeypatch,
                                                                                   signals, status, why):
    grid = tmp_path / "grid.yaml"
    grid.write_text(f"notebooks: [{FIXTURES / 'sleeps.ipynb'}]\nparameters:\n  SECONDS: [0, 600]\n")
    out = tmp_path / "out"
    with (tmp_path / "course-run.out").open("wb") as output:  # course run keeps its own copy of the file
        command = [sys.executable, "-m", "course_utils", "run", "--grid", str(grid), "--out", str(out)]
        process = subprocess.Popen(command, stdout=output, stderr=subprocess.STDOUT, cwd=ROOT,
                                   start_new_session=True)  # signals reach it only as the test sends them
    seen: list[int] = []
    try:
        while not cell_running(out / "executed" / "sleeps__SECONDS-600.ipynb", "time.sleep(SECONDS)"):
            assert process.poll() is None, (tmp_path / "course-run.out").read_text()
            time.sleep(0.1)  # until the second run's kernel is in the 600 s cell (the first run, 0 s, finished)
        seen = [p.pid for p in psutil.Process(process.pid).children(recursive=True)]  # runner processes, kernels
        assert any("ipykernel" in " ".join(psutil.Process(pid).cmdline()) for pid in seen), seen
        monkeypatch.setattr(runner, "run_batch", lambda *a, **kw: pytest.fail("a second runner ran"))
        assert main([str(FIXTURES / "ok.ipynb"), "--out", str(out)]) == 2
        err = capsys.readouterr().err  # one runner per --out: a second one is refused, saying by which
        assert f"`--out {out}` is in use by another `course run` (pid {process.pid})" in err, err
        for sig in signals:
            os.kill(process.pid, sig)
            time.sleep(0.05)  # the second Ctrl-C lands while the runs are being stopped
        assert process.wait() == status, (tmp_path / "course-run.out").read_text()
        if why is None:  # kill -KILL: no report, no cleanup - its lock file stays
            wait_until(lambda: not still_running(seen))  # its runner processes and kernels end by themselves
            monkeypatch.setattr(runner, "run_batch", lambda *a, **kw: [])
            assert main([str(FIXTURES / "ok.ipynb"), "--out", str(out)]) == 0, "a dead runner's lock does not block"
            return
        assert not still_running(seen), "no runner process or kernel was left running when course run exited"
        data = load(out / "results.json")
        assert data["meta"]["interrupted"] is True
        runs = [(r["name"], r["status"], r["error"]) for r in data["runs"]]
        assert runs == [
            ("sleeps__SECONDS-0", "ok", None),
            ("sleeps__SECONDS-600", "failed", f"interrupted ({why}): the run was stopped"),
        ], "the finished run is kept, the stopped one marked"
        assert "sleeps__SECONDS-600" in (out / "report.md").read_text()
    finally:
        process.kill()
        process.wait()
        for pid in seen:
            with contextlib.suppress(psutil.Error):
                psutil.Process(pid).kill()


def test_course_run_follows_course_smoke_unless_told_otherwise(monkeypatch, capsys):
    parser = runner._parser()
    assert [parser.parse_args(a).smoke for a in ([], ["--smoke"], ["--no-smoke"])] == [None, True, False]
    monkeypatch.setenv("COURSE_SMOKE", "maybe")
    assert runner.main(["01"]) == 2
    assert "COURSE_SMOKE='maybe' is not understood" in capsys.readouterr().err


@pytest.mark.parametrize(("arguments", "smoke"), [([], False), (["SMOKE=1"], True)])
def test_make_course_passes_smoke_to_both_editions(arguments, smoke):
    stamp = "-o", ".venv/.course-installed"  # as if the environment were installed: print the commands only
    out = subprocess.run(["make", "-n", *stamp, "course", *arguments], cwd=ROOT, capture_output=True, text=True,
                         check=True).stdout
    runs = [line for line in out.splitlines() if " run " in line]
    assert len(runs) == 2 and all("/course run " in line for line in runs), out
    assert all(line.rstrip().endswith("--smoke") is smoke for line in runs), out


def papermill(*outcomes: Exception | None) -> Mock:
    """A stand-in for papermill whose ``execute_notebook`` raises or returns the given outcomes, one per call."""
    return Mock(execute_notebook=Mock(side_effect=outcomes))


SPEC = {"notebook": "in.ipynb", "executed": "out.ipynb", "parameters": {}, "cwd": ".", "timeout": 60}


def test_a_kernel_that_died_before_its_first_cell_starts_once_more_then_the_run_fails(capsys):
    lost_port = papermill(RuntimeError(KERNEL_DIED), None)
    execute_notebook(lost_port, SPEC)
    assert lost_port.execute_notebook.call_count == 2 and KERNEL_DIED in capsys.readouterr().err  # said, in the log
    twice = papermill(RuntimeError(KERNEL_DIED), RuntimeError(KERNEL_DIED))
    with pytest.raises(RuntimeError, match=KERNEL_DIED):
        execute_notebook(twice, SPEC)
    other = papermill(RuntimeError("Kernel died while waiting for execute reply"))  # a cell was running: no retry
    with pytest.raises(RuntimeError, match="execute reply"):
        execute_notebook(other, SPEC)
    assert (twice.execute_notebook.call_count, other.execute_notebook.call_count) == (2, 1)
