"""course_utils.lessons.nb07.distribute and notebook 07's worker program: TF_CONFIG, batch plans, and local workers.

The multi-worker test starts the notebook's own worker program (its ``%%writefile`` cell) on 127.0.0.1; the
tests of what happens when workers fail or hang start tiny programs without TensorFlow. That two replicas take
the same steps as one is notebook 07's own result, checked in tests/tiers/test_course_run.py.
"""

from __future__ import annotations

import json
import math
import os
import socket
import threading
import time
from pathlib import Path

import psutil
import pytest

from course_utils.core.errors import ParameterError
from course_utils.lessons.nb07 import distribute
from course_utils.lessons.nb07.distribute import (
    WorkerError,
    batch_plan,
    leftover_processes,
    local_cluster,
    run_local_workers,
    tf_config,
)

from ..conftest import ROOT
from ..lessons.solutions import cell_source
from .stand_in import WORKER

WORKER_BOUND_S = 240  # two local workers, 1-2 tiny epochs: ~10 s here; the bound catches a hang


def assert_nothing_left(folder: Path) -> None:
    assert psutil.Process().children(recursive=True) == []
    assert leftover_processes(folder) == []


WILDCARD = {"0.0.0.0", "::"}  # every interface (IPv4; IPv6 and, dual-stack, IPv4 too)


class Listening(threading.Thread):
    """While a run goes: the (host, port) pairs its processes (``leftover_processes(folder)``) listen on (TCP)."""

    def __init__(self, folder: Path) -> None:
        super().__init__(daemon=True)
        self.folder = folder
        self.seen: set[tuple[str, int]] = set()
        self.halt = threading.Event()

    def run(self) -> None:
        while not self.halt.wait(0.1):
            for pid in leftover_processes(self.folder):
                try:
                    connections = psutil.Process(pid).net_connections(kind="tcp")
                except psutil.Error:
                    continue
                self.seen |= {(c.laddr.ip, c.laddr.port) for c in connections if c.status == psutil.CONN_LISTEN}

    def __enter__(self) -> Listening:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.halt.set()
        self.join(5)


# --- TF_CONFIG and addresses -------------------------------------------------------------------


def test_local_cluster_is_distinct_loopback_ports():
    cluster = local_cluster(2)
    assert all(a.startswith("127.0.0.1:") for a in cluster) and len(set(cluster)) == 2
    with pytest.raises(ParameterError):
        local_cluster(0)


# --- batches -----------------------------------------------------------------------------------


def test_batch_plan_splits_the_global_batch():
    plan = batch_plan(128, 2, 1000)
    assert (plan.per_replica, plan.steps_per_epoch, plan.images_per_epoch) == (64, 7, 896)
    assert batch_plan(128, 1, 1000).per_replica == 128


def test_batch_plan_errors_say_what_to_change():
    with pytest.raises(ParameterError, match="multiple of 4"):
        batch_plan(130, 4, 1000)
    with pytest.raises(ParameterError, match="do not fill one global batch"):
        batch_plan(128, 2, 100)


# --- local workers -----------------------------------------------------------------------------

SLEEPER = "import time\ntime.sleep(600)\n"  # a worker that never finishes
QUICK = "print('done')\n"  # a worker that finishes at once


