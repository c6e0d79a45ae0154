"""Honest speed measurements of the CNN: the speed ladder of ``course bench cnn``, and the mixed-precision rule
that notebook 05 uses (``mixed_precision_policy``).

What "honest" means here:

- **The device is forced around everything**: model build, compile, fit and evaluate run
  inside ``with tf.device(...)``, and the weights' device is read back
  (``w.value.device``, the Keras 3 way) as proof.
- **Warm-up is excluded**: the first epoch traces the training function (and, with XLA,
  compiles it; on a GPU, cuDNN autotunes); the speed reported is the **median** of the
  later epochs (``course_utils.timing``).
- **XLA is pinned**: Keras 3's default ``jit_compile="auto"`` turns XLA on whenever a GPU
  exists - even for a model placed on the CPU - so every configuration sets it explicitly.
- **A faster setting must keep the accuracy**: every configuration is trained for the
  same epochs and its test accuracy is reported; the "best" configuration is the fastest
  one whose test accuracy is within 0.5 points of the first configuration's.
- **Mixed precision only where hardware runs 16 bits fast** (``mixed_precision_policy``): on GPUs
  with Tensor Cores (``tensor_cores``: compute capability 7.0 and newer, except the GeForce GTX 16
  series) - bfloat16 from compute capability 8.0, which needs no loss scaling, float16 on 7.x;
  on CPUs bfloat16 with AMX only, since TensorFlow's guide says it runs slower without AMX.
  ``ladder(policy=...)`` measures a rung anyway, to check that on a machine.

The command line around it (``course bench``) lives in ``course_utils.tools.bench``.
"""

from __future__ import annotations

import contextlib
import re
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np

from course_utils.core.errors import ParameterError
from course_utils.core.i18n import translator
from course_utils.pipeline import blog_arrays, image_dataset
from course_utils.timing import epoch_timer, steady_state

ACCURACY_TOLERANCE = 0.005  # "within 0.5 points" of the baseline configuration's test accuracy
_ = translator("course")
Arrays = tuple[np.ndarray, np.ndarray]


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
    """The mixed-precision policy worth trying on one NVIDIA GPU, and why (plain values, no TensorFlow).

    Mixed precision runs on any GPU and halves the activations' memory everywhere; it is faster only
    where Tensor Cores do the 16-bit matrix products (``tensor_cores``). From compute capability 8.0
    (Ampere) Tensor Cores also run bfloat16 (NVIDIA: "BF16 requires compute capability 8.0 or higher",
    https://nvidia.github.io/TransformerEngine/support_matrix.html), which has float32's exponent range,
    so ``mixed_bfloat16`` needs no loss scaling. On 7.x only float16 is fast, and float16 gradients
    underflow without loss scaling: ``Model.fit`` scales the loss by itself, a custom training loop
    wraps its optimizer in ``keras.optimizers.LossScaleOptimizer`` (LOSS_SCALE_OPTIMIZER_DOCS;
    ``distribute.training.loop_optimizer``).
    """
    shown = f"{name or 'GPU'} (compute capability " + (
        f"{compute_capability[0]}.{compute_capability[1]})" if compute_capability else "unknown)")
    if not compute_capability:
        return None, f"{shown} is not known to have Tensor Cores, so mixed precision may save memory but not time"
    if not tensor_cores(name, compute_capability):
        return None, f"{shown} has no Tensor Cores, so mixed precision would save memory but not time"
    if tuple(compute_capability)[:2] >= (8, 0):
        return "mixed_bfloat16", (f"{shown} has Tensor Cores that run bfloat16, "
                                  "which keeps float32's range and so needs no loss scaling")
    return "mixed_float16", (f"{shown} has float16 Tensor Cores (bfloat16 only from 8.0); float16 needs loss "
                             "scaling: Model.fit scales the loss automatically, a custom training loop wraps its "
                             "optimizer in keras.optimizers.LossScaleOptimizer")


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
            return None, f"no {device} visible"
        details = tf.config.experimental.get_device_details(gpus[index])
        return gpu_policy(details.get("device_name"), details.get("compute_capability"))
    flags = cpu_flags() if flags is None else flags
    if "amx_bf16" in flags:  # AMX for bfloat16, the Linux flag
        return "mixed_bfloat16", "this CPU has AMX (amx_bf16): the guide expects bfloat16 to be faster"
    also = " It has avx512_bf16, but the guide names only AMX." if "avx512_bf16" in flags else ""
    return None, f"this CPU has no AMX: the guide says mixed_bfloat16 runs slower without it.{also}"


def check_policy(policy: str | None) -> None:
    """Refuse a mixed-precision choice other than "auto", None / "float32", or one of ``POLICIES``."""
    if policy not in ("auto", None, "float32", *POLICIES):
        raise ParameterError(
            _("Mixed precision {policy!r} is not understood.").format(policy=policy),
            _("Use \"auto\" (the guide's rule for this device), None (no mixed precision) or one of "
              "{policies}.").format(policies=", ".join(POLICIES)),
        )


