"""Notebook 04's exercises: the zeros-channel input built by hand, and the dense model's size.

- ``check_zeros_batch(answer, pixels)`` (Exercise 4.1): the input of the zeros variant for a few images -
  each image flattened, scaled to [0, 1], followed by 784 zeros - as a float32 array of shape (n, 1568).
- ``check_param_count(answer, inputs)`` (Exercise 4.2): the number of parameters of ``Dense(512, relu)`` +
  ``Dense(10, softmax)`` on ``inputs`` input numbers (the model of the Q&A post). Pure arithmetic;
  the notebook's own model is the proof: ``build_dense(inputs).count_params()``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from course_utils.exercises import Feedback, feedback, is_empty, not_answered
from course_utils.i18n import translator

_ = translator("exercises")

ZEROS = "Exercise 4.1"
PARAMS = "Exercise 4.2"
HIDDEN, CLASSES, PIXELS = 512, 10, 784


def dense_params(inputs: int) -> int:
    """Weights and biases of Dense(512) + Dense(10) on ``inputs`` numbers."""
    return inputs * HIDDEN + HIDDEN + HIDDEN * CLASSES + CLASSES


def check_param_count(answer: Any, inputs: int, *, show: bool = True) -> Feedback:
    """Exercise 4.2: the parameters of the Q&A post's dense model for ``inputs`` input numbers."""
    if is_empty(answer):
        return not_answered(PARAMS, _("Set `answer` to a whole number (you may write the sum), then run the cell."),
                            show=show)
    if isinstance(answer, bool) or not isinstance(answer, (int, np.integer)):
        return feedback(PARAMS, [_("`answer` should be a whole number, not {answer!r}.").format(answer=answer)],
                        right="", show=show)
    answer, truth = int(answer), dense_params(inputs)
    mistakes = {
        inputs * HIDDEN + HIDDEN * CLASSES: _("You left out the biases: each Dense layer adds one per unit "
                                              "({hidden} + {classes}).").format(hidden=HIDDEN, classes=CLASSES),
        inputs * HIDDEN + HIDDEN: _("That is the first layer only. Add the second: {hidden} x {classes} weights "
                                    "+ {classes} biases.").format(hidden=HIDDEN, classes=CLASSES),
        inputs * CLASSES + CLASSES: _("That skips the hidden layer of {hidden} units.").format(hidden=HIDDEN),
    }
    for other in (PIXELS, PIXELS + 784):  # the two widths the notebook talks about
        if other != inputs:
            mistakes.setdefault(dense_params(other), _("That is the model for {other:,} inputs, not "
                                                       "{inputs:,}.").format(other=other, inputs=inputs))
    if answer == truth:
        return feedback(PARAMS, [], right=_("{truth:,} = {inputs:,} x {hidden} + {hidden} + {hidden} x {classes} "
                                            "+ {classes}. Check it: build_dense({inputs}).count_params().").format(
            truth=truth, inputs=inputs, hidden=HIDDEN, classes=CLASSES), show=show)
    hint = mistakes.get(answer, _("A Dense layer with n inputs and u units has n x u weights and u biases. "
                                  "Add both layers; you are off by {off:+,}.").format(off=answer - truth))
    return feedback(PARAMS, [_("{answer:,} is not it. {hint}").format(answer=answer, hint=hint)], right="", show=show)


def zeros_input(pixels: np.ndarray) -> np.ndarray:
    """The zeros variant's input for ``pixels`` (uint8, (n, 28, 28)): float32 (n, 1568)."""
    flat = np.asarray(pixels).reshape(len(pixels), PIXELS).astype(np.float32) / 255.0
    return np.concatenate([flat, np.zeros((len(pixels), 784), np.float32)], axis=1)


def check_zeros_batch(answer: Any, pixels: np.ndarray, *, show: bool = True) -> Feedback:
    """Exercise 4.1: the zeros-channel input for ``pixels``: shape (n, 1568), float32, pixels / 255 then zeros."""
    if is_empty(answer):
        return not_answered(ZEROS, _("Set `answer` to the array you build from the {count} images, then run "
                                     "the cell.").format(count=len(pixels)), show=show)
    try:
        got = np.asarray(answer)  # a NumPy array or a TensorFlow tensor
    except (TypeError, ValueError) as err:
        problem = _("`answer` should be an array, not {type} ({error}).").format(type=type(answer).__name__, error=err)
        return feedback(ZEROS, [problem], right="", show=show)
    n, want = len(pixels), zeros_input(pixels)
    if got.shape != want.shape:
        if got.shape == (n, 28, 28):
            hint = _("Flatten each image to {pixels} numbers first: pixels.reshape({n}, {pixels}).").format(
                pixels=PIXELS, n=n)
        elif got.shape == (n, PIXELS):
            hint = _("Append the 784 zero channels: np.concatenate([images, zeros], axis=1).")
        elif got.shape == (2 * n, PIXELS):
            hint = _("The zeros go beside each image (axis=1), not below the images (axis=0).")
        else:
            hint = _("Each of the {n} images needs {pixels} pixels + 784 zeros.").format(n=n, pixels=PIXELS)
        return feedback(ZEROS, [_("The shape is {got}, not {want}. {hint}").format(
            got=got.shape, want=want.shape, hint=hint)], right="", show=show)
    problems = []
    if got.dtype != np.float32:
        if got.dtype == np.float64:
            problems.append(_("The dtype is float64: 8 bytes a number, the book's memory trap. np.zeros and "
                              "np.random.random make float64 unless you pass dtype=\"float32\" (or use .astype)."))
        else:
            problems.append(_("The dtype is {dtype}, not float32: the model wants floats in [0, 1].").format(
                dtype=got.dtype))
    values = got.astype(np.float64)
    if np.allclose(values[:, PIXELS:], want[:, :PIXELS], atol=1e-6) and not np.any(values[:, :PIXELS]):
        problems.append(_("The zeros come first. Put the pixels first, then the extra channels."))
    else:
        if np.allclose(values[:, :PIXELS], np.asarray(pixels, np.float64).reshape(n, PIXELS)):
            problems.append(_("The pixels are still 0-255. Divide by 255 to scale them to [0, 1]."))
        elif not np.allclose(values[:, :PIXELS], want[:, :PIXELS], atol=1e-6):
            problems.append(_("The first {pixels} numbers of each row should be that image's pixels / 255, in "
                              "order.").format(pixels=PIXELS))
        if np.any(values[:, PIXELS:]):
            problems.append(_("The last 784 numbers of each row should all be 0, the zero channels."))
    return feedback(ZEROS, problems, right=_("Shape {shape}, float32, pixels / 255 then 784 zeros: the "
                                             "zeros variant's input, as the pipeline builds it.").format(
        shape=want.shape), show=show)
