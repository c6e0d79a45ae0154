"""Measure memory: now, over a block of code, and over time - on the GPU or, without one, the process.

- GPU: ``gpu_memory("GPU:0")`` reads TensorFlow's allocator counters
  (``tf.config.experimental.get_memory_info``: ``current`` and ``peak`` bytes in use - not the
  memory TensorFlow has reserved on the card, which ``nvidia-smi`` shows);
  ``reset_gpu_peak`` restarts the peak (``reset_memory_stats``). Both start TensorFlow's
  runtime if it is not running yet, so configure devices (``gpu_config.configure``) first.
- CPU: ``process_memory()`` - the process's resident memory (psutil) and its high-water mark
  (``VmHWM``, via ``system.rss.peak_rss_mib``). TensorFlow documents its memory counters for
  GPUs and TPUs only, so on a CPU the process is what the course measures.
- ``peak_memory(device)``: a context manager; afterwards ``block.peak_mib`` is the peak of
  the block (exact on a GPU; on a CPU exact when the process reached a new high inside the
  block, otherwise the highest of samples taken every few milliseconds).
- ``MemorySampler(device)``: records memory in a background thread while you train, with
  epoch marks from ``sampler.keras_callback()``, for a plot.
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from course_utils.errors import CourseError, DeviceError, ParameterError
from course_utils.i18n import translator
from course_utils.system.rss import peak_rss_mib, rss_mib

MIB = 2**20
_ = translator("course")


@dataclass(frozen=True)
class Reading:
    """One memory reading, in MiB."""

    what: str  # e.g. "GPU:0 (TensorFlow's allocator)" or "process resident memory"
    current_mib: float
    peak_mib: float

    def __str__(self) -> str:
        return _("{what}: {current:.1f} MiB now, peak {peak:.1f} MiB").format(
            what=self.what, current=self.current_mib, peak=self.peak_mib)


def is_gpu(device: str) -> bool:
    """True for a GPU device name: "/GPU:0", "/device:GPU:1", "GPU:0"."""
    return "GPU" in str(device).upper()


def gpu_name(device: str) -> str:
    """The name ``get_memory_info`` wants: "/GPU:0" or "/device:GPU:0" -> "GPU:0"."""
    text = str(device).upper().rsplit("DEVICE:", 1)[-1].lstrip("/")
    if not text.startswith("GPU"):
        raise ParameterError(_("{device!r} is not a GPU device name.").format(device=device),
                             _("Use a name like '/GPU:0' or 'GPU:1'."))
    return text if ":" in text else f"{text}:0"


def process_memory() -> Reading:
    """This process's resident memory now and its peak so far (MiB)."""
    rss = rss_mib()
    # VmHWM and psutil's RSS come from different kernel counters that can differ by a few pages;
    # a peak below the current value would be nonsense, so the peak is at least the current value.
    return Reading(_("process resident memory"), rss, max(peak_rss_mib(), rss))


def _tf_with_gpu(name: str):
    from course_utils.tf_setup import quiet_tensorflow

    tf = quiet_tensorflow()
    if not tf.config.get_visible_devices("GPU"):
        raise DeviceError(
            _("There is no GPU memory to read: TensorFlow sees no GPU, so {name} does not exist.").format(name=name),
            _("On a CPU, measure the process instead: memory.process_memory(), or "
              "memory.peak_memory('/CPU:0') around a block."),
        )
    return tf


def gpu_memory(device: str = "GPU:0") -> Reading:
    """TensorFlow's current and peak memory in use on a (logical) GPU, in MiB. Starts the runtime."""
    name = gpu_name(device)
    tf = _tf_with_gpu(name)
    try:
        info = tf.config.experimental.get_memory_info(name)
    except ValueError as err:
        have = ", ".join(d.name for d in tf.config.list_logical_devices("GPU")) or _("none")
        raise DeviceError(
            _("TensorFlow cannot report memory for {name}: {error} (logical GPUs: {have}).").format(
                name=name, error=err, have=have),
            _("Pass one of the logical GPUs listed, e.g. 'GPU:0'."),
        ) from err
    return Reading(_("{name} (TensorFlow's allocator)").format(name=name), info["current"] / MIB, info["peak"] / MIB)


