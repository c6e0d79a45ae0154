"""course_utils.distribute and its worker: strategies, TF_CONFIG, and local workers that never outlive a run.

TensorFlow's device configuration happens once per process, so everything that splits the
CPU runs in a child process. The multi-worker tests start real workers on 127.0.0.1.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path
from types import SimpleNamespace

import psutil
import pytest

from course_utils import distribute
from course_utils.distribute import (
    WorkerError,
    batch_plan,
    choose_strategy,
    leftover_processes,
    local_cluster,
    parse_address,
    run_local_workers,
    tf_config,
)
from course_utils.distribute.worker import OPTIONS, check_options
from course_utils.errors import ChildError, DeviceError, ParameterError
from course_utils.system.child import run_python as run_child

from ..conftest import ROOT

# One SGD step on the same global batch: two replicas (32 images each, gradients summed
# by the all-reduce) against one replica (64 images). Only the order of floating-point
# additions differs, so the numbers agree to float32 rounding; these bounds leave room for it.
LOSS_RTOL = 1e-5
WEIGHTS_ATOL = 1e-5
WORKER_BOUND_S = 240  # two local workers, 1-2 tiny epochs: ~20 s here; the bound catches a hang


def run_python(code: str, timeout: float = 300) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True, timeout=timeout,
        env={**os.environ, "TF_CPP_MIN_LOG_LEVEL": "2"},
    )


def last_json(result: subprocess.CompletedProcess) -> dict:
    assert result.returncode == 0, result.stderr[-3000:]
    return json.loads(result.stdout.strip().splitlines()[-1])


def run_parts(parts: dict[str, str]) -> dict[str, dict]:
    """Run each part - a function body that returns a JSON-able dict - in order, in ONE fresh Python.

    TensorFlow's CPU split happens once per process, so the checks that need it share a child
    (the ``split_cpu_child`` fixture, conftest.py) instead of importing TensorFlow once each.
    """
    code = ["import json"]
    for name, body in parts.items():
        code += [f"def part_{name}():", textwrap.indent(textwrap.dedent(body), "    ")]
    code.append("print(json.dumps({" + ", ".join(f"{name!r}: part_{name}()" for name in parts) + "}))")
    return last_json(run_python("\n".join(code)))


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


def test_tf_config_gives_every_worker_the_cluster_and_its_own_task():
    workers = ["127.0.0.1:2222", "127.0.0.1:2223"]
    configs = [tf_config(workers, i) for i in range(2)]
    assert configs[0] == {"cluster": {"worker": workers}, "task": {"type": "worker", "index": 0}}
    assert configs[1]["cluster"] == configs[0]["cluster"] and configs[1]["task"]["index"] == 1
    json.dumps(configs[0])  # what goes into the environment variable


@pytest.mark.parametrize(
    ("workers", "index", "match"),
    [
        (["127.0.0.1:2222", "127.0.0.1:2223"], 2, "Task index 2"),
        (["127.0.0.1:2222"], -1, "Task index -1"),
        (["127.0.0.1:2222"], True, "Task index True"),
        (["127.0.0.1:2222", "127.0.0.1:2222"], 0, "repeat"),
        (["127.0.0.1:0"], 0, "out of range"),
        (["127.0.0.1:70000"], 0, "out of range"),
        (["127.0.0.1"], 0, "not a worker address"),
        (["127.0.0.1:http"], 0, "not a worker address"),
        ([], 0, "at least one worker"),
    ],
)
def test_tf_config_rejects_what_a_cluster_cannot_use(workers, index, match):
    with pytest.raises(ParameterError, match=match) as info:
        tf_config(workers, index)
    assert info.value.fix


def test_tf_config_only_knows_workers():
    with pytest.raises(ParameterError, match="'ps'"):
        tf_config(["127.0.0.1:2222"], 0, task_type="ps")


def test_parse_address():
    assert parse_address("10.0.0.2:12345") == ("10.0.0.2", 12345)
    assert parse_address("[::1]:80") == ("[::1]", 80)


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
    with pytest.raises(ParameterError):
        batch_plan(0, 2, 100)


# --- strategy choice ---------------------------------------------------------------------------


def fake_tf(gpus: int) -> SimpleNamespace:
    """Just enough of ``tf`` for choose_strategy's decisions, without TensorFlow."""
    calls = {}

    class Strategy:
        def __init__(self, devices=None):
            calls["devices"] = devices
            self.extended = SimpleNamespace(worker_devices=[f"/GPU:{i}" for i in range(gpus)])
            self.num_replicas_in_sync = gpus if devices is None else len(devices)

    config = SimpleNamespace(list_physical_devices=lambda kind: [kind] * (gpus if kind == "GPU" else 1))
    return SimpleNamespace(config=config, distribute=SimpleNamespace(MirroredStrategy=Strategy), calls=calls)


