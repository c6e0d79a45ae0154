"""Notebook 02's exercises: find the device an op ran on, and write today's check for a GPU.

- Exercise 2.1, ``check_op_device(answer)``: where did ``tf.linalg.matmul(a, b)`` run, without a
  ``tf.device`` scope? The check runs the same op itself and compares the device it ran on.
- Exercise 2.2, ``check_gpu_check(answer)``: today's replacement for ``tf.test.is_gpu_available()``,
  written as text. The check runs it twice against a stand-in ``tf``: once on a machine with one GPU,
  once on a machine without. It must say yes to the first and no to the second. Then it runs it
  with the real TensorFlow.
"""

from __future__ import annotations

import ast
import re
from types import SimpleNamespace

from course_utils.exercises import Feedback, feedback, is_empty, not_answered
from course_utils.i18n import translator

_ = translator("exercises")

_DEVICE = re.compile(r"(?:device:)?\s*([A-Za-z]+)(?::(\d+))?\s*$")


def _device_name(answer: str) -> str | None:
    """'/job:localhost/replica:0/task:0/device:GPU:0', '/GPU:0', 'gpu:0', 'GPU' -> 'GPU:0'; None if no device."""
    text = answer.strip().rsplit("device:", 1)[-1].strip().lstrip("/")
    match = _DEVICE.fullmatch(text)
    if not match or match.group(1).upper() not in ("CPU", "GPU", "TPU"):
        return None
    return f"{match.group(1).upper()}:{match.group(2) or 0}"


def placed_without_scope() -> str:
    """Where TensorFlow puts a matrix product when no ``tf.device`` scope says where: 'GPU:0' or 'CPU:0'."""
    from course_utils.tf_setup import quiet_tensorflow

    tf = quiet_tensorflow()
    product = tf.linalg.matmul(tf.ones((2, 2)), tf.ones((2, 2)))
    return product.device.rsplit("device:", 1)[-1]


def check_op_device(answer: object, *, show: bool = True) -> Feedback:
    """Exercise 2.1: the device that ran ``tf.linalg.matmul(a, b)`` with no ``tf.device`` scope."""
    name = "Exercise 2.1"
    if is_empty(answer):
        return not_answered(name, _("Run the product without a `tf.device` scope. Set `answer` to the device it "
                                    "reports, for example 'CPU:0'. Then run the cell."), show=show)
    if not isinstance(answer, str):
        said = (_("`answer` is a tensor. Give the device's name: the text in `product.device`.")
                if hasattr(answer, "device") else
                _("`answer` is not text ({answer!r}). Give the device's name: the text in `product.device`."))
        return feedback(name, [said.format(answer=answer)], right="", show=show)
    given = _device_name(answer)
    ran = placed_without_scope()
    if given is None:
        problems = [_("{answer!r} is not a device name. Write one such as 'CPU:0' or 'GPU:0': the end of "
                      "`product.device`.").format(answer=answer)]
    elif given != ran and ran.startswith("GPU"):
        problems = [_("It ran on {device}. Without a `tf.device` scope, TensorFlow puts an op on the GPU when it "
                      "sees one. Read `product.device` instead of guessing.").format(device=ran)]
    elif given != ran:
        problems = [_("It ran on {device}. TensorFlow sees no GPU here, so everything runs on the CPU. "
                      "Read `product.device` instead of guessing.").format(device=ran)]
    else:
        problems = []
    right = (_("It ran on {device}: the GPU is the default when TensorFlow sees one.") if ran.startswith("GPU")
             else _("It ran on {device}: TensorFlow sees no GPU here, so the CPU is the default."))
    return feedback(name, problems, right=right.format(device=ran), show=show)


# ----------------------------------------------------------------------------- Exercise 2.2


class _Device(SimpleNamespace):
    """A stand-in for ``tf.config.PhysicalDevice`` / ``LogicalDevice``: a name and a device type."""


