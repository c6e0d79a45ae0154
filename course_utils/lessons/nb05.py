"""Notebook 05's lesson: what setup reads, and the exercises.

Setup reads ``NOTEBOOK``, ``SMOKE``, ``KEY_RESULTS`` and ``needs``: an epoch to time after the warm-up, a
precision policy ``speed.check_policy`` knows, a target accuracy between 0 and 1, and the 2,000 images its
checkpoint's short-run accuracy is verified at.

The exercises: a model and loss that agree, a precision policy per GPU, a utilisation figure explained.

- 5.1 ``check_model_and_loss(model, loss)``: the blog post's CNN with its output and its loss made
  to agree. The check calls the model on four blank images (no training) to see whether it
  outputs probabilities or logits, and reads ``from_logits`` from the loss.
- 5.2 ``check_utilisation(answer)``: a measured figure explained - which change raises a GPU's utilisation
  of 35% during ``fit`` of this small CNN at batch 32.
- 5.3 ``check_policies(answer)``: the mixed-precision policy worth trying on four named GPUs. The check
  applies the course's rule (``course_utils.speed.gpu_policy``: Tensor Cores from compute capability 7.0
  except the GTX 16 series; bfloat16 from 8.0) and accepts float16 on an 8.x GPU too.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from course_utils.core.errors import ParameterError
from course_utils.core.i18n import translator
from course_utils.lessons import Feedback, feedback, is_empty, multiple_choice, not_a_dict, not_answered
from course_utils.params import too_few
from course_utils.speed import check_policy, gpu_policy

_ = translator("lessons")

# --------------------------------------------------------------------------- the run: what setup reads

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
    try:
        check_policy(policy)
    except ParameterError as error:
        raise ParameterError(_("MIXED_PRECISION = {policy!r} is not understood.").format(policy=policy),
                             error.fix) from None
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
        raise too_few(_("Parameter IMAGES = {images:,} is too few for this notebook: it needs at least {least:,} - "
                        "its checkpoint's short-run test accuracy is verified at 2,000 images (x 3 epochs, its "
                        "smoke run).").format(images=images, least=2000), 2000)


# --------------------------------------------------------------------------- the exercises

MODEL_AND_LOSS = "Exercise 5.1"
UTILISATION = "Exercise 5.2"
POLICIES = "Exercise 5.3"

CNN_PARAMS = 93_322  # course_utils.models.CNN_PARAMS (not imported: that module imports Keras)


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

    try:
        out = np.asarray(model(np.zeros((4, 28, 28, 1), "float32") + 0.5))
    except Exception as error:  # noqa: BLE001 - a student's model may fail in any way; say how
        return None, _("the model cannot take a batch of 28x28x1 images ({type}: {error})").format(
            type=type(error).__name__, error=error)[:300]
    if out.shape != (4, 10):
        return None, _("the model outputs shape {shape} per image; it needs 10 numbers (one per digit)").format(
            shape=out.shape[1:])
    return out, None


def check_model_and_loss(model: Any, loss: Any) -> Feedback:
    """Right when the model's output and the loss agree: logits + from_logits=True, or softmax + False."""
    if is_empty(model) or is_empty(loss):
        return not_answered(MODEL_AND_LOSS, _("Set `my_model` to the fixed keras.Sequential([...]) and `my_loss` "
                                              "to its loss, then run the cell."))
    import keras

    if not isinstance(model, keras.Model):
        return feedback(MODEL_AND_LOSS, [_("`my_model` is a {type}: build it with keras.Sequential([...])").format(
            type=type(model).__name__)], right="")
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
        return feedback(MODEL_AND_LOSS, problems, right="")
    probabilities = bool(np.all(out >= 0) and np.allclose(out.sum(axis=-1), 1.0, atol=1e-4))
    if probabilities and from_logits:
        problems.append(_("the model outputs probabilities (its last layer applies softmax), but the loss has "
                          "from_logits=True: this is still the blog post's mismatch"))
    elif not probabilities and not from_logits:
        problems.append(_("the model outputs logits (no softmax), but the loss has from_logits=False: it would "
                          "read raw scores as probabilities"))
    right = (_("They agree: a softmax output with from_logits=False.") if probabilities
             else _("They agree: a logits output with from_logits=True."))
    return feedback(MODEL_AND_LOSS, problems, right=right)


# --------------------------------------------------------------------------- 5.2

# The GPUs of the task: the name TensorFlow reports (get_device_details) and the compute capability.
GPUS = {"GeForce RTX 3060": (8, 6), "Tesla T4": (7, 5), "GeForce GTX 1660 Ti": (7, 5), "GeForce GTX 1080": (6, 1)}


def _policy(value: Any) -> str | None:
    text = str(value).strip().strip("'\"").lower() if value is not None else None
    return None if text in (None, "", "none", "float32") else text


def check_policies(answer: Any) -> Feedback:
    """Right when each GPU of ``GPUS`` gets the policy worth trying: mixed_bfloat16 or mixed_float16, or None."""

    if is_empty(answer) or (isinstance(answer, dict) and all(v is Ellipsis for v in answer.values())):
        return not_answered(POLICIES, _("Replace each ... with \"mixed_bfloat16\", \"mixed_float16\" or None. "
                                        "Then run the cell."))
    if not isinstance(answer, dict):
        return not_a_dict(POLICIES, answer, '{"Tesla T4": None, ...}')
    problems = []
    for gpu, cc in GPUS.items():
        shown = f"{gpu} ({cc[0]}.{cc[1]})"
        if gpu not in answer or answer[gpu] is Ellipsis:
            problems.append(_("{gpu} has no answer.").format(gpu=shown))
            continue
        given, (want, _why) = _policy(answer[gpu]), gpu_policy(gpu, cc)
        if given not in (None, "mixed_float16", "mixed_bfloat16"):
            problems.append(_("{gpu}: {given!r} is not \"mixed_bfloat16\", \"mixed_float16\" or None.").format(
                gpu=shown, given=answer[gpu]))
        elif given == want or (want == "mixed_bfloat16" and given == "mixed_float16"):
            continue
        elif want is None and cc < (7, 0):
            problems.append(_("{gpu}: Tensor Cores came with compute capability 7.0. Without them, 16 bits save "
                              "memory but not time.").format(gpu=shown))
        elif want is None:
            problems.append(_("{gpu}: a GTX 16 card has compute capability 7.5 but no Tensor Cores. 16 bits "
                              "would save memory, not time.").format(gpu=shown))
        elif given is None:
            problems.append(_("{gpu}: it has Tensor Cores (7.0 and newer, not a GTX 16 card). Mixed precision "
                              "runs its matrix products there.").format(gpu=shown))
        else:  # bfloat16 asked of a 7.x GPU
            problems.append(_("{gpu}: its Tensor Cores run float16. bfloat16 needs compute capability 8.0 or "
                              "newer.").format(gpu=shown))
    right = _("Right. The RTX 3060 (8.6) runs bfloat16 with no loss scaling; float16 works too, with loss scaling. "
              "The T4 needs mixed_float16, and model.fit scales the loss by itself. A custom training loop wraps "
              "its optimizer in keras.optimizers.LossScaleOptimizer.")
    return feedback(POLICIES, problems, right=right)


# --------------------------------------------------------------------------- 5.3

CHOICES = ("a", "b", "c", "d")


def check_utilisation(answer: Any) -> Feedback:
    """Right for "b": batch 256 instead of 32 - eight times fewer steps, so the GPU waits less between them."""
    said = {
        "a": _("Mixed precision makes the GPU's work faster. The GPU then waits even longer between steps, so its "
               "utilisation goes down, not up."),
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
