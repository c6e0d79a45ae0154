"""Notebook 06's lesson: what setup reads (``needs``: images to train and validate, batches enough for
``PROFILE_BATCH``), where the logs go (``log_root``), and the exercises about profiling.

- 6.1 ``check_profile_range``: ``profile_batch`` for 5 steps of the second epoch, taken and counted as the callback
  does, with the course's rules (``tb_profile.check_profile_batch``).
- 6.2 ``check_input_bound``: how input-bound three profiles are, by the limits of TensorBoard's Profile tab
  (XProf: below 5% of the step not, from 20% highly).
"""

from __future__ import annotations

import math
import numbers
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from course_utils.core.errors import ParameterError
from course_utils.core.i18n import translator
from course_utils.core.places import log_base
from course_utils.lessons import Feedback, dict_answer, feedback, is_empty, not_answered, whole
from course_utils.lessons.nb06.tb_profile import MAX_STEPS, MIN_START, check_profile_batch
from course_utils.params import needs_split, too_few, train_images

_ = translator("lessons")


NOTEBOOK = "06_tensorboard"  # the name the notebook gives setup
SMOKE = {"EPOCHS": 2, "IMAGES": 1000}
KEY_RESULTS = {  # name: what it means, as the run report explains it
    "input_ms": "milliseconds to produce one batch, for each input pipeline",
    "input_share": "share of a profiled step spent waiting for input, for each pipeline (0 to 1)",
    "step_ms": "milliseconds per profiled training step, for each pipeline",
    "reader_matches_history": "whether the accuracy read back from the logs equals the training history",
}


def log_root(log_dir: str | os.PathLike[str]) -> Path:
    """Where the notebook writes its TensorBoard logs: ``LOG_DIR`` as it is when absolute, else under
    ``places.log_base()`` (``COURSE_LOG_DIR``, else the current folder if it is the student's, else the course home);
    created if missing."""
    path = Path(log_dir).expanduser()
    if not path.is_absolute():
        path = log_base() / path
    path = path.resolve()
    path.mkdir(parents=True, exist_ok=True)
    return path


def needs(values: Mapping[str, Any]) -> None:
    """Refuse too few images: one to train on and one to validate, and enough batches to reach PROFILE_BATCH."""
    images, epochs, batch = values.get("IMAGES"), values.get("EPOCHS", 1), values.get("BATCH_SIZE", 1)
    needs_split(images)
    profile = check_profile_batch(values.get("PROFILE_BATCH"))
    if images is None or profile is None:
        return  # None: the whole dataset, thousands of images
    stop = profile[1]
    batches = math.ceil(train_images(images) / batch) * epochs
    if batches < stop:
        per_epoch = math.ceil(stop / epochs)  # CNN batches an epoch must have for batch `stop` to come
        least = math.ceil(((per_epoch - 1) * batch + 1) / (1.0 - 0.2))
        while math.ceil(train_images(least) / batch) < per_epoch:  # float rounding at the edge
            least += 1
        why = _("PROFILE_BATCH = {profile} profiles up to batch {stop}, and {images:,} images make {batches} CNN "
                "batch(es) of {batch} in {epochs} epoch(s).")
        raise too_few(
            images, least,
            why.format(images=images, profile=tuple(profile), stop=stop, batches=batches, batch=batch, epochs=epochs),
            _("Use IMAGES >= {least:,} (or more EPOCHS, a smaller BATCH_SIZE), or PROFILE_BATCH = None.").format(
                least=least),
        )


# Exercise 6.1: the run the student profiles.
PROFILE_EPOCHS, BATCHES_PER_EPOCH, PROFILE_STEPS, PROFILE_EPOCH = 3, 20, 5, 2

# Exercise 6.2: the classmate's profiles on a GPU, (median step ms, ms of it waiting for input).
PROFILES = {"A": (9.5, 7.6), "B": (2.5, 0.04), "C": (110.0, 6.8)}
MODERATELY, HIGHLY = 0.05, 0.20  # XProf's limits (openxla/xprof, op_stats_to_input_pipeline_analysis.cc)
VERDICTS = ("highly", "moderately", "not")


def verdict(share: float) -> str:
    """XProf's verdict for the share of a step spent waiting for input: "highly", "moderately" or "not"."""
    share = round(share, 9)  # 0.35 ms of 7 ms is 5%, though 0.35 / 7.0 is a hair under 0.05 in floating point
    return "highly" if share >= HIGHLY else "moderately" if share >= MODERATELY else "not"


# Other spellings of XProf's three words: "High", "moderate", "no" / "non-input-bound".
SYNONYMS = {"high": "highly", "moderate": "moderately", "no": "not", "none": "not", "non": "not"}


def _verdict_given(value: object) -> str | None:
    """A student's verdict as one of VERDICTS ("Highly input-bound" -> "highly"); None when it is none of them."""
    if not isinstance(value, str):
        return None
    words = value.strip().lower().replace("-", " ").replace("_", " ").split()
    if not words:
        return None
    first = SYNONYMS.get(words[0], words[0])
    return first if first in VERDICTS else None


def _input_bound_problem(run: str, given: object) -> str | None:
    step, waiting = PROFILES[run]
    if is_empty(given):
        return _("Run {run} has no answer.").format(run=run)
    said = _verdict_given(given)
    if said is None:
        return _("{run}: {given!r} is not one of \"highly\", \"moderately\", \"not\".").format(run=run, given=given)
    if said != verdict(waiting / step):
        return _("{run}: {waiting:g} ms of a {step:g} ms step is {share:.1%} of the step. Below 5% a run is not "
                 "input-bound, from 20% highly, in between moderately.").format(
            run=run, waiting=waiting, step=step, share=waiting / step)
    return None