def _stand_in_tf(gpus: int) -> SimpleNamespace:
    """A ``tf`` with just enough ``tf.config`` to answer device questions, on a machine with ``gpus`` GPUs."""
    def devices(prefix: str):
        def listing(device_type: str | None = None) -> list[_Device]:
            found = [_Device(name=f"/{prefix}CPU:0", device_type="CPU")]
            found += [_Device(name=f"/{prefix}GPU:{i}", device_type="GPU") for i in range(gpus)]
            return [d for d in found if device_type is None or d.device_type == str(device_type).upper()]
        return listing

    config = SimpleNamespace(list_physical_devices=devices("physical_device:"),
                             list_logical_devices=devices("device:"))
    return SimpleNamespace(config=config)


def _names(tree: ast.AST) -> set[str]:
    """Every attribute and name the expression uses ('list_physical_devices', 'tf', ...)."""
    return {n.attr for n in ast.walk(tree) if isinstance(n, ast.Attribute)} | {
        n.id for n in ast.walk(tree) if isinstance(n, ast.Name)}


def check_gpu_check(answer: object, *, show: bool = True) -> Feedback:
    """Exercise 2.2: an expression, as text, that is true when TensorFlow can use a GPU and false otherwise."""
    name = "Exercise 2.2"
    if is_empty(answer):
        return not_answered(name, _("Write today's check as text, for example answer = \"tf.something('GPU')\". "
                                    "Then run the cell."), show=show)
    if not isinstance(answer, str):
        return feedback(name, [_("`answer` is {answer!r}, not text. Write the code in quotes, so that the check "
                                 "can run it on a machine with a GPU and on one without.").format(answer=answer)],
                        right="", show=show)
    try:
        tree = ast.parse(answer.strip(), mode="eval")
    except SyntaxError as error:
        return feedback(name, [_("This is not one Python expression: {error}.").format(error=error.msg)],
                        right="", show=show)
    used = _names(tree)
    if "is_gpu_available" in used:
        return feedback(name, [_("That is the old, deprecated check. Its warning names the function that "
                                 "replaces it.")], right="", show=show)
    if "gpu_device_name" in used or "is_built_with_cuda" in used:
        said = (_("That function says whether this TensorFlow was built with CUDA, not whether a GPU is there. Use "
                  "the one the deprecation warning names.") if "is_built_with_cuda" in used
                else _("That function is a helper for TensorFlow's own tests. Use the one the deprecation warning "
                       "names."))
        return feedback(name, [said], right="", show=show)
    if not used & {"list_physical_devices", "list_logical_devices"}:
        return feedback(name, [_("Ask TensorFlow for its list of GPU devices: the deprecation warning names the "
                                 "function.")], right="", show=show)

    problems = []
    code = compile(tree, "<answer>", "eval")
    for gpus, want in ((1, True), (0, False)):
        fake = _stand_in_tf(gpus)
        try:
            value = eval(code, {"tf": fake, "tensorflow": fake})  # noqa: S307 - the student's own expression
        except Exception as error:  # noqa: BLE001 - a wrong answer is feedback, never a crash
            said = (_("On a machine with one GPU it raised {type}: {error}.") if gpus
                    else _("On a machine with no GPU it raised {type}: {error}."))
            problems.append(said.format(type=type(error).__name__, error=error))
            break
        if bool(value) != want:
            if gpus:
                said = _("On a machine with one GPU it says no ({value!r}).")
            else:
                said = _("On a machine with no GPU it says yes ({value!r}). The list holds the CPU too: ask for 'GPU' "
                         "devices only.")
            problems.append(said.format(value=value))
            break
    if problems:
        return feedback(name, problems, right="", show=show)
    from course_utils.tf_setup import quiet_tensorflow

    tf = quiet_tensorflow()
    here = eval(code, {"tf": tf, "tensorflow": tf})  # noqa: S307
    right = _("It says yes with a GPU and no without one. On this machine it gives {value!r}.").format(value=here)
    if "list_physical_devices" not in used:
        right += " " + _("The warning names list_physical_devices: unlike the logical list, it does not start the "
                         "runtime.")
    return feedback(name, problems, right=right, show=show)
