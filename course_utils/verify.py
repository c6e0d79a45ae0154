"""Notebook 02's instruments: a placement log read as data, old snippets run safely, and the answer.

``placement_log()`` runs a small program in a *fresh* Python process (``system.child``) with
``tf.debugging.set_log_device_placement(True)`` as its first TensorFlow statement (as the guide
advises): by default a matrix product on each device; the notebook passes the same program as
text, so the student sees the code. It returns the log as records. Why a child process:
TensorFlow's C++ core writes placement to the process's file descriptors (standard output, in
our TF 2.21 runs), not through Python, and in those runs it kept reporting new kinds of ops
after ``set_log_device_placement(False)`` - inside the notebook's kernel it would scatter lines
over every later cell. Both of the child's outputs go to one log, which is read.

``attempt(snippet, fn)`` runs an outdated snippet (``tf.test.is_gpu_available()``,
``model.layers[0].weights[0].device``) and returns what happened - value, exception, and
the warnings TensorFlow logged - instead of letting a traceback be the lesson's output.

``gpu_answer(...)`` turns what the notebook saw into one plain sentence - "TensorFlow can use a
GPU here: yes/no, because ..." - with the troubleshooting entry to read when the answer is no.
"""

from __future__ import annotations

import logging
import os
import re
import warnings
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from course_utils.device import check_device
from course_utils.errors import ChildError
from course_utils.i18n import translator
from course_utils.system.child import run_python

_PLACEMENT = re.compile(r"^(\S+): \((\S+)\): (/job:\S+)$", re.M)
_EXECUTING = re.compile(r"Executing op (\S+) in device (\S+)")
_FROM = re.compile(r"^From \S+:\d+: ")
_ = translator("course")


PLACEMENT_PROGRAM = """\
import tensorflow as tf

tf.debugging.set_log_device_placement(True)  # the first statement: log every placement from here on
a = tf.random.normal((64, 64))
b = tf.random.normal((64, 64))
results = []
for device in tf.config.list_logical_devices():
    with tf.device(device.name):  # place the product on this device
        product = tf.linalg.matmul(a, b)
    results.append((device.name, product.device))  # (asked for, ran on)
"""


def _placement_child(payload: Mapping[str, Any]) -> list[list[str]]:
    """Runs in the fresh process: the program, placement logged from its start.

    The program leaves ``results``: ``(device asked for, device that produced the product)`` pairs.
    The placement lines themselves go to the process's output, which the parent reads.
    """
    namespace: dict[str, Any] = {"__name__": "__placement__"}
    exec(compile(payload["program"], "<placement program>", "exec"), namespace)  # noqa: S102 - the notebook's own code
    return [[str(asked), str(ran)] for asked, ran in namespace.get("results", [])]


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


