"""Profiling a few steps: the range rules, the trace a profiled run leaves, and the steps read from it."""

from __future__ import annotations

from pathlib import Path

import numpy as np
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

BATCHES_PER_EPOCH = 8  # 256 images, batch 32
EPOCHS = 2
PROFILE = (10, 13)  # batches 2-5 of epoch 2 (counted from 1, across epochs; both ends included)
TRACE_GLOB = "train/plugins/profile/*/*.xplane.pb"  # where notebook 06 looks for a run's profile


@pytest.mark.parametrize(("value", "wanted"), [(None, None), (0, None), (False, None),  # no profiling
                                              ((MIN_START, MIN_START), (MIN_START, MIN_START)), ((10, 14), (10, 14)),
                                              ([10, 19], (10, 19)), ((3, 3 + MAX_STEPS - 1), (3, 3 + MAX_STEPS - 1))])
def test_no_profiling_or_a_good_range(value, wanted):
    assert check_profile_batch(value, total_batches=100) == wanted


@pytest.mark.parametrize(
    ("bad", "words"),
    [
        ((1, 5), "warm-up"),
        ((2, 4), "warm-up"),
        ((10, 20), "11 batches"),  # the Keras docs' example: both ends count, so it is 11 batches
        ((8, 5), "ends before it starts"),
        ((5,), "pair"),
        ("10,14", "pair"),
        ((10.0, 14), "pair"),
        ((True, 4), "pair"),
        ((10, 30), "21 batches"),
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


# ----------------------------------------------------------------------------- a real profile


@pytest.fixture(scope="module")
def profiled(tmp_path_factory):
    """The blog post's CNN trained for 2 epochs of 8 batches, with Keras's own callback: one run profiled, one not."""
    from course_utils.core.tf_setup import quiet_tensorflow

    quiet_tensorflow()
    import keras
    import tensorflow as tf

    from course_utils.models import build_blog_cnn

    root = tmp_path_factory.mktemp("logs")
    rng = np.random.default_rng(0)
    images = rng.integers(0, 256, size=(BATCHES_PER_EPOCH * 32, 28, 28), dtype=np.uint8)
    labels = rng.integers(0, 10, size=len(images)).astype(np.int32)
    train = tf.data.Dataset.from_tensor_slices((images[..., None].astype(np.float32) / 255.0, labels)).batch(32)
    for run, profile in (("profiled", PROFILE), ("plain", 0)):
        keras.utils.set_random_seed(0)
        model = build_blog_cnn()
        model.compile(optimizer="adam", loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True))
        callback = keras.callbacks.TensorBoard(log_dir=str(root / run), histogram_freq=0, profile_batch=profile)
        model.fit(train, epochs=EPOCHS, shuffle=False, verbose=0, callbacks=[callback])
    return root


def test_a_profiled_run_leaves_one_trace_of_exactly_the_profiled_steps_where_the_notebook_looks(profiled):
    assert sorted((profiled / "plain").glob(TRACE_GLOB)) == [], "profile_batch=0: no trace"
    (trace,) = (profiled / "profiled").glob(TRACE_GLOB)
    assert trace.stat().st_size > 10_000
    steps = profiled_steps(trace)
    start, stop = PROFILE
    # step_num is the batch's index within its epoch, from 0: global batch 10 -> epoch 2, index 1
    assert [step.batch for step in steps] == [(b - 1) % BATCHES_PER_EPOCH for b in range(start, stop + 1)]
    assert all(step.ms > 0 and 0 < step.input_ms <= step.ms for step in steps), steps
    # a cached, prefetched pipeline and a CNN step: the wait is a small part of each step (tens of microseconds)
    assert sum(step.input_ms for step in steps) < sum(step.ms for step in steps)


def test_without_tensorflows_protocol_buffer_the_reader_says_what_to_do(profiled, monkeypatch):
    import course_utils.lessons.nb06.tb_profile as tb_profile

    monkeypatch.setattr(tb_profile, "_xspace_class", lambda: None)
    (trace,) = (profiled / "profiled").glob(TRACE_GLOB)
    with pytest.raises(CourseError) as caught:
        profiled_steps(trace)
    assert "xplane_pb2" in caught.value.what and "xprof" in caught.value.fix


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
