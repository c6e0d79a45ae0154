"""Configure TensorFlow's devices with one call, before its runtime starts.

``configure()`` sets, in one place: memory growth, a hard memory limit (or several virtual
GPUs) per GPU, which GPUs TensorFlow may use, and a split of the CPU into logical devices::

    from course_utils.core import gpu_config
    gpu_config.configure(memory_growth=True, cpu_devices=2)

TensorFlow reads these settings once, when its runtime initialises - at the first tensor,
op, model, ``list_logical_devices()`` or ``get_memory_info()`` call. Afterwards it refuses
changes with ``RuntimeError: ... cannot be modified after being initialized``. So:

- the same settings again are a no-op (re-running a notebook cell is safe);
- different settings after initialisation raise ``ConfigurationTooLateError`` (a
  ``CourseError``: what happened, and what to do - restart the kernel and configure first,
  or set ``TF_FORCE_GPU_ALLOW_GROWTH=true`` before starting);
- invalid values (negative limits, unknown GPUs, growth together with a limit on the same
  GPU) raise ``ParameterError`` / ``DeviceError`` before TensorFlow sees them.

GPU settings on a machine without a GPU are reported as skipped, not failed, so one
notebook cell works everywhere. To try several configurations (each needs a runtime of its
own), run each in a new process: notebook 03 writes such a program and starts it once per setting.

Sources: tensorflow.org/guide/gpu ("Limiting GPU memory growth"); TensorFlow's
``tensorflow/python/eager/context.py`` (the checks and messages) and
``tensorflow/core/common_runtime/gpu/gpu_bfc_allocator.cc`` (``TF_FORCE_GPU_ALLOW_GROWTH``).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from numbers import Integral
from typing import Any

from course_utils.core import variables
from course_utils.core.errors import ConfigurationTooLateError, DeviceError, ParameterError
from course_utils.core.i18n import padded, translator
from course_utils.core.tf_setup import quiet_tensorflow

_ = translator("course")

ALLOW_GROWTH_ENV = "TF_FORCE_GPU_ALLOW_GROWTH"
# TensorFlow compares the variable with exactly these strings; anything else is ignored
# (with an error in its C++ log, which the course captures): gpu_bfc_allocator.cc.
ALLOW_GROWTH_VALUES = ("true", "false")


def restart_fix() -> str:
    """What to do when the configuration came too late: restart, and configure first (in the reader's language)."""
    return _(
        "Restart the kernel (Jupyter: Kernel > Restart Kernel), then run the parameters cell, the setup "
        "cell and the configuration cell before anything else - before any tensor, model or "
        "list_logical_devices() call. In a script, configure right after importing TensorFlow. "
        "For memory growth alone there is a second route: start Python or Jupyter with {variable}=true "
        "in the environment (e.g. `{variable}=true jupyter lab`)."
    ).format(variable=ALLOW_GROWTH_ENV)


# --- what TensorFlow currently holds --------------------------------------------------------------


def short_name(device: Any) -> str:
    """``/physical_device:GPU:0`` (or a PhysicalDevice) -> ``GPU:0``."""
    name = getattr(device, "name", device)
    return str(name).rsplit("device:", 1)[-1]


@dataclass
class Settings:
    """TensorFlow's device configuration as it stands (read without initialising the runtime)."""

    physical_gpus: list[str]
    visible_gpus: list[str]
    memory_growth: dict[str, bool]  # per visible GPU; TensorFlow's "not set" counts as off
    gpu_memory_limits_mb: dict[str, list[float] | None]  # per visible GPU: one entry per logical GPU, or None
    cpu_devices: int  # logical CPU devices the runtime will create (1 = no split)
    allow_growth_env: str | None  # the value of TF_FORCE_GPU_ALLOW_GROWTH, if set
    runtime_initialized: bool | None  # None: could not tell

    def __str__(self) -> str:
        rows = [
            (_("physical GPUs"), ", ".join(self.physical_gpus) or _("none")),
            (_("visible to TensorFlow"), ", ".join(self.visible_gpus) or _("none")),
        ]
        for gpu in self.visible_gpus:
            limits = self.gpu_memory_limits_mb.get(gpu)
            shown = _("whole GPU") if not limits else " + ".join(f"{m:g} MB" for m in limits)
            growth = (_("memory growth on; logical GPUs: {logical}") if self.memory_growth.get(gpu)
                      else _("memory growth off; logical GPUs: {logical}"))
            rows.append((gpu, growth.format(logical=shown)))
        started = {True: _("yes - the configuration is fixed"), False: _("no - configuration still possible")}
        rows += [
            (_("logical CPU devices"), str(self.cpu_devices)),
            (ALLOW_GROWTH_ENV, self.allow_growth_env if self.allow_growth_env is not None else _("(not set)")),
            (_("runtime initialised"), started.get(self.runtime_initialized, _("unknown"))),
        ]
        return "\n".join(f"{padded(label, 25)} {value}" for label, value in rows)


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


def current(tf: Any = None) -> Settings:
    """Read the device configuration without starting TensorFlow's runtime."""
    tf = tf or quiet_tensorflow()
    physical = tf.config.list_physical_devices("GPU")
    visible = tf.config.get_visible_devices("GPU")
    cpu = tf.config.list_physical_devices("CPU")[0]
    growth, limits = {}, {}
    for gpu in visible:
        growth[short_name(gpu)] = bool(tf.config.experimental.get_memory_growth(gpu))
        limits[short_name(gpu)] = _logical_limits(tf.config.get_logical_device_configuration(gpu))
    return Settings(
        physical_gpus=[short_name(g) for g in physical],
        visible_gpus=[short_name(g) for g in visible],
        memory_growth=growth,
        gpu_memory_limits_mb=limits,
        cpu_devices=len(tf.config.get_logical_device_configuration(cpu) or [None]),
        allow_growth_env=os.environ.get(ALLOW_GROWTH_ENV),
        runtime_initialized=runtime_initialized(),
    )


# --- checking a request before TensorFlow sees it -------------------------------------------------


def check_mb(name: str, value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, Integral) or value < 1:
        raise ParameterError(
            _("{name}={value!r} is not a memory size: it must be a whole number of megabytes, 1 or more.").format(
                name=name, value=value),
            _("Pass {name} as a positive integer, e.g. {name}=1024 for 1 GB, or leave it out.").format(name=name),
        )
    return int(value)


def check_request(
    *,
    memory_growth: bool | None = None,
    memory_limit_mb: int | None = None,
    virtual_gpus_mb: Sequence[int] | None = None,
    visible_gpus: Sequence[int | str] | None = None,
    cpu_devices: int | None = None,
) -> None:
    """Reject values that make no sense, with a message naming the argument (no TensorFlow needed)."""
    if memory_growth is not None and not isinstance(memory_growth, bool):
        raise ParameterError(
            _("memory_growth={value!r} must be True, False or None.").format(value=memory_growth),
            _("Pass memory_growth=True to let TensorFlow take GPU memory as needed, or leave it out."),
        )
    if memory_limit_mb is not None:
        check_mb("memory_limit_mb", memory_limit_mb)
    if virtual_gpus_mb is not None:
        is_list = isinstance(virtual_gpus_mb, Sequence) and not isinstance(virtual_gpus_mb, (str, bytes))
        if not is_list or not virtual_gpus_mb:
            raise ParameterError(
                _("virtual_gpus_mb={value!r} must be a non-empty list of memory sizes in MB.").format(
                    value=virtual_gpus_mb),
                _("Pass one size per virtual GPU, e.g. virtual_gpus_mb=[1024, 1024] for two 1 GB GPUs."),
            )
        for i, size in enumerate(virtual_gpus_mb):
            check_mb(f"virtual_gpus_mb[{i}]", size)
    if memory_limit_mb is not None and virtual_gpus_mb is not None:
        raise ParameterError(
            _("memory_limit_mb and virtual_gpus_mb both describe the logical GPUs of each GPU; pass one of them."),
            _("A single cap is memory_limit_mb=N; several virtual GPUs are virtual_gpus_mb=[N, M, ...]."),
        )
    if memory_growth and (memory_limit_mb is not None or virtual_gpus_mb is not None):
        raise ParameterError(
            _("Memory growth cannot be combined with a memory limit or virtual GPUs on the same GPU "
              "(TensorFlow: 'Cannot set memory growth on device when virtual devices configured')."),
            _("Choose one: memory_growth=True (take memory as needed) or memory_limit_mb=N (a fixed cap; "
              "it already stops TensorFlow from taking the whole GPU)."),
        )
    if visible_gpus is not None:
        if isinstance(visible_gpus, (str, bytes)) or not isinstance(visible_gpus, Sequence):
            raise ParameterError(
                _("visible_gpus={value!r} must be a list of GPU numbers (e.g. [0]) or [] for none.").format(
                    value=visible_gpus),
                _("Pass visible_gpus=[0] for the first GPU only, or visible_gpus=[] to hide every GPU."),
            )
        for gpu in visible_gpus:
            if isinstance(gpu, bool) or (not isinstance(gpu, (Integral, str)) and not hasattr(gpu, "device_type")):
                raise ParameterError(
                    _("visible_gpus contains {gpu!r}: use GPU numbers (0, 1, ...) or names like 'GPU:0'.").format(
                        gpu=gpu),
                    _("Pass e.g. visible_gpus=[0]."),
                )
            if isinstance(gpu, Integral) and gpu < 0:
                raise ParameterError(
                    _("visible_gpus contains {gpu}: GPU numbers start at 0.").format(gpu=gpu),
                    _("Pass e.g. visible_gpus=[0] for the first GPU."),
                )
    if cpu_devices is not None and (isinstance(cpu_devices, bool) or not isinstance(cpu_devices, Integral)
                                    or cpu_devices < 1):
        raise ParameterError(
            _("cpu_devices={value!r} must be a whole number of logical CPU devices, 1 or more.").format(
                value=cpu_devices),
            _("Pass e.g. cpu_devices=2 to split the CPU into /device:CPU:0 and /device:CPU:1 (1 = no split)."),
        )
    env = os.environ.get(ALLOW_GROWTH_ENV)
    if memory_growth is not None and env in ALLOW_GROWTH_VALUES and memory_growth != (env == "true"):
        raise ParameterError(
            _("memory_growth={value} contradicts {variable}={env} in the environment, and TensorFlow lets the "
              "environment variable win.").format(value=memory_growth, variable=ALLOW_GROWTH_ENV, env=env),
            _("Leave memory_growth out (the variable decides), or unset {variable} and restart.").format(
                variable=ALLOW_GROWTH_ENV),
        )


def _resolve_gpus(requested: Sequence[Any], physical: list[Any]) -> list[Any]:
    by_name = {short_name(g): g for g in physical}
    chosen = []
    for item in requested:
        if isinstance(item, Integral):
            key = f"GPU:{int(item)}"
        else:
            key = short_name(item)
        if key not in by_name:
            have = ", ".join(by_name) or _("no GPU at all")
            raise DeviceError(
                _("visible_gpus asks for {item!r}, which this machine does not have (TensorFlow sees: {have}).").format(
                    item=item, have=have),
                _("Pass GPU numbers from tf.config.list_physical_devices('GPU') (0 is the first), "
                  "or visible_gpus=[] to hide every GPU."),
            )
        if by_name[key] in chosen:
            raise ParameterError(_("visible_gpus names {gpu} twice.").format(gpu=key), _("Name each GPU once."))
        chosen.append(by_name[key])
    return chosen


# --- configure -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Change:
    """One setting that differs from what TensorFlow holds now."""

    kind: str  # "visible", "growth", "logical" (GPU) or "cpu"
    setting: str  # e.g. "memory growth on GPU:0"
    before: Any
    after: Any

    def __str__(self) -> str:
        return _("{setting}: {before} -> {after}").format(
            setting=self.setting, before=_show(self.before), after=_show(self.after))


def _show(value: Any) -> str:
    if value is None:
        return _("not set")
    if isinstance(value, bool):
        return _("on") if value else _("off")
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_show(v) for v in value) + "]" if value else _("none")
    if isinstance(value, float):
        return f"{value:g}"
    return str(value)


