"""Notebook 04's lesson: what setup reads (``needs``: images to train and validate, and for MNIST the 4,000 its
checkpoint was measured with), and the exercises about the Q&A post's dense model.

- 4.1 ``check_memory``: the post's float64 arrays for 60,000 images, the data held during the first ``fit`` (both
  arrays and Keras's float32 copy), and whether that fits a 2 GB session. In MB: within 3% is right; MiB (4.6%
  less), kB, GB or bytes is wrong, and said so.
- 4.2 ``check_gpu_speed``: a step's arithmetic at batch 128, and why a GPU speeds this small model up far less
  than its FLOP/s suggest (a step's fixed cost is larger than its arithmetic on a GPU).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from course_utils.core.i18n import translator
from course_utils.lessons import Feedback, dict_answer, number
from course_utils.params import needs_split, too_few

_ = translator("lessons")


NOTEBOOK = "04_dense_noise_vs_zeros"  # the name the notebook gives setup
SMOKE = {"EPOCHS": 5, "IMAGES": 4000}
KEY_RESULTS = {  # name: what it means, as the run report explains it
    "zeros_minus_noise_points": "validation accuracy at the last epoch with zero channels added, minus with "
                                "noise channels, in points (1 point = 1% of the images)",
    "step_ms": "milliseconds per training step, with noise channels and with zero channels",
}


def needs(values: Mapping[str, Any]) -> None:
    """Refuse too few images: one to train on and one to validate, and for MNIST the 4,000 the checkpoint needs."""
    images = values.get("IMAGES")
    needs_split(images)
    # The checkpoint asks MNIST runs for zeros ahead of noise (the average of the last 3 epochs);
    # docs/references.md#noise-gap lists the gaps measured, the smallest run being 4,000 images x 5 epochs (its
    # smoke run). Fewer: unmeasured.
    if images is not None and values.get("DATASET") == "mnist" and images < 4000:
        raise too_few(images, 4000, _("its checkpoint's check that zeros beat noise was measured from 4,000 images "
                                      "(x 5 epochs) up (docs/references.md#noise-gap)."))


MEMORY, SPEED = "Exercise 4.1", "Exercise 4.2"
IMAGES, FEATURES, HIDDEN, CLASSES, BATCH = 60_000, 1568, 512, 10, 128
T4_TFLOPS = 8.1  # NVIDIA's T4 datasheet: 8.1 TFLOPS in float32
MB, MIB = 10**6, 2**20


def array_bytes(images: int = IMAGES, bytes_per_number: int = 8) -> int:
    """One of the post's arrays: ``images`` rows of 1,568 numbers."""
    return images * FEATURES * bytes_per_number


def during_fit_bytes(images: int = IMAGES) -> int:
    """The post's data during its first ``fit``: both float64 arrays, and Keras's float32 copy of one."""
    return 2 * array_bytes(images, 8) + array_bytes(images, 4)


def step_gflop(batch: int = BATCH) -> float:
    """One training step: 3 x the forward pass; the forward pass is 2 FLOP (a multiply-add) per weight and image."""
    return 3 * 2 * (FEATURES * HIDDEN + HIDDEN * CLASSES) * batch / 1e9


def _near(value: float, nbytes: float, tolerance: float = 0.03) -> bool:
    """``value`` is ``nbytes`` in MB, within ``tolerance``."""
    return abs(value - nbytes / MB) <= tolerance * nbytes / MB


def _size_problem(given: Any, nbytes: int, slips: tuple[tuple[float, str], ...], otherwise: str, not_a_number: str,
                  wrong: str) -> str | None:
    """What is wrong with ``given``, a size in MB of ``nbytes``: None when it is right (within 3%); else ``wrong``
    with a hint - a unit, the first of ``slips`` (size in bytes, hint) it matches, a rounding, or ``otherwise``."""
    value = number(given)
    if value is None:
        return not_a_number.format(value=given)
    if _near(value, nbytes):
        return None
    units = ((MIB, _("That is in MiB (2**20 bytes). The task asks for MB: 10**6 bytes.")),
             (1, _("That is in bytes. Divide by 10**6 for MB.")),
             (10**3, _("That is in kB. Divide by 1,000 for MB.")),
             (10**9, _("That is in GB. Multiply by 1,000 for MB.")))
    # ``nbytes`` written in another unit is, read as MB, the size nbytes * MB / unit
    hints = [(nbytes * MB / unit, text) for unit, text in units] + list(slips)
    hint = next((text for size, text in hints if _near(value, size)), None)
    if hint is None and _near(value, nbytes, tolerance=0.07):
        hint = _("Close, but not it. Round less, and only at the end.")
    return wrong.format(value=value, hint=hint or otherwise)


def _fits_problem(given: Any) -> str | None:
    fits = given if isinstance(given, bool) else None
    if isinstance(given, str):  # True or False, also written as text
        fits = {"yes": True, "true": True, "no": False, "false": False}.get(given.strip().lower())
    if fits is None:
        return _("`fits` should be True or False, not {value!r}.").format(value=given)
    return _("`fits`: about 1,900 MB of data, plus what this process already holds with TensorFlow (printed in "
             "section 1), is more than 2 GB.") if fits else None


