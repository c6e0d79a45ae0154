"""Notebook 05's lesson: what setup reads (``needs``: an epoch after the warm-up, "auto", None, "float32" or one of
``speed.POLICIES``, a target accuracy in (0, 1), 2,000 images for the checkpoint), and the exercises.

- 5.1 ``check_model_and_loss``: the model's output and its loss made to agree. The check calls the model on four
  random images (probabilities, logits, or neither) and the loss on fixed scores, so any loss ``compile`` takes is
  judged by what it computes.
- 5.2 ``check_utilisation``: which change raises a GPU's 35% utilisation during ``fit`` at batch 32.
- 5.3 ``check_policies``: a Tensor Core policy for four GPUs, by ``speed.gpu_policy`` (float16 on an 8.x GPU too).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from course_utils.core.errors import ParameterError
from course_utils.core.i18n import translator
from course_utils.lessons import Feedback, dict_answer, feedback, is_empty, multiple_choice, not_answered
from course_utils.lessons.nb05 import speed
from course_utils.params import too_few

_ = translator("lessons")


NOTEBOOK = "05_cnn_cpu_vs_gpu"  # the name the notebook gives setup
SMOKE = {"IMAGES": 2000, "MAX_EPOCHS": 3, "REPEATS": 1, "TARGET_ACCURACY": 0.6}
KEY_RESULTS = {  # name: what it means, as the run report explains it
    "test_accuracy": "test accuracy of the fixed model on the chosen device",
    "epoch_s": "seconds per epoch on each device (the warm-up epoch left out)",
    "target_accuracy": "the test accuracy the ladder's rungs race to",
    "ladder_best": "the rung that reached the target fastest (empty: none reached it)",
}


def needs(values: Mapping[str, Any]) -> None:
    """Refuse parameters that clash: an epoch to time after the warm-up, a known precision policy, an accuracy
    target between 0 and 1, and the 2,000 images the checkpoint's short-run accuracy is verified at."""
    epochs = values.get("EPOCHS", 2)
    if epochs < 2:  # the device comparison leaves the first epoch out
        raise ParameterError(
            _("EPOCHS = {epochs} leaves no epoch to time: the first one is warm-up.").format(epochs=epochs),
            _("Set EPOCHS >= 2."))
    policy = values.get("MIXED_PRECISION", "auto")
    if policy not in ("auto", None, "float32", *speed.POLICIES):
        raise ParameterError(_("MIXED_PRECISION = {policy!r} is not understood.").format(policy=policy),
                             _("Use \"auto\" (the guide's rule for this device), None (no mixed precision) or one "
                               "of {policies}.").format(policies=", ".join(speed.POLICIES)))
    target = values.get("TARGET_ACCURACY")
    if target is not None and (isinstance(target, bool) or not isinstance(target, (int, float)) or not 0 < target < 1):
        raise ParameterError(
            _("TARGET_ACCURACY = {target!r} is not an accuracy between 0 and 1.").format(target=target),
            _("Set TARGET_ACCURACY to a number such as 0.96, or None: one point below the test accuracy of "
              "section 2."))
    images = values.get("IMAGES")
    # The short-run accuracy the checkpoint asks for (80% MNIST, 65% Fashion-MNIST) is verified by every smoke
    # run of the course's tests, at 2,000 images x 3 epochs; fewer images are not known to reach it.
    if images is not None and images < 2000:
        raise too_few(images, 2000, _("its checkpoint's short-run test accuracy is verified at 2,000 images (x 3 "
                                      "epochs, its smoke run)."))


MODEL_AND_LOSS = "Exercise 5.1"
UTILISATION = "Exercise 5.2"
POLICIES = "Exercise 5.3"

CNN_PARAMS = 93_322  # course_utils.models.CNN_PARAMS (not imported: that module imports Keras)


# Four labels and fixed scores: what a loss returns for them says whether it reads logits or probabilities.
_PROBE_LABELS = np.array([0, 1, 2, 3])
_PROBE_LOGITS = np.random.default_rng(0).normal(0, 2, (4, 10)).astype("float32")
_PROBE_PROBABILITIES = np.exp(_PROBE_LOGITS) / np.exp(_PROBE_LOGITS).sum(axis=-1, keepdims=True)
# The cross-entropy of each probe image: -log of the probability of its label.
_PROBE_LOSS = -np.log(_PROBE_PROBABILITIES[np.arange(4), _PROBE_LABELS])


