"""Notebook 02's two instruments: a placement log you can read as data, and old snippets run safely.

``placement_log()`` runs a small matrix product on each device in a *fresh* Python process
(``system.child``) with ``tf.debugging.set_log_device_placement(True)`` as its first TensorFlow
statement (as the guide advises), and returns the log as records. Why a child process:
TensorFlow's C++ core writes placement to the process's file descriptors (standard output, in
our TF 2.21 runs), not through Python, and in those runs it kept reporting new kinds of ops
after ``set_log_device_placement(False)`` - inside the notebook's kernel it would scatter lines
over every later cell. Both of the child's outputs go to one log, which is read.

``attempt(snippet, fn)`` runs an outdated snippet (``tf.test.is_gpu_available()``,
``model.layers[0].weights[0].device``) and returns what happened - value, exception, and
the warnings TensorFlow logged - instead of letting a traceback be the lesson's output.
"""

from __future__ import annotations

import logging
import os
import re
import warnings
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from course_utils.errors import ChildError
from course_utils.system.child import run_python

_PLACEMENT = re.compile(r"^(\S+): \((\S+)\): (/job:\S+)$", re.M)
_EXECUTING = re.compile(r"Executing op (\S+) in device (\S+)")
_FROM = re.compile(r"^From \S+:\d+: ")


def _placement_child(payload: Mapping[str, Any]) -> list[list[str]]:
    """Runs in the fresh process: a matrix product on every logical device, placement logged from the start.

    Returns ``[device asked for, device that produced the product]`` per logical device; the
    placement lines themselves go to the process's output, which the parent reads.
    """
    import tensorflow as tf

    tf.debugging.set_log_device_placement(True)  # first: log every placement decision from here on
    n = int(payload["size"])
    a = tf.random.stateless_normal((n, n), seed=(1, 2))
    b = tf.random.stateless_normal((n, n), seed=(3, 4))
    results = []
    for device in tf.config.list_logical_devices():
        with tf.device(device.name):
            product = tf.linalg.matmul(a, b)
        results.append([device.name, product.device])
    return results


@dataclass
class Placement:
    """One placement decision: a graph node, its op type, the device it was placed on."""

    node: str
    op: str
    device: str


@dataclass
class PlacementLog:
    results: list[tuple[str, str]]  # (device asked for, device that produced the product)
    records: list[Placement]  # every placement line TensorFlow printed
    lines: list[str]  # the raw placement lines
    returncode: int  # the child's exit status (-1 if it had to be stopped)
    stderr_tail: str = ""  # the end of its output; on a failure, what went wrong

    def matmuls(self) -> list[Placement]:
        """The placements of the matrix products themselves (MatMul, or oneDNN's _MklMatMul on CPUs)."""
        return [r for r in self.records if "MatMul" in r.op]

    def devices_with_matmul(self) -> set[str]:
        return {short_device(r.device) for r in self.matmuls()}


def short_device(name: str) -> str:
    """'/job:localhost/replica:0/task:0/device:GPU:0' -> 'GPU:0'."""
    return name.rsplit("device:", 1)[-1]


def parse_placement(stdout: str) -> tuple[list[Placement], list[str]]:
    """Placement records from TensorFlow's log: graph lines ``node: (Op): /job:...`` and eager
    ``Executing op Op in device ...`` lines."""
    records = [Placement(*m.groups()) for m in _PLACEMENT.finditer(stdout)]
    lines = [m.group(0) for m in _PLACEMENT.finditer(stdout)]
    for match in _EXECUTING.finditer(stdout):
        records.append(Placement(match.group(1), match.group(1), match.group(2)))
        lines.append(match.group(0))
    return records, lines


def placement_log(size: int = 64, timeout: float = 300) -> PlacementLog:
    """Run a ``size`` x ``size`` matrix product on every logical device in a fresh process; return its log.

    A child that fails or runs past ``timeout`` seconds is stopped, and the log says so: a
    non-zero ``returncode`` and the error in ``stderr_tail`` (the notebook's checkpoint checks both).
    """
    env = {"TF_CPP_MIN_LOG_LEVEL": os.environ.get("TF_CPP_MIN_LOG_LEVEL", "2")}
    try:
        run = run_python(
            "course_utils.verify:_placement_child", {"size": int(size)}, timeout_s=timeout, env=env,
            what="The placement-log process", name="placement-log",
        )
    except ChildError as error:
        records, lines = parse_placement(error.tail)
        code = error.returncode if error.returncode not in (None, 0) else -1
        return PlacementLog([], records, lines, code, error.what)
    results = [(str(asked), str(ran)) for asked, ran in run.value]
    records, lines = parse_placement(run.output)
    return PlacementLog(results, records, lines, run.returncode, "\n".join(run.output.strip().splitlines()[-5:]))


@dataclass
class Attempt:
    """What running a snippet did: its value, or the exception it raised, and what it logged."""

    snippet: str
    ok: bool
    value: Any = None
    error: str | None = None  # "IndexError: list index out of range"
    warnings: list[str] = field(default_factory=list)

    def __str__(self) -> str:
        outcome = f"-> {self.value!r}" if self.ok else f"fails: {self.error}"
        logged = "".join(f"\n    logged: {w}" for w in self.warnings)
        return f"{self.snippet}\n    {outcome}{logged}"


class _Collect(logging.Handler):
    def __init__(self, sink: list[str]) -> None:
        super().__init__(logging.WARNING)
        self.sink = sink

    def emit(self, record: logging.LogRecord) -> None:
        self.sink.append(record.getMessage())


def attempt(snippet: str, fn: Callable[[], Any]) -> Attempt:
    """Run ``fn`` (the code of ``snippet``); never raises an ``Exception``. What TensorFlow's Python
    side logs meanwhile (its "tensorflow" logger, ``warnings``) is collected instead of printed."""
    logged: list[str] = []
    logger = logging.getLogger("tensorflow")
    saved = (logger.level, logger.propagate, list(logger.handlers))
    for handler in saved[2]:
        logger.removeHandler(handler)  # in Jupyter TF's own handler prints to stdout
    logger.addHandler(_Collect(logged))
    logger.setLevel(logging.WARNING)
    logger.propagate = False
    result = Attempt(snippet, ok=False)
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            try:
                result.value, result.ok = fn(), True
            except Exception as error:  # noqa: BLE001 - the point is to show the failure as data
                result.error = f"{type(error).__name__}: {error}"
        logged += [str(w.message) for w in caught]
    finally:
        for handler in list(logger.handlers):
            logger.removeHandler(handler)
        for handler in saved[2]:
            logger.addHandler(handler)
        logger.setLevel(saved[0])
        logger.propagate = saved[1]
    # "From /tmp/ipykernel_1/123.py:3: x is deprecated" -> "x is deprecated" (the caller is the snippet itself)
    result.warnings = [_FROM.sub("", " ".join(message.split())) for message in logged]
    return result