@pytest.fixture(autouse=True)
def _fake_split(monkeypatch):
    """The real split (tested in a child process below) would configure this test process's TensorFlow."""

    def split(tf, devices=2):
        if isinstance(tf, SimpleNamespace):
            tf.calls["split"] = devices
            return [f"/device:CPU:{i}" for i in range(devices)]
        raise AssertionError("split_cpu must not run in the test process")

    monkeypatch.setattr(distribute, "split_cpu", split)


def test_choose_strategy_uses_every_gpu_when_there_are_several():
    tf = fake_tf(gpus=4)
    choice = choose_strategy(tf)
    assert choice.kind == "GPU" and choice.replicas == 4 and tf.calls["devices"] is None
    assert "split" not in tf.calls


def test_choose_strategy_splits_the_cpu_without_gpus_or_with_one():
    for gpus in (0, 1):
        tf = fake_tf(gpus)
        choice = choose_strategy(tf, cpu_replicas=2)
        assert choice.kind == "CPU" and choice.replicas == 2
        assert choice.devices == ("/device:CPU:0", "/device:CPU:1")
    assert "one GPU is one replica" in choice.reason
    gpu = choose_strategy(fake_tf(1), "gpu")
    assert gpu.kind == "GPU" and gpu.replicas == 1


def test_choose_strategy_errors():
    with pytest.raises(DeviceError, match="no GPU"):
        choose_strategy(fake_tf(0), "gpu")
    with pytest.raises(ParameterError):
        choose_strategy(fake_tf(0), "tpu")


# The first part of the split_cpu_child process (conftest.py): it splits the CPU before the runtime starts.
SPLIT_CPU = """
    from course_utils.tf_setup import quiet_tensorflow
    from course_utils.distribute import split_cpu, choose_strategy
    from course_utils.errors import CourseError
    tf = quiet_tensorflow()
    names = split_cpu(tf, 2)
    choice = choose_strategy(tf, "cpu", cpu_replicas=2)
    tf.constant(1.0) + 1  # the runtime is up now
    again = split_cpu(tf, 2)  # a re-run notebook cell: harmless
    try:
        split_cpu(tf, 3)
        late = None
    except CourseError as exc:
        late = exc.fix
    return {"names": names, "replicas": choice.replicas, "again": again, "late": late}
"""


def test_split_cpu_happens_before_initialisation_and_says_so_after(split_cpu_child):
    out = split_cpu_child["split_cpu"]
    assert out["names"] == ["/device:CPU:0", "/device:CPU:1"] == out["again"]
    assert out["replicas"] == 2
    assert out["late"] and "Restart the kernel" in out["late"]


# How each later part of the split_cpu_child process starts: split_cpu again (harmless) gives the two devices;
# the course CNN's code and 64 random images, the same in every part (each part draws its own labels after them).
TWO_CPUS = """
    import numpy as np
    from course_utils.tf_setup import quiet_tensorflow
    from course_utils.distribute import split_cpu
    tf = quiet_tensorflow()
    devices = split_cpu(tf, 2)
    import keras
    from course_utils.models import build_blog_cnn
    keras.utils.set_random_seed(0)
    rng = np.random.default_rng(0)
    x = rng.random((64, 28, 28, 1), dtype=np.float32)
"""
SAME_STEP_AS_ONE = TWO_CPUS + """
    y = rng.integers(0, 10, 64)
    initial = build_blog_cnn().get_weights()

    def one_step(replica_devices):
        strategy = tf.distribute.MirroredStrategy(replica_devices)
        with strategy.scope():
            model = build_blog_cnn()
            model.set_weights(initial)
            model.compile(optimizer=keras.optimizers.SGD(0.1),
                          loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True))
        batches = strategy.experimental_distribute_dataset(tf.data.Dataset.from_tensor_slices((x, y)).batch(64))
        per_replica = [int(t.shape[0]) for t in strategy.experimental_local_results(next(iter(batches))[0])]
        loss = model.fit(batches, epochs=1, verbose=0, shuffle=False).history["loss"][0]
        return strategy.num_replicas_in_sync, per_replica, loss, model.get_weights()

    r1, b1, loss1, w1 = one_step(devices[:1])
    r2, b2, loss2, w2 = one_step(devices)
    moved = max(float(np.abs(a - b).max()) for a, b in zip(initial, w1))
    diff = max(float(np.abs(a - b).max()) for a, b in zip(w1, w2))
    return {"replicas": [r1, r2], "batches": [b1, b2], "loss": [loss1, loss2], "moved": moved, "diff": diff}
"""


