"""Notebook 03's lesson: what setup reads, and the exercises, two decisions about GPU memory.

- 3.1 ``check_memory_setting``: the memory setting for each of three situations; a wrong one is answered with
  what that setting does there.
- 3.2 ``check_largest_batch``: the largest batch of the post's CNN, trained with Adam, in 5000 MiB, by the
  section's count (16 bytes a weight, plus each layer's output per image twice, 4 bytes a number). The check
  accepts the slips that change it by 2 or 3% at most; the next cell measures a real step, which also holds the
  input batch and scratch memory (1.1 to 1.4 times the count on the course's CPUs).
"""

from __future__ import annotations

import math

from course_utils.core.i18n import translator
from course_utils.lessons import Feedback, dict_answer, feedback, is_empty, not_answered, number

_ = translator("lessons")


NOTEBOOK = "03_memory"  # the name the notebook gives setup
SMOKE = {"BATCH_SIZE": 128}
KEY_RESULTS = {  # name: what it means, as the run report explains it
    "too_late_error": "the error for a memory setting made after TensorFlow started (expected: RuntimeError)",
    "step_kb_per_image": "memory that one more image adds to a training step, kB",
    "largest_batch": "the largest batch estimated to fit in 5,000 MiB of GPU memory",
}


SETTING = "Exercise 3.1"
CHOICES = ("default", "growth", "limit", "logical GPUs", "TF_FORCE_GPU_ALLOW_GROWTH")
# The task's numbered situations: 1 a class of four, 2 two GPUs on one T4, 3 a program you cannot change.
SITUATIONS = (1, 2, 3)
RIGHT_SETTING = dict(zip(SITUATIONS, ("limit", "logical GPUs", "TF_FORCE_GPU_ALLOW_GROWTH"), strict=True))
# Other spellings of the choices, after lower-casing and dropping spaces, dashes, underscores and quotes. A call or a
# class that makes both a limit and logical GPUs (set_logical_device_configuration, LogicalDeviceConfiguration) is
# no spelling of either: the answer is then "not one of the five choices".
_SPELLINGS = {
    "default": "default", "nothing": "default", "none": "default",
    "growth": "growth", "memorygrowth": "growth", "setmemorygrowth": "growth", "allowgrowth": "growth",
    "limit": "limit", "memorylimit": "limit", "hardlimit": "limit", "memorylimitmb": "limit",
    "logicalgpus": "logical GPUs", "twologicalgpus": "logical GPUs", "logicalgpu": "logical GPUs",
    "virtualgpus": "logical GPUs", "twovirtualgpus": "logical GPUs", "virtualgpu": "logical GPUs",
    "logicaldevices": "logical GPUs", "virtualdevices": "logical GPUs",
    "tfforcegpuallowgrowth": "TF_FORCE_GPU_ALLOW_GROWTH", "tfforcegpuallowgrowth=true": "TF_FORCE_GPU_ALLOW_GROWTH",
    "exporttfforcegpuallowgrowth=true": "TF_FORCE_GPU_ALLOW_GROWTH", "environmentvariable": "TF_FORCE_GPU_ALLOW_GROWTH",
}


def as_setting(value: object) -> str | None:
    """One of ``CHOICES`` for an answer spelled in any usual way ("memory growth", "virtual GPUs", ...), or None."""
    if not isinstance(value, str):
        return None
    key = "".join(ch for ch in value.strip().lower() if ch not in " -_\"'`")
    return _SPELLINGS.get(key)


def why_not(situation: str, given: str) -> str:
    """Why ``given`` does not fit ``situation``: what that setting does there."""
    if situation == SITUATIONS[0]:
        return {
            "default": _("By default, the first notebook takes nearly the whole card."),
            "growth": _("Growth has no ceiling: one notebook can still grow to the whole card."),
            "TF_FORCE_GPU_ALLOW_GROWTH": _("The variable turns on growth, and growth has no ceiling."),
            "logical GPUs": _("Logical GPUs split one process's memory into several devices. Each student's "
                              "notebook is one process, and it needs one cap."),
        }[given]
    if situation == SITUATIONS[1]:
        return _("MirroredStrategy needs two devices. Only two logical GPUs, each with a memory limit, make two "
                 "devices of one T4.")
    if given == "default":
        return _("By default the program takes nearly the whole card, so your notebook finds it full.")
    return _("That needs a line of code in the program, which you cannot change. The variable needs no code: set it "
             "before the program starts.")


