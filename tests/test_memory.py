"""memory: sane, monotone readings; the peak of a block; the background sampler; the GPU paths (mocked)."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
import time
from types import SimpleNamespace

import numpy as np
import pytest

from course_utils import memory
from course_utils.errors import CourseError, DeviceError, ParameterError

MB_200 = 200 * 2**18  # float32 elements in 200 MiB


def hold(elements: int, seconds: float = 0.06) -> None:
    """Allocate and touch ``elements`` float32 values, keep them for ``seconds``, free them."""
    block = np.ones(elements, dtype=np.float32)
    time.sleep(seconds)
    del block


def test_process_memory_is_sane_and_monotone():
    first = memory.process_memory()
    assert first.what == "process resident memory"
    assert 1 < first.current_mib <= first.peak_mib
    hold(MB_200 // 2)
    second = memory.process_memory()
    assert second.peak_mib >= first.peak_mib  # a peak never goes down
    assert second.current_mib <= second.peak_mib
    assert "MiB now, peak" in str(second)


def test_peak_of_a_block_exact_in_a_fresh_process():
    # A fresh small process: 200 MiB is certainly a new high, so the high-water mark gives the exact peak.
    code = textwrap.dedent(
        """
        import json, time, numpy as np
        from course_utils import memory
        with memory.peak_memory() as block:
            a = np.ones(200 * 2**18, dtype=np.float32); time.sleep(0.02); del a
        print(json.dumps({"start": block.start_mib, "peak": block.peak_mib, "end": block.end_mib,
                          "exact": block.exact, "how": block.how, "text": str(block)}))
        """
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    assert out["exact"] is True and "high-water mark rose" in out["how"]
    assert out["peak"] - out["start"] >= 190  # the array is 200 MiB
    assert out["start"] <= out["end"] < out["peak"]  # freed again by the end
    assert "+" in out["text"] and "MiB" in out["text"]


def test_peak_of_a_block_sampled_when_the_process_was_higher_before(monkeypatch):
    monkeypatch.setattr(memory, "peak_rss_mib", lambda: 1e9)  # as if the process had once been huge
    with memory.peak_memory(interval_s=0.002) as block:
        hold(MB_200, seconds=0.08)
    assert block.exact is False and "sampled every 2 ms" in block.how
    assert block.increase_mib >= 150  # sampling may miss the very top, not 50 MiB of it
    assert block.start_mib <= block.peak_mib and block.end_mib <= block.peak_mib


def test_peak_of_a_block_is_filled_in_even_when_the_block_fails():
    with pytest.raises(ZeroDivisionError):
        with memory.peak_memory() as block:
            1 / 0  # noqa: B018
    assert block.peak_mib >= block.start_mib > 0


def test_sampler_records_an_increasing_timeline_with_marks():
    sampler = memory.MemorySampler(interval_s=0.005)
    with sampler:
        kept = []
        for step in range(4):
            kept.append(np.ones(MB_200 // 8, dtype=np.float32))  # 25 MiB more each step
            time.sleep(0.03)
            sampler.mark(f"step {step}")
        del kept
    times = sampler.times_s
    assert len(times) >= 10 and len(times) == len(sampler.rss_mib) and sampler.gpu_mib == []
    assert all(b > a for a, b in zip(times, times[1:], strict=False)), "time only moves forward"
    assert all(v > 0 for v in sampler.rss_mib)
    assert sampler.values_mib is sampler.rss_mib and sampler.what == "process resident memory"
    assert sampler.peak_mib - sampler.rss_mib[0] >= 75  # at least three of the four 25 MiB steps were seen
    assert [label for _, label in sampler.marks] == ["step 0", "step 1", "step 2", "step 3"]
    assert all(times[0] <= t <= times[-1] for t, _ in sampler.marks)
    assert "samples over" in str(sampler)
    sampler.stop()  # stopping twice is harmless


def test_sampler_keras_callback_marks_epochs():
    sampler = memory.MemorySampler(interval_s=0.01).start()
    callback = sampler.keras_callback()
    callback.on_epoch_end(0)
    callback.on_epoch_end(1)
    sampler.stop()
    assert [label for _, label in sampler.marks] == ["epoch 1", "epoch 2"]


def test_sampler_rejects_bad_use():
    with pytest.raises(ParameterError):
        memory.MemorySampler(interval_s=0)
    with pytest.raises(ParameterError):
        memory.MemorySampler(interval_s="fast")
    sampler = memory.MemorySampler(interval_s=0.01).start()
    try:
        with pytest.raises(CourseError, match="already running"):
            sampler.start()
    finally:
        sampler.stop()


def test_sampler_error_is_raised_not_lost(monkeypatch):
    sampler = memory.MemorySampler(interval_s=0.005).start()

    def broken(pid=None):
        raise OSError("cannot read /proc")

    monkeypatch.setattr(memory, "rss_mib", broken)
    time.sleep(0.05)
    with pytest.raises(CourseError, match="cannot read /proc") as info:
        sampler.stop()
    assert isinstance(info.value.__cause__, OSError)


def test_sampler_stops_recording_at_its_cap():
    sampler = memory.MemorySampler(interval_s=0.002, max_samples=5).start()
    time.sleep(0.05)
    sampler.stop()
    assert len(sampler.times_s) == 5 and sampler.truncated
    assert "stopped recording at 5 samples" in str(sampler)


def test_gpu_names():
    assert memory.gpu_name("/GPU:0") == "GPU:0"
    assert memory.gpu_name("/job:localhost/replica:0/task:0/device:GPU:1") == "GPU:1"
    assert memory.gpu_name("gpu:2") == "GPU:2"
    assert memory.is_gpu("/device:GPU:0") and not memory.is_gpu("/CPU:0")
    with pytest.raises(ParameterError):
        memory.gpu_name("/CPU:0")


def test_gpu_memory_without_a_gpu_is_a_course_error():
    import tensorflow as tf

    if tf.config.get_visible_devices("GPU"):
        pytest.skip("this machine has a GPU")
    for call in (memory.gpu_memory, memory.reset_gpu_peak):
        with pytest.raises(DeviceError) as info:
            call("GPU:0")
        assert "TensorFlow sees no GPU" in info.value.what and "process_memory" in info.value.fix
    with pytest.raises(DeviceError):
        memory.MemorySampler("/GPU:0").start()
    assert memory.reading("/CPU:0").what == "process resident memory"


class FakeGpuCounters:
    """Stands in for TensorFlow's GPU memory counters (nothing here has a GPU)."""

    def __init__(self):
        self.current, self.peak, self.resets = 100 * 2**20, 300 * 2**20, 0

    def allocate(self, mib: float) -> None:
        self.current += int(mib * 2**20)
        self.peak = max(self.peak, self.current)

    def free(self, mib: float) -> None:
        self.current -= int(mib * 2**20)

    def get_memory_info(self, name):
        if name != "GPU:0":
            raise ValueError(f"No matching devices found for '{name}'")
        return {"current": self.current, "peak": self.peak}

    def reset_memory_stats(self, name):
        self.resets += 1
        self.peak = self.current


