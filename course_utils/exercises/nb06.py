"""Notebook 06's exercises: read a series back from the logs, and choose the batches to profile.

- Exercise 6.1, ``check_series(answer, root)``: the validation ``epoch_loss`` of the run
  ``dense_zeros``, one number per epoch, read from the event files the notebook wrote. The check
  reads the same logs (``tb_logs.read_scalars``) and compares, in float32 as TensorBoard stores them.
  A list that is another series of the logs (the training loss, another run, the accuracy) is named.
- Exercise 6.2, ``check_profile_range(answer)``: ``profile_batch`` for 5 steps of the second epoch
  of a run with 3 epochs of 20 batches. The check applies the callback's counting (from 1, across
  epochs, both ends included) and the course's rules (``tb_profile.check_profile_batch``).
"""

from __future__ import annotations

import math
import os
from collections.abc import Sequence
from pathlib import Path

from course_utils.errors import ParameterError
from course_utils.exercises import Feedback, feedback, is_empty, not_answered

# Exercise 6.1: the series the student reads.
SERIES_RUN, SERIES_TAG, SERIES_SPLIT = "dense_zeros", "epoch_loss", "validation"

# Exercise 6.2: the run the student profiles.
PROFILE_EPOCHS, BATCHES_PER_EPOCH, PROFILE_STEPS, PROFILE_EPOCH = 3, 20, 5, 2


def _numbers(answer: object) -> list[float] | None:
    """The answer as a list of floats (a list, tuple or array of numbers); None when it is not one."""
    if isinstance(answer, (str, bytes, dict)):
        return None
    try:
        return [float(value) for value in answer]  # type: ignore[union-attr]
    except (TypeError, ValueError):
        return None


def _float32(values: Sequence[float]) -> list[float]:
    import numpy as np

    return [float(v) for v in np.float32(values)]


def check_series(answer: object, root: str | os.PathLike[str], *, show: bool = True) -> Feedback:
    """Exercise 6.1: ``answer`` must hold the validation ``epoch_loss`` of ``dense_zeros`` under ``root``."""
    from course_utils.tb_logs import read_scalars, series

    name = "Exercise 6.1"
    wanted = f"{SERIES_RUN}/{SERIES_SPLIT} {SERIES_TAG}"
    if answer is None or answer is Ellipsis:
        return not_answered(name, f"Read {wanted} from the event files. Put one number per epoch in a list, "
                                  "as `answer`. Then run the cell.", show=show)
    rows = read_scalars(Path(root))
    steps, logged = series(rows, SERIES_RUN, SERIES_TAG, SERIES_SPLIT)
    if not logged:
        return feedback(name, [f"The log folder {root} holds no {wanted}. Run the cells of section 3 first, "
                               "then this cell again."], right="", show=show)
    given = _numbers(answer)
    if given is None:
        return feedback(name, [f"`answer` is {type(answer).__name__}, not a list of numbers. Make a list with "
                               "one float per epoch."], right="", show=show)
    if not given:
        return feedback(name, ["Your list is empty. `Scalars()` finds nothing in TF2 logs: read "
                               f"`.Tensors(\"{SERIES_TAG}\")` and convert each event with `tf.make_ndarray`."],
                        right="", show=show)
    if _float32(given) == _float32(logged):
        return feedback(name, [], right=f"Your {len(given)} numbers are the {wanted} in the logs.", show=show)
    for other in sorted({(r.run, r.split, r.tag) for r in rows}):
        if other == (SERIES_RUN, SERIES_SPLIT, SERIES_TAG):
            continue
        _, values = series(rows, other[0], other[2], other[1])
        if values and _float32(values) == _float32(given):
            return feedback(name, [f"These are the numbers of {other[0]}/{other[1]} {other[2]}. You need "
                                   f"{wanted}: the folder {SERIES_RUN}/{SERIES_SPLIT}, tag {SERIES_TAG!r}."],
                            right="", show=show)
    if len(given) != len(logged):
        return feedback(name, [f"The log holds {len(logged)} epochs (steps {steps[0]} to {steps[-1]}); your list "
                               f"has {len(given)} numbers. Keep every event: size_guidance "
                               "{event_accumulator.TENSORS: 0}."], right="", show=show)
    first = next(i for i, (a, b) in enumerate(zip(_float32(given), _float32(logged), strict=True)) if a != b)
    return feedback(name, [f"Epoch {steps[first]}: your value is {given[first]:.6g}, the log holds "
                           f"{logged[first]:.6g}. Read the value with `tf.make_ndarray(event.tensor_proto)`."],
                    right="", show=show)


def _epoch_of(batch: int) -> int:
    """The epoch (from 1) of a batch counted as the callback counts it (from 1, across epochs)."""
    return math.ceil(batch / BATCHES_PER_EPOCH)


def check_profile_range(answer: object, *, show: bool = True) -> Feedback:
    """Exercise 6.2: ``(start, stop)`` for 5 steps of epoch 2 of a run of 3 epochs x 20 batches."""
    from course_utils.tb_profile import check_profile_batch

    name = "Exercise 6.2"
    first = (PROFILE_EPOCH - 1) * BATCHES_PER_EPOCH + 1
    last = PROFILE_EPOCH * BATCHES_PER_EPOCH
    if is_empty(answer):
        return not_answered(name, "Write `answer = (start, stop)`: two batch numbers. Then run the cell.",
                            show=show)
    if (
        not isinstance(answer, (tuple, list))
        or len(answer) != 2
        or not all(isinstance(b, int) and not isinstance(b, bool) for b in answer)
    ):
        return feedback(name, [f"`answer` = {answer!r} is not two whole numbers. Write `(start, stop)`, "
                               "for example (4, 8)."], right="", show=show)
    start, stop = answer
    problems = []
    try:
        check_profile_batch(tuple(answer), total_batches=PROFILE_EPOCHS * BATCHES_PER_EPOCH)
    except ParameterError as err:
        problems.append(err.what)
    steps = stop - start + 1
    if stop >= start and steps != PROFILE_STEPS and not any("profiles" in p for p in problems):
        if steps == PROFILE_STEPS + 1:
            problems.append(f"Keras counts both ends: ({start}, {stop}) profiles {steps} batches, not "
                            f"{PROFILE_STEPS}.")
        else:
            problems.append(f"({start}, {stop}) profiles {steps} batches (both ends count), not {PROFILE_STEPS}.")
    if start == first - 1:
        problems.append(f"Batch {start} is the last batch of epoch {PROFILE_EPOCH - 1}. Keras counts batches "
                        f"from 1, across epochs, so epoch {PROFILE_EPOCH} is batches {first} to {last}.")
    elif start >= 1 and (start < first or start > last):
        problems.append(f"Batch {start} is in epoch {_epoch_of(start)}. Epoch {PROFILE_EPOCH} is batches "
                        f"{first} to {last} (counted from 1, across epochs).")
    elif first <= start <= last < stop:
        problems.append(f"Batch {stop} is in epoch {_epoch_of(stop)}. Stop by batch {last}, the last batch of "
                        f"epoch {PROFILE_EPOCH}.")
    return feedback(name, problems, right=f"({start}, {stop}) profiles batches {start} to {stop}: {PROFILE_STEPS} "
                                          f"steps of epoch {PROFILE_EPOCH}.", show=show)
