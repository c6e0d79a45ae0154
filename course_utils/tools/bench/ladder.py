"""The speed ladder of ``course bench cnn``: the blog post's CNN trained one way after another, measured honestly.

- **The device is forced around everything**: model build, compile, fit and evaluate run inside
  ``with tf.device(...)``, and the weights' device is read back (``w.value.device``, the Keras 3 way) as proof.
- **Warm-up is excluded**: the first epoch traces the training function (and, with XLA, compiles it; on a GPU,
  cuDNN autotunes); the speed reported is the **median** of the later epochs (``epoch_timer``, ``steady_state``).
- **XLA is pinned**: Keras 3's default ``jit_compile="auto"`` turns XLA on whenever a GPU exists - even for a model
  placed on the CPU - so every configuration sets it explicitly.
- **A faster setting must keep the accuracy**: every configuration is trained for the same epochs and its test
  accuracy is reported; the "best" configuration is the fastest one whose test accuracy is within 0.5 points of
  the first configuration's.
- **The input two ways** (``blog_arrays``, ``image_dataset``): the blog post divides uint8 images by ``255.0`` in
  NumPy, which makes float64 arrays (8 bytes a pixel) that Keras casts to float32 - a second copy. The course keeps
  uint8 and builds a ``tf.data`` pipeline in the order of TensorFlow Datasets' MNIST example
  (https://www.tensorflow.org/datasets/keras_example; https://www.tensorflow.org/guide/data_performance explains each
  step): map (uint8 -> float32, channel axis) -> cache -> shuffle -> batch -> prefetch.
"""

from __future__ import annotations

import contextlib
import statistics
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, replace
from typing import Any

import numpy as np

from course_utils.core.errors import ParameterError
from course_utils.core.i18n import translator
from course_utils.speed import POLICIES, check_policy, mixed_precision_policy

ACCURACY_TOLERANCE = 0.005  # "within 0.5 points" of the baseline configuration's test accuracy
_ = translator("course")
Arrays = tuple[np.ndarray, np.ndarray]


# --------------------------------------------------------------------------- timing epochs

def epoch_timer(
    clock: Callable[[], float] = time.perf_counter, report: Callable[[int, float], None] | None = None
):
    """A Keras callback that records every epoch's wall time (it waits for the epoch's results).

    ``report(epoch, seconds)``, if given, is called after each epoch (epochs counted from 1): a
    progress line for long runs, such as the speed ladder's XLA rung on a CPU.
    """
    import keras

    class EpochTimer(keras.callbacks.Callback):
        def __init__(self) -> None:
            super().__init__()
            self.times: list[float] = []
            self._start = 0.0

        def on_epoch_begin(self, epoch, logs=None):
            self._start = clock()

        def on_epoch_end(self, epoch, logs=None):
            for value in (logs or {}).values():  # reading the results waits for the device to finish
                float(value)
            self.times.append(clock() - self._start)
            if report is not None:
                report(epoch + 1, self.times[-1])

    return EpochTimer()


def steady_state(times: Sequence[float], warmup_epochs: int = 1) -> tuple[list[float], list[float], float]:
    """Split epoch times into (warm-up, steady) and return the steady median."""
    if len(times) <= warmup_epochs:
        raise ValueError(f"{len(times)} epoch(s) timed: need more than the {warmup_epochs} warm-up epoch(s)")
    warm, steady = list(times[:warmup_epochs]), list(times[warmup_epochs:])
    return warm, steady, float(statistics.median(steady))


# --------------------------------------------------------------------------- the input, two ways

def blog_arrays(images: np.ndarray) -> np.ndarray:
    """The blog post's preprocessing, kept as written: reshape to (n, 28, 28, 1) and ``/ 255.0`` (float64)."""
    return images.reshape((len(images), 28, 28, 1)) / 255.0


def to_float_image(image, label):
    """uint8 image (28, 28) -> float32 (28, 28, 1) in [0, 1]; the label passes through."""
    import tensorflow as tf

    return tf.expand_dims(tf.cast(image, tf.float32) / 255.0, -1), label


def image_dataset(
    images: np.ndarray,
    labels: np.ndarray,
    *,
    batch_size: int,
    shuffle: bool = False,
    seed: int = 0,
    cache: bool = True,
    prefetch: bool = True,
    drop_remainder: bool = False,
):
    """A batched ``tf.data.Dataset`` of (float32 image, label) from uint8 arrays.

    ``shuffle=True`` reshuffles every epoch (as ``fit`` does with arrays), from ``seed``.
    The source tensors are created on the CPU: tf.data runs there whatever device the
    model trains on. ``drop_remainder=True`` drops a last partial batch, so every batch has
    one shape - what XLA wants, since it compiles one program per input shape.
    """
    import tensorflow as tf

    if len(images) != len(labels):
        raise ValueError(f"{len(images)} images but {len(labels)} labels")
    with tf.device("/CPU:0"):
        ds = tf.data.Dataset.from_tensor_slices((images, labels))
        ds = ds.map(to_float_image, num_parallel_calls=tf.data.AUTOTUNE)
        if cache:
            ds = ds.cache()
        if shuffle:
            ds = ds.shuffle(len(images), seed=seed, reshuffle_each_iteration=True)
        ds = ds.batch(batch_size, drop_remainder=drop_remainder)
        if prefetch:
            ds = ds.prefetch(tf.data.AUTOTUNE)
    return ds


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