@pytest.fixture
def fake_gpu(monkeypatch):
    import tensorflow as tf

    counters = FakeGpuCounters()
    gpu = tf.config.PhysicalDevice(name="/physical_device:GPU:0", device_type="GPU")
    monkeypatch.setattr(tf.config, "get_visible_devices", lambda kind=None: [gpu])
    monkeypatch.setattr(tf.config, "list_logical_devices", lambda kind=None: [SimpleNamespace(name="/device:GPU:0")])
    monkeypatch.setattr(tf.config.experimental, "get_memory_info", counters.get_memory_info)
    monkeypatch.setattr(tf.config.experimental, "reset_memory_stats", counters.reset_memory_stats)
    return counters


def test_gpu_readings_in_mib(fake_gpu):
    reading = memory.gpu_memory("/GPU:0")
    assert (reading.current_mib, reading.peak_mib) == (100.0, 300.0)
    assert reading.what == "GPU:0 (TensorFlow's allocator)"
    memory.reset_gpu_peak("GPU:0")
    assert memory.gpu_memory().peak_mib == 100.0
    with pytest.raises(DeviceError, match="GPU:3") as info:
        memory.gpu_memory("GPU:3")
    assert "/device:GPU:0" in info.value.what


def test_peak_of_a_block_on_a_gpu_uses_the_reset_counter(fake_gpu):
    with memory.peak_memory("/GPU:0") as block:
        fake_gpu.allocate(64)
        fake_gpu.free(64)
        fake_gpu.allocate(16)
    assert fake_gpu.resets == 1, "the old peak (300 MiB) must not leak into the block"
    assert (block.start_mib, block.peak_mib, block.end_mib) == (100.0, 164.0, 116.0)
    assert block.exact and block.increase_mib == 64.0 and "GPU:0" in block.what


def test_sampler_on_a_gpu_records_gpu_memory(fake_gpu):
    sampler = memory.MemorySampler("/GPU:0", interval_s=0.005).start()
    time.sleep(0.02)
    fake_gpu.allocate(50)
    time.sleep(0.03)
    sampler.stop()
    assert len(sampler.gpu_mib) == len(sampler.times_s) == len(sampler.rss_mib)
    assert sampler.values_mib is sampler.gpu_mib and sampler.gpu_mib[0] == 100.0
    assert sampler.peak_mib == 150.0 and "GPU:0" in sampler.what