@dataclass
class ConfigReport:
    """What ``configure`` did: the changes it applied (none = a no-op), notes, the resulting settings."""

    changes: list[Change]
    notes: list[str]
    settings: Settings

    def __str__(self) -> str:
        if self.changes:
            head = _("configure: applied before TensorFlow's runtime started")
            body = [f"  {c}" for c in self.changes]
        else:
            head = _("configure: nothing to change - these settings are already in effect")
            body = []
        return "\n".join([head, *body, *("  " + _("note: {note}").format(note=n) for n in self.notes)])


def _logical_limits(config: Any) -> list[float] | None:
    return [c.memory_limit for c in config] if config else None


def _gpu_changes(tf: Any, gpus: Sequence[Any], memory_growth: bool | None, wanted_config: list | None) -> list[Change]:
    """The memory-growth and logical-GPU changes ``configure`` would make on each of ``gpus``; refuses both at once."""
    changes: list[Change] = []
    for gpu in gpus:
        name = short_name(gpu)
        growth_now = bool(tf.config.experimental.get_memory_growth(gpu))
        config_now = tf.config.get_logical_device_configuration(gpu)
        growth_after = growth_now if memory_growth is None else memory_growth
        config_after = config_now if wanted_config is None else wanted_config
        if growth_after and config_after:
            raise ParameterError(
                _("{gpu} would have memory growth and a memory limit / virtual GPUs at once "
                  "(growth {growth}, logical GPUs {logical} MB); TensorFlow refuses that combination ('Cannot set "
                  "memory growth on device when virtual devices configured'). An earlier configure call in this "
                  "process set one of them.").format(
                    gpu=name, growth=_show(growth_after), logical=_show(_logical_limits(config_after))),
                _("Choose one: memory growth or a memory limit. To switch, restart the kernel and configure again."),
            )
        if growth_after != growth_now:
            changes.append(Change("growth", _("memory growth on {gpu}").format(gpu=name), growth_now, growth_after))
        if wanted_config is not None and wanted_config != config_now:
            changes.append(
                Change(
                    "logical",
                    _("logical GPUs on {gpu} (MB)").format(gpu=name),
                    _logical_limits(config_now),
                    _logical_limits(wanted_config),
                )
            )
    return changes


