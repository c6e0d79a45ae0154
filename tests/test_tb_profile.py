"""Profiling a few steps: the range rules, the trace a profiled run leaves, and what is read from it."""

from __future__ import annotations

import numpy as np
import pytest

from course_utils.errors import ParameterError
from course_utils.tb_profile import (
    MAX_STEPS,
    MIN_START,
    TRACE_GLOB,
    check_profile_batch,
    describe,
    find_traces,
    summarize_trace,
)

BATCHES_PER_EPOCH = 8  # 256 images, batch 32
EPOCHS = 2
PROFILE = (10, 13)  # batches 2-5 of epoch 2 (counted from 1, across epochs; both ends included)


@pytest.mark.parametrize("off", [None, 0, False])
def test_no_profiling(off):
    assert check_profile_batch(off) is None


@pytest.mark.parametrize("good", [(MIN_START, MIN_START), (10, 14), [10, 19], (3, 3 + MAX_STEPS - 1)])
def test_good_ranges(good):
    assert check_profile_batch(good, total_batches=100) == tuple(good)


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


@pytest.fixture(scope="module")
def profiled(tmp_path_factory):
    """A tiny CNN trained for 2 epochs of 8 batches with PROFILE, and one without profiling."""
    from course_utils.tf_setup import quiet_tensorflow

    quiet_tensorflow()
    import keras

    from course_utils.models import build_blog_cnn
    from course_utils.pipeline import image_dataset
    from course_utils.tb_logs import tensorboard_callback

    root = tmp_path_factory.mktemp("logs")
    rng = np.random.default_rng(0)
    images = rng.integers(0, 256, size=(BATCHES_PER_EPOCH * 32, 28, 28), dtype=np.uint8)
    labels = rng.integers(0, 10, size=len(images)).astype(np.int32)
    train = image_dataset(images, labels, batch_size=32)
    for run, profile in (("profiled", PROFILE), ("plain", None)):
        keras.utils.set_random_seed(0)
        model = build_blog_cnn()
        model.compile(optimizer="adam", loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True))
        callback = tensorboard_callback(
            root, run, histogram_freq=0, profile_batch=profile, total_batches=BATCHES_PER_EPOCH * EPOCHS
        )
        model.fit(train, epochs=EPOCHS, shuffle=False, verbose=0, callbacks=[callback])
    return root


def test_a_profiled_run_leaves_one_trace_where_the_facts_say(profiled):
    traces = find_traces(profiled / "profiled")
    assert len(traces) == 1
    trace = traces[0]
    assert trace.relative_to(profiled / "profiled").match(TRACE_GLOB)
    assert trace.parent.parent.name == "profile" and trace.name.endswith(".xplane.pb")
    assert trace.stat().st_size > 10_000
    assert find_traces(profiled / "plain") == [], "no profile_batch, no trace"


def test_the_trace_holds_exactly_the_profiled_steps(profiled):
    summary = summarize_trace(find_traces(profiled / "profiled")[0])
    assert summary.planes, "the XSpace protobuf that TensorFlow ships could be read"
    assert summary.events > 0 and summary.hosts
    start, stop = PROFILE
    # step_num is the batch's index within its epoch, from 0: global batch 10 -> epoch 2, index 1
    expected = [(b - 1) % BATCHES_PER_EPOCH for b in range(start, stop + 1)]
    assert [step for step, _ in summary.steps] == expected
    assert all(ms > 0 for _, ms in summary.steps)
    op_types = [op for op, _, _ in summary.op_types]
    assert any("Conv2D" in op for op in op_types), op_types
    assert all(op.isidentifier() for op in op_types), "only TensorFlow op types, not function or executor events"
    text = describe(summary, root=profiled)
    assert "profiled/train/plugins/profile/" in text and f"{len(expected)} profiled steps" in text


def test_summary_without_the_protobuf_says_so(profiled, monkeypatch):
    import course_utils.tb_profile as tb_profile

    monkeypatch.setattr(tb_profile, "_xspace_class", lambda: None)
    trace = find_traces(profiled / "profiled")[0]
    summary = summarize_trace(trace)
    assert summary.planes is None and summary.bytes == trace.stat().st_size
    assert "only the file size" in describe(summary)
