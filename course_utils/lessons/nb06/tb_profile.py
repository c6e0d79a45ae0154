"""Profiling a few training steps with the Keras TensorBoard callback, and reading the steps back.

``keras.callbacks.TensorBoard(profile_batch=(start, stop))`` starts TensorFlow's profiler
when training reaches batch ``start`` and stops it after batch ``stop``. What the
callback does, read from its source (``keras/src/callbacks/tensorboard.py``, Keras 3.15):

- batches are counted **from the start of training, across epochs**, from 1: with 7
  batches an epoch, batch 10 is the third batch of epoch 2;
- **both ends are included**: ``(10, 14)`` profiles 5 batches;
- each profiled batch is wrapped in a ``"Profiled batch"`` event whose ``step_num`` is the batch's
  index within its epoch, from 0;
- the trace is written to ``<run>/train/plugins/profile/<timestamp>/<host>.xplane.pb``
  (docs/references.md#profiling), which TensorBoard's profile plugin (XProf) shows;
- profiling is off unless ``profile_batch`` is set (0 turns it off).

The course's rule, after TensorFlow's profiler guide (https://www.tensorflow.org/guide/profiler: at
most 10 steps at a time, and not the first batches): ``check_profile_batch`` refuses ranges that start before batch
``MIN_START`` - batch 1 includes tracing the training step into a graph - or span more than ``MAX_STEPS``
batches, or end after the last batch of the run (then nothing, or not all of it, would be profiled).

``profiled_steps`` reads a trace without the profile plugin, with the XSpace protocol buffer that
TensorFlow ships (``tensorflow.tsl.profiler.protobuf.xplane_pb2``): each profiled step's wall time,
and the part of it spent waiting for the next batch. A training step asks its ``tf.data`` iterator
for the next batch in ``IteratorGetNext``; the time inside it is the time the input pipeline took
to hand over a batch (https://www.tensorflow.org/guide/data_performance_analysis). XProf counts
host events whose name starts with ``IteratorGetNext`` as "waiting for input" (``ClassifyCpuEvent``
in openxla/xprof ``xprof/convert/xplane_to_step_events.cc``); so does this reader. XProf also counts
host-to-device copies as input time; those are left out here (a batch of MNIST is a few hundred KB).
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
    """The profiled steps in one ``.xplane.pb``, in time order: wall time, and time spent waiting for input.

    Steps are the ``"Profiled batch"`` events Keras records around each profiled batch. The wait is
    the time, inside a step, covered by events whose name starts with ``IteratorGetNext`` on any
    plane (see the module docstring).
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
