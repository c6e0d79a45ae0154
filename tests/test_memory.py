"""notebook.peak_gpu_mib: the GPU's peak a record keeps - None before the runtime starts or without a GPU (mocked)."""

from __future__ import annotations

import pytest

from course_utils import notebook as memory


def test_no_peak_before_the_runtime_starts(monkeypatch):
    """Asking would start TensorFlow's runtime and fix a device split the notebook has not made yet."""
    def no_tensorflow():
        raise AssertionError("peak_gpu_mib touched TensorFlow before its runtime started")

    # patched where peak_gpu_mib looks them up: course_utils.notebook
    monkeypatch.setattr(memory, "runtime_initialized", lambda: False)
    monkeypatch.setattr(memory, "quiet_tensorflow", no_tensorflow)
    assert memory.peak_gpu_mib() is None


@pytest.mark.parametrize(("visible", "peak"), [(0, None), (1, 300.0)], ids=["no-gpu", "one-gpu"])
def test_the_peak_of_the_first_gpu_in_mib_once_the_runtime_started(monkeypatch, visible, peak):
    import tensorflow as tf

    def get_memory_info(name):
        if name != "GPU:0":
            raise ValueError(f"No matching devices found for '{name}'")
        return {"current": 100 * 2**20, "peak": 300.04 * 2**20}

    gpus = [tf.config.PhysicalDevice(name="/physical_device:GPU:0", device_type="GPU")][:visible]
    monkeypatch.setattr(memory, "runtime_initialized", lambda: True)
    monkeypatch.setattr(tf.config, "get_visible_devices", lambda kind=None: gpus)
    monkeypatch.setattr(tf.config.experimental, "get_memory_info", get_memory_info)
    assert memory.peak_gpu_mib() == peak
