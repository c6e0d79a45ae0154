"""Profiling a few steps: the range rules, and the steps read from a trace.

What a real profiled run leaves (one trace where notebook 06 looks, holding the profiled steps, read back) is checked
by the hosted tier (tests/tiers/test_course_run.py, test_06_tensorboard_key_results)."""

from __future__ import annotations

from pathlib import Path

import pytest

from course_utils.core.errors import CourseError, ParameterError
from course_utils.lessons.nb06.tb_profile import (
    INPUT_EVENT,
    MAX_STEPS,
    MIN_START,
    STEP_EVENT,
    check_profile_batch,
    profiled_steps,
)


@pytest.mark.parametrize(("value", "wanted"), [(None, None), (0, None), (False, None),  # no profiling
                                              ((MIN_START, MIN_START), (MIN_START, MIN_START)),
                                              ([10, 10 + MAX_STEPS - 1], (10, 10 + MAX_STEPS - 1))])
def test_no_profiling_or_a_good_range(value, wanted):
    assert check_profile_batch(value, total_batches=100) == wanted


@pytest.mark.parametrize(
    ("bad", "words"),
    [
        ((MIN_START - 1, 4), "warm-up"),
        ((10, 20), "11 batches"),  # the Keras docs' example: both ends count, so it is 11 batches
        ((8, 5), "ends before it starts"),
        ("10,14", "pair"),
        ((True, 4), "pair"),
    ],
)
def test_bad_ranges_say_what_to_do(bad, words):
    with pytest.raises(ParameterError) as caught:
        check_profile_batch(bad, total_batches=100)
    assert words in caught.value.what and caught.value.fix


def test_a_range_past_the_last_batch_is_refused():
    assert check_profile_batch((10, 14), total_batches=14) == (10, 14)
    with pytest.raises(ParameterError, match="only 12 batches"):
        check_profile_batch((10, 14), total_batches=12)


# ----------------------------------------------------------------------------- a trace written by hand

MS = 1_000_000_000  # picoseconds in a millisecond


def write_xspace(path: Path, steps: list[tuple[int, float, float]], waits: list[tuple[float, float]],
                 device_kernels: list[tuple[float, float]] = ()) -> Path:
    """An .xplane.pb as a profiled Keras run writes it: ``steps`` (batch, begin ms, end ms) on the host's Python
    thread, ``waits`` (begin ms, end ms) as IteratorGetNext events on an executor thread (each with the nested
    ``IteratorGetNextOp::DoCompute`` TensorFlow 2.21 records), and GPU kernels on a ``/device:GPU:0`` plane."""
    from tensorflow.tsl.profiler.protobuf import xplane_pb2

    space = xplane_pb2.XSpace(hostnames=["host"])
    host = space.planes.add(id=0, name="/host:CPU")
    for key, name in enumerate((STEP_EVENT, f"{INPUT_EVENT}:{INPUT_EVENT}", f"{INPUT_EVENT}Op::DoCompute",
                                "ExecutorState::Process"), start=1):
        host.event_metadata[key].id, host.event_metadata[key].name = key, name
    host.stat_metadata[1].id, host.stat_metadata[1].name = 1, "step_num"
    python = host.lines.add(id=1, name="python", timestamp_ns=5_000)
    for batch, begin, end in steps:
        event = python.events.add(metadata_id=1, offset_ps=int(begin * MS), duration_ps=int((end - begin) * MS))
        event.stats.add(metadata_id=1, int64_value=batch)
    executor = host.lines.add(id=2, name="tf_executor", timestamp_ns=5_000)
    for begin, end in waits:
        executor.events.add(metadata_id=2, offset_ps=int(begin * MS), duration_ps=int((end - begin) * MS))
        executor.events.add(metadata_id=3, offset_ps=int(begin * MS) + 1, duration_ps=int((end - begin) * MS) - 2)
        executor.events.add(metadata_id=4, offset_ps=int(end * MS), duration_ps=int(0.1 * MS))
    if device_kernels:
        gpu = space.planes.add(id=1, name="/device:GPU:0")
        gpu.event_metadata[1].id, gpu.event_metadata[1].name = 1, "void cudnn::conv2d_grouped_direct_kernel"
        stream = gpu.lines.add(id=1, name="Stream #14(Compute)", timestamp_ns=5_000)
        for begin, end in device_kernels:
            stream.events.add(metadata_id=1, offset_ps=int(begin * MS), duration_ps=int((end - begin) * MS))
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(space.SerializeToString())
    return path


def test_the_wait_is_counted_once_per_step_and_only_inside_its_step_in_time_order(tmp_path):
    trace = write_xspace(tmp_path / "t.xplane.pb",
                         steps=[(5, 14.0, 20.0), (3, 0.0, 10.0), (4, 10.0, 14.0)],  # not in time order in the file
                         waits=[(1.0, 3.0), (9.0, 11.0), (20.0, 30.0)],  # the second spans two steps; the last, none
                         device_kernels=[(3.0, 9.0)])
    steps = profiled_steps(trace)
    assert [step.batch for step in steps] == [3, 4, 5]
    assert [round(step.ms, 6) for step in steps] == [10.0, 4.0, 6.0]
    assert [round(step.input_ms, 6) for step in steps] == [3.0, 1.0, 0.0], "nested events once, outside steps never"


def test_without_tensorflows_protocol_buffer_the_reader_says_what_to_do(tmp_path, monkeypatch):
    import course_utils.lessons.nb06.tb_profile as tb_profile

    trace = write_xspace(tmp_path / "t.xplane.pb", steps=[(3, 0.0, 10.0)], waits=[])
    monkeypatch.setattr(tb_profile, "_xspace_class", lambda: None)
    with pytest.raises(CourseError) as caught:
        profiled_steps(trace)
    assert "xplane_pb2" in caught.value.what and "xprof" in caught.value.fix
