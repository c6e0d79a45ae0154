"""The mixed-precision rule notebook 05 uses (``mixed_precision_policy``): the policy its "auto" picks.

TensorFlow's mixed-precision guide expects its large speedup on GPUs with Tensor Cores (``tensor_cores``: compute
capability 7.0 and newer, except the GeForce GTX 16 series) and on CPUs with AMX; "auto" picks it there only -
bfloat16 from 8.0 (no loss scaling), float16 on 7.x, bfloat16 on an AMX CPU. Elsewhere it picks none; the
notebook's ``MIXED_PRECISION = "mixed_float16"`` measures what memory savings alone give.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from course_utils.core.i18n import translator
from course_utils.device import cpuinfo

_ = translator("course")


def cpu_flags(text: str | None = None) -> set[str]:
    """The CPU feature flags Linux reports (/proc/cpuinfo, or ``text``); empty where unknown."""
    return set((cpuinfo("flags", "features", text=text) or "").split())


MIXED_PRECISION_GUIDE = "https://www.tensorflow.org/guide/mixed_precision"
LOSS_SCALE_OPTIMIZER_DOCS = "https://keras.io/api/mixed_precision/loss_scale_optimizer/"
POLICIES = ("mixed_float16", "mixed_bfloat16")
# The GeForce GTX 16 series (GTX 1630, 1650, 1650 SUPER/Ti, 1660, 1660 SUPER/Ti and their laptop and
# Max-Q versions; chips TU116 and TU117): Turing, compute capability 7.5, but built without Tensor Cores.
_GTX_16 = re.compile(r"\bGTX 16\d0\b")


def tensor_cores(name: str | None, compute_capability: Sequence[int] | None) -> bool:
    """Whether an NVIDIA GPU has Tensor Cores, from its name and compute capability (``(7, 5)``).

    From compute capability 7.0 (MIXED_PRECISION_GUIDE), except the GTX 16 series: Turing chips (TU116, TU117)
    built without them (https://www.techpowerup.com/review/evga-gtx-1660-ti-xc-black/2.html,
    https://www.notebookcheck.net/GeForce-GTX-1650-Mobile-vs-GeForce-GTX-1650-Ti-Mobile_9828_10227.247598.0.html).
    Other TU117 cards (the T600 laptop GPU) are not recognised by name; an unknown compute capability is no.
    """
    if not compute_capability or tuple(compute_capability)[:2] < (7, 0):
        return False
    return not _GTX_16.search(" ".join(str(name or "").upper().split()))


def gpu_policy(name: str | None, compute_capability: Sequence[int] | None) -> tuple[str | None, str]:
    """The mixed-precision policy that runs on one NVIDIA GPU's Tensor Cores, and why (plain values, no TensorFlow).

    The guide (MIXED_PRECISION_GUIDE) expects no math speedup on older GPUs, so without Tensor Cores: None. From
    8.0 they run bfloat16 (https://nvidia.github.io/TransformerEngine/support_matrix.html), which keeps float32's
    range and needs no loss scaling; on 7.x float16, which does (LOSS_SCALE_OPTIMIZER_DOCS).
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

    A GPU: ``gpu_policy`` of what TensorFlow reports. A CPU: ``mixed_bfloat16`` with AMX only, the one the guide
    names (without it bfloat16 "will run significantly slower"; AVX512-BF16 is no exception).
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
