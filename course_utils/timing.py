"""Timing epochs honestly: a Keras callback that waits for each epoch's results, and the steady median.

Used by the speed ladder of ``course bench cnn`` (``course_utils.speed``).
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable, Sequence


def epoch_timer(
    clock: Callable[[], float] = time.perf_counter, report: Callable[[int, float], None] | None = None
):
    """A Keras callback that records every epoch's wall time (it waits for the epoch's results).

    ``report(epoch, seconds)``, if given, is called after each epoch (epochs counted from 1): a
    progress line for long runs, such as the speed ladder's XLA rung on a CPU.
    """
    import keras

    class EpochTimer(keras.callbacks.Callback):
        def __init__(self) -> None:
            super().__init__()
            self.times: list[float] = []
            self._start = 0.0

        def on_epoch_begin(self, epoch, logs=None):
            self._start = clock()

        def on_epoch_end(self, epoch, logs=None):
            for value in (logs or {}).values():  # reading the results waits for the device to finish
                float(value)
            self.times.append(clock() - self._start)
            if report is not None:
                report(epoch + 1, self.times[-1])

    return EpochTimer()


def steady_state(times: Sequence[float], warmup_epochs: int = 1) -> tuple[list[float], list[float], float]:
    """Split epoch times into (warm-up, steady) and return the steady median."""
    if len(times) <= warmup_epochs:
        raise ValueError(f"{len(times)} epoch(s) timed: need more than the {warmup_epochs} warm-up epoch(s)")
    warm, steady = list(times[:warmup_epochs]), list(times[warmup_epochs:])
    return warm, steady, float(statistics.median(steady))