def _memory_problems(answer: Mapping[str, Any]) -> tuple[str | None, ...]:
    return (
        _size_problem(answer.get("float64_mb"), array_bytes(), (
            (array_bytes(bytes_per_number=4),  # float32, or the 784 pixels alone in float64
             _("Each row holds 1,568 numbers (784 pixels + 784 extra), and float64 takes 8 bytes a number.")),
            (2 * array_bytes(), _("That is both arrays. `float64_mb` is one of them.")),
        ), _("Multiply: images x 1,568 numbers x 8 bytes, then divide by 10**6."),
            _("`float64_mb` should be a number of MB, not {value!r}."),
            _("`float64_mb` = {value:,.1f} is not one float64 array of 60,000 images. {hint}")),
        _size_problem(answer.get("during_fit_mb"), during_fit_bytes(), (
            (2 * array_bytes(),  # both arrays, or one and a float64 copy
             _("That is two float64 arrays. Count both arrays the post builds, and add the float32 copy that `fit` "
               "makes of one: 4 bytes a number.")),
            (array_bytes() + array_bytes(bytes_per_number=4),
             _("The post builds both arrays before its first `fit`: both are in memory.")),
            (3 * array_bytes(),  # a float64 copy, or a float32 copy of both arrays
             _("That is three float64 arrays. The first `fit` copies only the array it trains on, in float32: half "
               "a float64 array.")),
        ), _("Add two float64 arrays and one float32 copy."),
            _("`during_fit_mb` should be a number of MB, not {value!r}."),
            _("`during_fit_mb` = {value:,.1f} is not the data held during the first `fit`. {hint}")),
        _fits_problem(answer.get("fits")),
    )


def check_memory(answer: Any) -> Feedback:
    """Exercise 4.1: {"float64_mb": one float64 array, "during_fit_mb": the data during the first fit,
    "fits": whether that fits in 2 GB beside TensorFlow}, for 60,000 images."""
    return dict_answer(
        MEMORY, answer, _memory_problems, example='{"float64_mb": 100, ...}',
        hint=_("Replace each None in the dict: two sizes in MB, then True or False. Then run the cell."),
        right=_("Right. The data alone is about 1,900 MB, and TensorFlow needs several hundred MB more: the post's "
                "code does not fit in 2 GB. In float32, one variant at a time, the data would be 376 MB; section 2 "
                "builds each batch when fit asks for it, 0.8 MB at a time."))


def _gflop_problem(given: Any) -> str | None:
    truth, gflop = step_gflop(), number(given)
    if gflop is None:
        return _("`gflop_per_step` should be a number of GFLOP, not {value!r}.").format(value=given)
    if abs(gflop - truth) <= 0.1 * truth:
        return None
    hints = [
        (truth / 3, _("That is the forward pass only. A training step costs about 3 times the forward pass.")),
        (truth / 2, _("A multiply-add is 2 FLOP.")),
        (truth * 2 / 3, _("A training step is the forward pass plus a backward pass that costs about twice as "
                          "much: 3 times the forward pass.")),
        (truth / 6, _("That is the forward pass, with a multiply-add counted once. A multiply-add is 2 FLOP, and "
                      "a training step costs about 3 times the forward pass.")),
        (truth * 1000, _("That is in MFLOP. 1 GFLOP is 10**9 FLOP.")),
        (truth * 1e9, _("That is in FLOP. Divide by 10**9 for GFLOP.")),
        (truth / BATCH, _("That is one image. A step has 128 images.")),
    ]
    hint = next((text for value, text in hints if abs(gflop - value) <= 0.1 * value),
                _("Count the weights (1,568 x 512 + 512 x 10), then x 2 FLOP x 3 (training) x 128 images."))
    return _("`gflop_per_step` = {value:g} is not it. {hint}").format(value=gflop, hint=hint)


def _prediction_problem(given: Any) -> str | None:
    said = {
        "a": _("(a): at 8 TFLOP/s, the arithmetic of a step takes under 0.1 ms. Each step also runs Keras's Python "
               "code and starts its GPU kernels one by one. That fixed cost is larger, so it sets the pace."),
        "b": None,
        "c": _("(c): the GPU does the arithmetic in under 0.1 ms, where a CPU needs milliseconds. The fixed cost of "
               "a step makes the gain smaller than the FLOP/s suggest, not negative."),
    }
    letter = str(given).strip().lower().strip("()")
    if letter not in said:
        return _("`prediction` should be \"a\", \"b\" or \"c\", not {value!r}.").format(value=given)
    return said[letter]


def check_gpu_speed(answer: Any) -> Feedback:
    """Exercise 4.2: {"gflop_per_step": the arithmetic of one training step at batch 128, "prediction": "b"}."""
    truth = step_gflop()
    return dict_answer(
        SPEED, answer, lambda given: (_gflop_problem(given.get("gflop_per_step")),
                                      _prediction_problem(given.get("prediction"))),
        example='{"gflop_per_step": 1.0, ...}',
        hint=_("Replace each None in the dict: a number of GFLOP, then \"a\", \"b\" or \"c\". Then run the cell."),
        right=_("Right. {gflop:.2f} GFLOP takes a T4 about {ms:.2f} ms, far less than the fixed cost of a step. "
                "Fewer, larger steps, or several steps per call (compile(steps_per_execution=...)), cut that "
                "cost.").format(gflop=truth, ms=truth / T4_TFLOPS))


# The notebook's exercises, by number: its task cells call ``course.check("4.1", answer)``.
CHECKS = {
    "4.1": check_memory,
    "4.2": check_gpu_speed,
}
