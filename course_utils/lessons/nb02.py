"""Notebook 02's lesson: what setup reads, and the exercises.

Setup reads ``NOTEBOOK``, ``SMOKE`` (a smaller product, fewer timed runs) and ``KEY_RESULTS``.

The exercises: three decisions about a GPU, each checked by reasoning, not by a table lookup.

- Exercise 2.1, ``check_gpu_code(answer)``: which code of TF 2.21's wheel each of five GPUs runs - a
  ready-made cubin, PTX the driver compiles, or none. The check applies NVIDIA's binary-compatibility
  rules (``doctor.gpus.covered_by_build``, the doctor's own function) to the wheel's target list.
- Exercise 2.2, ``check_timing(answer)``: a classmate's GPU timing gives an impossible speed; which
  of three things did they measure? The check explains each choice.
- Exercise 2.3, ``check_tf32_off(answer)``: the one line that makes an Ampere GPU multiply in full
  float32. The check parses the line; it accepts every spelling of the right call, with False or any number
  that TensorFlow itself reads as False (see ``check_tf32_off``).
"""

from __future__ import annotations

import ast

from course_utils.core.i18n import translator
from course_utils.doctor.gpus import build_targets, covered_by_build
from course_utils.lessons import Feedback, feedback, is_empty, multiple_choice, not_a_dict, not_answered, unanswered

_ = translator("lessons")

# --------------------------------------------------------------------------- the run: what setup reads

NOTEBOOK = "02_verify_gpu"  # the name the notebook gives setup
SMOKE = {"MATMUL_SIZE": 256, "REPEATS": 3}
KEY_RESULTS = {  # name: what it means, as the run report explains it
    "gpus_visible": "GPUs that TensorFlow lists (0 on a machine without a usable GPU)",
    "gpu_usable": "whether an operation really ran on a GPU",
    "matmul_ms": "one matrix product on each device, median milliseconds",
    "copy_ms": "copying the product from each device to main memory, median milliseconds",
}


# --------------------------------------------------------------------------- the exercises

# Exercise 2.1: the GPUs of the task, with their compute capability.
GPUS = {"GeForce GTX 980": "5.2", "GeForce GTX 1080": "6.1", "Tesla T4": "7.5", "GeForce RTX 3060": "8.6",
        "H100": "9.0"}
KINDS = ("cubin", "ptx", "none")


def code_kind(compute_capability: str, tensorflow: str = "2.21") -> str:
    """Which code of ``tensorflow``'s CUDA wheel a GPU runs: "cubin", "ptx" or "none" (NVIDIA's rules)."""

    coverage = covered_by_build(compute_capability, build_targets(tensorflow), tensorflow)
    if not coverage.covered:
        return "none"
    return "ptx" if coverage.jit else "cubin"


def check_gpu_code(answer: object) -> Feedback:
    """Exercise 2.1: a dict {GPU name: "cubin" | "ptx" | "none"} for the five GPUs of ``GPUS``."""
    name = "Exercise 2.1"
    if unanswered(answer):
        return not_answered(name, _("Replace each None in the dict with \"cubin\", \"ptx\" or \"none\". Then run "
                                    "the cell."))
    if not isinstance(answer, dict):
        return not_a_dict(name, answer, '{"Tesla T4": "cubin", ...}')
    problems = []
    for gpu, cc in GPUS.items():
        value = answer.get(gpu)
        given = "" if is_empty(value) else str(value).strip().lower()  # None is the placeholder, not "none"
        want = code_kind(cc)
        if not given:
            problems.append(_("{gpu} ({cc}) has no answer yet: replace its None with \"cubin\", \"ptx\" or "
                              "\"none\", in quotes.").format(gpu=gpu, cc=cc))
        elif given not in KINDS:
            problems.append(_("{gpu}: {given!r} is not one of \"cubin\", \"ptx\", \"none\".").format(
                gpu=gpu, given=given))
        elif given != want:
            problems.append({
                "cubin": _("{gpu} ({cc}): look for an sm_ entry of the same major version and an equal or lower "
                           "minor version."),
                "ptx": _("{gpu} ({cc}): no sm_ entry has its major version, but compute_90 PTX runs on 9.0 and every "
                         "newer GPU."),
                "none": _("{gpu} ({cc}): no sm_ entry has its major version, and the PTX is for 9.0 and newer. "
                          "TF 2.17 dropped 5.x."),
            }[want].format(gpu=gpu, cc=cc))
    right = _("Right. The T4 (7.5) runs sm_70 code: a cubin serves every later minor version of its major "
              "version. The H100 needs the driver to compile the PTX, so its driver must know CUDA 12.5.")
    return feedback(name, problems, right=right)


# ----------------------------------------------------------------------------- Exercise 2.2

TIMING_CHOICES = ("a", "b", "c")


def check_timing(answer: object) -> Feedback:
    """Exercise 2.2: the letter of what a timing without a sync measured: the time to queue the work ("b")."""
    said = {
        "a": _("2,700 TFLOP/s is far more than any GPU can do, so the product cannot have finished. Without a sync, "
               "the clock stops when the work is queued."),
        "c": _("The code never calls .numpy(), so nothing was copied. And a copy would make the time longer, not "
               "shorter."),
    }
    right = _("Right: the GPU had only received the work. Add tf.test.experimental.sync_devices() before you stop "
              "the clock.")
    return multiple_choice("Exercise 2.2", answer, TIMING_CHOICES, said, right=right)


