"""Notebook 03's exercises: memory growth written by the student, and a prediction about growth and a limit.

- ``check_growth_code(code)``: the student writes, as a string, the lines that turn on memory growth for
  every GPU. The check reads the code (``ast``: is ``set_memory_growth(..., True)`` there, inside a loop,
  before anything that starts TensorFlow's runtime?), then runs it in a new Python process
  (``fresh_process.run_code``) and reads back what TensorFlow holds. On a machine without a GPU the code
  meets two stand-in GPUs there, so TensorFlow's own checks still judge it.
- ``check_growth_and_limit(answer)``: a prediction, made before the notebook shows it - which order of
  ``set_logical_device_configuration`` and ``set_memory_growth`` raises, and whether growth survives.
  The truth is TensorFlow's code (``tensorflow/python/eager/context.py``), shown running in the notebook.
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Mapping
from typing import Any

from course_utils.errors import CourseError
from course_utils.exercises import Feedback, feedback, is_empty, not_answered
from course_utils.i18n import translator

_ = translator("exercises")

GROWTH = "Exercise 3.1"
ORDER = "Exercise 3.2"
STAND_IN_GPUS = 2  # on a machine without a GPU, the student's code meets this many stand-in GPUs

# Calls under tf.config that never start the runtime (the others under tf. or keras. may: a tensor, an op, a model).
_CONFIG_STARTS_RUNTIME = {"list_logical_devices", "get_memory_info", "get_memory_usage", "reset_memory_stats"}
_NEVER_START = {"tf.debugging.set_log_device_placement", "tf.random.set_seed", "tf.get_logger",
                "tf.test.is_built_with_cuda", "tf.sysconfig.get_build_info"}


def _dotted(node: ast.AST) -> str:
    """``tf.config.experimental.set_memory_growth`` for an attribute chain; "" for anything else."""
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        parts.append(node.id)
        return ".".join(reversed(parts))
    return ""


def _starts_runtime(name: str) -> bool:
    """Does a call to ``name`` (dotted) start TensorFlow's runtime? (A tensor, an op, a model, logical devices.)"""
    if name in _NEVER_START:
        return False
    head, _, rest = name.partition(".")
    if head not in ("tf", "tensorflow", "keras"):
        return False
    if rest.startswith("config."):
        return rest.rsplit(".", 1)[-1] in _CONFIG_STARTS_RUNTIME
    return bool(rest)


def _in_loop(node: ast.AST, parents: Mapping[ast.AST, ast.AST]) -> bool:
    while node in parents:
        node = parents[node]
        if isinstance(node, (ast.For, ast.ListComp, ast.GeneratorExp, ast.SetComp, ast.DictComp)):
            return True
    return False


def _enable_arg(call: ast.Call) -> ast.AST | None:
    if len(call.args) >= 2:
        return call.args[1]
    return next((k.value for k in call.keywords if k.arg == "enable"), None)


def read_growth_code(code: str) -> list[str]:
    """What reading the code (without running it) finds wrong; [] when it looks right."""
    try:
        tree = ast.parse(code)
    except SyntaxError as err:
        return [_("Python cannot read line {line}: {error}. Check the quotes and the indentation.").format(
            line=err.lineno, error=err.msg)]
    parents = {child: parent for parent in ast.walk(tree) for child in ast.iter_child_nodes(parent)}
    calls = sorted((n for n in ast.walk(tree) if isinstance(n, ast.Call)), key=lambda n: (n.lineno, n.col_offset))
    growth = [c for c in calls if _dotted(c.func).rsplit(".", 1)[-1] == "set_memory_growth"]
    if not growth:
        return [_("The code never calls tf.config.experimental.set_memory_growth(gpu, True).")]
    problems = []
    first = growth[0]
    enable = _enable_arg(first)
    if not (isinstance(enable, ast.Constant) and enable.value is True):
        problems.append(_("Line {line}: pass True as the second argument: set_memory_growth(gpu, True).").format(
            line=first.lineno))
    if not _in_loop(first, parents):
        problems.append(_(
            "Line {line}: set growth for every GPU, in a loop: `for gpu in "
            "tf.config.list_physical_devices(\"GPU\"):`. TensorFlow refuses GPUs whose growth differs, "
            "and gpus[0] fails on a machine without a GPU."
        ).format(line=first.lineno))
    for call in calls:
        if (call.lineno, call.col_offset) >= (first.lineno, first.col_offset):
            break
        name = _dotted(call.func)
        if name.endswith("list_logical_devices"):
            problems.append(_(
                "Line {line}: {name}() starts TensorFlow's runtime, so growth comes too late. "
                "Use tf.config.list_physical_devices(\"GPU\"): it starts nothing."
            ).format(line=call.lineno, name=name))
        elif _starts_runtime(name):
            problems.append(_(
                "Line {line}: {name}(...) runs before set_memory_growth. The first tensor, op or model "
                "starts TensorFlow's runtime, and then growth can no longer change. Set growth first."
            ).format(line=call.lineno, name=name))
    return problems