def _is_cross_entropy(value: Any) -> bool:
    """Whether a loss's value is the probe's cross-entropy: per image, or as its mean or sum."""
    try:
        value = np.asarray(value, dtype="float64")
    except Exception:  # noqa: BLE001 - a student's loss may return anything
        return False
    if value.shape == _PROBE_LOSS.shape:
        return bool(np.allclose(value, _PROBE_LOSS, rtol=1e-3))
    return value.shape == () and any(np.isclose(value, [_PROBE_LOSS.mean(), _PROBE_LOSS.sum()], rtol=1e-3))


def _loss_reads_logits(loss: Any) -> tuple[bool | None, str | None]:
    """(from_logits, problem) for any loss ``compile`` takes: a Keras loss object, a loss class, a function, a
    name, or a callable of the student's own. Judged by what it returns for the probe's labels: the
    cross-entropy of logits (``from_logits=True``) or of probabilities (``from_logits=False``)."""
    import keras

    shown = loss
    if isinstance(loss, (str, type)):  # compile(loss=...) looks names and classes up the same way
        try:
            loss = keras.losses.get(loss)
        except Exception:  # noqa: BLE001 - an unknown name or a class that is no loss
            return None, _("Keras does not know the loss {loss!r}: use "
                           "keras.losses.SparseCategoricalCrossentropy").format(loss=shown)
    for from_logits, scores in ((True, _PROBE_LOGITS), (False, _PROBE_PROBABILITIES)):
        try:
            value = loss(_PROBE_LABELS, scores)
        except Exception:  # noqa: BLE001 - e.g. a loss for one-hot labels, or one that is not callable
            continue
        if _is_cross_entropy(value):
            return from_logits, None
    name = shown if isinstance(shown, str) else getattr(shown, "__name__", type(shown).__name__)
    return None, _("the loss is {name}: the labels are whole numbers 0-9, so use "
                   "keras.losses.SparseCategoricalCrossentropy").format(name=name)


def _outputs(model: Any) -> tuple[Any, str | None]:
    """The model's output for four random 28x28x1 images, or the problem that stopped it."""

    images = np.random.default_rng(0).random((4, 28, 28, 1)).astype("float32")
    try:
        out = np.asarray(model(images))
    except Exception as error:  # noqa: BLE001 - a student's model may fail in any way; say how
        return None, _("the model cannot take a batch of 28x28x1 images ({type}: {error})").format(
            type=type(error).__name__, error=error)[:300]
    if out.shape != (4, 10):
        return None, _("the model outputs shape {shape} per image; it needs 10 numbers (one per digit)").format(
            shape=out.shape[1:])
    return out, None


def _outputs_probabilities(model: Any, out: Any) -> tuple[bool | None, str | None]:
    """(True for probabilities, False for logits, None), or the problem: an activation that gives neither."""
    if np.all(out >= 0) and np.allclose(out.sum(axis=-1), 1.0, atol=1e-4):  # softmax, by any layer
        return True, None
    last = model.layers[-1] if getattr(model, "layers", None) else None
    activation = getattr(getattr(last, "activation", None), "__name__", None)
    if activation in (None, "linear", "log_softmax"):  # raw scores; log-probabilities are logits too
        return False, None
    return None, _("the last layer applies {activation}: its outputs are neither logits (no activation) nor "
                   "probabilities that add up to 1 (softmax)").format(activation=activation)


def check_model_and_loss(model: Any, loss: Any) -> Feedback:
    """Right when the model's output and the loss agree: logits + from_logits=True, or softmax + False."""
    if is_empty(model) or is_empty(loss):
        return not_answered(MODEL_AND_LOSS, _("Set `my_model` to the fixed keras.Sequential([...]) and `my_loss` "
                                              "to its loss, then run the cell."))
    import keras

    if not isinstance(model, keras.Model):
        return feedback(MODEL_AND_LOSS, [_("`my_model` is a {type}: build it with keras.Sequential([...])").format(
            type=type(model).__name__)], right="")
    from_logits, problem = _loss_reads_logits(loss)
    problems = [problem] if problem else []
    out, problem = _outputs(model)
    probabilities = None
    if problem:
        problems.append(problem)
    elif model.count_params() != CNN_PARAMS:
        problems.append(_("the model has {count:,} parameters, the blog post's has {blog:,}: keep its layers and "
                          "change only what the output needs").format(count=model.count_params(), blog=CNN_PARAMS))
    else:
        probabilities, problem = _outputs_probabilities(model, out)
        if problem:
            problems.append(problem)
    if problems or probabilities is None or from_logits is None:
        return feedback(MODEL_AND_LOSS, problems, right="")
    if probabilities and from_logits:
        problems.append(_("the model outputs probabilities (its last layer applies softmax), but the loss expects "
                          "logits (from_logits=True): this is still the blog post's mismatch"))
    elif not probabilities and not from_logits:
        problems.append(_("the model outputs logits (its last layer has no softmax), but the loss expects "
                          "probabilities (from_logits=False, the default): it would read raw scores as "
                          "probabilities"))
    right = (_("They agree: a softmax output with from_logits=False.") if probabilities
             else _("They agree: a logits output with from_logits=True."))
    return feedback(MODEL_AND_LOSS, problems, right=right)