def program(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "program.py"
    path.write_text(text)
    return path


def notebook_program(tmp_path: Path, **settings: object) -> tuple[Path, Path]:
    """Notebook 07's worker program as its %%writefile cell writes it, and a run folder with its settings."""
    first, _, body = cell_source("07_beyond_one_gpu", "worker-program").partition("\n")
    assert first == "%%writefile {work}/cnn_worker.py", "written into the run's own folder, not the course's"
    path = tmp_path / "cnn_worker.py"
    path.write_text(body)
    folder = tmp_path / "run"
    folder.mkdir(exist_ok=True)
    defaults = {"dataset": "mnist", "images": 256, "global_batch": 64, "epochs": 1, "seed": 0, "policy": "float32"}
    (folder / "settings.json").write_text(json.dumps({**defaults, **settings}))
    return path, folder


def reports(folder: Path, workers: int = 2) -> list[dict]:
    return [json.loads((folder / f"worker-{i}.json").read_text()) for i in range(workers)]


def test_worker_log_tail_names_the_error(tmp_path):
    log = tmp_path / "w.log"
    log.write_text("Traceback (most recent call last):\n  File x\nValueError: bad shape\nnoise\n" + "x" * 500 + "\n")
    tail = distribute._tail(log, lines=2)
    assert tail.startswith("last error: ValueError: bad shape")
    assert max(len(line) for line in tail.splitlines()) <= 200
    assert distribute._tail(tmp_path / "missing.log") == "(no log)"


def test_run_local_workers_refuses_a_missing_program(tmp_path):
    with pytest.raises(ParameterError, match="cnn_worker.py does not exist") as info:
        run_local_workers(tmp_path / "cnn_worker.py", 2, folder=tmp_path / "run")
    assert "%%writefile" in info.value.fix
    assert not (tmp_path / "run").exists(), "nothing was started or written"


@pytest.mark.timeout(120)  # catches a hang: workers that sleep 600 s, a limit of 1 s
def test_workers_past_their_time_limit_are_all_stopped(tmp_path):
    with pytest.raises(WorkerError, match="did not finish within 1 s") as info:
        run_local_workers(program(tmp_path, SLEEPER), 2, folder=tmp_path / "run", timeout_s=1)
    assert info.value.timed_out and "raise the time limit" in info.value.fix
    assert_nothing_left(tmp_path)
    assert {p.name for p in (tmp_path / "run").glob("worker-*.log")} == {"worker-0.log", "worker-1.log"}


@pytest.mark.timeout(2 * WORKER_BOUND_S + 60)
def test_after_a_crash_the_notebooks_program_resumes_from_the_checkpoint_in_step_as_the_page_says(tmp_path):
    """docs/going-further.md#fault-tolerance: a line added to the program crashes worker 1 in its first epoch, after
    the chief's checkpoint; without it, the cluster started again on the same folder goes on from that checkpoint,
    both workers in step. Both runs train under mixed_float16, whose float16 gradients smaller than about 6e-8 round
    to zero unless the custom loop wraps its optimizer (one cluster for both checks: each worker starts TensorFlow)."""
    page = (ROOT / "docs" / "going-further.md").read_text(encoding="utf-8")
    crash = 'if index == 1 and e == 0: raise RuntimeError("worker 1 lost its machine")'
    assert crash in page, "the page's own line"
    path, folder = notebook_program(tmp_path, epochs=2, policy="mixed_float16")
    program_text = path.read_text()
    save = "    manager.save()\n"
    assert program_text.count(save) == 1
    path.write_text(program_text.replace(save, save + "    " + crash + "\n"))
    with pytest.raises(WorkerError) as info:
        run_local_workers(path, 2, folder=folder, timeout_s=WORKER_BOUND_S)
    # worker 0 waits in the all-reduce for its lost peer: the run stops them both, and names the first to fail
    assert info.value.worker == 1 and info.value.last_error == "RuntimeError: worker 1 lost its machine"
    assert "Worker 1 of 2 exited with status 1" in str(info.value)
    assert_nothing_left(tmp_path)
    path.write_text(program_text)
    with Listening(folder) as listening:  # on this machine's network, where this process sees the sockets
        again = run_local_workers(path, 2, folder=folder, timeout_s=WORKER_BOUND_S, private_network=False)
    assert again.tf_config(1) == tf_config(again.addresses, 1) and again.network == "host"
    assert all(a.startswith("127.0.0.1:") for a in again.addresses)
    two = reports(folder)
    assert [r["start_epoch"] for r in two] == [1, 1] and all(len(r["loss"]) == 1 for r in two)
    assert all(r["replicas"] == 2 and r["optimizer"] == "LossScaleOptimizer" for r in two)
    assert 0 < two[0]["loss"][0] < math.log(10), "the second epoch learnt: below the loss of a guess among ten"
    # Synchronous training: both workers saw the same all-reduced losses and hold the same weights.
    assert two[0]["loss"] == two[1]["loss"] and two[0]["weights"] == two[1]["weights"]
    # Only the chief's checkpoints stay; the other worker deleted its temporary copy.
    assert (folder / "checkpoints" / "checkpoint").is_file() and not list(folder.glob("checkpoints-temp-*"))
    # The peers dial 127.0.0.1 (TF_CONFIG), but TensorFlow's gRPC server listens on every interface whatever
    # TF_CONFIG says: GrpcServer::Init binds "0.0.0.0:<port>" (tensorflow/core/distributed_runtime/rpc/
    # grpc_server_lib.cc), which gRPC opens as a dual-stack [::] socket. Nothing in TF_CONFIG, the ServerDef or
    # tf.distribute.Server chooses the address, so the course says so (distribute's docstring, notebook 07).
    ports = {int(address.rpartition(":")[2]) for address in again.addresses}
    seen = {host for host, port in listening.seen if port in ports}
    assert ports <= {port for _, port in listening.seen}, "every worker's server was seen listening"
    assert seen and seen <= WILDCARD, (
        f"the workers listened on {seen}: if that is loopback only, TensorFlow now binds the address it is given - "
        "update course_utils.lessons.nb07.distribute's docstring and notebook 07"
    )
    assert_nothing_left(tmp_path)


# --- workers never outlive the kernel that started them ------------------------------------------------------


def test_each_worker_is_a_child_of_this_process_with_the_runs_time_limit_and_a_margin(tmp_path):
    """Each worker is a ``core.child``: it ends by itself when this process is killed (the watchdog, tests/core/
    test_child.py::test_a_child_whose_parent_is_killed_ends_with_its_group) or runs past the run's limit plus a
    margin, in case nothing else stops it."""
    says = "import os\nprint(os.environ['COURSE_PARENT_PID'], os.environ['COURSE_TIME_LIMIT_S'])\n"
    run_local_workers(program(tmp_path, says), 2, folder=tmp_path / "run", timeout_s=60)
    for i in range(2):
        said = (tmp_path / "run" / f"worker-{i}.log").read_text().split()[-2:]
        assert said == [str(os.getpid()), str(60 + distribute.WORKER_TIME_MARGIN_S)]


def test_of_two_workers_failing_at_once_the_first_to_fail_is_named(tmp_path):
    """Worker 1 crashed; worker 0 failed a moment later because its peer was gone."""
    logs = [tmp_path / "worker-0.log", tmp_path / "worker-1.log"]
    for log, mtime in zip(logs, (200.0, 100.0), strict=True):
        log.write_text("...")
        os.utime(log, (mtime, mtime))
    assert distribute.first_to_fail([0, 1], logs) == 1
    assert distribute.first_to_fail([0], logs) == 0
    logs[1].unlink()
    assert distribute.first_to_fail([0, 1], logs) == 0, "a worker without a log cannot be shown as the cause"


# --- a network of their own: no other process reaches the workers' ports -------------------------------------

@pytest.mark.timeout(120)  # catches a hang: workers that never see each other, or a probe that never ends
def test_the_workers_reach_each_other_and_no_other_process_reaches_them(tmp_path):
    folder, done = tmp_path / "run", {}
    run = threading.Thread(target=lambda: done.update(run=run_local_workers(
        program(tmp_path, WORKER), 2, folder=folder, timeout_s=100, private_network=True)))
    run.start()
    try:
        while len(ports := [p.read_text() for p in folder.glob("listening-*")]) < 2:
            assert run.is_alive(), "the run ended before its workers listened"
            time.sleep(0.05)
        for port in ports:  # this process is outside the workers' network: nothing listens there for it
            with pytest.raises(ConnectionRefusedError):
                socket.create_connection(("127.0.0.1", int(port)), timeout=5)
    finally:
        (folder / "probed").write_text("")
        run.join()
    assert done["run"].network == "private"
    assert_nothing_left(tmp_path)


def test_without_a_private_network_a_shared_server_refuses_and_a_machine_of_ones_own_goes_on(tmp_path, monkeypatch):
    from course_utils.lessons.nb07 import private_net

    assert run_local_workers(program(tmp_path, QUICK), 2, folder=tmp_path / "default", timeout_s=60).network == (
        "private"), "where a private network can be made, the workers get one unless told otherwise"
    monkeypatch.setattr(private_net.shutil, "which", lambda tool: None)  # as a system without util-linux
    monkeypatch.setenv("COURSE_SHARED_SERVER", "1")
    with pytest.raises(WorkerError, match="cannot get a network of their own") as info:
        run_local_workers(program(tmp_path, QUICK), 2, folder=tmp_path / "shared", timeout_s=60)
    assert "util-linux" in info.value.fix
    assert not list((tmp_path / "shared").glob("worker-*.log")), "no worker started on the open network"
    monkeypatch.delenv("COURSE_SHARED_SERVER")
    assert run_local_workers(program(tmp_path, QUICK), 2, folder=tmp_path / "own", timeout_s=60).network == "host"
