"""Profiling a few training steps with the Keras TensorBoard callback, and reading the trace back.

``keras.callbacks.TensorBoard(profile_batch=(start, stop))`` starts TensorFlow's profiler
when training reaches batch ``start`` and stops it after batch ``stop``. What the
callback does, read from its source (``keras/src/callbacks/tensorboard.py``, Keras 3.15):

- batches are counted **from the start of training, across epochs**, from 1: with 7
  batches an epoch, batch 10 is the third batch of epoch 2;
- **both ends are included**: ``(10, 14)`` profiles 5 batches;
- the trace is written to ``<run>/train/plugins/profile/<timestamp>/<host>.xplane.pb``
  (docs/references.md#profiling), which TensorBoard's profile plugin (XProf) shows;
- profiling is off unless ``profile_batch`` is set (docs/references.md#tensorboard-callback).

The course's rule, after TensorFlow's profiler guide (https://www.tensorflow.org/guide/profiler: at
most 10 steps at a time, and not the first batches): ``check_profile_batch`` refuses ranges that start before batch
``MIN_START`` - batch 1 includes tracing the training step into a graph (notebook 05
shows the first epoch is slower for that reason) - or span more than ``MAX_STEPS``
batches, or end after the last batch of the run (then nothing, or not all of it, would
be profiled).

``summarize_trace`` reads an ``.xplane.pb`` without the profile plugin, with the XSpace
protocol buffer that TensorFlow ships (``tensorflow.tsl.profiler.protobuf.xplane_pb2``).
"""

from __future__ import annotations

import os
import re
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from course_utils.errors import ParameterError
from course_utils.i18n import translator

_ = translator("course")

MIN_START = 3  # batches 1 and 2 are warm-up: the first one traces the training step
MAX_STEPS = 10  # at most 10 steps at a time (https://www.tensorflow.org/guide/profiler)
TRACE_GLOB = "train/plugins/profile/*/*.xplane.pb"
STEP_EVENT = "Profiled batch"  # the TraceMe Keras wraps around each profiled batch
# A TensorFlow op event is named "<op name>:<OpType>", e.g. "sequential/conv2d/Relu:_MklNativeFusedConv2D";
# other events ("ExecutorState::Process", "EagerLocalExecute: __inference_...") are not ops.
_OP_EVENT = re.compile(r"^[^\s:]+:(?P<type>[A-Za-z_][A-Za-z0-9_]*)$")


def check_profile_batch(profile_batch: Any, *, total_batches: int | None = None) -> tuple[int, int] | None:
    """Validate a ``profile_batch`` range; return ``(start, stop)``, or ``None`` for no profiling.

    ``None``, ``0`` and ``False`` mean no profiling. A range is two integers
    ``(start, stop)`` (a list is accepted: papermill passes tuples as lists), counted as
    the callback counts them: from 1, across epochs, both ends included.
    ``total_batches`` (training batches per epoch x epochs), when given, must reach ``stop``.
    """
    if profile_batch is None or profile_batch is False or profile_batch == 0:
        return None
    fix = _("Use two batch numbers (start, stop) with {least} <= start <= stop < start + {most}, e.g. "
            "(10, 14).").format(least=MIN_START, most=MAX_STEPS)
    if (
        not isinstance(profile_batch, (tuple, list))
        or len(profile_batch) != 2
        or not all(isinstance(b, int) and not isinstance(b, bool) for b in profile_batch)
    ):
        raise ParameterError(_("profile_batch = {value!r} is not a (start, stop) pair of batch numbers.").format(
            value=profile_batch), fix)
    start, stop = profile_batch
    if start < MIN_START:
        raise ParameterError(
            _("profile_batch = {value} starts at batch {start}: the first batches are warm-up "
              "(batch 1 traces the training step into a graph), not what training usually costs.").format(
                value=tuple(profile_batch), start=start),
            fix,
        )
    if stop < start:
        raise ParameterError(_("profile_batch = {value} ends before it starts.").format(value=tuple(profile_batch)),
                             fix)
    steps = stop - start + 1
    if steps > MAX_STEPS:
        raise ParameterError(
            _("profile_batch = {value} profiles {steps} batches (Keras counts both ends); "
              "a trace of more than {most} steps is large and slow to open.").format(
                value=tuple(profile_batch), steps=steps, most=MAX_STEPS),
            _("Profile at most {most}, e.g. ({start}, {stop}).").format(
                most=MAX_STEPS, start=start, stop=start + MAX_STEPS - 1),
        )
    if total_batches is not None and stop > total_batches:
        raise ParameterError(
            _("profile_batch = {value} ends at batch {stop}, but training runs only {total} batches (batches per "
              "epoch x epochs), so the range would not be profiled in full.").format(
                value=tuple(profile_batch), stop=stop, total=total_batches),
            _("Choose a range that ends by the last batch, or train on more images or for more epochs."),
        )
    return start, stop


