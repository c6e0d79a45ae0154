"""Profiling a few training steps with the Keras TensorBoard callback, and reading the steps back.

What ``keras.callbacks.TensorBoard(profile_batch=(start, stop))`` does (``keras/src/callbacks/tensorboard.py``,
Keras 3.15): batches count from 1 across epochs, both ends included; each profiled batch is a ``"Profiled batch"``
event whose ``step_num`` is its index in its epoch; the trace goes to
``<run>/train/plugins/profile/<timestamp>/<host>.xplane.pb`` (docs/references.md#profiling). After TensorFlow's
profiler guide (https://www.tensorflow.org/guide/profiler: at most 10 steps, not the first batches)
``check_profile_batch`` refuses a range that starts before ``MIN_START`` (batch 1 traces the step into a graph),
spans more than ``MAX_STEPS`` or ends after the run's last batch.

``profiled_steps`` reads a trace with TensorFlow's XSpace protobuf: each step's wall time and its time inside
``IteratorGetNext``, waiting for the input pipeline (https://www.tensorflow.org/guide/data_performance_analysis),
as XProf counts it (``ClassifyCpuEvent``, openxla/xprof ``xprof/convert/xplane_to_step_events.cc``). XProf's
host-to-device copies are left out (a batch of MNIST is a few hundred KB).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, NamedTuple

from course_utils.core.errors import CourseError, ParameterError
from course_utils.core.i18n import translator

_ = translator("course")

MIN_START = 3  # batches 1 and 2 are warm-up: the first one traces the training step
MAX_STEPS = 10  # at most 10 steps at a time (https://www.tensorflow.org/guide/profiler)
STEP_EVENT = "Profiled batch"  # the TraceMe Keras wraps around each profiled batch
INPUT_EVENT = "IteratorGetNext"  # events whose name starts with this: the step waits for its next batch


def check_profile_batch(profile_batch: Any, *, total_batches: int | None = None) -> tuple[int, int] | None:
    """Validate a ``profile_batch`` range; return ``(start, stop)``, or None (None, 0, False) for no profiling.
    Two integers (a list too: papermill passes tuples as lists), counted as the callback does; ``total_batches``
    (batches per epoch x epochs), when given, must reach ``stop``.
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


class Step(NamedTuple):
    """One profiled training step."""

    batch: int  # the batch's index in its epoch, from 0 (the step_num Keras records)
    ms: float  # the step's wall time
    input_ms: float  # the part of it spent waiting for the next batch (inside IteratorGetNext)


def _xspace_class():
    try:
        from tensorflow.tsl.profiler.protobuf import xplane_pb2
    except ImportError:
        return None
    return xplane_pb2.XSpace


def _merged(spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """Overlapping time spans joined: nested events (an op and its kernel) count once."""
    merged: list[tuple[int, int]] = []
    for begin, end in sorted(spans):
        if merged and begin <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(merged[-1][1], end))
        else:
            merged.append((begin, end))
    return merged


def profiled_steps(path: str | os.PathLike[str]) -> list[Step]:
    """The ``"Profiled batch"`` steps in one ``.xplane.pb``, in time order: wall time, and the time inside it
    covered by ``IteratorGetNext*`` events on any plane (module docstring).
    """
    xspace_class = _xspace_class()
    if xspace_class is None:
        raise CourseError(
            _("This TensorFlow has no tensorflow.tsl.profiler.protobuf.xplane_pb2, so the course cannot read "
              "the profile {path}.").format(path=path),
            _("Open the profile in TensorBoard's Profile tab instead (pip install xprof)."),
        )
    space = xspace_class()
    space.ParseFromString(Path(path).read_bytes())
    steps: list[tuple[int, int, int]] = []  # (begin ps, end ps, batch)
    waits: list[tuple[int, int]] = []
    for plane in space.planes:
        names = {key: meta.name for key, meta in plane.event_metadata.items()}
        stats = {key: meta.name for key, meta in plane.stat_metadata.items()}
        for line in plane.lines:
            for event in line.events:
                name = names.get(event.metadata_id, "")
                begin = line.timestamp_ns * 1000 + event.offset_ps
                end = begin + event.duration_ps
                if name == STEP_EVENT:
                    numbers = [s.int64_value or s.uint64_value for s in event.stats
                               if stats.get(s.metadata_id) == "step_num"]
                    steps.append((begin, end, int(numbers[0]) if numbers else -1))
                elif name.startswith(INPUT_EVENT):
                    waits.append((begin, end))
    waits = _merged(waits)
    result = []
    for begin, end, batch in sorted(steps):
        waited = sum(max(0, min(end, w_end) - max(begin, w_begin)) for w_begin, w_end in waits)
        result.append(Step(batch, (end - begin) / 1e9, waited / 1e9))
    return result