def _notes(gpu_asks: dict[str, Any], physical: Sequence[Any], target_visible: Sequence[Any]) -> list[str]:
    """What ``configure`` says besides its changes: a TF_FORCE_GPU_ALLOW_GROWTH TensorFlow ignores; GPU settings
    skipped because no GPU is visible."""
    notes: list[str] = []
    env = os.environ.get(ALLOW_GROWTH_ENV)
    if env is not None and env not in ALLOW_GROWTH_VALUES:
        notes.append(
            _("{variable}={value!r} is neither 'true' nor 'false', so TensorFlow ignores it "
              "(set exactly true or false, or unset it).").format(variable=ALLOW_GROWTH_ENV, value=env)
        )
    asked = [label for label, value in gpu_asks.items() if value is not None]
    if asked and not target_visible:
        skipped = (_("{settings}: skipped - TensorFlow sees no GPU; these settings only apply to GPUs.") if not physical
                   else _("{settings}: skipped - every GPU is hidden (visible_gpus); these settings only apply to "
                          "GPUs."))
        notes.append(skipped.format(settings=_(" and ").join(asked)))
    return notes


def configure(
    *,
    memory_growth: bool | None = None,
    memory_limit_mb: int | None = None,
    virtual_gpus_mb: Sequence[int] | None = None,
    visible_gpus: Sequence[int | str] | None = None,
    cpu_devices: int | None = None,
    quiet: bool = False,
) -> ConfigReport:
    """Set TensorFlow's device configuration before its runtime starts; print and return what changed.

    Every argument left as ``None`` keeps what TensorFlow holds now.

    - ``memory_growth=True``: each visible GPU starts with little memory and grows as needed
      (never released until the process ends) instead of mapping nearly all of it at start-up.
    - ``memory_limit_mb=N``: each visible GPU becomes one logical GPU capped at N MB.
    - ``virtual_gpus_mb=[N, M]``: each visible GPU is split into logical GPUs of N, M ... MB.
    - ``visible_gpus=[0]``: TensorFlow uses only these GPUs (numbers or 'GPU:0'); ``[]`` hides all
      (then also set ``DEVICE = "cpu"``: ``setup`` chose the device before this call).
    - ``cpu_devices=N``: the CPU appears as N logical devices ``/device:CPU:0`` ... (no memory
      split: they share the process's memory) - multi-device lessons without a GPU.

    GPU settings with no visible GPU are skipped with a note. The same settings again are a
    no-op; different ones after initialisation raise ``ConfigurationTooLateError``.
    """
    check_request(
        memory_growth=memory_growth,
        memory_limit_mb=memory_limit_mb,
        virtual_gpus_mb=virtual_gpus_mb,
        visible_gpus=visible_gpus,
        cpu_devices=cpu_devices,
    )
    tf = quiet_tensorflow()
    physical = tf.config.list_physical_devices("GPU")
    cpu = tf.config.list_physical_devices("CPU")[0]
    now_visible = tf.config.get_visible_devices("GPU")
    target_visible = _resolve_gpus(visible_gpus, physical) if visible_gpus is not None else list(now_visible)

    notes = _notes({_("memory growth"): memory_growth, _("a memory limit"): memory_limit_mb,
                    _("virtual GPUs"): virtual_gpus_mb}, physical, target_visible)
    changes: list[Change] = []
    visible_before, visible_after = [short_name(g) for g in now_visible], [short_name(g) for g in target_visible]
    if visible_after != visible_before:
        changes.append(Change("visible", _("visible GPUs"), visible_before, visible_after))
    wanted_config = None
    if memory_limit_mb is not None:
        wanted_config = [tf.config.LogicalDeviceConfiguration(memory_limit=int(memory_limit_mb))]
    elif virtual_gpus_mb is not None:
        wanted_config = [tf.config.LogicalDeviceConfiguration(memory_limit=int(m)) for m in virtual_gpus_mb]
    changes += _gpu_changes(tf, target_visible, memory_growth, wanted_config)
    cpus_now = len(tf.config.get_logical_device_configuration(cpu) or [None])
    if cpu_devices is not None and cpu_devices != cpus_now:
        changes.append(Change("cpu", _("logical CPU devices"), cpus_now, int(cpu_devices)))

    if changes:
        _apply(tf, changes, target_visible, cpu, memory_growth, wanted_config, cpu_devices)
    report = ConfigReport(changes, notes, current(tf))
    if not quiet:
        print(report)
    return report