def test_two_replicas_take_the_same_step_as_one_on_the_same_global_batch(split_cpu_child):
    out = split_cpu_child["same_step_as_one"]
    assert out["replicas"] == [1, 2]
    assert out["batches"] == [[64], [32, 32]]  # the global batch, split per replica
    loss1, loss2 = out["loss"]
    assert loss2 == pytest.approx(loss1, rel=LOSS_RTOL)
    assert out["moved"] > 1e-3, "the step changed the weights"
    assert out["diff"] < WEIGHTS_ATOL


# --- local workers -----------------------------------------------------------------------------


def test_worker_log_tail_names_the_error(tmp_path):
    log = tmp_path / "w.log"
    log.write_text("Traceback (most recent call last):\n  File x\nValueError: bad shape\nnoise\n" + "x" * 500 + "\n")
    tail = distribute._tail(log, lines=2)
    assert tail.startswith("last error: ValueError: bad shape")
    assert max(len(line) for line in tail.splitlines()) <= 200
    assert distribute._tail(tmp_path / "missing.log") == "(no log)"


def test_run_local_workers_rejects_a_zero_time_limit(tmp_path):
    with pytest.raises(ParameterError):
        run_local_workers(2, folder=tmp_path, timeout_s=0)


def test_worker_options_are_checked_before_any_worker_starts(tmp_path):
    assert check_options({"crash_at_epoch": 1}) == {**OPTIONS, "crash_at_epoch": 1}
    assert check_options({"model_dir": tmp_path})["model_dir"] == str(tmp_path)  # JSON-able
    for bad, match in [
        ({"crash_at_epochs": 1}, "Unknown worker option"),
        ({"dataset": "cifar"}, "not one of"),
        ({"epochs": "2"}, "not a whole number"),
        ({"images": True}, "not a whole number"),
    ]:
        with pytest.raises(ParameterError, match=match):
            check_options(bad)
    with pytest.raises(ParameterError, match="Unknown worker option"):
        run_local_workers(2, folder=tmp_path, worker_options={1: {"crash": 1}})
    with pytest.raises(ParameterError, match=r"names worker\(s\) \[2\]"):
        run_local_workers(2, folder=tmp_path, worker_options={2: {"crash_at_epoch": 1}})
    assert list(tmp_path.iterdir()) == [], "nothing was started or written"


def test_workers_past_their_time_limit_are_all_stopped(tmp_path):
    start = time.monotonic()
    with pytest.raises(WorkerError, match="did not finish within 1 s") as info:
        run_local_workers(2, folder=tmp_path, epochs=1, images=256, timeout_s=1)
    assert time.monotonic() - start < 30
    assert "raise the time limit" in info.value.fix
    assert_nothing_left(tmp_path)
    assert {p.name for p in tmp_path.glob("worker-*")} >= {"worker-0.payload.json", "worker-0.log", "worker-1.log"}


@pytest.mark.timeout(2 * WORKER_BOUND_S + 60)
def test_a_crashed_worker_fails_the_run_clearly_leaves_nothing_and_the_restart_resumes(tmp_path):
    with pytest.raises(WorkerError) as info:
        run_local_workers(
            2, folder=tmp_path, epochs=2, images=256, batch_size=64, timeout_s=WORKER_BOUND_S,
            worker_options={1: {"crash_at_epoch": 1}},
        )
    message = str(info.value)
    assert "Worker 1 of 2 exited with status 1" in message
    assert "last error: RuntimeError: worker 1 crashed on purpose during epoch 1" in message
    assert "every worker was stopped" in message and "start the whole cluster again" in info.value.fix
    assert_nothing_left(tmp_path)
    # The chief checkpointed epoch 0 before the crash: a restarted cluster goes on from epoch 1.
    with Listening(tmp_path) as listening:
        run = run_local_workers(2, folder=tmp_path, epochs=2, images=256, batch_size=64, timeout_s=WORKER_BOUND_S)
    # The peers dial 127.0.0.1 (TF_CONFIG), but TensorFlow's gRPC server listens on every interface whatever
    # TF_CONFIG says: GrpcServer::Init binds "0.0.0.0:<port>" (tensorflow/core/distributed_runtime/rpc/
    # grpc_server_lib.cc), which gRPC opens as a dual-stack [::] socket. Nothing in TF_CONFIG, the ServerDef or
    # tf.distribute.Server chooses the address, so the course documents it (distribute's docstring) instead.
    ports = {parse_address(address)[1] for address in run.addresses}
    seen = {host for host, port in listening.seen if port in ports}
    assert ports <= {port for _, port in listening.seen}, "every worker's server was seen listening"
    assert seen and seen <= WILDCARD, (
        f"the workers listened on {seen}: if that is loopback only, TensorFlow now binds the address it is given - "
        "update course_utils.distribute's docstring and notebook 07"
    )
    assert run.duration_s < WORKER_BOUND_S
    assert [r["index"] for r in run.results] == [0, 1]
    assert all(a.startswith("127.0.0.1:") for a in run.addresses)
    chief, other = run.results
    assert chief["is_chief"] and not other["is_chief"]
    for r in run.results:
        assert (r["workers"], r["replicas_in_sync"], r["global_batch"], r["per_replica_batch"]) == (2, 2, 64, 32)
        assert r["start_epoch"] == 1 and r["steps_per_epoch"] == 4 and len(r["loss"]) == 1 and r["loss"][0] > 0
    # Synchronous training: both workers saw the same all-reduced losses and hold the same weights.
    assert chief["loss"] == other["loss"]
    assert chief["weights_sha256"] == other["weights_sha256"]
    # The chief saved the model; the other worker cleaned up its temporary copies.
    assert chief["saved_model"] and Path(chief["saved_model"]).is_file() and other["saved_model"] is None
    assert not list(tmp_path.rglob("workertemp_*"))
    assert_nothing_left(tmp_path)


