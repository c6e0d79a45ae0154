"""The speed ladder of `course bench cnn` and the mixed-precision rule: warm-up excluded, the device forced."""

from __future__ import annotations

from dataclasses import asdict, fields

import numpy as np
import pytest

from course_utils import speed
from course_utils.speed import Config, Result

AMD_FLAGS = "processor\t: 0\nflags\t\t: fpu sse avx2 avx512f avx512_bf16 avx512_vnni\n"


def tiny(n: int = 96, seed: int = 0):
    rng = np.random.default_rng(seed)
    return rng.integers(0, 256, size=(n, 28, 28), dtype=np.uint8), rng.integers(0, 10, size=n)


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
    assert policy is None and "runs slower without it" in reason and "avx512_bf16" not in reason


# (name as tf.config.experimental.get_device_details reports it, compute capability, the policy to try)
GPUS = [
    ("Tesla V100-SXM2-16GB", (7, 0), "mixed_float16"),  # Volta: the first Tensor Cores, float16 only
    ("Tesla T4", (7, 5), "mixed_float16"),  # Colab's and Kaggle's GPU
    ("NVIDIA GeForce RTX 2080", (7, 5), "mixed_float16"),
    ("NVIDIA GeForce GTX 1660 Ti", (7, 5), None),  # Turing without Tensor Cores (TU116)
    ("NVIDIA GeForce GTX 1650", (7, 5), None),  # (TU117)
    ("NVIDIA A100-SXM4-40GB", (8, 0), "mixed_bfloat16"),
    ("NVIDIA GeForce RTX 3060", (8, 6), "mixed_bfloat16"),
    ("NVIDIA H100 80GB HBM3", (9, 0), "mixed_bfloat16"),
    ("NVIDIA GeForce GTX 1080", (6, 1), None),  # Pascal: before Tensor Cores
]


@pytest.mark.parametrize(("name", "cc", "policy"), GPUS)
def test_gpu_policy_bfloat16_from_8_0_float16_on_tensor_cores_before_none_without(name, cc, policy):
    assert speed.tensor_cores(name, cc) is (policy is not None)
    chosen, reason = speed.gpu_policy(name, cc)
    assert chosen == policy
    assert name in reason and f"{cc[0]}.{cc[1]}" in reason
    if policy is None:
        assert "no Tensor Cores" in reason and "save memory but not time" in reason
    elif policy == "mixed_float16":
        assert "Model.fit" in reason and "LossScaleOptimizer" in reason
    else:
        assert "needs no loss scaling" in reason


@pytest.mark.parametrize("name", ["NVIDIA GeForce GTX 1660 SUPER", "NVIDIA GeForce GTX 1650 Ti with Max-Q Design",
                                  "nvidia geforce  gtx 1650 super", "NVIDIA GeForce GTX 1630"])
def test_every_gtx_16_card_is_turing_without_tensor_cores(name):
    assert not speed.tensor_cores(name, (7, 5))
    assert speed.gpu_policy(name, (7, 5))[0] is None


def test_tensor_cores_need_a_known_compute_capability_of_7_0():
    assert speed.tensor_cores("Quadro RTX 6000", (7, 5)) and speed.tensor_cores("NVIDIA GeForce RTX 2060", [7, 5])
    assert not speed.tensor_cores("Tesla P100-PCIE-16GB", (6, 0)) and not speed.tensor_cores(None, None)
    policy, reason = speed.gpu_policy(None, None)
    assert policy is None and "compute capability unknown" in reason


def fake_gpu(monkeypatch, details):
    """TensorFlow sees one physical GPU with ``details``, as get_device_details would report them."""
    import tensorflow as tf

    gpu = tf.config.PhysicalDevice(name="/physical_device:GPU:0", device_type="GPU")
    monkeypatch.setattr(tf.config, "list_physical_devices", lambda kind=None: [gpu] if kind in (None, "GPU") else [])
    monkeypatch.setattr(tf.config.experimental, "get_device_details", lambda device: details if device == gpu else {})


@pytest.mark.parametrize(("name", "cc", "policy"), GPUS)
def test_mixed_precision_policy_reads_the_gpu_tensorflow_reports(monkeypatch, name, cc, policy):
    fake_gpu(monkeypatch, {"device_name": name, "compute_capability": cc})
    chosen, reason = speed.mixed_precision_policy("/GPU:0")
    assert chosen == policy and name in reason
    assert speed.mixed_precision_policy("/GPU:1") == (None, "no /GPU:1 visible")


def test_the_ladder_on_a_fake_gpu_follows_its_tensor_cores(monkeypatch):
    fake_gpu(monkeypatch, {"device_name": "NVIDIA GeForce RTX 3060", "compute_capability": (8, 6)})
    configs, _ = speed.ladder("/GPU:0")
    assert [c.name for c in configs][-2:] == ["mixed precision (bfloat16)", "XLA + bfloat16"]
    fake_gpu(monkeypatch, {"device_name": "NVIDIA GeForce GTX 1660 Ti", "compute_capability": (7, 5)})
    configs, reason = speed.ladder("/GPU:0")
    assert all(c.precision == "float32" for c in configs) and "no Tensor Cores" in reason


def test_ladder_changes_one_thing_per_rung():
    configs, _ = speed.ladder("/CPU:0", flags={"amx_bf16"})
    names = [c.name for c in configs]
    assert names == [
        "as in the blog post",
        f"batch {speed.COURSE_BATCH}",
        "tf.data cache+prefetch",
        "mixed precision (bfloat16)",
        "XLA + bfloat16",
    ]
    first = configs[0]
    assert (first.batch_size, first.input, first.precision, first.jit_compile) == (32, "numpy", "float32", False)
    changed = []
    for before, after in zip(configs, configs[1:], strict=False):
        diff = {f.name for f in fields(Config) if getattr(before, f.name) != getattr(after, f.name)} - {"name", "note"}
        changed.append(diff)
    assert changed == [{"batch_size", "learning_rate"}, {"input"}, {"precision"}, {"jit_compile"}]