@contextlib.contextmanager
def dtype_policy(name: str | None):
    """Set Keras's global dtype policy for a block, and always put float32 back afterwards."""
    import keras

    keras.mixed_precision.set_global_policy(name or "float32")
    try:
        yield
    finally:
        keras.mixed_precision.set_global_policy("float32")


# --------------------------------------------------------------------------- configurations


@dataclass(frozen=True)
class Config:
    """One way of training the blog post's CNN. Everything else (model, optimizer, data) is equal."""

    name: str
    batch_size: int
    input: str = "tf.data"  # "numpy": the blog post's float64 arrays; "tf.data": image_dataset (uint8 -> float32)
    precision: str = "float32"  # a Keras dtype policy
    jit_compile: bool = False
    learning_rate: float = 1e-3  # Adam; the blog post uses Adam's default, 1e-3
    note: str = ""


BASELINE_BATCH = 32  # Keras's default, which the blog post uses
COURSE_BATCH = 256
# Adam's learning rate for the larger batch: eight times fewer steps per epoch must each go
# further for the same epochs to reach the same accuracy. x2 (not the linear rule's x8) is
# what we measured to keep the baseline's test accuracy (MNIST sample and Fashion-MNIST, 3 and 10 epochs).
COURSE_LEARNING_RATE = 2e-3


def baseline_config() -> Config:
    """The first rung: the blog post's batch and NumPy input, with the loss fixed."""
    return Config("as in the blog post", BASELINE_BATCH, "numpy", note="batch 32, float64 NumPy input (loss fixed)")


def ladder(
    device: str = "/CPU:0", *, flags: set[str] | None = None, policy: str | None = "auto"
) -> tuple[list[Config], str]:
    """The speed ladder for ``device``: each rung changes one thing. Returns (configs, precision note).

    ``policy="auto"`` follows the mixed-precision guide (``mixed_precision_policy``); a policy name
    measures that rung anyway (to check the guide on your machine); None or "float32" skips it.
    """
    check_policy(policy)
    guide_policy, reason = mixed_precision_policy(device, flags=flags)
    if policy == "auto":
        policy = guide_policy
    elif policy in POLICIES:
        reason = f"{policy}, as asked (the guide's rule: {reason})"
        policy = str(policy)
    else:
        policy, reason = None, "mixed precision off, as asked"
    batch = Config(
        f"batch {COURSE_BATCH}",
        COURSE_BATCH,
        "numpy",
        learning_rate=COURSE_LEARNING_RATE,
        note=f"batch {COURSE_BATCH}, Adam learning rate {COURSE_LEARNING_RATE:g}",
    )
    data = replace(
        batch, name="tf.data cache+prefetch", input="tf.data", note="uint8 -> float32 once, cached, prefetched"
    )
    configs = [baseline_config(), batch, data]
    top = data
    if policy:
        short = policy.removeprefix("mixed_")
        top = replace(data, name=f"mixed precision ({short})", precision=policy, note=reason)
        configs.append(top)
    configs.append(
        replace(
            top,
            name="XLA" + (f" + {policy.removeprefix('mixed_')}" if policy else ""),
            jit_compile=True,
            note="jit_compile=True",
        )
    )
    return configs, reason


# --------------------------------------------------------------------------- measuring


@dataclass
class Result:
    """One configuration measured: speed (warm-up excluded), accuracy, and where it ran."""

    name: str
    device: str
    batch_size: int
    images_per_s: float  # training images / median steady-state epoch time
    epoch_s: float  # median epoch time, warm-up epochs excluded
    test_accuracy: float
    warmup_s: list[float]  # the excluded epochs
    steady_epoch_s: list[float]  # the epochs the median is taken over
    images: int
    input: str
    precision: str
    jit_compile: bool
    learning_rate: float
    weights_device: str  # model.weights[0].value.device after training
    note: str = ""


def _fit_and_evaluate(model: Any, config: Config, train: Arrays, test: Arrays, *, epochs: int, seed: int,
                      timer: Any) -> tuple[int, float]:
    """Train ``model`` with ``config``'s input way; return the images each epoch trained on and the test accuracy."""
    (x_train, y_train), (x_test, y_test) = train, test
    trained = len(x_train)
    if config.input == "numpy":
        model.fit(blog_arrays(x_train), y_train, batch_size=config.batch_size, epochs=epochs, verbose=0,
                  callbacks=[timer])
        _loss, accuracy = model.evaluate(blog_arrays(x_test), y_test, batch_size=config.batch_size, verbose=0)
    elif config.input == "tf.data":
        # XLA compiles one program per input shape: a last, partial batch would be a second shape,
        # compiled again in the second epoch (Keras relaxes the traced shapes). One shape it is.
        drop = config.jit_compile and len(x_train) >= config.batch_size
        if drop:
            trained = len(x_train) - len(x_train) % config.batch_size
        data = image_dataset(x_train, y_train, batch_size=config.batch_size, shuffle=True, seed=seed,
                             drop_remainder=drop)
        model.fit(data, epochs=epochs, shuffle=False, verbose=0, callbacks=[timer])
        _loss, accuracy = model.evaluate(image_dataset(x_test, y_test, batch_size=config.batch_size), verbose=0)
    else:
        raise ValueError(f"unknown input {config.input!r}")
    return trained, float(accuracy)


