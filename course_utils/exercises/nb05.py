"""Notebook 05's exercises: a model and loss that agree, images per second, and a batch size to choose.

- 5.1 ``check_model_and_loss(model, loss)``: the blog post's CNN with its output and its loss made
  to agree. The check calls the model on four blank images (no training) to see whether it
  outputs probabilities or logits, and reads ``from_logits`` from the loss.
- 5.2 ``check_images_per_s(answer, epoch_s=..., images=...)``: the speed the course reports,
  computed from a run's epoch times: the first epoch left out, the median of the rest.
- 5.3 ``check_batch_and_rate(answer, report=...)``: the batch size and learning rate that the
  student's own speed ladder supports: the fastest rung that kept the baseline's accuracy.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Mapping, Sequence
from typing import Any

from course_utils.exercises import Feedback, feedback, is_empty, not_answered
from course_utils.i18n import translator

_ = translator("exercises")

MODEL_AND_LOSS = "Exercise 5.1"
IMAGES_PER_S = "Exercise 5.2"
BATCH_AND_RATE = "Exercise 5.3"

CNN_PARAMS = 93_322  # course_utils.models.CNN_PARAMS (not imported: that module imports Keras)
RELATIVE_TOLERANCE = 0.01  # 1%: room for rounding a printed number


# --------------------------------------------------------------------------- 5.1


def _loss_reads_logits(loss: Any) -> tuple[bool | None, str | None]:
    """(from_logits, problem) for a Keras loss object, a loss function or a loss name."""
    import keras

    if isinstance(loss, keras.losses.Loss):
        sparse = isinstance(loss, keras.losses.SparseCategoricalCrossentropy)
        name, from_logits = type(loss).__name__, bool(loss.get_config().get("from_logits", False))
    else:  # "sparse_categorical_crossentropy" or keras.losses.sparse_categorical_crossentropy: from_logits=False
        name = loss if isinstance(loss, str) else getattr(loss, "__name__", type(loss).__name__)
        sparse, from_logits = str(name).lower().replace("_", "") == "sparsecategoricalcrossentropy", False
    if not sparse:
        return None, _("the loss is {name}: the labels are whole numbers 0-9, so use "
                       "keras.losses.SparseCategoricalCrossentropy").format(name=name)
    return from_logits, None


def _outputs(model: Any) -> tuple[Any, str | None]:
    """The model's output for four blank 28x28x1 images, or the problem that stopped it."""
    import numpy as np

    try:
        out = np.asarray(model(np.zeros((4, 28, 28, 1), "float32") + 0.5))
    except Exception as error:  # noqa: BLE001 - a student's model may fail in any way; say how
        return None, _("the model cannot take a batch of 28x28x1 images ({type}: {error})").format(
            type=type(error).__name__, error=error)[:300]
    if out.shape != (4, 10):
        return None, _("the model outputs shape {shape} per image; it needs 10 numbers (one per digit)").format(
            shape=out.shape[1:])
    return out, None


def check_model_and_loss(model: Any, loss: Any, *, show: bool = True) -> Feedback:
    """Right when the model's output and the loss agree: logits + from_logits=True, or softmax + False."""
    if is_empty(model) or is_empty(loss):
        return not_answered(MODEL_AND_LOSS, _("Set `my_model` to the fixed keras.Sequential([...]) and `my_loss` "
                                              "to its loss, then run the cell."), show=show)
    import keras
    import numpy as np

    if not isinstance(model, keras.Model):
        return feedback(MODEL_AND_LOSS, [_("`my_model` is a {type}: build it with keras.Sequential([...])").format(
            type=type(model).__name__)], right="", show=show)
    problems = []
    from_logits, problem = _loss_reads_logits(loss)
    if problem:
        problems.append(problem)
    out, problem = _outputs(model)
    if problem:
        problems.append(problem)
    elif model.count_params() != CNN_PARAMS:
        problems.append(_("the model has {count:,} parameters, the blog post's has {blog:,}: keep its layers and "
                          "change only what the output needs").format(count=model.count_params(), blog=CNN_PARAMS))
    if problems or out is None or from_logits is None:
        return feedback(MODEL_AND_LOSS, problems, right="", show=show)
    probabilities = bool(np.all(out >= 0) and np.allclose(out.sum(axis=-1), 1.0, atol=1e-4))
    if probabilities and from_logits:
        problems.append(_("the model outputs probabilities (its last layer applies softmax), but the loss has "
                          "from_logits=True: this is still the blog post's mismatch"))
    elif not probabilities and not from_logits:
        problems.append(_("the model outputs logits (no softmax), but the loss has from_logits=False: it would "
                          "read raw scores as probabilities"))
    right = (_("They agree: a softmax output with from_logits=False.") if probabilities
             else _("They agree: a logits output with from_logits=True."))
    return feedback(MODEL_AND_LOSS, problems, right=right, show=show)


# --------------------------------------------------------------------------- 5.2


def _close(a: float, b: float) -> bool:
    return math.isclose(a, b, rel_tol=RELATIVE_TOLERANCE)


