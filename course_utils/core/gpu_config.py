"""The course-wide GPU memory policy that every notebook's setup applies, before TensorFlow's runtime starts.

``COURSE_GPU_MEMORY``: "growth" (the default) lets each GPU's memory grow as needed, so notebooks open side by
side share a GPU - TensorFlow's default maps nearly all of it at start-up (tensorflow.org/guide/gpu, "Limiting GPU
memory growth"); a number caps each GPU at that many MiB; "all" keeps TensorFlow's default. TensorFlow refuses
changes once its runtime has started, so the same policy again is a no-op (a re-run setup cell) and another one
raises ``ConfigurationTooLateError``.
"""

from __future__ import annotations

import os
import sys

from course_utils.core import variables
from course_utils.core.errors import ConfigurationTooLateError, ParameterError
from course_utils.core.i18n import translator
from course_utils.core.tf_setup import quiet_tensorflow

_ = translator("course")

def runtime_initialized() -> bool | None:
    """Has TensorFlow's runtime started in this process? (None when this TensorFlow cannot tell.)

    TensorFlow has no public call for this; it reads the eager context's handle, which is
    what TensorFlow itself checks before refusing a configuration change.
    """
    if "tensorflow" not in sys.modules:
        return False
    try:
        from tensorflow.python.eager import context

        return context.context()._context_handle is not None  # private: there is no public API
    except (ImportError, AttributeError):
        return None


def memory_policy(value: str | None = None) -> str | int:
    """``COURSE_GPU_MEMORY`` (or ``value``) as a policy: "growth" (unset too), "all", or a limit in MiB."""
    raw = os.environ.get(variables.GPU_MEMORY, "") if value is None else value
    text = str(raw).strip().lower()
    if text in ("", "growth"):
        return "growth"
    if text == "all":
        return "all"
    if text.isascii() and text.isdigit() and int(text) > 0:
        return int(text)
    raise ParameterError(
        _("{variable}={value!r} is not a GPU memory policy.").format(variable=variables.GPU_MEMORY, value=raw),
        _('Set {variable} to "growth" (the default), "all" (TensorFlow\'s own default), or a limit in MiB, '
          'e.g. 2048.').format(variable=variables.GPU_MEMORY),
    )


def _change(setting: str, before: str, after: str) -> str:
    return _("{setting}: {before} -> {after}").format(setting=setting, before=before, after=after)


def apply_memory_policy(policy: str | int) -> str:
    """Apply a policy from ``memory_policy`` to every visible GPU, before the runtime starts; say what was done."""
    if policy == "all":
        return _("GPU memory: TensorFlow's default, nearly all of each GPU ({variable}=all)").format(
            variable=variables.GPU_MEMORY)
    tf = quiet_tensorflow()
    gpus = tf.config.get_visible_devices("GPU")
    if not gpus:
        return _("GPU memory: no GPU here, nothing to set")
    changes: list[str] = []
    try:
        for gpu in gpus:
            name = gpu.name.rsplit("device:", 1)[-1]  # /physical_device:GPU:0 -> GPU:0
            if policy == "growth":
                if not tf.config.experimental.get_memory_growth(gpu):
                    changes.append(_change(_("memory growth on {gpu}").format(gpu=name), _("off"), _("on")))
                    tf.config.experimental.set_memory_growth(gpu, True)
                continue
            limits = [c.memory_limit for c in tf.config.get_logical_device_configuration(gpu) or []]
            if limits != [policy]:
                changes.append(_change(_("logical GPUs on {gpu} (MB)").format(gpu=name),
                                       f"{limits}" if limits else _("not set"), f"[{policy}]"))
                capped = tf.config.LogicalDeviceConfiguration(memory_limit=policy)
                tf.config.set_logical_device_configuration(gpu, [capped])
    except RuntimeError as err:  # "... cannot be modified after being initialized"
        if "initializ" in str(err):
            fix = _("Restart the kernel (Jupyter: Kernel > Restart Kernel), then run the parameters cell, the setup "
                    "cell and the configuration cell before anything else - before any tensor, model or "
                    "list_logical_devices() call. In a script, configure right after importing TensorFlow. "
                    "For memory growth alone there is a second route: start Python or Jupyter with {variable}=true "
                    "in the environment (e.g. `{variable}=true jupyter lab`).").format(
                variable="TF_FORCE_GPU_ALLOW_GROWTH")
            raise ConfigurationTooLateError(changes, fix, tf_message=str(err)) from err
        raise
    if policy == "growth":
        return _("GPU memory: grows as needed on {count} GPU(s) ({variable}=growth, the default)").format(
            count=len(gpus), variable=variables.GPU_MEMORY)
    return _("GPU memory: at most {limit} MiB on each of {count} GPU(s) ({variable}={limit})").format(
        limit=policy, count=len(gpus), variable=variables.GPU_MEMORY)