def test_ladder_without_bfloat16_skips_mixed_precision():
    configs, reason = speed.ladder("/CPU:0", flags={"avx2", "avx512_bf16"})
    assert [c.name for c in configs][-2:] == ["tf.data cache+prefetch", "XLA"]
    assert all(c.precision == "float32" for c in configs) and "no AMX" in reason


def test_ladder_measures_a_policy_asked_for_or_none():
    """MIXED_PRECISION in notebook 05: a policy name runs the rung against the guide's rule, None skips it."""
    configs, reason = speed.ladder("/CPU:0", flags={"avx2"}, policy="mixed_bfloat16")
    assert [c.name for c in configs][-2:] == ["mixed precision (bfloat16)", "XLA + bfloat16"]
    assert "as asked" in reason and "no AMX" in reason
    configs, reason = speed.ladder("/CPU:0", flags={"amx_bf16"}, policy=None)
    assert all(c.precision == "float32" for c in configs) and "off, as asked" in reason
    from course_utils.core.errors import ParameterError

    with pytest.raises(ParameterError, match="not understood"):
        speed.ladder("/CPU:0", flags={"avx2"}, policy="bfloat16")


def test_dtype_policy_is_reset_even_after_an_error():
    import keras

    with pytest.raises(RuntimeError), speed.dtype_policy("mixed_bfloat16"):
        assert keras.mixed_precision.global_policy().name == "mixed_bfloat16"
        raise RuntimeError("boom")
    assert keras.mixed_precision.global_policy().name == "float32"


def fake_clock(epoch_lengths):
    """A clock for the epoch timer: begin/end pairs that make each epoch last the given time."""
    ticks, now = [], 0.0
    for length in epoch_lengths:
        ticks += [now, now + length]
        now += length + 0.5
    it = iter(ticks)
    return lambda: next(it)


def test_benchmark_excludes_the_warmup_epoch_and_reports_the_median():
    import keras

    train, test = tiny(96), tiny(40, seed=1)
    config = Config("tiny bf16", 32, "tf.data", precision="mixed_bfloat16")
    result = speed.benchmark(config, train, test, epochs=4, clock=fake_clock([100.0, 2.0, 4.0, 3.0]))
    assert result.warmup_s == [100.0] and result.steady_epoch_s == [2.0, 4.0, 3.0]
    assert result.epoch_s == 3.0 and result.images_per_s == pytest.approx(96 / 3.0)
    assert result.weights_device.endswith("CPU:0") and result.device == "/CPU:0"
    assert 0.0 <= result.test_accuracy <= 1.0 and result.images == 96
    assert keras.mixed_precision.global_policy().name == "float32", "the policy does not leak into what follows"


def test_progress_says_each_rung_and_each_epoch():
    lines: list[str] = []
    configs = [speed.baseline_config(), Config("tiny tf.data", 32, "tf.data")]
    results = speed.run_ladder(tiny(64), tiny(32, seed=1), epochs=3, configs=configs, progress=lines.append)
    assert lines[0] == "rung 1/2: as in the blog post (batch 32, float64 NumPy input (loss fixed))"
    assert lines[1].startswith("    epoch 1/3: ") and lines[1].endswith(" s (warm-up, not timed)")
    assert lines[2].startswith("    epoch 2/3: ") and "warm-up" not in lines[2]
    assert lines[4] == f"    {results[0].images_per_s:,.0f} images/s, test accuracy {results[0].test_accuracy:.4f}"
    assert lines[5] == "rung 2/2: tiny tf.data (float32)" and len(lines) == 10


def test_benchmark_numpy_input_and_its_result_structure():
    result = speed.benchmark(speed.baseline_config(), tiny(64), tiny(32, seed=1), epochs=2)
    row = asdict(result)
    for key in ("name", "device", "batch_size", "images_per_s", "epoch_s", "test_accuracy"):
        assert key in row
    assert row["input"] == "numpy" and row["batch_size"] == 32 and len(row["steady_epoch_s"]) == 1
    assert row["images_per_s"] > 0 and row["epoch_s"] > 0


def test_xla_trains_whole_batches_only_and_counts_what_it_trained():
    config = Config("xla", 32, "tf.data", jit_compile=True)
    result = speed.benchmark(config, tiny(100), tiny(32, seed=1), epochs=2)
    assert result.images == 96 and result.jit_compile
    assert result.images_per_s == pytest.approx(96 / result.epoch_s)


def test_benchmark_needs_an_epoch_after_warmup():
    from course_utils.core.errors import ParameterError

    with pytest.raises(ParameterError, match="warm-up"):
        speed.benchmark(speed.baseline_config(), tiny(32), tiny(32), epochs=1)


def result(name, images_per_s, accuracy):
    return Result(
        name, "/CPU:0", 32, images_per_s, 1.0, accuracy, [2.0], [1.0], 100, "numpy", "float32", False, 1e-3, "CPU:0"
    )


def test_summarize_best_must_keep_the_baseline_accuracy():
    report = speed.summarize([result("baseline", 100, 0.980), result("fast", 300, 0.976), result("faster", 900, 0.970)])
    assert report["best"] == "fast" and report["speedup_best_vs_baseline"] == pytest.approx(3.0)
    assert [c["keeps_accuracy"] for c in report["configs"]] == [True, True, False]
    assert report["configs"][2]["speedup_vs_baseline"] == pytest.approx(9.0)
    assert speed.summarize([result("baseline", 100, 0.9), result("slow", 50, 0.95)])["best"] == "baseline"
