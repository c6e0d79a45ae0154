"""The mixed-precision rule notebook 05 uses (``mixed_precision_policy``): the policy its "auto" picks.

Mixed precision runs on most hardware; TensorFlow's guide expects its large speedup on GPUs with Tensor Cores
(``tensor_cores``: compute capability 7.0 and newer, except the GeForce GTX 16 series) and on CPUs with AMX.
"auto" picks it there only - bfloat16 from compute capability 8.0, which needs no loss scaling, float16 on 7.x,
bfloat16 on an AMX CPU (the guide says it runs slower on a CPU without AMX). On a GPU without Tensor Cores it
picks none: the guide expects no faster arithmetic there, only "some speedups" from memory and bandwidth
savings, which the notebook's ``MIXED_PRECISION = "mixed_float16"`` measures. Notebook 05's speed ladder
measures what the chosen policy gives on the machine at hand.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path

from course_utils.core.errors import ParameterError
from course_utils.core.i18n import translator

_ = translator("course")


# --------------------------------------------------------------------------- mixed precision


def cpu_flags(cpuinfo: str | None = None) -> set[str]:
    """The CPU feature flags Linux reports (/proc/cpuinfo); empty where unknown."""
    if cpuinfo is None:
        try:
            cpuinfo = Path("/proc/cpuinfo").read_text(encoding="utf-8", errors="replace")
        except OSError:
            return set()
    for line in cpuinfo.splitlines():
        if line.lower().startswith(("flags", "features")):
            return set(line.split(":", 1)[1].split())
    return set()


MIXED_PRECISION_GUIDE = "https://www.tensorflow.org/guide/mixed_precision"
LOSS_SCALE_OPTIMIZER_DOCS = "https://keras.io/api/mixed_precision/loss_scale_optimizer/"
POLICIES = ("mixed_float16", "mixed_bfloat16")
# The GeForce GTX 16 series (GTX 1630, 1650, 1650 SUPER/Ti, 1660, 1660 SUPER/Ti and their laptop and
# Max-Q versions; chips TU116 and TU117): Turing, compute capability 7.5, but built without Tensor Cores.
_GTX_16 = re.compile(r"\bGTX 16\d0\b")


def tensor_cores(name: str | None, compute_capability: Sequence[int] | None) -> bool:
    """Whether an NVIDIA GPU has Tensor Cores, from its name and compute capability (``(7, 5)``).

    Tensor Cores came with compute capability 7.0 (Volta, V100) and every generation since has them
    (the mixed-precision guide: MIXED_PRECISION_GUIDE) - except the GeForce GTX 16 series: Turing
    chips (TU116, TU117) of compute capability 7.5 like the RTX 20 series and the T4, built without
    Tensor Cores (TechPowerUp's GTX 1660 Ti review: "lacking its two killer features, RT cores and
    tensor cores", https://www.techpowerup.com/review/evga-gtx-1660-ti-xc-black/2.html; Notebookcheck
    on the TU117 GTX 1650: "no Raytracing or Tensor cores",
    https://www.notebookcheck.net/GeForce-GTX-1650-Mobile-vs-GeForce-GTX-1650-Ti-Mobile_9828_10227.247598.0.html).
    Plain values in, so the rule is testable without a GPU; an unknown compute capability is no. Other
    cards on the TU117 chip are not recognised by name here, e.g. the NVIDIA T600 laptop GPU, which has
    no Tensor Cores either:
    https://www.notebookcheck.com/NVIDIA-T600-Laptop-GPU-Grafikkarte-Benchmarks-und-Spezifikationen.532551.0.html
    """
    if not compute_capability or tuple(compute_capability)[:2] < (7, 0):
        return False
    return not _GTX_16.search(" ".join(str(name or "").upper().split()))


def gpu_policy(name: str | None, compute_capability: Sequence[int] | None) -> tuple[str | None, str]:
    """The mixed-precision policy that runs on one NVIDIA GPU's Tensor Cores, and why (plain values, no TensorFlow).

    Mixed precision runs on older GPUs too, but the guide (MIXED_PRECISION_GUIDE) expects "the greatest
    performance benefit" where Tensor Cores do the 16-bit matrix products (``tensor_cores``); "Older GPUs
    offer no math performance benefit", though "memory and bandwidth savings can enable some speedups".
    So without Tensor Cores the answer is None, and the reason says how to measure mixed_float16 anyway.
    From compute capability 8.0 (Ampere) Tensor Cores also run bfloat16 (NVIDIA: "BF16 requires compute
    capability 8.0 or higher", https://nvidia.github.io/TransformerEngine/support_matrix.html), which has
    float32's exponent range, so ``mixed_bfloat16`` needs no loss scaling. On 7.x only float16 runs on
    Tensor Cores, and float16 needs loss scaling on every device, or small gradients underflow:
    ``Model.fit`` scales the loss by itself, a custom training loop wraps its optimizer in
    ``keras.optimizers.LossScaleOptimizer`` (LOSS_SCALE_OPTIMIZER_DOCS; ``distribute.training.loop_optimizer``).
    """
    cc = f"{compute_capability[0]}.{compute_capability[1]}" if compute_capability else _("unknown")
    shown = _("{name} (compute capability {cc})").format(name=name or "GPU", cc=cc)
    measure = _('mixed precision still runs, without their large speedup; MIXED_PRECISION = "mixed_float16" '
                "measures what saved memory and bandwidth give")
    if not compute_capability:
        return None, _("{gpu} is not known to have Tensor Cores: {measure}").format(gpu=shown, measure=measure)
    if not tensor_cores(name, compute_capability):
        return None, _("{gpu} has no Tensor Cores: {measure}").format(gpu=shown, measure=measure)
    if tuple(compute_capability)[:2] >= (8, 0):
        return "mixed_bfloat16", _("{gpu} has Tensor Cores that run bfloat16, which keeps float32's range and so "
                                   "needs no loss scaling").format(gpu=shown)
    return "mixed_float16", _("{gpu} has float16 Tensor Cores (bfloat16 only from 8.0); float16 needs loss "
                              "scaling: Model.fit scales the loss automatically, a custom training loop wraps its "
                              "optimizer in keras.optimizers.LossScaleOptimizer").format(gpu=shown)


def mixed_precision_policy(device: str, *, flags: set[str] | None = None) -> tuple[str | None, str]:
    """The mixed-precision policy worth trying on ``device`` ("/CPU:0", "/GPU:0"), and why.

    On a GPU: ``gpu_policy`` of the name and compute capability TensorFlow reports
    (``tf.config.experimental.get_device_details``). On CPUs TensorFlow's mixed-precision guide
    (``MIXED_PRECISION_GUIDE``) names only AMX (Intel Sapphire Rapids and newer: ``mixed_bfloat16``),
    and ``mixed_bfloat16`` on a CPU without AMX "will run significantly slower". A CPU with
    AVX512-BF16 but no AMX is therefore no exception here. Otherwise ``None``.
    """
    if "GPU" in device.upper():
        import tensorflow as tf

        gpus = tf.config.list_physical_devices("GPU")
        index = int(device.rsplit(":", 1)[-1]) if device[-1].isdigit() else 0
        if index >= len(gpus):
            return None, _("no {device} visible").format(device=device)
        details = tf.config.experimental.get_device_details(gpus[index])
        return gpu_policy(details.get("device_name"), details.get("compute_capability"))
    flags = cpu_flags() if flags is None else flags
    if "amx_bf16" in flags:  # AMX for bfloat16, the Linux flag
        return "mixed_bfloat16", _("this CPU has AMX (amx_bf16): the guide expects bfloat16 to be faster")
    also = (" " + _("It has avx512_bf16, but the guide names only AMX.")) if "avx512_bf16" in flags else ""
    return None, _("this CPU has no AMX: the guide says mixed_bfloat16 runs slower without it.") + also


def check_policy(policy: str | None) -> None:
    """Refuse a mixed-precision choice other than "auto", None / "float32", or one of ``POLICIES``."""
    if policy not in ("auto", None, "float32", *POLICIES):
        raise ParameterError(
            _("Mixed precision {policy!r} is not understood.").format(policy=policy),
            _("Use \"auto\" (the guide's rule for this device), None (no mixed precision) or one of "
              "{policies}.").format(policies=", ".join(POLICIES)),
        )
