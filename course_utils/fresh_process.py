"""Try a device configuration in a new Python process - a kernel restart you can run in a cell.

TensorFlow reads its device configuration once per process, so a notebook cannot show
"default vs memory growth vs a hard limit vs virtual GPUs" in its own kernel: each needs a
runtime of its own. ``try_settings(settings)`` starts a fresh Python (``system.child``), calls
``gpu_config.configure(**settings)`` there (optionally after creating a tensor first - the
"too late" mistake), places a tensor on every logical device, reads TensorFlow's GPU memory
counters and ``nvidia-smi``, optionally tries one oversized tensor on ``/GPU:0``, and reports
back as a ``FreshRun``. The process then exits, and its GPU memory with it.
"""

from __future__ import annotations

import shutil
import subprocess
import time
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from typing import Any

from course_utils.errors import CourseError
from course_utils.gpu_config import check_mb, check_request, configure, short_name
from course_utils.system.child import run_python
from course_utils.system.rss import peak_rss_mib, rss_mib
from course_utils.tf_setup import quiet_tensorflow


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
    allocate_mb = int(request.get("allocate_mb", 16))
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
    result.update(
        logical_devices=[d.name for d in tf.config.list_logical_devices()],
        placed=placed,
        gpu_memory_mib=gpu_memory,
        oversize=oversize,
        nvidia_smi_used_mib={"before": smi_before, "after": smi_after} if smi_before and smi_after else None,
        rss_mib=rss_mib(),
        peak_rss_mib=peak_rss_mib(),
        seconds=time.perf_counter() - started,
    )
    return result


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
        what="The fresh TensorFlow process", name="fresh-tensorflow",
    )
    return FreshRun(settings=settings, env=dict(env or {}), initialise_first=initialise_first, **run.value)


def as_dict(run: FreshRun) -> dict[str, Any]:
    """A FreshRun as plain data (for ``course.record``)."""
    return asdict(run)