def _setting_problem(situation: int, given: object) -> str | None:
    setting = as_setting(given)
    if is_empty(given):
        return _("Situation {situation}: no answer yet.").format(situation=situation)
    if setting is None:
        return _("Situation {situation}: {given!r} is not one of the five choices.").format(
            situation=situation, given=given)
    if setting != RIGHT_SETTING[situation]:
        return _("Situation {situation}: not {given!r}. {why}").format(
            situation=situation, given=setting, why=why_not(situation, setting))
    return None


def check_memory_setting(answer: object) -> Feedback:
    """Exercise 3.1: a dict {situation: choice} for the three situations of ``SITUATIONS``."""
    return dict_answer(
        SETTING, answer, lambda given: (_setting_problem(s, given.get(s)) for s in SITUATIONS),
        example='{1: "limit", ...}',
        hint=_("Replace each None with one of the five choices, as a string. Then run the cell."),
        right=_("Right. A limit caps a process. Logical GPUs make one card look like several. The variable works "
                "without code, if it is set before the program starts."))


BATCH = "Exercise 3.2"
WEIGHTS = 93_322  # the blog post's CNN: "Total params" in its summary
# Numbers each image leaves in the layers' outputs: conv 26x26x32, pool 13x13x32, conv 11x11x64, pool 5x5x64,
# conv 3x3x64, flatten 576, dense 64, dense 10.
ACTIVATIONS = 26 * 26 * 32 + 13 * 13 * 32 + 11 * 11 * 64 + 5 * 5 * 64 + 3 * 3 * 64 + 576 + 64 + 10
BUDGET_MIB = 5000  # what TensorFlow's start-up line gives GPU:0 in the task
BYTES = 4  # float32
LOW, HIGH = 0.97, 1.02  # the answers the check accepts, as fractions of the estimate (see the module's docstring)


def per_image_bytes() -> int:
    """Each image's activations, kept by the forward pass and matched by their gradients in the backward pass."""
    return 2 * BYTES * ACTIVATIONS


def fixed_bytes() -> int:
    """Weights, their gradients and Adam's two slots: four float32 numbers per weight."""
    return 4 * BYTES * WEIGHTS


def largest_batch() -> int:
    """The estimate: the images that fit in ``BUDGET_MIB`` after the fixed part (17,420)."""
    return int((BUDGET_MIB * 2**20 - fixed_bytes()) / per_image_bytes())


def check_largest_batch(answer: object) -> Feedback:
    """Exercise 3.2: the largest batch size of the CNN, trained with Adam, in 5000 MiB, by the section's count."""
    if is_empty(answer):
        return not_answered(BATCH, _("Set `answer` to a number of images, such as 1000. Then run the cell."))
    if number(answer) is None or answer < 1:
        return feedback(BATCH, [_("`answer` should be a number of images, 1 or more, not {answer!r}.").format(
            answer=answer)], right="")
    estimate = largest_batch()
    low, high = math.ceil(LOW * estimate), math.floor(HIGH * estimate)  # the answers the check accepts
    ratio = float(answer) / estimate
    if low <= answer <= high:
        right = _("Right: the estimate is about {estimate:,} images. Weights, gradients and Adam take {fixed:.1f} "
                  "MiB, and each image {image:.2f} MiB. A real step also holds the input batch and scratch memory: "
                  "the next cell measures one, and says whether your batch really fits.").format(
            estimate=estimate, fixed=fixed_bytes() / 2**20, image=per_image_bytes() / 2**20)
        return feedback(BATCH, [], right=right)
    if ratio < 0.01:
        hint = _("Far too small. 5000 MB here is 5000 x 2**20 bytes: work in bytes throughout.")
    elif ratio < 0.9:
        hint = _("Too small: the estimate is larger. Count each layer's output twice, at 4 bytes a number, not more. "
                 "The weights and Adam take 16 bytes per weight, once for the whole batch.")
    elif ratio < LOW:
        hint = _("A little too small. 5000 MB here is 5000 x 2**20 bytes, not 5000 x 10**6. Round only at the end.")
    elif ratio < 1.6:
        hint = _("Too large. Count every layer's output, the pooling layers too. Use the 5000 MB TensorFlow gets, "
                 "not the card's 6 GB. Round down at the end.")
    elif ratio < 2.6:
        hint = _("About twice too large: the backward pass needs a gradient for each output. Count each output "
                 "twice.")
    else:
        hint = _("Far too large. A float32 number takes 4 bytes, and each layer's output counts twice.")
    return feedback(BATCH, [_("{answer:,} is not it. {hint}").format(answer=answer, hint=hint)], right="")


# The notebook's exercises, by number: its task cells call ``course.check("3.1", answer)``.
CHECKS = {
    "3.1": check_memory_setting,
    "3.2": check_largest_batch,
}