def peak_gpu_mib(device: str = "GPU:0") -> float | None:
    """The GPU's peak in MiB (as ``gpu_memory``), or None: no such GPU, or TensorFlow's runtime not started yet.

    Asking would start the runtime, and fix the device configuration a notebook may still be about to
    make (notebooks 03 and 07 make theirs after setup), so the record of a run asks only once it has started.
    """
    from course_utils.gpu_config import runtime_initialized

    if not runtime_initialized():
        return None
    try:
        return round(gpu_memory(device).peak_mib, 1)
    except (DeviceError, ValueError, RuntimeError):
        return None


def reset_gpu_peak(device: str = "GPU:0") -> None:
    """Set the GPU's tracked peak to its current use, so the next peak belongs to what follows."""
    name = gpu_name(device)
    tf = _tf_with_gpu(name)
    try:
        tf.config.experimental.reset_memory_stats(name)
    except ValueError as err:
        raise DeviceError(_("TensorFlow cannot reset memory statistics for {name}: {error}.").format(
            name=name, error=err), _("Pass a logical GPU such as 'GPU:0'.")) from err


def reading(device: str) -> Reading:
    """GPU memory for a GPU device name, else the process's memory."""
    return gpu_memory(device) if is_gpu(device) else process_memory()


# --- the peak of a block ---------------------------------------------------------------------------


@dataclass
class BlockMemory:
    """Memory over one ``with peak_memory(...)`` block, in MiB (filled in when the block ends)."""

    device: str
    what: str
    start_mib: float = math.nan
    end_mib: float = math.nan
    peak_mib: float = math.nan
    exact: bool = False
    how: str = ""

    @property
    def increase_mib(self) -> float:
        """How far the block's peak rose above where it started."""
        return self.peak_mib - self.start_mib

    def __str__(self) -> str:
        return _("peak {peak:.1f} MiB ({increase:+.1f} MiB above the {start:.1f} MiB at the start; {end:.1f} MiB at "
                 "the end) - {what}, {how}").format(peak=self.peak_mib, increase=self.increase_mib,
                                                     start=self.start_mib, end=self.end_mib, what=self.what,
                                                     how=self.how)


@contextmanager
def peak_memory(device: str = "/CPU:0", *, interval_s: float = 0.005) -> Iterator[BlockMemory]:
    """Measure the peak memory of a block: GPU memory for a GPU device, else the process's.

    On a GPU the peak is TensorFlow's own counter (reset at the start of the block). On a
    CPU it is the process's high-water mark when that rose inside the block (exact), or else
    the highest resident memory seen by a sampler every ``interval_s`` seconds.
    """
    if is_gpu(device):
        name = gpu_name(device)
        reset_gpu_peak(name)
        block = BlockMemory(device, _("{name} memory in use (TensorFlow's allocator)").format(name=name))
        block.start_mib = gpu_memory(name).current_mib
        try:
            yield block
        finally:
            end = gpu_memory(name)
            block.end_mib = end.current_mib
            block.peak_mib = max(end.peak_mib, block.start_mib, block.end_mib)
            block.exact, block.how = True, _("exact (TensorFlow's peak counter)")
        return
    block = BlockMemory(device, _("process resident memory"))
    block.start_mib = process_memory().current_mib
    high_before = peak_rss_mib()
    sampler = MemorySampler("/CPU:0", interval_s=interval_s)
    sampler.start()
    try:
        yield block
    finally:
        sampler.stop()
        end = process_memory()
        block.end_mib = end.current_mib
        if end.peak_mib > high_before:
            block.peak_mib, block.exact = max([end.peak_mib, *sampler.rss_mib]), True
            block.how = _("exact (the process's high-water mark rose in this block)")
        else:
            block.peak_mib = max([block.start_mib, block.end_mib, *sampler.rss_mib])
            block.how = _("sampled every {ms:g} ms ({count} samples; the process had been higher before, so its "
                          "high-water mark cannot say)").format(ms=interval_s * 1000, count=len(sampler.rss_mib))


# --- memory over time ------------------------------------------------------------------------------