def placement_log(size: int = 64, timeout: float = 300, *, program: str | None = None) -> PlacementLog:
    """Run ``program`` (default ``PLACEMENT_PROGRAM``: a ``size`` x ``size`` matrix product on every logical
    device) in a fresh process; return its log.

    The program should start with ``tf.debugging.set_log_device_placement(True)`` and leave a list
    ``results`` of ``(device asked for, device that ran it)`` pairs. A child that fails or runs past
    ``timeout`` seconds is stopped, and the log says so: a non-zero ``returncode`` and the error in
    ``stderr_tail`` (the notebook's checkpoint checks both).
    """
    if program is None:
        program = PLACEMENT_PROGRAM.replace("(64, 64)", f"({int(size)}, {int(size)})")
    env = {"TF_CPP_MIN_LOG_LEVEL": os.environ.get("TF_CPP_MIN_LOG_LEVEL", "2")}
    try:
        run = run_python(
            "course_utils.verify:_placement_child", {"program": program}, timeout_s=timeout, env=env,
            what=_("The placement-log process"), name="placement-log",
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
        outcome = f"-> {self.value!r}" if self.ok else _("fails: {error}").format(error=self.error)
        logged = "".join("\n    " + _("logged: {warning}").format(warning=w) for w in self.warnings)
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


# ----------------------------------------------------------------------------- the answer

TROUBLESHOOTING_INDEX = "docs/troubleshooting.md#index"


@dataclass(frozen=True)
class GpuAnswer:
    """Can TensorFlow use a GPU here? ``usable``, the reason in words, and where to read more."""

    usable: bool
    because: str
    see: str  # "docs/troubleshooting.md#<anchor>": the entry that fits what the doctor found
    finding: str | None = None  # the code of the doctor's finding that ``see`` explains

    def __str__(self) -> str:
        said = (_("TensorFlow can use a GPU here: yes, because {because}") if self.usable
                else _("TensorFlow can use a GPU here: no, because {because}"))
        return said.format(because=self.because)

    def advice(self) -> str:
        """What to do next, in one line."""
        if self.usable:
            return _("The GPU works: without a tf.device scope, TensorFlow puts work on it.")
        if self.finding:
            return _("No GPU: TensorFlow runs on the CPU here. The doctor's main finding is {finding}. See {see}, or "
                     "run `course doctor` in a terminal.").format(finding=self.finding, see=self.see)
        return _("No GPU: TensorFlow runs on the CPU here. See {see}, or run `course doctor` in a terminal.").format(
            see=self.see)

    def as_asked(self, device: str) -> bool:
        """The checkpoint's test: False only when ``device`` is "gpu" (a GPU was asked for) and none is usable."""
        return self.usable or check_device(device) != "gpu"

    def label(self, device: str) -> str:
        """The checkpoint line: the answer, and what DEVICE asked for."""
        choice = check_device(device)
        said = _("{answer}; DEVICE={choice!r} requires a GPU") if choice == "gpu" else _(
            "{answer}; DEVICE={choice!r} accepts the CPU")
        return said.format(answer=self, choice=choice)


def _link(findings: Iterable[Any]) -> tuple[str, str | None]:
    """The troubleshooting entry of the worst finding that has one (errors, then warnings, then infos), and that
    finding's code; the page's index and None when no finding has an entry."""
    from course_utils.doctor.troubleshooting import see

    found = list(findings)
    for severity in ("error", "warning", "info"):
        for finding in found:
            link = see(finding.code) if finding.severity == severity else None
            if link:
                return link, finding.code
    return TROUBLESHOOTING_INDEX, None


def gpu_answer(
    gpus: Sequence[str], placed: Iterable[tuple[str, str]], why_not: str, findings: Iterable[Any] = ()
) -> GpuAnswer:
    """The answer from what the notebook saw: the GPUs TensorFlow lists (their names), where each product
    placed on a device ran (``(asked, ran)`` pairs), the reason TensorFlow gives for having no GPU
    (``device.why_no_gpu``), and the doctor's findings (for the troubleshooting entry).

    Yes needs both: a GPU listed, and a product placed on a GPU that ran there.
    """
    link, code = _link(findings)
    on_gpu = [short_device(ran) for asked, ran in placed
              if "GPU" in short_device(asked) and short_device(asked) == short_device(ran)]
    if gpus and on_gpu:
        because = (_("TensorFlow lists {count} GPUs ({names}), and a matrix product placed on {device} ran there")
                   if len(gpus) > 1 else
                   _("TensorFlow lists {count} GPU ({names}), and a matrix product placed on {device} ran there"))
        return GpuAnswer(True, because.format(count=len(gpus), names=", ".join(gpus), device=on_gpu[0]),
                         TROUBLESHOOTING_INDEX)
    if gpus:
        return GpuAnswer(False, _("TensorFlow lists {count} GPU(s), but no matrix product placed on a GPU ran "
                                  "there").format(count=len(gpus)), link, code)
    return GpuAnswer(False, why_not, link, code)