def check_growth_code(code: Any, *, run: Callable[..., Any] | None = None, show: bool = True) -> Feedback:
    """Exercise 3.1: does ``code`` turn on memory growth for every GPU, before anything starts the runtime?"""
    if is_empty(code):
        return not_answered(GROWTH, _("Write the lines as a string in `answer` (between triple quotes), then run "
                                      "the cell. The check runs them in a new Python process."), show=show)
    if not isinstance(code, str):
        return feedback(GROWTH, [_("`answer` should be a string of Python code, not {type}.").format(
            type=type(code).__name__)], right="", show=show)
    problems = read_growth_code(code)
    if problems:
        return feedback(GROWTH, problems, right="", show=show)
    if run is None:
        from course_utils.fresh_process import run_code as run
    try:
        result = run(code, stand_in_gpus=STAND_IN_GPUS, env={"TF_FORCE_GPU_ALLOW_GROWTH": None})
    except CourseError as err:  # the new process crashed or hung: say so, never raise
        return feedback(GROWTH, [_("The new Python process did not finish: {error}").format(error=err.what)],
                        right="", show=show)
    problems = []
    if result.error:
        said = (_("Your code raised {type} (line {line}): {message}") if result.error.get("line")
                else _("Your code raised {type}: {message}"))
        problems.append(said.format(type=result.error["type"], line=result.error.get("line"),
                                    message=result.error["message"]))
        if "after being initialized" in result.error["message"]:
            problems.append(_("Something before set_memory_growth started TensorFlow's runtime. Set growth first."))
        elif result.error["type"] == "NameError" and "'tf'" in result.error["message"]:
            problems.append(_("Start with `import tensorflow as tf`: the code runs in a new Python, as a script "
                              "would."))
        elif "non-GPU" in result.error["message"]:
            problems.append(_("Loop over tf.config.list_physical_devices(\"GPU\"): the CPU takes no memory growth."))
    if result.gpu_options_error:
        problems.append(_("TensorFlow would refuse to start: {error}.").format(error=result.gpu_options_error))
    off = [gpu for gpu, on in result.memory_growth.items() if not on]
    if off:
        problems.append(_("Memory growth is off on {gpus}. Set it on every GPU.").format(gpus=", ".join(off)))
    elif result.gpus and result.growth_in_effect is False:
        problems.append(_("Growth is set, but TensorFlow drops it: a logical-device configuration (a memory "
                          "limit) on the same GPU wins. Leave the limit out."))
    if not result.gpus:
        problems.append(_("The new process saw no GPU, so nothing could be checked."))
    names = ", ".join(result.gpus)
    if result.stand_in_gpus:
        right = _("In a new process, with {count} stand-in GPUs (this machine has none), TensorFlow reports memory "
                  "growth on {gpus}. It would start each GPU small.").format(count=result.stand_in_gpus, gpus=names)
    else:
        right = _("In a new process, TensorFlow reports memory growth on {gpus}. Each GPU starts small and "
                  "grows.").format(gpus=names)
    return feedback(GROWTH, problems, right=right, show=show)


# --- Exercise 3.2: growth and a memory limit on the same GPU --------------------------------------------------

ORDER_KEYS = ("limit, then growth", "growth, then limit", "growth in effect after growth, then limit")
ERROR_CHOICES = {"valueerror": "ValueError", "runtimeerror": "RuntimeError", "no error": "no error",
                 "none": "no error", "nothing": "no error"}
TRUTH = {ORDER_KEYS[0]: "ValueError", ORDER_KEYS[1]: "no error", ORDER_KEYS[2]: False}


def why(key: str) -> str:
    """Why the truth of one prediction (a key of ``ORDER_KEYS``) is what it is, in the student's language."""
    return {
        ORDER_KEYS[0]: _("set_memory_growth first checks whether the GPU has a logical-device configuration. It has "
                         "one, so it raises ValueError at once. (RuntimeError is the 'too late' error; the runtime "
                         "has not started here.)"),
        ORDER_KEYS[1]: _("set_logical_device_configuration never looks at memory growth, so both calls succeed."),
        ORDER_KEYS[2]: _("When the runtime starts, TensorFlow passes growth on only when no GPU has logical devices. "
                         "With a limit, growth is silently dropped, although get_memory_growth still says True."),
    }[key]


def _as_choice(value: Any) -> Any:
    """ "value error", "ValueError", "no error" -> the choice's spelling; "true"/"false" -> a bool."""
    if not isinstance(value, str):
        return value
    text = " ".join(value.strip().lower().replace("-", " ").split())
    if text in ("true", "false"):
        return text == "true"
    return ERROR_CHOICES.get(text.replace(" ", "") if text.endswith("error") and text != "no error" else text, value)


def check_growth_and_limit(answer: Any, *, show: bool = True) -> Feedback:
    """Exercise 3.2: the prediction for both orders of growth and a memory limit on one GPU."""
    empty = is_empty(answer) or (isinstance(answer, Mapping) and all(is_empty(answer.get(k)) for k in ORDER_KEYS))
    if empty:
        return not_answered(ORDER, _('Fill in the three values in `answer` ("ValueError", "RuntimeError" or '
                                     '"no error"; then True or False), then run the cell.'), show=show)
    if not isinstance(answer, Mapping):
        return feedback(ORDER, [_("`answer` should be the dictionary with the three predictions, not "
                                  "{answer!r}.").format(answer=answer)], right="", show=show)
    problems = []
    for key in ORDER_KEYS:
        given = _as_choice(answer.get(key))
        if is_empty(given):
            problems.append(_("{key}: no answer yet.").format(key=key))
        elif key == ORDER_KEYS[2] and not isinstance(given, bool):
            problems.append(_("{key}: answer True or False, not {given!r}.").format(key=key, given=given))
        elif key != ORDER_KEYS[2] and given not in ERROR_CHOICES.values():
            problems.append(_('{key}: answer "ValueError", "RuntimeError" or "no error", not {given!r}.').format(
                key=key, given=given))
        elif given != TRUTH[key]:
            problems.append(_("{key}: not {given!r}. {why}").format(key=key, given=given, why=why(key)))
    return feedback(ORDER, problems, right=_("All three right. Run the next cells to see TensorFlow do it."),
                    show=show)
