"""The speed ladder of `course bench cnn`: epochs timed with warm-up excluded, the input two ways, the device forced,
one change per rung, and the best rung the fastest that keeps the baseline's accuracy."""

from __future__ import annotations

from dataclasses import asdict, fields

import numpy as np
import pytest

from course_utils.tools.bench import ladder as bench
from course_utils.tools.bench.ladder import Config, Result

from ..test_speed import fake_gpu


def tiny(n: int = 96, seed: int = 0):
    rng = np.random.default_rng(seed)
    return rng.integers(0, 256, size=(n, 28, 28), dtype=np.uint8), rng.integers(0, 10, size=n)


def test_steady_state_excludes_warmup():
    warm, steady, median = bench.steady_state([10.0, 1.0, 3.0, 2.0])
    assert warm == [10.0] and steady == [1.0, 3.0, 2.0] and median == 2.0
    with pytest.raises(ValueError, match="warm-up"):
        bench.steady_state([1.0])


def test_epoch_timer_records_one_time_per_epoch_from_its_clock():
    import keras

    ticks = iter([0.0, 5.0, 10.0, 12.0, 20.0, 23.0])
    timer = bench.epoch_timer(clock=lambda: next(ticks))
    model = keras.Sequential([keras.Input((4,)), keras.layers.Dense(1)])
    model.compile(optimizer="sgd", loss="mse")
    x = np.zeros((8, 4), "float32")
    model.fit(x, np.zeros((8, 1), "float32"), epochs=3, verbose=0, callbacks=[timer])
    assert timer.times == [5.0, 2.0, 3.0]


def test_epoch_timer_reports_each_epoch_as_it_ends():
    import keras

    ticks = iter([0.0, 5.0, 10.0, 12.0])
    seen = []
    timer = bench.epoch_timer(clock=lambda: next(ticks), report=lambda epoch, s: seen.append((epoch, s)))
    model = keras.Sequential([keras.Input((4,)), keras.layers.Dense(1)])
    model.compile(optimizer="sgd", loss="mse")
    model.fit(np.zeros((8, 4), "float32"), np.zeros((8, 1), "float32"), epochs=2, verbose=0, callbacks=[timer])
    assert seen == [(1, 5.0), (2, 2.0)] and timer.times == [5.0, 2.0]


def images_and_labels(n: int = 50):
    rng = np.random.default_rng(0)
    return rng.integers(0, 256, size=(n, 28, 28), dtype=np.uint8), np.arange(n) % 10


def collect(ds):
    xs, ys = zip(*[(x.numpy(), y.numpy()) for x, y in ds], strict=True)
    return np.concatenate(xs), np.concatenate(ys)


def test_blog_arrays_are_float64_as_written():
    images, _ = images_and_labels(4)
    x = bench.blog_arrays(images)
    assert x.dtype == np.float64 and x.shape == (4, 28, 28, 1)
    np.testing.assert_allclose(x[..., 0], images / 255.0)


def test_pipeline_yields_float32_batches_in_order_without_shuffle():
    images, labels = images_and_labels()
    ds = bench.image_dataset(images, labels, batch_size=16)
    first_x, first_y = next(iter(ds))
    assert first_x.shape == (16, 28, 28, 1) and first_x.dtype.name == "float32"
    x, y = collect(ds)
    np.testing.assert_array_equal(y, labels)
    np.testing.assert_allclose(x[..., 0], images / 255.0, rtol=1e-6)


def test_shuffle_reshuffles_every_epoch_and_keeps_pairs():
    images, labels = images_and_labels()
    ds = bench.image_dataset(images, labels, batch_size=8, shuffle=True, seed=1)
    (x1, y1), (x2, y2) = collect(ds), collect(ds)
    assert not np.array_equal(y1, y2), "a new order every epoch"
    assert sorted(y1) == sorted(y2) == sorted(labels)
    for x, y in ((x1, y1), (x2, y2)):  # every image still has its own label
        index = [int(np.argmin(np.abs(images / 255.0 - img[..., 0]).sum(axis=(1, 2)))) for img in x]
        np.testing.assert_array_equal(labels[index], y)


def test_without_cache_and_prefetch_the_data_is_the_same():
    images, labels = images_and_labels()
    plain = collect(bench.image_dataset(images, labels, batch_size=16, cache=False, prefetch=False))
    fast = collect(bench.image_dataset(images, labels, batch_size=16))
    np.testing.assert_array_equal(plain[0], fast[0])


def test_mismatched_lengths_are_refused():
    images, labels = images_and_labels()
    with pytest.raises(ValueError, match="labels"):
        bench.image_dataset(images, labels[:3], batch_size=4)


def test_drop_remainder_keeps_one_batch_shape():
    images, labels = images_and_labels(50)
    shapes = {tuple(x.shape) for x, _ in bench.image_dataset(images, labels, batch_size=16, drop_remainder=True)}
    assert shapes == {(16, 28, 28, 1)}
    assert len(collect(bench.image_dataset(images, labels, batch_size=16, drop_remainder=True))[1]) == 48


