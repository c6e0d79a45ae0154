"""Training on several devices and workers with ``tf.distribute``: the machinery of notebook 07, which writes the
TensorFlow itself.

``run_local_workers`` runs a worker program N times on 127.0.0.1, each a ``core.child`` of its own: stopped
whatever happens, and ending by itself when its starter dies or the run's time limit passes.

Where the workers listen, and why they get a network of their own (``private_net``): CONTRIBUTING, "Worker
exposure" (``GrpcServer::Init`` binds ``"0.0.0.0:" + port``,
https://github.com/tensorflow/tensorflow/blob/master/tensorflow/core/distributed_runtime/rpc/grpc_server_lib.cc;
the worker service has no authentication).

Sources: tensorflow.org/guide/distributed_training, tensorflow.org/tutorials/distribute/multi_worker_with_keras.
"""

from __future__ import annotations

import json
import os
import re
import runpy
import sys
import time
from collections.abc import Mapping, Sequence
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from course_utils.core import variables
from course_utils.core.child import Child, start_python
from course_utils.core.errors import ParameterError, WorkerError
from course_utils.core.i18n import translator
from course_utils.core.processes import LOCALHOST, free_ports
from course_utils.core.processes import leftover_processes as leftover_processes  # notebook 07 calls it from here
from course_utils.lessons.nb07.private_net import PrivateNetwork

_ = translator("course")

WORKER_TIME_MARGIN_S = 30  # a worker ends by itself this long after the run's time limit, if nothing stopped it


@dataclass(frozen=True)
class BatchPlan:
    """How one epoch is cut: every step takes ``global_batch`` images, ``per_replica`` on each replica."""

    global_batch: int
    replicas: int
    per_replica: int
    steps_per_epoch: int
    images_per_epoch: int  # steps_per_epoch * global_batch (the remainder is dropped)