def test_worker_needs_tf_config():
    with pytest.raises(ChildError, match="TF_CONFIG is not set") as info:
        run_child("course_utils.distribute.worker:train", {}, timeout_s=60, env={"TF_CONFIG": None}, what="A worker")
    assert info.value.error["type"] == "WorkerError" and "run_local_workers" in info.value.fix


# --- workers never outlive the kernel that started them ------------------------------------------------------

STARTER = (
    "import sys\n"
    "from course_utils.distribute import run_local_workers\n"
    "run_local_workers(2, folder=sys.argv[1], epochs=1, images=256, timeout_s=600)\n"
)


@pytest.mark.skipif(os.name == "nt", reason="SIGKILL")
def test_workers_end_when_the_kernel_that_started_them_is_killed(tmp_path):
    """`kill -KILL` of notebook 07's kernel: its workers end by themselves within seconds, and each carries a
    time limit of its own (the run's, plus a margin) in case nothing else stops it."""
    env = {**os.environ, "TF_CPP_MIN_LOG_LEVEL": "2"}
    starter = subprocess.Popen([sys.executable, "-c", STARTER, str(tmp_path)], env=env)
    try:
        deadline = time.monotonic() + 60
        while len(workers := [pid for pid in leftover_processes(tmp_path) if pid != starter.pid]) < 2:
            assert time.monotonic() < deadline, "the workers did not start"
            time.sleep(0.1)
        limits = {psutil.Process(pid).environ().get("COURSE_TIME_LIMIT_S") for pid in workers}
        starter.kill()  # as `kill -KILL` of the kernel: no cleanup runs in it
        starter.wait()
        deadline = time.monotonic() + 5
        while leftover := leftover_processes(tmp_path):
            assert time.monotonic() < deadline, f"the workers {leftover} outlived the process that started them"
            time.sleep(0.1)
        assert limits == {str(600 + distribute.WORKER_TIME_MARGIN_S)}
    finally:
        starter.kill()
        starter.wait()
        for pid in leftover_processes(tmp_path):
            psutil.Process(pid).kill()


# --- notebook 07 shows the error a student can act on ----------------------------------------------------------


def notebook_07_cell(marker: str) -> str:
    """The source of notebook 07's code cell that contains ``marker``."""
    nb = json.loads((ROOT / "notebooks" / "07_beyond_one_gpu.ipynb").read_text(encoding="utf-8"))
    [cell] = [c for c in nb["cells"] if c["cell_type"] == "code" and marker in "".join(c["source"])]
    return "".join(cell["source"])


def test_notebook_07s_crash_demo_shows_a_worker_error_it_did_not_ask_for(tmp_path):
    """`course run 07 --smoke -p WORKER_TIMEOUT_S 5`: the crash demo's workers run out of time before the crash
    it asks for. The student must see that WorkerError (what happened, what to do), not a StopIteration."""
    import course_utils

    namespace = {
        "course_utils": course_utils, "distribute": distribute, "work_dir": tmp_path, "WORKERS": 2,
        "WORKER_EPOCHS": 2, "DATASET": "mnist", "n": 256, "BATCH_SIZE": 64, "SEED": 0, "WORKER_TIMEOUT_S": 1,
        "CRASH_DEMO": True,
    }
    with pytest.raises(WorkerError) as info:
        exec(notebook_07_cell('"crash_at_epoch": 1'), namespace)
    assert "did not finish within 1 s" in info.value.what and "raise the time limit" in info.value.fix
    assert_nothing_left(tmp_path)


def test_notebook_07_keeps_its_files_under_its_own_run_folder():
    """Not in the system's temporary folder, where every run that failed half-way left a course07-* folder."""
    cell = notebook_07_cell("work_dir =")
    assert "course.work_dir()" in cell and "tempfile" not in cell


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