def check_images_per_s(answer: Any, *, epoch_s: Sequence[float], images: int, show: bool = True) -> Feedback:
    """Right when ``answer`` is ``images`` / the median of the epoch times after the first (within 1%)."""
    times = [float(t) for t in epoch_s]
    if len(times) < 2:
        return not_answered(IMAGES_PER_S, _("This run has {count} epoch: all of it is warm-up. Set "
                                            "EPOCHS >= 2, run the notebook again, then answer.").format(
            count=len(times)), show=show)
    if is_empty(answer):
        return not_answered(IMAGES_PER_S, _("Compute the speed from `timer.times` and `len(train_images)`, "
                                            "set `answer` to it, then run the cell."), show=show)
    if isinstance(answer, bool) or not isinstance(answer, (int, float)) or not math.isfinite(answer):
        return feedback(IMAGES_PER_S, [_("`answer` is {answer!r}: it should be one number, images per second").format(
            answer=answer)], right="", show=show)
    steady = times[1:]
    right = images / statistics.median(steady)
    if _close(answer, right):
        return feedback(IMAGES_PER_S, [], right=_("{answer:,.0f} images/s: {images:,} images / the median of "
                                                  "epochs 2-{epochs} ({median:.2f} s).").format(
            answer=answer, images=images, epochs=len(times), median=statistics.median(steady)), show=show)
    first_epoch = _("you counted the first epoch: it includes tracing, so leave it out (timer.times[1:])")
    mistakes = [
        (images / statistics.mean(steady), _("you took the mean of the later epochs: the course takes the median, "
                                             "which one slow epoch (a busy machine) does not move")),
        (images / statistics.median(times), first_epoch),
        (images / statistics.mean(times), first_epoch),
        (statistics.median(steady), _("that is seconds per epoch: divide the number of images by it")),
        (statistics.median(steady) / images, _("that is seconds per image: divide the images by the time, not "
                                               "the time by the images")),
    ]
    problems = [why for value, why in mistakes if _close(answer, value) and not _close(value, right)]
    return feedback(IMAGES_PER_S, problems[:1] or [_(
        "{answer:,.0f} is not it: divide the number of training images ({images:,}) by the median of the "
        "epoch times after the first (from timer.times: the printed times are rounded)").format(
        answer=answer, images=images)], right="", show=show)


# --------------------------------------------------------------------------- 5.3


def _pair(answer: Any) -> tuple[int, float] | None:
    if isinstance(answer, Mapping):
        answer = (answer.get("batch_size"), answer.get("learning_rate"))
    if not isinstance(answer, (tuple, list)) or len(answer) != 2:
        return None
    batch, rate = answer
    if isinstance(batch, bool) or not isinstance(batch, int) or isinstance(rate, bool) \
            or not isinstance(rate, (int, float)):
        return None
    return batch, float(rate)


def check_batch_and_rate(answer: Any, *, report: Mapping[str, Any], show: bool = True) -> Feedback:
    """Right when ``answer`` is the (batch size, learning rate) of the fastest ladder rung that kept the accuracy.

    ``report`` is ``course_utils.speed.summarize``'s result for the student's own ladder run.
    """
    if is_empty(answer):
        return not_answered(BATCH_AND_RATE, _("Read your ladder table, set `answer = (batch_size, learning_rate)`, "
                                              "then run the cell."), show=show)
    pair = _pair(answer)
    if pair is None:
        return feedback(BATCH_AND_RATE, [_("`answer` is {answer!r}: write it as (batch_size, learning_rate), "
                                           "for example (64, 0.001)").format(answer=answer)], right="", show=show)
    batch, rate = pair
    rows = list(report["configs"])
    baseline = rows[0]
    best = next(row for row in rows if row["name"] == report["best"])
    same = [row for row in rows if row["batch_size"] == batch and math.isclose(row["learning_rate"], rate)]
    if not same:
        linear = baseline["learning_rate"] * batch / baseline["batch_size"]
        said = (_("your ladder did not measure batch {batch} with learning rate {rate:g}: choose a pair from its "
                  "table. The linear scaling rule gives that rate, but the ladder measured a smaller one for Adam.")
                if math.isclose(rate, linear) and batch != baseline["batch_size"] else
                _("your ladder did not measure batch {batch} with learning rate {rate:g}: choose a pair from its "
                  "table."))
        return feedback(BATCH_AND_RATE, [said.format(batch=batch, rate=rate)], right="", show=show)
    if (batch, rate) == (best["batch_size"], best["learning_rate"]) or any(
            row["name"] == best["name"] for row in same):
        return feedback(BATCH_AND_RATE, [], right=_(
            "Batch {batch} with learning rate {rate:g}: {name} was the fastest rung that kept the "
            "baseline's accuracy ({speedup:.2f}x its images/s, test accuracy {accuracy:.4f}).").format(
            batch=batch, rate=rate, name=best["name"], speedup=best["speedup_vs_baseline"],
            accuracy=best["test_accuracy"]), show=show)
    if not any(row["keeps_accuracy"] for row in same):
        worst = min(same, key=lambda row: row["test_accuracy"])
        return feedback(BATCH_AND_RATE, [_(
            "in your run, batch {batch} with rate {rate:g} lost accuracy: {name} reached {accuracy:.4f}, more than "
            "0.5 points below the baseline's {baseline:.4f}. Faster does not help if the model learns less").format(
            batch=batch, rate=rate, name=worst["name"], accuracy=worst["test_accuracy"],
            baseline=baseline["test_accuracy"])], right="", show=show)
    return feedback(BATCH_AND_RATE, [_(
        "it kept the accuracy, but batch {batch} with rate {rate:g} ({name}, {speed:,.0f} images/s) kept it too "
        "and was faster").format(batch=best["batch_size"], rate=best["learning_rate"], name=best["name"],
                                 speed=best["images_per_s"])], right="", show=show)
