"""Epoch timing: the callback waits for each epoch's results; the steady median leaves out warm-up."""

from __future__ import annotations

import numpy as np
import pytest

from course_utils import timing


def test_steady_state_excludes_warmup():
    warm, steady, median = timing.steady_state([10.0, 1.0, 3.0, 2.0])
    assert warm == [10.0] and steady == [1.0, 3.0, 2.0] and median == 2.0
    with pytest.raises(ValueError, match="warm-up"):
        timing.steady_state([1.0])


def test_epoch_timer_records_one_time_per_epoch_from_its_clock():
    import keras

    ticks = iter([0.0, 5.0, 10.0, 12.0, 20.0, 23.0])
    timer = timing.epoch_timer(clock=lambda: next(ticks))
    model = keras.Sequential([keras.Input((4,)), keras.layers.Dense(1)])
    model.compile(optimizer="sgd", loss="mse")
    x = np.zeros((8, 4), "float32")
    model.fit(x, np.zeros((8, 1), "float32"), epochs=3, verbose=0, callbacks=[timer])
    assert timer.times == [5.0, 2.0, 3.0]


def test_epoch_timer_reports_each_epoch_as_it_ends():
    import keras

    ticks = iter([0.0, 5.0, 10.0, 12.0])
    seen = []
    timer = timing.epoch_timer(clock=lambda: next(ticks), report=lambda epoch, s: seen.append((epoch, s)))
    model = keras.Sequential([keras.Input((4,)), keras.layers.Dense(1)])
    model.compile(optimizer="sgd", loss="mse")
    model.fit(np.zeros((8, 4), "float32"), np.zeros((8, 1), "float32"), epochs=2, verbose=0, callbacks=[timer])
    assert seen == [(1, 5.0), (2, 2.0)] and timer.times == [5.0, 2.0]