def find_traces(run_dir: str | os.PathLike[str]) -> list[Path]:
    """The ``.xplane.pb`` traces a run's TensorBoard callback wrote, oldest profile first."""
    return sorted(Path(run_dir).glob(TRACE_GLOB))


@dataclass
class Plane:
    """One plane of a trace: a host or a device, with its timelines ("lines", often threads)."""

    name: str
    lines: int
    events: int


@dataclass
class TraceSummary:
    """What one ``.xplane.pb`` holds, read without the profile plugin."""

    path: Path
    bytes: int
    hosts: list[str] = field(default_factory=list)
    planes: list[Plane] | None = None  # None: the XSpace protobuf could not be imported
    steps: list[tuple[int, float]] = field(default_factory=list)  # (batch in its epoch, from 0; milliseconds)
    op_types: list[tuple[str, float, int]] = field(default_factory=list)  # (TF op type, total ms, count)
    note: str = ""

    @property
    def events(self) -> int:
        return sum(p.events for p in self.planes or [])


def _xspace_class():
    try:
        from tensorflow.tsl.profiler.protobuf import xplane_pb2
    except ImportError:
        return None
    return xplane_pb2.XSpace


def summarize_trace(path: str | os.PathLike[str], *, top: int = 8) -> TraceSummary:
    """Planes, profiled steps and the op types that took longest, from one ``.xplane.pb``.

    Steps are the ``"Profiled batch"`` events Keras records around each profiled batch
    (their ``step_num`` is the batch's index within its epoch, from 0). Op types come from
    TensorFlow op events (named ``"op name:OpType"``); their times are summed over every
    thread that ran them, so they can add up to more than the wall time of the steps.
    """
    path = Path(path)
    summary = TraceSummary(path=path, bytes=path.stat().st_size)
    xspace_class = _xspace_class()
    if xspace_class is None:
        summary.note = _("tensorflow.tsl.profiler.protobuf.xplane_pb2 is not importable: only the file size is known")
        return summary
    space = xspace_class()
    space.ParseFromString(path.read_bytes())
    summary.hosts = list(space.hostnames)
    summary.planes = []
    op_ps: Counter[str] = Counter()
    op_count: Counter[str] = Counter()
    steps = []
    for plane in space.planes:
        events = 0
        stat_names = {k: m.name for k, m in plane.stat_metadata.items()}
        for line in plane.lines:
            events += len(line.events)
            for event in line.events:
                name = plane.event_metadata[event.metadata_id].name
                if name == STEP_EVENT:
                    numbers = [s.int64_value or s.uint64_value for s in event.stats
                               if stat_names.get(s.metadata_id) == "step_num"]
                    step = numbers[0] if numbers else -1
                    steps.append((event.offset_ps + line.timestamp_ns * 1000, int(step), event.duration_ps / 1e9))
                else:
                    op = _OP_EVENT.match(name)
                    if op:
                        op_ps[op["type"]] += event.duration_ps
                        op_count[op["type"]] += 1
        summary.planes.append(Plane(plane.name, len(plane.lines), events))
    summary.steps = [(step, ms) for _start, step, ms in sorted(steps)]
    summary.op_types = [(op, ps / 1e9, op_count[op]) for op, ps in op_ps.most_common(top)]
    return summary


def describe(summary: TraceSummary, *, root: str | os.PathLike[str] | None = None) -> str:
    """A few lines a student can read: where the trace is, how big, what it holds."""
    where = summary.path.relative_to(root) if root is not None else summary.path
    lines = [_("trace: {path} ({kib:,.0f} KiB)").format(path=where, kib=summary.bytes / 1024)]
    if summary.planes is None:
        lines.append(f"  ({summary.note})")
        return "\n".join(lines)
    lines.append("  " + _("hosts: {hosts}; {planes} planes, {events:,} events").format(
        hosts=", ".join(summary.hosts) or "-", planes=len(summary.planes), events=summary.events))
    for plane in summary.planes:
        lines.append("    " + _("plane {name!r}: {lines} lines, {events:,} events").format(
            name=plane.name, lines=plane.lines, events=plane.events))
    if summary.steps:
        shown = ", ".join(f"{step}: {ms:.1f} ms" for step, ms in summary.steps)
        lines.append("  " + _("{count} profiled steps (batch in its epoch: wall time): {steps}").format(
            count=len(summary.steps), steps=shown))
    if summary.op_types:
        lines.append("  " + _("op types by total time (summed over threads):"))
        lines += [f"    {op:40} {ms:9.1f} ms  x{count}" for op, ms, count in summary.op_types]
    return "\n".join(lines)