def benchmark(
    config: Config,
    train: Arrays,
    test: Arrays,
    *,
    device: str = "/CPU:0",
    epochs: int = 3,
    warmup_epochs: int = 1,
    seed: int = 0,
    clock: Callable[[], float] = time.perf_counter,
    progress: Callable[[str], None] | None = None,
) -> Result:
    """Train the blog post's CNN (logits + ``from_logits=True``) one way on ``device`` and measure it.

    ``train`` and ``test`` are uint8 images (n, 28, 28) with their labels. The device is forced
    around build, compile, fit and evaluate; the dtype policy is reset to float32 afterwards.
    ``progress``, if given, gets one line per epoch (``print`` in the notebook).
    """
    import keras
    import tensorflow as tf

    from course_utils.models import build_blog_cnn

    if epochs <= warmup_epochs:
        raise ParameterError(
            _("epochs={epochs} leaves nothing to time after {warmup} warm-up epoch(s).").format(
                epochs=epochs, warmup=warmup_epochs),
            _("Use at least {least} epochs.").format(least=warmup_epochs + 1),
        )
    def report(epoch: int, seconds: float) -> None:
        if progress is not None:
            line = (_("epoch {epoch}/{epochs}: {seconds:.1f} s (warm-up, not timed)") if epoch <= warmup_epochs
                    else _("epoch {epoch}/{epochs}: {seconds:.1f} s"))
            progress("    " + line.format(epoch=epoch, epochs=epochs, seconds=seconds))

    timer = epoch_timer(clock, report)
    keras.utils.set_random_seed(seed)
    with dtype_policy(config.precision), tf.device(device):
        model = build_blog_cnn(logits=True)
        model.compile(
            optimizer=keras.optimizers.Adam(config.learning_rate),
            loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
            metrics=["accuracy"],
            jit_compile=config.jit_compile,
        )
        trained, accuracy = _fit_and_evaluate(model, config, train, test, epochs=epochs, seed=seed, timer=timer)
        weights_device = model.weights[0].value.device
    warm, steady, median = steady_state(timer.times, warmup_epochs)
    return Result(
        name=config.name,
        device=device,
        batch_size=config.batch_size,
        images_per_s=trained / median,
        epoch_s=median,
        test_accuracy=float(accuracy),
        warmup_s=warm,
        steady_epoch_s=steady,
        images=trained,
        input=config.input,
        precision=config.precision,
        jit_compile=config.jit_compile,
        learning_rate=config.learning_rate,
        weights_device=weights_device,
        note=config.note,
    )


def run_ladder(
    train: Arrays,
    test: Arrays,
    *,
    device: str = "/CPU:0",
    epochs: int = 3,
    seed: int = 0,
    configs: Sequence[Config] | None = None,
    progress: Callable[[str], None] | None = None,
) -> list[Result]:
    """Measure every rung of the ladder (or ``configs``) on ``device``, the baseline configuration first.

    ``progress``, if given, gets a line when a rung starts, one per epoch, and its result.
    """
    configs = list(configs) if configs is not None else ladder(device)[0]
    results = []
    for number, config in enumerate(configs, 1):
        if progress:
            progress(_("rung {number}/{count}: {name} ({note})").format(
                number=number, count=len(configs), name=config.name, note=config.note or config.precision))
        results.append(benchmark(config, train, test, device=device, epochs=epochs, seed=seed, progress=progress))
        if progress:
            r = results[-1]
            progress("    " + _("{speed:,.0f} images/s, test accuracy {accuracy:.4f}").format(
                speed=r.images_per_s, accuracy=r.test_accuracy))
    return results


def summarize(results: Sequence[Result], *, tolerance: float = ACCURACY_TOLERANCE) -> dict[str, Any]:
    """The ladder as data: each configuration's speedup and whether it kept the baseline's accuracy.

    The first result is the baseline configuration. "best" is the fastest configuration whose
    test accuracy is at least the baseline's minus ``tolerance`` (the baseline itself qualifies).
    """
    if not results:
        raise ValueError("nothing to summarize")
    baseline = results[0]
    configs = []
    for r in results:
        row = asdict(r)
        row["speedup_vs_baseline"] = r.images_per_s / baseline.images_per_s
        row["keeps_accuracy"] = r.test_accuracy >= baseline.test_accuracy - tolerance
        configs.append(row)
    qualified = [c for c in configs if c["keeps_accuracy"]]
    best = max(qualified, key=lambda c: c["images_per_s"])
    return {
        "configs": configs,
        "baseline": baseline.name,
        "best": best["name"],
        "speedup_best_vs_baseline": best["speedup_vs_baseline"],
        "accuracy_tolerance": tolerance,
    }
