"""core.child: a function run in a fresh process - its value, its failures, and nothing left behind."""

from __future__ import annotations

import _thread
import json
import os
import signal
import subprocess
import sys
import threading
from pathlib import Path

import psutil
import pytest

from course_utils.core.child import (
    EXIT_TIME_LIMIT,
    Child,
    ChildRun,
    run_python,
    start_python,
)
from course_utils.core.errors import ChildError, CourseError
from course_utils.core.processes import leftover_processes

from ..process_checks import still_running, wait_until

T = "tests.core.targets:"
# No test here bounds how long a child takes to start, stop or end itself (a loaded CI machine is slow): each
# waits for what it checks, and this timeout only catches a hang.
pytestmark = pytest.mark.timeout(120)


def gone(pid: int) -> bool:
    """Whether process ``pid`` has ended, now (a zombie has: it only waits to be reaped)."""
    return still_running([pid]) == []


def test_a_child_returns_its_value_and_its_output():
    run = run_python(T + "echo", {"n": [1, 2.5, "x"]}, timeout_s=60, what="The echo child")
    assert isinstance(run, ChildRun)
    assert run.value["payload"] == {"n": [1, 2.5, "x"]} and run.value["pid"] != os.getpid()
    assert "echo says hello" in run.output


def test_a_value_that_looks_like_an_error_is_still_a_value():
    assert run_python(T + "looks_like_an_error", None, timeout_s=60, what="x").value == {"error": "just a value"}


def test_a_course_error_in_the_child_comes_back_with_what_and_fix():
    with pytest.raises(ChildError) as info:
        run_python(T + "course_error", None, timeout_s=60, what="The data child")
    err = info.value
    assert isinstance(err, CourseError)
    assert err.what.startswith("The data child raised DataError: The file mnist.npz is truncated.")
    assert err.fix == "Delete it and download it again."
    assert err.ended == "error" and err.returncode == 1
    assert err.error["type"] == "DataError" and err.error["what"] == "The file mnist.npz is truncated."
    assert "Traceback" in err.error["traceback"] and "course_error" in err.error["traceback"]
    assert "DataError" in err.tail  # the traceback went to the log too


def test_any_exception_in_the_child_comes_back():
    with pytest.raises(ChildError, match=r"The child raised ValueError: bad value 7") as info:
        run_python(T + "value_error", 7, timeout_s=60, what="The child")
    assert info.value.error["what"] is None and info.value.error["fix"] is None
    assert info.value.fix  # a generic what-to-do


def test_a_child_that_exits_hard_is_reported_with_its_status_and_last_output():
    with pytest.raises(ChildError) as info:
        run_python(T + "exit_hard", 3, timeout_s=60, what="The hard child")
    err = info.value
    assert err.ended == "status 3" and err.returncode == 3 and err.error is None
    assert "The hard child exited with status 3 before it wrote a result." in err.what
    assert "about to exit hard" in err.what and "about to exit hard" in err.tail
    with pytest.raises(ChildError, match="exited with status 0 but wrote no result"):
        run_python(T + "exit_hard", 0, timeout_s=60, what="The child")


@pytest.mark.skipif(os.name == "nt", reason="POSIX signals")
def test_a_child_killed_by_a_signal_names_the_signal():
    with pytest.raises(ChildError) as info:
        run_python(T + "killed", None, timeout_s=60, what="The killed child")
    err = info.value
    assert err.ended == "signal SIGKILL" and err.returncode == -signal.SIGKILL
    assert "The killed child was ended by signal SIGKILL" in err.what and "about to be killed" in err.what
    assert "out of memory" in err.fix


def test_a_target_or_payload_that_cannot_be_started_is_refused_before_anything_starts():
    with pytest.raises(ValueError, match="package.module:function"):
        start_python("tests.core.targets.echo", None)
    with pytest.raises(TypeError):
        start_python(T + "echo", object())