class MemorySampler:
    """Record memory in a background thread: the process's resident memory, plus GPU memory on a GPU.

    ::

        sampler = MemorySampler(course.device.name, interval_s=0.05)
        with sampler:
            model.fit(..., callbacks=[sampler.keras_callback()])
        plt.plot(sampler.times_s, sampler.values_mib)

    An error inside the thread is raised again by ``stop()`` - never lost.
    """

    def __init__(self, device: str = "/CPU:0", *, interval_s: float = 0.05, max_samples: int = 100_000) -> None:
        if isinstance(interval_s, bool) or not isinstance(interval_s, (int, float)) or not interval_s > 0:
            raise ParameterError(_("interval_s={value!r} must be a positive number of seconds.").format(
                value=interval_s), _("Pass e.g. interval_s=0.05 (20 samples a second)."))
        self.device = device
        self.gpu = gpu_name(device) if is_gpu(device) else None
        self.interval_s = float(interval_s)
        self.max_samples = max_samples
        self.times_s: list[float] = []
        self.rss_mib: list[float] = []
        self.gpu_mib: list[float] = []
        self.marks: list[tuple[float, str]] = []
        self.truncated = False
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._error: BaseException | None = None
        self._t0 = 0.0
        self._read_gpu: Any = None

    @property
    def what(self) -> str:
        if self.gpu:
            return _("{name} memory in use (TensorFlow's allocator)").format(name=self.gpu)
        return _("process resident memory")

    @property
    def values_mib(self) -> list[float]:
        """The main series: GPU memory on a GPU, else the process's resident memory."""
        return self.gpu_mib if self.gpu else self.rss_mib

    @property
    def peak_mib(self) -> float:
        return max(self.values_mib) if self.values_mib else math.nan

    def _sample(self) -> None:
        if len(self.times_s) >= self.max_samples:
            self.truncated = True
            return
        now = time.perf_counter() - self._t0
        rss = rss_mib()
        gpu = self._read_gpu() if self._read_gpu else None
        self.times_s.append(now)
        self.rss_mib.append(rss)
        if gpu is not None:
            self.gpu_mib.append(gpu)

    def _run(self) -> None:
        try:
            while not self._stop.wait(self.interval_s):
                self._sample()
        except BaseException as err:  # handed to stop(), which raises it
            self._error = err

    def start(self) -> MemorySampler:
        if self._thread is not None:
            raise CourseError(_("This memory sampler is already running."), _("Call stop() first, or make a new one."))
        if self.gpu:
            gpu_memory(self.gpu)  # checks the GPU exists, with the course's message if not
            tf, name = _tf_with_gpu(self.gpu), self.gpu
            self._read_gpu = lambda: tf.config.experimental.get_memory_info(name)["current"] / MIB
        self._stop.clear()
        self._t0 = time.perf_counter()
        self._sample()
        self._thread = threading.Thread(target=self._run, name="course-memory-sampler", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> MemorySampler:
        """Stop sampling (one last sample is taken); raise what went wrong in the thread, if anything."""
        if self._thread is None:
            return self
        self._stop.set()
        self._thread.join()
        self._thread = None
        if self._error is not None:
            err, self._error = self._error, None
            raise CourseError(
                _("The memory sampler stopped with an error: {type}: {error}").format(
                    type=type(err).__name__, error=err),
                _("The samples up to the error are kept; check the device name passed to MemorySampler."),
            ) from err
        self._sample()
        return self

    def mark(self, label: str) -> None:
        """Note an event (e.g. the end of an epoch) at the current time, for the plot."""
        self.marks.append((time.perf_counter() - self._t0, label))

    def keras_callback(self) -> Any:
        """A Keras callback that marks the end of every epoch on this sampler."""
        import keras

        sampler = self

        class _EpochMarks(keras.callbacks.Callback):
            def on_epoch_end(self, epoch, logs=None):
                sampler.mark(f"epoch {epoch + 1}")

        return _EpochMarks()

    def __enter__(self) -> MemorySampler:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def __str__(self) -> str:
        if not self.times_s:
            return _("MemorySampler({device}): no samples yet").format(device=self.device)
        said = (_("{count} samples over {seconds:.1f} s of {what}: from {first:.1f} to a peak of {peak:.1f} MiB "
                  "(stopped recording at {most} samples)") if self.truncated
                else _("{count} samples over {seconds:.1f} s of {what}: from {first:.1f} to a peak of {peak:.1f} MiB"))
        return said.format(count=len(self.times_s), seconds=self.times_s[-1] - self.times_s[0], what=self.what,
                           first=self.values_mib[0], peak=self.peak_mib, most=self.max_samples)