def check_input_bound(answer: object) -> Feedback:
    """Exercise 6.2: a dict {run: "highly" | "moderately" | "not"} for the runs of ``PROFILES``."""
    return dict_answer(
        "Exercise 6.2", answer, lambda given: (_input_bound_problem(run, given.get(run)) for run in PROFILES),
        example='{"A": "highly", ...}',
        hint=_("Replace each None with \"highly\", \"moderately\" or \"not\". Then run the cell."),
        right=_("Right. A and C wait about as long, but C's step is much longer: input-bound is a share of the step, "
                "not a time. A faster device makes the same input weigh more."))


def _epoch_of(batch: int) -> int:
    """The epoch (from 1) of a batch counted as the callback counts it (from 1, across epochs)."""
    return math.ceil(batch / BATCHES_PER_EPOCH)


def _as_pair(answer: object) -> object:
    """``answer`` as the callback reads it: the text "21,25" as (21, 25), NumPy ints as ints; anything else as is."""
    if isinstance(answer, str):  # Keras also takes "start,stop": it splits at the comma and calls int() on each part
        parts = answer.split(",")
        try:
            return tuple(int(part) for part in parts) if len(parts) == 2 else answer
        except ValueError:
            return answer
    if isinstance(answer, (tuple, list)) and all(isinstance(b, numbers.Integral) and not isinstance(b, bool)
                                                 for b in answer):
        return tuple(int(b) for b in answer)
    return answer


def check_profile_range(answer: object) -> Feedback:
    """Exercise 6.1: ``(start, stop)`` for 5 steps of epoch 2 of a run of 3 epochs x 20 batches."""

    name = "Exercise 6.1"
    first = (PROFILE_EPOCH - 1) * BATCHES_PER_EPOCH + 1
    last = PROFILE_EPOCH * BATCHES_PER_EPOCH
    if is_empty(answer):
        return not_answered(name, _("Write `answer = (start, stop)`: two batch numbers. Then run the cell."))
    given, answer = answer, _as_pair(answer)
    ints = tuple(map(whole, answer)) if isinstance(answer, (tuple, list)) else ()
    if len(ints) == 2 and None not in ints and any(isinstance(b, float) for b in answer):
        return feedback(name, [_("Batch numbers are ints: the callback takes \"a tuple of integers\" (with the "
                                 "stop a float, it fails). Write {ints}, not {answer!r}.").format(
            answer=given, ints=ints)], right="")
    if not isinstance(answer, tuple) or len(answer) != 2 or not all(type(b) is int for b in answer):
        return feedback(name, [_("`answer` = {answer!r} is not two whole numbers. Write `(start, stop)`, "
                                 "for example (4, 8).").format(answer=given)], right="")
    start, stop = answer
    if start < 1:  # the callback never reaches such a batch: the course's warm-up rule would not be the reason
        return feedback(name, [_("Keras counts batches from 1, across epochs: there is no batch {start}. Epoch "
                                 "{epoch} is batches {first} to {last}.").format(
            start=start, epoch=PROFILE_EPOCH, first=first, last=last)], right="")
    problems = []
    steps = stop - start + 1
    too_long = False  # the course's rule already said the range profiles too many batches
    try:
        check_profile_batch(tuple(answer), total_batches=PROFILE_EPOCHS * BATCHES_PER_EPOCH)
    except ParameterError as err:
        problems.append(err.what)
        too_long = start >= MIN_START and steps > MAX_STEPS  # the rule checks the start first, then the length
    if stop >= start and steps != PROFILE_STEPS and not too_long:
        said = (_("Keras counts both ends: ({start}, {stop}) profiles {steps} batches, not {want}.")
                if steps == PROFILE_STEPS + 1 else
                _("({start}, {stop}) profiles {steps} batches (both ends count), not {want}."))
        problems.append(said.format(start=start, stop=stop, steps=steps, want=PROFILE_STEPS))
    if start == first - 1:
        problems.append(_("Batch {start} is the last batch of epoch {previous}. Keras counts batches "
                          "from 1, across epochs, so epoch {epoch} is batches {first} to {last}.").format(
            start=start, previous=PROFILE_EPOCH - 1, epoch=PROFILE_EPOCH, first=first, last=last))
    elif start < first or start > last:
        problems.append(_("Batch {start} is in epoch {its_epoch}. Epoch {epoch} is batches {first} to {last} "
                          "(counted from 1, across epochs).").format(
            start=start, its_epoch=_epoch_of(start), epoch=PROFILE_EPOCH, first=first, last=last))
    elif first <= start <= last < stop:
        problems.append(_("Batch {stop} is in epoch {its_epoch}. Stop by batch {last}, the last batch of "
                          "epoch {epoch}.").format(stop=stop, its_epoch=_epoch_of(stop), last=last,
                                                   epoch=PROFILE_EPOCH))
    return feedback(name, problems, right=_("({start}, {stop}) profiles batches {start} to {stop}: {steps} steps of "
                                            "epoch {epoch}.").format(start=start, stop=stop, steps=PROFILE_STEPS,
                                                                     epoch=PROFILE_EPOCH))


# The notebook's exercises, by number: its task cells call ``course.check("6.1", answer)``.
CHECKS = {
    "6.1": check_profile_range,
    "6.2": check_input_bound,
}