def test_env_adds_and_removes_variables(monkeypatch):
    monkeypatch.setenv("COURSE_PROBE_REMOVED", "inherited")
    monkeypatch.setenv("COURSE_PROBE_KEPT", "inherited")
    monkeypatch.delenv("PYTHONIOENCODING", raising=False)  # as on Windows, whose files get the ANSI code page
    names = ["COURSE_PROBE_REMOVED", "COURSE_PROBE_KEPT", "COURSE_PROBE_ADDED", "PYTHONIOENCODING"]
    run = run_python(
        T + "environment", names, timeout_s=60, what="x",
        env={"COURSE_PROBE_REMOVED": None, "COURSE_PROBE_ADDED": "42"},
    )
    assert run.value == {"COURSE_PROBE_REMOVED": None, "COURSE_PROBE_KEPT": "inherited", "COURSE_PROBE_ADDED": "42",
                         "PYTHONIOENCODING": "utf-8"}, "and the child writes UTF-8, which its log is read as"
    assert os.environ["COURSE_PROBE_REMOVED"] == "inherited", "the parent's environment is untouched"


def test_a_timeout_leaves_nothing_behind(tmp_path, monkeypatch):
    pids = tmp_path / "pids.json"
    payload = {"pids": str(pids), "marker": str(tmp_path / "grandchild")}
    wait = Child.wait

    def wait_once_started(child: Child, timeout_s: float | None = None) -> int | None:
        wait_until(pids.exists)  # the grandchild exists before the 1 s count, however long the start took
        return wait(child, timeout_s)

    monkeypatch.setattr(Child, "wait", wait_once_started)
    with pytest.raises(ChildError) as info:
        run_python(T + "sleep_with_grandchild", payload, timeout_s=1, what="The sleeper", folder=tmp_path,
                   name="sleeper")
    err = info.value
    assert "The sleeper did not finish within 1 s, so it was stopped." in err.what
    assert err.ended == "timeout after 1 s" and "more time" in err.fix
    child_pid, grandchild_pid = json.loads(pids.read_text())
    assert gone(child_pid) and gone(grandchild_pid), "the child and the grandchild in its group were stopped"
    assert leftover_processes(tmp_path / "sleeper.payload.json") == []
    assert leftover_processes(tmp_path) == []


def test_ctrl_c_in_the_parent_stops_the_child(tmp_path, ctrl_c):
    pids = tmp_path / "pids.json"
    payload = {"pids": str(pids), "marker": str(tmp_path / "grandchild")}

    def interrupt():
        wait_until(pids.exists)
        _thread.interrupt_main()  # as if Ctrl-C reached the parent

    helper = threading.Thread(target=interrupt, daemon=True)
    helper.start()
    with pytest.raises(KeyboardInterrupt):
        run_python(T + "sleep_with_grandchild", payload, timeout_s=120, what="x", folder=tmp_path)
    helper.join(5)
    assert all(gone(pid) for pid in json.loads(pids.read_text()))
    assert leftover_processes(tmp_path) == []


def test_child_object_polls_stops_and_cleans_up(tmp_path):
    pids = tmp_path / "pids.json"
    payload = {"pids": str(pids), "marker": str(tmp_path / "grandchild"), "seconds": 120}
    with start_python(T + "sleep_with_grandchild", payload, what="The sleeper") as child:
        wait_until(pids.exists)
        assert child.process.poll() is None and child.wait(0.1) is None
        assert child.process.pid == json.loads(pids.read_text())[0]
        temp = child.temp_dir
        assert temp is not None and child.result_file.parent == temp and child.log.parent == temp
    assert child.process.returncode is not None and child.process.returncode != 0, "leaving the block stopped it"
    assert all(gone(pid) for pid in json.loads(pids.read_text()))
    assert not temp.exists(), "the temporary folder is removed"
    with pytest.raises(ChildError, match="The sleeper was ended by signal SIGTERM"):
        child.result()