# The GPUs of the task: the name TensorFlow reports (get_device_details) and the compute capability.
GPUS = {"GeForce RTX 3060": (8, 6), "Tesla T4": (7, 5), "GeForce GTX 1660 Ti": (7, 5), "GeForce GTX 1080": (6, 1)}


def _policy_problem(gpu: str, value: Any) -> str | None:
    """What is wrong with one GPU's policy (None: nothing); ``...`` is no answer, None is one."""
    cc = GPUS[gpu]
    shown = f"{gpu} ({cc[0]}.{cc[1]})"
    if value is Ellipsis:
        return _("{gpu} has no answer.").format(gpu=shown)
    text = "none" if value is None else str(value).strip().strip("'\"").lower()
    given, (want, _why) = None if text in ("", "none", "float32") else text, speed.gpu_policy(gpu, cc)
    if given not in (None, "mixed_float16", "mixed_bfloat16"):
        return _("{gpu}: {given!r} is not \"mixed_bfloat16\", \"mixed_float16\" or None.").format(gpu=shown,
                                                                                               given=value)
    if given == want or (want == "mixed_bfloat16" and given == "mixed_float16"):
        return None
    if want is None and cc < (7, 0):
        return _("{gpu}: Tensor Cores came with compute capability 7.0, so no policy runs on Tensor Cores here. "
                 "Mixed precision still runs; it can gain only from saved memory and bandwidth.").format(gpu=shown)
    if want is None:
        return _("{gpu}: a GTX 16 card has compute capability 7.5 but no Tensor Cores, so no policy runs on Tensor "
                 "Cores here. Mixed precision still runs.").format(gpu=shown)
    if given is None:
        return _("{gpu}: it has Tensor Cores (7.0 and newer, not a GTX 16 card). Mixed precision runs its matrix "
                 "products there.").format(gpu=shown)
    return _("{gpu}: its Tensor Cores run float16. bfloat16 needs compute capability 8.0 or newer.").format(
        gpu=shown)  # bfloat16 asked of a 7.x GPU


def check_policies(answer: Any) -> Feedback:
    """Right when each GPU of ``GPUS`` gets a policy that runs on its Tensor Cores, or None where it has none:
    the task asks where mixed precision gets their speedup, not where it runs (everywhere)."""
    return dict_answer(
        POLICIES, answer, lambda given: (_policy_problem(gpu, given.get(gpu, ...)) for gpu in GPUS),
        example='{"Tesla T4": None, ...}', none_answers=True,
        hint=_("Replace each ... with \"mixed_bfloat16\", \"mixed_float16\" or None. Then run the cell."),
        right=_("Right. On the RTX 3060 (8.6) both policies run on Tensor Cores; mixed_bfloat16 needs no loss "
                "scaling. On the T4 only mixed_float16 does. mixed_float16 needs loss scaling on every device: "
                "model.fit does it by itself, a custom training loop wraps its optimizer in "
                "keras.optimizers.LossScaleOptimizer."))


CHOICES = ("a", "b", "c", "d")


def check_utilisation(answer: Any) -> Feedback:
    """Right for "b": batch 256 instead of 32 - eight times fewer steps, so the GPU waits less between them."""
    said = {
        "a": _("Mixed precision can only shorten the GPU's work in each step, not the waits between steps. The "
               "waits then take a larger share of the time, so utilisation goes down, not up."),
        "c": _("Memory is not what limits this small model: it uses a small part of a T4's 16 GB. Utilisation "
               "counts the time a kernel runs, not the memory used."),
        "d": _("The model runs on the GPU already: with a GPU, TensorFlow places operations there by default "
               "(notebook 02). The scope changes nothing."),
    }
    right = _("Right: at batch 32 each step is small, and the GPU waits for Python and for the next launch. Batch 256 "
              "makes eight times fewer steps, each with more work. A prefetched tf.data pipeline helps too.")
    return multiple_choice(UTILISATION, answer, CHOICES, said, right=right)


# The notebook's exercises, by number: its task cells call ``course.check("5.1", answer)``.
CHECKS = {
    "5.1": check_model_and_loss,
    "5.2": check_utilisation,
    "5.3": check_policies,
}