# ----------------------------------------------------------------------------- Exercise 2.3

# The names under which ``import tensorflow as tf`` (or ``import tensorflow``) reaches the function: TF 2.21 exports
# it in tf.config.experimental, and the same function in tf.compat.v1 and tf.compat.v2 (a test checks each).
TF32_FUNCTIONS = frozenset(
    f"{root}.{compat}config.experimental.enable_tensor_float_32_execution"
    for root in ("tf", "tensorflow") for compat in ("", "compat.v1.", "compat.v2."))
_KERAS_DTYPE = ("set_global_policy", "set_dtype_policy", "set_floatx")  # Keras settings of the float type


def _call(answer: str) -> ast.Call | None:
    """The answer's one call: a line of Python (a trailing ';' or comment allowed), after any imports of TensorFlow
    (``import tensorflow as tf; ...``); or None."""
    try:
        tree = ast.parse(answer.strip())
    except (SyntaxError, ValueError, RecursionError, MemoryError):  # ValueError: a null byte
        return None
    body = [node for node in tree.body if not (isinstance(node, ast.Import) and all(
        alias.name == "tensorflow" for alias in node.names))]
    if len(body) != 1 or not isinstance(body[0], ast.Expr) or not isinstance(body[0].value, ast.Call):
        return None
    return body[0].value


def check_tf32_off(answer: object) -> Feedback:
    """Exercise 2.3: the call that switches TensorFloat-32 off, written as text.

    The value: TensorFlow turns its argument into a bool (measured on TF 2.21: ``(0)`` and ``(0.0)`` leave TF32 off,
    as ``(False)`` does; ``(1)``, ``(2)`` and ``(-1)`` turn it on; a string raises TypeError). So every number whose
    value is 0 is right, and every other number is wrong, with that reason. ``None`` also turns it off, but it is no
    answer to "on or off": the check asks for False.
    """
    name = "Exercise 2.3"
    if is_empty(answer):
        return not_answered(name, _("Write the call as text, in quotes. Then run the cell."))
    if isinstance(answer, str) and "NVIDIA_TF32_OVERRIDE" in answer:
        return feedback(name, [_("NVIDIA_TF32_OVERRIDE is an environment variable that NVIDIA's libraries read. The "
                                 "task asks for a line of TensorFlow: a call.")], right="")
    call = _call(answer) if isinstance(answer, str) else None
    if call is None:
        return feedback(name, [_("Write one call, as text in quotes, for example \"tf.something(...)\".")],
                        right="")
    function = ast.unparse(call.func)  # 'tf.config.experimental.enable_tensor_float_32_execution'
    if function.split(".")[-1] in _KERAS_DTYPE:
        return feedback(name, [_("A Keras dtype setting chooses the type of the variables and the results. It does "
                                 "not switch TF32 off: float32 products on that GPU still use TF32.")], right="")
    if function.split(".")[-1] != "enable_tensor_float_32_execution":
        return feedback(name, [_("Look for the TensorFlow function that turns TensorFloat-32 execution on or off: "
                                 "it is in tf.config.experimental.")], right="")
    if function not in TF32_FUNCTIONS:
        return feedback(name, [_("The function lives in tf.config.experimental: write its whole name, so the line "
                                 "runs after `import tensorflow as tf`.")], right="")
    unknown = [k.arg for k in call.keywords if k.arg != "enabled"]
    if unknown:
        return feedback(name, [_("The function has one argument, enabled; it has no argument {name}.").format(
            name=unknown[0])], right="")
    values = [*call.args, *(k.value for k in call.keywords)]
    try:
        value = ast.literal_eval(values[0]) if len(values) == 1 else None
    except (ValueError, TypeError, SyntaxError, RecursionError, MemoryError):  # a name or an expression
        value = None
    if isinstance(value, str):
        return feedback(name, [_("{value!r} is text: TensorFlow refuses it (TypeError). Write False, without "
                                 "quotes.").format(value=value)], right="")
    if value is True:
        return feedback(name, [_("True keeps TF32 on, which is already the default. You want full float32.")],
                        right="")
    if isinstance(value, int | float) and value:
        return feedback(name, [_("TensorFlow reads {value!r} as True: it keeps TF32 on. You want full float32: "
                                 "False.").format(value=value)], right="")
    if not isinstance(value, int | float):  # False and 0 are ints; None, a name, an expression are not
        return feedback(name, [_("Give it one value, True or False: whether TF32 may be used.")], right="")
    right = _("Right. Run it before the products. The results then match the CPU's to float32 rounding, and "
              "matrix products run slower on that GPU.")
    return feedback(name, [], right=right)


# The notebook's exercises, by number: its task cells call ``course.check("2.1", answer)``.
CHECKS = {
    "2.1": check_gpu_code,
    "2.2": check_timing,
    "2.3": check_tf32_off,
}