def test_files_lie_in_the_folder_and_the_log_where_asked(tmp_path):
    log = tmp_path / "logs" / "echo.log"
    with start_python(T + "echo", [1], folder=tmp_path / "run", log=log, name="w-0") as child:
        assert child.result()["payload"] == [1]
        assert child.log_tail(1) == "echo says hello"
    assert json.loads((tmp_path / "run" / "w-0.payload.json").read_text()) == [1]
    assert json.loads((tmp_path / "run" / "w-0.result.json").read_text())["value"]["payload"] == [1]
    assert log.read_text().strip() == "echo says hello"
    with pytest.raises(ChildError) as info:
        run_python(T + "exit_hard", 4, timeout_s=60, what="x", log=log)
    assert str(log) in info.value.what


# --- a child never outlives its parent, nor its own time limit ------------------------------------------------

PARENT = (
    "import sys, time\n"
    "from course_utils.core.child import start_python\n"
    "payload = {'pids': sys.argv[1] + '/pids.json', 'marker': sys.argv[1] + '/grandchild'}\n"
    "child = start_python('tests.core.targets:sleep_with_grandchild', payload, log=sys.argv[1] + '/orphan.log',\n"
    "                     name='orphan')  # its payload and result in a temporary folder of its own\n"
    "time.sleep(120)\n"
)


@pytest.mark.skipif(os.name == "nt", reason="SIGKILL")
def test_a_child_whose_parent_is_killed_ends_with_its_group(tmp_path):
    """kill -KILL of the parent (a Jupyter kernel, `course run`) gives it no chance to stop its children."""
    from ..conftest import ROOT

    parent = subprocess.Popen([sys.executable, "-c", PARENT, str(tmp_path)], cwd=ROOT)
    try:
        wait_until((tmp_path / "pids.json").exists)
        child_pid, grandchild_pid = json.loads((tmp_path / "pids.json").read_text())
        child = psutil.Process(child_pid)
        temp = Path(child.cmdline()[-2]).parent  # PAYLOAD.json's folder
        assert child.ppid() == parent.pid and temp.name.startswith("course-orphan-")
        parent.kill()
        parent.wait()
        wait_until(lambda: gone(child_pid) and gone(grandchild_pid))  # the orphan ends by itself
        said = (tmp_path / "orphan.log").read_text()
        assert f"parent process (pid {parent.pid}) has ended, so it ended too" in said
        assert not temp.exists(), "and removed the temporary folder its parent would have removed"
    finally:
        parent.kill()
        parent.wait()
        for pid in leftover_processes(tmp_path):
            psutil.Process(pid).kill()


def test_a_child_past_its_own_time_limit_ends_by_itself_and_says_so(tmp_path):
    """A child that would sleep for 120 s (and a grandchild) with a limit of 1 s: the limit ends both."""
    pids = tmp_path / "pids.json"
    marker = tmp_path / "grandchild"
    payload = {"pids": str(pids), "marker": str(marker)}
    with start_python(T + "sleep_with_grandchild", payload, folder=tmp_path, name="late", what="The late child",
                      time_limit_s=1) as child:
        code = child.wait()  # nobody stops it here: only its own limit can end it before its 120 s sleep does
        with pytest.raises(ChildError) as info:
            child.result()
    assert code == EXIT_TIME_LIMIT
    # Its own child ended with it. On a machine so slow that the limit came before the grandchild was started,
    # there is none: the marker check holds either way, the pid check whenever the grandchild was started.
    assert leftover_processes(marker) == [], "its own child ended with it"
    assert not pids.exists() or all(gone(pid) for pid in json.loads(pids.read_text()))
    err = info.value
    assert err.ended == "error" and err.error["type"] == "ChildTimeLimit"
    assert "ran past its own time limit of 1 s" in err.what and "more time" in err.fix


def test_a_time_limit_must_be_positive(tmp_path):
    with pytest.raises(ValueError, match="time_limit_s"):
        start_python(T + "echo", 1, folder=tmp_path, time_limit_s=0)
    assert leftover_processes(tmp_path) == []
