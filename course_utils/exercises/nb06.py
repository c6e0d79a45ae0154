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
from course_utils.i18n import translator

_ = translator("exercises")

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
        return not_answered(name, _("Read {series} from the event files. Put one number per epoch in a list, "
                                    "as `answer`. Then run the cell.").format(series=wanted), show=show)
    rows = read_scalars(Path(root))
    steps, logged = series(rows, SERIES_RUN, SERIES_TAG, SERIES_SPLIT)
    if not logged:
        return feedback(name, [_("The log folder {root} holds no {series}. Run the cells of section 3 first, "
                                 "then this cell again.").format(root=root, series=wanted)], right="", show=show)
    given = _numbers(answer)
    if given is None:
        return feedback(name, [_("`answer` is {type}, not a list of numbers. Make a list with "
                                 "one float per epoch.").format(type=type(answer).__name__)], right="", show=show)
    if not given:
        return feedback(name, [_("Your list is empty. `Scalars()` finds nothing in TF2 logs: read "
                                 "`.Tensors(\"{tag}\")` and convert each event with `tf.make_ndarray`.").format(
            tag=SERIES_TAG)], right="", show=show)
    if _float32(given) == _float32(logged):
        return feedback(name, [], right=_("Your {count} numbers are the {series} in the logs.").format(
            count=len(given), series=wanted), show=show)
    for other in sorted({(r.run, r.split, r.tag) for r in rows}):
        if other == (SERIES_RUN, SERIES_SPLIT, SERIES_TAG):
            continue
        _steps, values = series(rows, other[0], other[2], other[1])
        if values and _float32(values) == _float32(given):
            return feedback(name, [_("These are the numbers of {run}/{split} {tag}. You need {series}: the folder "
                                     "{want_run}/{want_split}, tag {want_tag!r}.").format(
                run=other[0], split=other[1], tag=other[2], series=wanted, want_run=SERIES_RUN,
                want_split=SERIES_SPLIT, want_tag=SERIES_TAG)], right="", show=show)
    if len(given) != len(logged):
        return feedback(name, [_("The log holds {epochs} epochs (steps {first} to {last}); your list has {count} "
                                 "numbers. Keep every event: size_guidance {guidance}.").format(
            epochs=len(logged), first=steps[0], last=steps[-1], count=len(given),
            guidance="{event_accumulator.TENSORS: 0}")], right="", show=show)
    first = next(i for i, (a, b) in enumerate(zip(_float32(given), _float32(logged), strict=True)) if a != b)
    return feedback(name, [_("Epoch {epoch}: your value is {given:.6g}, the log holds {logged:.6g}. Read the value "
                             "with `tf.make_ndarray(event.tensor_proto)`.").format(
        epoch=steps[first], given=given[first], logged=logged[first])], right="", show=show)


def _epoch_of(batch: int) -> int:
    """The epoch (from 1) of a batch counted as the callback counts it (from 1, across epochs)."""
    return math.ceil(batch / BATCHES_PER_EPOCH)


def check_profile_range(answer: object, *, show: bool = True) -> Feedback:
    """Exercise 6.2: ``(start, stop)`` for 5 steps of epoch 2 of a run of 3 epochs x 20 batches."""
    from course_utils.tb_profile import MAX_STEPS, MIN_START, check_profile_batch

    name = "Exercise 6.2"
    first = (PROFILE_EPOCH - 1) * BATCHES_PER_EPOCH + 1
    last = PROFILE_EPOCH * BATCHES_PER_EPOCH
    if is_empty(answer):
        return not_answered(name, _("Write `answer = (start, stop)`: two batch numbers. Then run the cell."),
                            show=show)
    if (
        not isinstance(answer, (tuple, list))
        or len(answer) != 2
        or not all(isinstance(b, int) and not isinstance(b, bool) for b in answer)
    ):
        return feedback(name, [_("`answer` = {answer!r} is not two whole numbers. Write `(start, stop)`, "
                                 "for example (4, 8).").format(answer=answer)], right="", show=show)
    start, stop = answer
    problems = []
    steps = stop - start + 1
    too_long = False  # the course's rule already said the range profiles too many batches
    try:
        check_profile_batch(tuple(answer), total_batches=PROFILE_EPOCHS * BATCHES_PER_EPOCH)
    except ParameterError as err:
        problems.append(err.what)
        too_long = start >= MIN_START and steps > MAX_STEPS  # the rule checks the start first, then the length
    if stop >= start and steps != PROFILE_STEPS and not too_long:
        if steps == PROFILE_STEPS + 1:
            problems.append(_("Keras counts both ends: ({start}, {stop}) profiles {steps} batches, not {want}.").format(
                start=start, stop=stop, steps=steps, want=PROFILE_STEPS))
        else:
            problems.append(_("({start}, {stop}) profiles {steps} batches (both ends count), not {want}.").format(
                start=start, stop=stop, steps=steps, want=PROFILE_STEPS))
    if start == first - 1:
        problems.append(_("Batch {start} is the last batch of epoch {previous}. Keras counts batches "
                          "from 1, across epochs, so epoch {epoch} is batches {first} to {last}.").format(
            start=start, previous=PROFILE_EPOCH - 1, epoch=PROFILE_EPOCH, first=first, last=last))
    elif start >= 1 and (start < first or start > last):
        problems.append(_("Batch {start} is in epoch {its_epoch}. Epoch {epoch} is batches {first} to {last} "
                          "(counted from 1, across epochs).").format(
            start=start, its_epoch=_epoch_of(start), epoch=PROFILE_EPOCH, first=first, last=last))
    elif first <= start <= last < stop:
        problems.append(_("Batch {stop} is in epoch {its_epoch}. Stop by batch {last}, the last batch of "
                          "epoch {epoch}.").format(stop=stop, its_epoch=_epoch_of(stop), last=last,
                                                   epoch=PROFILE_EPOCH))
    return feedback(name, problems, right=_("({start}, {stop}) profiles batches {start} to {stop}: {steps} steps of "
                                            "epoch {epoch}.").format(start=start, stop=stop, steps=PROFILE_STEPS,
                                                                     epoch=PROFILE_EPOCH), show=show)