def batch_plan(global_batch: int, replicas: int, images: int) -> BatchPlan:
    """Check that ``global_batch`` splits evenly over ``replicas`` and that an epoch has a step."""
    if global_batch % replicas:
        raise ParameterError(
            _("A global batch of {batch} images cannot be split evenly over {replicas} replicas.").format(
                batch=global_batch, replicas=replicas),
            _("Choose a BATCH_SIZE that is a multiple of {replicas}, e.g. {example}.").format(
                replicas=replicas, example=replicas * max(1, global_batch // replicas)),
        )
    steps = images // global_batch
    if steps < 1:
        raise ParameterError(
            _("{images} images do not fill one global batch of {batch}.").format(images=images, batch=global_batch),
            _("Use more IMAGES or a smaller BATCH_SIZE."),
        )
    return BatchPlan(global_batch, replicas, global_batch // replicas, steps, steps * global_batch)


def tf_config(workers: Sequence[str], index: int) -> dict[str, Any]:
    """The ``TF_CONFIG`` of worker ``index`` in a cluster of ``workers`` ("host:port" each).

    Every worker gets the same ``cluster`` and its own ``task``; worker 0 is the chief
    (tensorflow.org/tutorials/distribute/multi_worker_with_keras).
    """
    return {"cluster": {"worker": list(workers)}, "task": {"type": "worker", "index": index}}


def local_cluster(workers: int) -> list[str]:
    """Addresses for ``workers`` local workers: 127.0.0.1 and a free port each."""
    if workers < 1:
        raise ParameterError(_("WORKERS = {workers} is not a cluster.").format(workers=workers),
                             _("Use 1 or more workers (2 shows the idea)."))
    return [f"{LOCALHOST}:{port}" for port in free_ports(workers)]


@dataclass
class LocalRun:
    """What ``run_local_workers`` hands back: the cluster's addresses, how long it ran, and its network."""

    addresses: list[str]
    duration_s: float
    network: str = "host"  # "private": the workers had a network namespace of their own (private_net)

    def tf_config(self, index: int) -> dict[str, Any]:
        """The ``TF_CONFIG`` worker ``index`` was started with."""
        return tf_config(self.addresses, index)


def _short_lines(path: Path, width: int = 200) -> list[str] | None:
    """A worker log's lines, each cut to ``width`` characters; None when there is no log."""
    try:
        text = path.read_text(encoding="utf-8", errors="replace").strip().splitlines()
    except OSError:
        return None
    return [line if len(line) <= width else line[: width - 3] + "..." for line in text]


def _last_error(path: Path) -> str | None:
    """The last exception line of a worker's log (``ValueError: bad shape``), None when it has none."""
    exception = re.compile(r"^[A-Za-z_][\w.]*(Error|Exception|Exit|Interrupt)\b")
    return next((line for line in reversed(_short_lines(path) or []) if exception.match(line)), None)


def first_to_fail(failed: list[int], logs: list[Path]) -> int:
    """Of workers that failed within one poll, the one whose log was written last the earliest.

    The first to fail is the cause; a peer that lost it fails a moment later with a knock-on error.
    """

    def last_write(i: int) -> tuple[float, int]:
        try:
            return logs[i].stat().st_mtime, i
        except OSError:
            return float("inf"), i

    return min(failed, key=last_write)


def _tail(path: Path, lines: int = 6) -> str:
    """The end of a worker's log for an error message: its last exception line first, then the last lines."""
    short = _short_lines(path)
    if not short:
        return "(no log)" if short is None else "(empty log)"
    error = _last_error(path)
    return (f"last error: {error}\n" if error else "") + "\n".join(short[-lines:])


def run_program(payload: Mapping[str, Any]) -> None:
    """The child side of ``run_local_workers``: run the worker program as ``python PROGRAM FOLDER`` would."""

    program = str(payload["program"])
    sys.argv = [program, *map(str, payload.get("args", []))]
    sys.path.insert(0, str(Path(program).parent))  # as python PROGRAM puts the program's folder first
    runpy.run_path(program, run_name="__main__")


def _worker_failed(index: int, count: int, status: int, seconds: float, log: Path) -> WorkerError:
    """A worker exited with an error: every worker was stopped, and the first to fail is named."""
    return WorkerError(
        _("Worker {index} of {count} exited with status {status} after {seconds:.0f} s, so the "
          "synchronous run cannot go on; every worker was stopped. End of {log}:\n{tail}").format(
            index=index, count=count, status=status, seconds=seconds, log=log, tail=_tail(log)),
        _("Read the worker's log above. In synchronous training one lost worker stops them all: "
          "fix the cause and start the whole cluster again - with checkpoints of the training state "
          "(tf.train.CheckpointManager in the training loop) it resumes from the last finished epoch."),
        worker=index,
        last_error=_last_error(log),
    )


def _workers_timed_out(count: int, seconds: float, waiting: list[int], log: Path) -> WorkerError:
    """The time limit passed with ``waiting`` still running: every worker was stopped."""
    return WorkerError(
        _("The {count} workers did not finish within {seconds:g} s (still running: workers {waiting}); "
          "every worker was stopped. End of {log}:\n{tail}").format(
            count=count, seconds=seconds, waiting=waiting, log=log, tail=_tail(log)),
        _("A worker waits for all its peers, so a peer that never started (a wrong address or "
          "port in TF_CONFIG) blocks the others. If the logs show training, the machine is "
          "just slower: raise the time limit or lower EPOCHS / IMAGES."),
        last_error=_last_error(log),
        timed_out=True,
    )


def _network(stack: ExitStack, folder: Path, private: bool | None) -> tuple[str | None, str]:
    """The interpreter the workers run and their network: ``"private"`` (a namespace of their own), else ``"host"``.

    ``private``: True requires the private network, False never uses it, None uses it where it can be made - and
    requires it on a shared server (``COURSE_SHARED_SERVER``), where classmates' processes could reach the ports.
    """
    if private is False:
        return None, "host"
    try:
        net = stack.enter_context(PrivateNetwork(folder))  # entered first: it ends after the workers
    except WorkerError:
        if private or variables.flag(variables.SHARED_SERVER):
            raise
        return None, "host"
    return net.python(), "private"


def run_local_workers(
    program: str | os.PathLike[str],
    workers: int = 2,
    *,
    folder: str | os.PathLike[str],
    timeout_s: float = 300,
    private_network: bool | None = None,
) -> LocalRun:
    """Start the worker ``program`` ``workers`` times on this machine, as ``python PROGRAM FOLDER``; wait for all.

    Each worker is a ``core.child`` with its own ``TF_CONFIG`` (127.0.0.1, free ports) and log
    ``FOLDER/worker-<i>.log``, and no GPU (local workers would compete for one, as TensorFlow's tutorial notes).
    Returns when all exited successfully; a ``WorkerError`` (``worker``, ``last_error``, ``timed_out``) as soon as
    one fails or ``timeout_s`` passes. Every worker's process group is stopped before this returns, and should this
    process be killed each worker ends by itself. ``private_network``: see ``_network``.
    """
    program = Path(program).resolve()
    if not program.is_file():
        raise ParameterError(_("The worker program {program} does not exist.").format(program=program),
                             _("Run the cell that writes it (%%writefile) first."))
    folder = Path(folder).resolve()
    folder.mkdir(parents=True, exist_ok=True)
    addresses = local_cluster(workers)
    logs = [folder / f"worker-{i}.log" for i in range(workers)]
    payload = {"program": str(program), "args": [str(folder)]}
    children: list[Child] = []
    start = time.monotonic()
    with ExitStack() as stack:  # leaving it stops every worker's process group, whatever happened
        interpreter, network = _network(stack, folder, private_network)
        for i in range(workers):
            env: dict[str, str | None] = {"TF_CONFIG": json.dumps(tf_config(addresses, i))}
            env["TF_CPP_MIN_LOG_LEVEL"] = os.environ.get("TF_CPP_MIN_LOG_LEVEL", "2")
            env["CUDA_VISIBLE_DEVICES"] = "-1"
            child = start_python(
                "course_utils.lessons.nb07.distribute:run_program", payload, folder=folder, env=env, log=logs[i],
                name=f"worker-{i}", what=_("Worker {index} of {count}").format(index=i, count=workers),
                python=interpreter,
                time_limit_s=timeout_s + WORKER_TIME_MARGIN_S,  # and it ends when this process ends
            )
            children.append(stack.enter_context(child))
        deadline = start + timeout_s
        while True:
            codes = [child.process.poll() for child in children]
            failed = [i for i, code in enumerate(codes) if code not in (None, 0)]
            if failed:
                i = first_to_fail(failed, logs)
                stack.close()  # stop them all before the message says so
                raise _worker_failed(i, workers, codes[i], time.monotonic() - start, logs[i])
            if all(code == 0 for code in codes):
                break
            if time.monotonic() > deadline:
                waiting = [i for i, code in enumerate(codes) if code is None]
                stack.close()
                raise _workers_timed_out(workers, timeout_s, waiting, logs[waiting[0]])
            time.sleep(0.2)
    return LocalRun(addresses, round(time.monotonic() - start, 1), network)