def _apply(tf, changes, target_visible, cpu, memory_growth, wanted_config, cpu_devices) -> None:
    """Apply the changes in TensorFlow's order; turn its 'too late' RuntimeError into the course error."""
    kinds = {c.kind for c in changes}
    try:
        if "visible" in kinds:
            tf.config.set_visible_devices(target_visible, "GPU")
        for gpu in target_visible:
            if memory_growth is not None and bool(tf.config.experimental.get_memory_growth(gpu)) != memory_growth:
                tf.config.experimental.set_memory_growth(gpu, memory_growth)
            if wanted_config is not None:
                tf.config.set_logical_device_configuration(gpu, wanted_config)
        if "cpu" in kinds:
            tf.config.set_logical_device_configuration(
                cpu, [tf.config.LogicalDeviceConfiguration() for _ in range(int(cpu_devices))]
            )
    except RuntimeError as err:
        message = str(err)
        if "initializ" in message:
            raise ConfigurationTooLateError(changes, restart_fix(), tf_message=message) from err
        raise


# --- the course-wide policy every notebook's setup applies ----------------------------------------

# One switch for every notebook (and, on a shared server, for every student): how much of each GPU a
# kernel may take. TensorFlow's default maps nearly all of it at start-up, so a second notebook open
# on the same GPU would find it full (tensorflow.org/guide/gpu#limiting_gpu_memory_growth).


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


def apply_memory_policy(policy: str | int) -> str:
    """Apply a policy from ``memory_policy`` to every visible GPU, before the runtime starts; say what was done."""
    if policy == "all":
        return _("GPU memory: TensorFlow's default, nearly all of each GPU ({variable}=all)").format(
            variable=variables.GPU_MEMORY)
    gpus = quiet_tensorflow().config.get_visible_devices("GPU")
    if not gpus:
        return _("GPU memory: no GPU here, nothing to set")
    if policy == "growth":
        configure(memory_growth=True, quiet=True)
        return _("GPU memory: grows as needed on {count} GPU(s) ({variable}=growth, the default)").format(
            count=len(gpus), variable=variables.GPU_MEMORY)
    configure(memory_limit_mb=policy, quiet=True)
    return _("GPU memory: at most {limit} MiB on each of {count} GPU(s) ({variable}={limit})").format(
        limit=policy, count=len(gpus), variable=variables.GPU_MEMORY)
