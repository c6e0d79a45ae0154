"""The mixed-precision rule of notebook 05: Tensor Cores on a GPU, AMX on a CPU."""

from __future__ import annotations

import pytest

from course_utils.lessons.nb05 import speed

AMD_FLAGS = "processor\t: 0\nflags\t\t: fpu sse avx2 avx512f avx512_bf16 avx512_vnni\n"


def test_cpu_flags_and_amx_detection():
    flags = speed.cpu_flags(AMD_FLAGS)
    assert {"avx512f", "avx512_bf16"} <= flags
    assert "amx_bf16" not in flags
    assert speed.cpu_flags("no flags here") == set()


def test_mixed_precision_on_the_cpu_follows_the_guide_amx_only():
    """The guide names AMX for CPUs and says mixed_bfloat16 is slower without it: AVX512-BF16 alone is no exception."""
    policy, reason = speed.mixed_precision_policy("/CPU:0", flags={"avx512f", "amx_bf16", "amx_tile"})
    assert policy == "mixed_bfloat16" and "AMX" in reason
    policy, reason = speed.mixed_precision_policy("/CPU:0", flags=speed.cpu_flags(AMD_FLAGS))
    assert policy is None and "no AMX" in reason and "avx512_bf16" in reason
    policy, reason = speed.mixed_precision_policy("/CPU:0", flags={"avx2"})
    assert policy is None and "avx512_bf16" not in reason


# (name as tf.config.experimental.get_device_details reports it, compute capability, the policy to try)
GPUS = [
    ("Tesla V100-SXM2-16GB", (7, 0), "mixed_float16"),  # Volta: the first Tensor Cores, float16 only
    ("Tesla T4", (7, 5), "mixed_float16"),  # Colab's and Kaggle's GPU
    ("NVIDIA GeForce GTX 1660 Ti", (7, 5), None),  # Turing without Tensor Cores (TU116)
    ("nvidia geforce  gtx 1630", (7, 5), None),  # the GTX 16 series, however the name is spelled (TU117)
    ("NVIDIA A100-SXM4-40GB", (8, 0), "mixed_bfloat16"),
    ("NVIDIA GeForce GTX 1080", (6, 1), None),  # Pascal: before Tensor Cores
]


def test_tensor_cores_need_a_known_compute_capability_of_7_0():
    assert speed.tensor_cores("NVIDIA GeForce RTX 2060", [7, 5]) and not speed.tensor_cores(None, None)
    policy, reason = speed.gpu_policy(None, None)
    assert policy is None and "compute capability unknown" in reason


def fake_gpu(monkeypatch, details):
    """TensorFlow sees one physical GPU with ``details``, as get_device_details would report them."""
    import tensorflow as tf

    gpu = tf.config.PhysicalDevice(name="/physical_device:GPU:0", device_type="GPU")
    monkeypatch.setattr(tf.config, "list_physical_devices", lambda kind=None: [gpu] if kind in (None, "GPU") else [])
    monkeypatch.setattr(tf.config.experimental, "get_device_details", lambda device: details if device == gpu else {})


@pytest.mark.parametrize(("name", "cc", "policy"), GPUS)
def test_gpu_policy_bfloat16_from_8_0_float16_on_tensor_cores_before_none_without(monkeypatch, name, cc, policy):
    assert speed.tensor_cores(name, cc) is (policy is not None)
    fake_gpu(monkeypatch, {"device_name": name, "compute_capability": cc})
    chosen, reason = speed.mixed_precision_policy("/GPU:0")
    assert (chosen, reason) == speed.gpu_policy(name, cc) and chosen == policy
    assert name in reason and f"{cc[0]}.{cc[1]}" in reason
    assert (policy is None) == ("no Tensor Cores" in reason), "said apart from an unknown compute capability"
    assert speed.mixed_precision_policy("/GPU:1") == (None, "no /GPU:1 visible")