def test_the_ladder_on_a_fake_gpu_follows_its_tensor_cores(monkeypatch):
    fake_gpu(monkeypatch, {"device_name": "NVIDIA GeForce RTX 3060", "compute_capability": (8, 6)})
    configs, _ = bench.ladder("/GPU:0")
    assert [c.name for c in configs][-2:] == ["mixed precision (bfloat16)", "XLA + bfloat16"]
    fake_gpu(monkeypatch, {"device_name": "NVIDIA GeForce GTX 1660 Ti", "compute_capability": (7, 5)})
    configs, reason = bench.ladder("/GPU:0")
    assert all(c.precision == "float32" for c in configs) and "no Tensor Cores" in reason


def test_ladder_changes_one_thing_per_rung():
    configs, _ = bench.ladder("/CPU:0", flags={"amx_bf16"})
    names = [c.name for c in configs]
    assert names == [
        "as in the blog post",
        f"batch {bench.COURSE_BATCH}",
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
    configs, reason = bench.ladder("/CPU:0", flags={"avx2", "avx512_bf16"})
    assert [c.name for c in configs][-2:] == ["tf.data cache+prefetch", "XLA"]
    assert all(c.precision == "float32" for c in configs) and "no AMX" in reason


def test_ladder_measures_a_policy_asked_for_or_none():
    """MIXED_PRECISION in notebook 05: a policy name runs the rung against the guide's rule, None skips it."""
    configs, reason = bench.ladder("/CPU:0", flags={"avx2"}, policy="mixed_bfloat16")
    assert [c.name for c in configs][-2:] == ["mixed precision (bfloat16)", "XLA + bfloat16"]
    assert "as asked" in reason and "no AMX" in reason
    configs, reason = bench.ladder("/CPU:0", flags={"amx_bf16"}, policy=None)
    assert all(c.precision == "float32" for c in configs) and "off, as asked" in reason
    from course_utils.core.errors import ParameterError

    with pytest.raises(ParameterError, match="not understood"):
        bench.ladder("/CPU:0", flags={"avx2"}, policy="bfloat16")


def test_dtype_policy_is_reset_even_after_an_error():
    import keras

    with pytest.raises(RuntimeError), bench.dtype_policy("mixed_bfloat16"):
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
    result = bench.benchmark(config, train, test, epochs=4, clock=fake_clock([100.0, 2.0, 4.0, 3.0]))
    assert result.warmup_s == [100.0] and result.steady_epoch_s == [2.0, 4.0, 3.0]
    assert result.epoch_s == 3.0 and result.images_per_s == pytest.approx(96 / 3.0)
    assert result.weights_device.endswith("CPU:0") and result.device == "/CPU:0"
    assert 0.0 <= result.test_accuracy <= 1.0 and result.images == 96
    assert keras.mixed_precision.global_policy().name == "float32", "the policy does not leak into what follows"


def test_progress_says_each_rung_and_each_epoch():
    lines: list[str] = []
    configs = [bench.baseline_config(), Config("tiny tf.data", 32, "tf.data")]
    results = bench.run_ladder(tiny(64), tiny(32, seed=1), epochs=3, configs=configs, progress=lines.append)
    assert lines[0] == "rung 1/2: as in the blog post (batch 32, float64 NumPy input (loss fixed))"
    assert lines[1].startswith("    epoch 1/3: ") and lines[1].endswith(" s (warm-up, not timed)")
    assert lines[2].startswith("    epoch 2/3: ") and "warm-up" not in lines[2]
    assert lines[4] == f"    {results[0].images_per_s:,.0f} images/s, test accuracy {results[0].test_accuracy:.4f}"
    assert lines[5] == "rung 2/2: tiny tf.data (float32)" and len(lines) == 10


def test_benchmark_numpy_input_and_its_result_structure():
    result = bench.benchmark(bench.baseline_config(), tiny(64), tiny(32, seed=1), epochs=2)
    row = asdict(result)
    for key in ("name", "device", "batch_size", "images_per_s", "epoch_s", "test_accuracy"):
        assert key in row
    assert row["input"] == "numpy" and row["batch_size"] == 32 and len(row["steady_epoch_s"]) == 1
    assert row["images_per_s"] > 0 and row["epoch_s"] > 0


def test_xla_trains_whole_batches_only_and_counts_what_it_trained():
    config = Config("xla", 32, "tf.data", jit_compile=True)
    result = bench.benchmark(config, tiny(100), tiny(32, seed=1), epochs=2)
    assert result.images == 96 and result.jit_compile
    assert result.images_per_s == pytest.approx(96 / result.epoch_s)


def test_benchmark_needs_an_epoch_after_warmup():
    from course_utils.core.errors import ParameterError

    with pytest.raises(ParameterError, match="warm-up"):
        bench.benchmark(bench.baseline_config(), tiny(32), tiny(32), epochs=1)


def result(name, images_per_s, accuracy):
    return Result(
        name, "/CPU:0", 32, images_per_s, 1.0, accuracy, [2.0], [1.0], 100, "numpy", "float32", False, 1e-3, "CPU:0"
    )


def test_summarize_best_must_keep_the_baseline_accuracy():
    report = bench.summarize([result("baseline", 100, 0.980), result("fast", 300, 0.976), result("faster", 900, 0.970)])
    assert report["best"] == "fast" and report["speedup_best_vs_baseline"] == pytest.approx(3.0)
    assert [c["keeps_accuracy"] for c in report["configs"]] == [True, True, False]
    assert report["configs"][2]["speedup_vs_baseline"] == pytest.approx(9.0)
    assert bench.summarize([result("baseline", 100, 0.9), result("slow", 50, 0.95)])["best"] == "baseline"
