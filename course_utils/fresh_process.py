"""Try a device configuration in a new Python process - a kernel restart you can run in a cell.

TensorFlow reads its device configuration once per process, so a notebook cannot show
"default vs memory growth vs a hard limit vs virtual GPUs" in its own kernel: each needs a
runtime of its own. ``try_settings(settings)`` starts a fresh Python (``system.child``), calls
``gpu_config.configure(**settings)`` there (optionally after creating a tensor first - the
"too late" mistake), places a tensor on every logical device, reads TensorFlow's GPU memory
counters and ``nvidia-smi``, optionally tries one oversized tensor on ``/GPU:0``, and reports
back as a ``FreshRun``. The process then exits, and its GPU memory with it.

``run_code(code)`` does the same for a piece of plain TensorFlow code - the lines a student writes
at the top of a script (``tf.config.experimental.set_memory_growth(gpu, True)``, ...) - and reports
what TensorFlow then holds (``CodeRun``): the error the code raised, if any, memory growth and the
logical-device configuration of each GPU, and the GPU options TensorFlow will hand its runtime. On a
machine without a GPU, ``stand_in_gpus=N`` lets the code meet TensorFlow's own checks (the Python
side, ``tensorflow/python/eager/context.py``) on N stand-in GPUs, names added to TensorFlow's device
list in that process only; no runtime is started with them.
"""

from __future__ import annotations

import contextlib
import io
import os
import shutil
import subprocess
import sys
import time
import traceback
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from typing import Any

from course_utils.errors import CourseError
from course_utils.gpu_config import (
    ALLOW_GROWTH_ENV,
    ALLOW_GROWTH_VALUES,
    check_mb,
    check_request,
    configure,
    runtime_initialized,
    short_name,
)
from course_utils.i18n import translator
from course_utils.system.child import run_python
from course_utils.system.rss import peak_rss_mib, rss_mib
from course_utils.tf_setup import quiet_tensorflow

_ = translator("course")


@dataclass
class FreshRun:
    """What a fresh Python process saw after ``configure(**settings)`` (see ``try_settings``)."""

    settings: dict[str, Any]
    env: dict[str, str | None]
    initialise_first: bool
    ok: bool  # configure succeeded
    error: dict[str, str] | None  # {"type", "what", "fix"} when configure raised a course error
    report: str  # what configure printed
    logical_devices: list[str]
    placed: dict[str, str]  # logical device -> the device that produced the tensor placed there
    gpu_memory_mib: dict[str, dict[str, float]]  # logical GPU -> {"current", "peak"} (TensorFlow's allocator)
    oversize: dict[str, Any] | None  # {"mb": N, "result": "allocated" | "refused: <error type>"} (GPU only)
    nvidia_smi_used_mib: dict[str, list[float]] | None  # {"before": [...], "after": [...]} per GPU
    rss_mib: float
    peak_rss_mib: float
    seconds: float

    @property
    def gpu_taken_mib(self) -> float | None:
        """How much more GPU memory was in use (all GPUs, nvidia-smi) after this process placed its tensors
        than before it started TensorFlow: what it took, CUDA context included, if nothing else changed
        meanwhile. None without nvidia-smi."""
        smi = self.nvidia_smi_used_mib
        if not smi or len(smi["before"]) != len(smi["after"]):
            return None
        return float(sum(smi["after"]) - sum(smi["before"]))


def nvidia_smi_used_mib(run=subprocess.run) -> list[float] | None:
    """Memory used on each GPU now, in MiB, from ``nvidia-smi`` (None when it is absent or fails)."""
    exe = shutil.which("nvidia-smi")
    if exe is None:
        return None
    try:
        out = run(
            [exe, "--query-gpu=memory.used", "--format=csv,noheader,nounits"],
            capture_output=True, text=True, timeout=30,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    return parse_memory_used(out.stdout) if out.returncode == 0 else None


def parse_memory_used(text: str) -> list[float] | None:
    """Parse ``nvidia-smi --query-gpu=memory.used --format=csv,noheader,nounits`` (one MiB value per line)."""
    values = []
    for line in text.strip().splitlines():
        try:
            values.append(float(line.strip()))
        except ValueError:  # "[N/A]" or an error text: no usable number
            return None
    return values or None


def _fresh_child(request: Mapping[str, Any]) -> dict[str, Any]:
    """Runs inside the fresh process: configure, place work on every logical device, measure."""
    started = time.perf_counter()
    smi_before = nvidia_smi_used_mib()  # before TensorFlow touches the GPU
    tf = quiet_tensorflow()
    if request.get("initialise_first"):
        tf.constant(0.0)  # the mistake being demonstrated: a tensor before the configuration
    result: dict[str, Any] = {"ok": True, "error": None, "report": ""}
    try:
        report = configure(**request["settings"], quiet=True)
        result["report"] = str(report)
    except CourseError as err:
        result.update(ok=False, error={"type": type(err).__name__, "what": err.what, "fix": err.fix})
    result.update(_place_and_measure(tf, request, smi_before))
    result["seconds"] = time.perf_counter() - started
    return result


def _place_and_measure(tf: Any, request: Mapping[str, Any], smi_before: list[float] | None) -> dict[str, Any]:
    """Place an ``allocate_mb`` MiB tensor on every logical device (this starts the runtime), read memory."""
    allocate_mb = int(request.get("allocate_mb") or 16)
    keep, placed, gpu_memory = [], {}, {}
    for device in tf.config.list_logical_devices():
        with tf.device(device.name):
            tensor = tf.ones((allocate_mb * 2**18,), tf.float32)  # allocate_mb MiB of float32
        keep.append(tensor)
        placed[device.name] = tensor.device
        if device.device_type == "GPU":
            info = tf.config.experimental.get_memory_info(short_name(device.name))
            gpu_memory[short_name(device.name)] = {k: info[k] / 2**20 for k in ("current", "peak")}
    oversize = None
    if gpu_memory and request.get("oversize_mb"):
        mb = int(request["oversize_mb"])
        try:
            with tf.device("/GPU:0"):
                big = tf.ones((mb * 2**18,), tf.float32)
                float(big[0])  # wait for it (copies one number to the host, not the tensor)
            oversize = {"mb": mb, "result": "allocated"}
            del big
        except tf.errors.ResourceExhaustedError as err:
            oversize = {"mb": mb, "result": f"refused: {type(err).__name__}"}
    smi_after = nvidia_smi_used_mib()
    return {
        "logical_devices": [d.name for d in tf.config.list_logical_devices()],
        "placed": placed,
        "gpu_memory_mib": gpu_memory,
        "oversize": oversize,
        "nvidia_smi_used_mib": {"before": smi_before, "after": smi_after} if smi_before and smi_after else None,
        "rss_mib": rss_mib(),
        "peak_rss_mib": peak_rss_mib(),
    }


def try_settings(
    settings: Mapping[str, Any] | None = None,
    *,
    env: Mapping[str, str | None] | None = None,
    initialise_first: bool = False,
    allocate_mb: int = 16,
    oversize_mb: int | None = None,
    timeout_s: float = 300,
) -> FreshRun:
    """Run ``configure(**settings)`` in a new Python process and report what that process saw.

    The child configures (after creating a tensor first when ``initialise_first`` - the
    "too late" mistake), places an ``allocate_mb`` MiB tensor on every logical device, reads
    TensorFlow's GPU memory counters and ``nvidia-smi`` (on a GPU), optionally tries one
    ``oversize_mb`` tensor on ``/GPU:0`` (refused above a memory limit), and exits - taking
    its runtime and GPU memory with it. ``env`` adds environment variables (e.g.
    ``{"TF_FORCE_GPU_ALLOW_GROWTH": "true"}``; ``None`` removes one). A course error inside the child is reported
    in ``FreshRun.error``; a crash of the child, or ``timeout_s`` passing, raises ``ChildError`` (a
    ``CourseError``) with its last output.
    """
    settings = dict(settings or {})
    check_request(**settings)  # fail here, with the caller's traceback, not in the child
    request = {
        "settings": settings,
        "initialise_first": initialise_first,
        "allocate_mb": check_mb("allocate_mb", allocate_mb),
        "oversize_mb": check_mb("oversize_mb", oversize_mb) if oversize_mb is not None else None,
    }
    child_env: dict[str, str | None] = {**(env or {}), "COURSE_RESULTS_FILE": None}  # the child records nothing
    run = run_python(
        "course_utils.fresh_process:_fresh_child", request, timeout_s=timeout_s, env=child_env,
        what=_("The fresh TensorFlow process"), name="fresh-tensorflow",
    )
    return FreshRun(settings=settings, env=dict(env or {}), initialise_first=initialise_first, **run.value)


def as_dict(run: FreshRun) -> dict[str, Any]:
    """A FreshRun as plain data (for ``course.record``)."""
    return asdict(run)


# --- plain TensorFlow code in a fresh process ------------------------------------------------------

CODE_NAME = "<your code>"  # the file name tracebacks give the code run by run_code


@dataclass
class CodeRun:
    """What a fresh Python process saw after running a piece of TensorFlow code (see ``run_code``)."""

    code: str
    env: dict[str, str | None]
    stand_in_gpus: int  # stand-in GPUs the code met (0: the machine's own devices)
    error: dict[str, Any] | None  # {"type", "message", "line"} when the code raised
    printed: str  # what the code printed
    runtime_started: bool | None  # had TensorFlow's runtime started when the code finished?
    gpus: list[str]  # the GPUs TensorFlow listed to the code ("GPU:0", ...)
    memory_growth: dict[str, bool]  # per GPU, as tf.config.experimental.get_memory_growth reports it
    logical_gpus_mb: dict[str, list[float] | None]  # per GPU: the memory limit of each logical GPU, or None
    gpu_options: dict[str, Any] | None  # what TensorFlow will hand its runtime: {"allow_growth", "virtual_mb"}
    gpu_options_error: str | None  # "ValueError: ..." when TensorFlow refuses the configuration at start-up
    measured: dict[str, Any] | None  # _place_and_measure's result, when asked (allocate_mb) and possible
    measure_error: str | None  # the runtime refused to start, or a placement failed
    allow_growth_env: str | None  # TF_FORCE_GPU_ALLOW_GROWTH in the child when the code had run
    seconds: float

    @property
    def ok(self) -> bool:
        """The code ran without error, and TensorFlow accepts the configuration it left."""
        return self.error is None and self.gpu_options_error is None and self.measure_error is None

    @property
    def growth_in_effect(self) -> bool | None:
        """Does the runtime get memory growth? None without a GPU. ``TF_FORCE_GPU_ALLOW_GROWTH`` wins over code."""
        if not self.gpus or self.gpu_options is None:
            return None
        if self.allow_growth_env in ALLOW_GROWTH_VALUES:
            return self.allow_growth_env == "true"  # gpu_bfc_allocator.cc: the variable overrides the options
        return bool(self.gpu_options["allow_growth"])

    @property
    def gpu_taken_mib(self) -> float | None:
        """GPU memory the process took (nvidia-smi, after minus before), when it was measured on a GPU."""
        smi = (self.measured or {}).get("nvidia_smi_used_mib")
        if not smi or len(smi["before"]) != len(smi["after"]):
            return None
        return float(sum(smi["after"]) - sum(smi["before"]))


def add_stand_in_gpus(tf: Any, count: int) -> list[Any]:
    """Add ``count`` stand-in GPUs to TensorFlow's device list in this process (a machine without a GPU).

    They are names only: TensorFlow's Python-side checks (set_memory_growth, set_logical_device_configuration,
    the GPU options computed at start-up) treat them as GPUs. Private API: TensorFlow has no public way.
    Never start the runtime to use them: there is no device behind them.
    """
    from tensorflow.python.eager import context

    ctx = context.context()
    ctx._initialize_physical_devices()
    stand_ins = [tf.config.PhysicalDevice(name=f"/physical_device:GPU:{i}", device_type="GPU") for i in range(count)]
    ctx._physical_devices += stand_ins
    ctx._physical_device_to_index = {device: i for i, device in enumerate(ctx._physical_devices)}
    ctx._visible_device_list += stand_ins
    for device in stand_ins:
        ctx._memory_growth_map[device] = None
    return stand_ins


def gpu_options_now() -> tuple[dict[str, Any] | None, str | None]:
    """The GPU options TensorFlow will hand its runtime, computed by TensorFlow from what was set.

    Returns ``({"allow_growth": bool, "virtual_mb": [[MB, ...] per GPU]}, None)``, or ``(None, "ValueError: ...")``
    when TensorFlow refuses the configuration (e.g. "Memory growth cannot differ between GPU devices").
    Private API (``context.context().config``): TensorFlow has no public call for this.
    """
    try:
        from tensorflow.python.eager import context

        options = context.context().config.gpu_options
    except ValueError as err:
        return None, f"ValueError: {err}"
    except (ImportError, AttributeError):
        return None, None
    virtual = [list(v.memory_limit_mb) for v in options.experimental.virtual_devices]
    return {"allow_growth": bool(options.allow_growth), "virtual_mb": virtual}, None


def _error_line(exc: BaseException) -> int | None:
    lines = [frame.lineno for frame in traceback.extract_tb(exc.__traceback__) if frame.filename == CODE_NAME]
    return lines[-1] if lines else None


def _code_child(request: Mapping[str, Any]) -> dict[str, Any]:
    """Runs inside the fresh process: the code, then what TensorFlow holds, then (if asked) a measurement."""
    started = time.perf_counter()
    smi_before = nvidia_smi_used_mib()
    tf = quiet_tensorflow()
    stand_ins = 0
    if request.get("stand_in_gpus") and not tf.config.list_physical_devices("GPU"):
        stand_ins = len(add_stand_in_gpus(tf, int(request["stand_in_gpus"])))
    printed = io.StringIO()
    error = None
    namespace: dict[str, Any] = {"__name__": "__main__"}
    try:
        with contextlib.redirect_stdout(printed):
            exec(compile(request["code"], CODE_NAME, "exec"), namespace)  # noqa: S102 - running it is the point
    except Exception as exc:  # the student's code: any error is a result to report
        error = {"type": type(exc).__name__, "message": str(exc), "line": _error_line(exc)}
    sys.stdout.write(printed.getvalue())
    result: dict[str, Any] = {"error": error, "printed": printed.getvalue(), "stand_in_gpus": stand_ins,
                              "runtime_started": runtime_initialized()}
    gpus = tf.config.list_physical_devices("GPU")
    result["gpus"] = [short_name(g) for g in gpus]
    result["memory_growth"] = {short_name(g): bool(tf.config.experimental.get_memory_growth(g)) for g in gpus}
    configs = {short_name(g): tf.config.get_logical_device_configuration(g) for g in gpus}
    result["logical_gpus_mb"] = {name: [c.memory_limit for c in cfg] if cfg else None for name, cfg in configs.items()}
    result["gpu_options"], result["gpu_options_error"] = gpu_options_now() if gpus else (None, None)
    result["measured"], result["measure_error"] = None, None
    result["allow_growth_env"] = os.environ.get(ALLOW_GROWTH_ENV)  # the code may have set it
    if request.get("allocate_mb") and not stand_ins and result["gpu_options_error"] is None:
        try:
            result["measured"] = _place_and_measure(tf, request, smi_before)
        except Exception as exc:  # e.g. the runtime refused to start with this configuration
            result["measure_error"] = f"{type(exc).__name__}: {exc}"
    result["seconds"] = time.perf_counter() - started
    return result


def run_code(
    code: str,
    *,
    stand_in_gpus: int = 0,
    env: Mapping[str, str | None] | None = None,
    allocate_mb: int | None = None,
    oversize_mb: int | None = None,
    timeout_s: float = 300,
) -> CodeRun:
    """Run ``code`` (plain TensorFlow, e.g. the memory settings at the top of a script) in a new Python process.

    The child imports TensorFlow, runs the code, and reports what TensorFlow then holds: the error the code
    raised (type, message, line), memory growth and logical GPUs per GPU, and the GPU options TensorFlow
    computes for its runtime - where growth can be dropped, or the whole configuration refused. With
    ``allocate_mb`` it then places a tensor that size on every logical device (this starts the runtime),
    reads the GPU memory counters and ``nvidia-smi``, and tries one ``oversize_mb`` tensor on ``/GPU:0``.
    ``stand_in_gpus=N``: on a machine without a GPU, the code meets N stand-in GPUs (``add_stand_in_gpus``)
    and nothing is measured; ignored where TensorFlow sees a real GPU. ``env`` adds environment variables
    (``None`` removes one). A crash of the child, or ``timeout_s`` passing, raises ``ChildError``.
    """
    if not isinstance(code, str):
        raise TypeError(f"code must be a string of Python, not {type(code).__name__}")
    if isinstance(stand_in_gpus, bool) or not isinstance(stand_in_gpus, int) or stand_in_gpus < 0:
        raise ValueError(f"stand_in_gpus must be a whole number >= 0, not {stand_in_gpus!r}")
    request = {
        "code": code,
        "stand_in_gpus": stand_in_gpus,
        "allocate_mb": check_mb("allocate_mb", allocate_mb) if allocate_mb is not None else None,
        "oversize_mb": check_mb("oversize_mb", oversize_mb) if oversize_mb is not None else None,
    }
    child_env: dict[str, str | None] = {**(env or {}), "COURSE_RESULTS_FILE": None}
    run = run_python(
        "course_utils.fresh_process:_code_child", request, timeout_s=timeout_s, env=child_env,
        what=_("The fresh TensorFlow process"), name="fresh-code",
    )
    return CodeRun(code=code, env=dict(env or {}), **run.value)
