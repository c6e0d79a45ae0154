"""``distribute.training``: the custom loop notebook 07 shows and its workers run, float16 loss scaling included."""

from __future__ import annotations

import pytest

from course_utils.distribute import training

from .test_distribute import TWO_CPUS


def test_run_epoch_averages_the_loss_over_steps_and_counts_accuracy_over_images():
    results = iter([(2.0, 30.0), (4.0, 50.0)])
    seen = []
    loss, accuracy = training.run_epoch(lambda batches: next(results), iter(()), 2, 64, seen.append)
    assert loss == 3.0 and accuracy == 80 / 128 and seen == [0, 1]


def test_run_epoch_stops_at_an_error_in_after_step():
    calls = []

    def after_step(step):
        if step == 1:
            raise RuntimeError("stop here")

    with pytest.raises(RuntimeError, match="stop here"):
        training.run_epoch(lambda b: calls.append(b) or (1.0, 1.0), iter(()), 5, 8, after_step)
    assert len(calls) == 2


# A part of the split_cpu_child process (conftest.py), after the CPU split of test_distribute.py's part.
PLAIN_TAPE_STEP = TWO_CPUS + """
    from course_utils.distribute import training
    y = rng.integers(0, 10, 64).astype("uint8")
    initial = build_blog_cnn(logits=True).get_weights()

    # one plain step, no strategy
    model = build_blog_cnn(logits=True)
    model.set_weights(initial)
    optimizer = keras.optimizers.SGD(0.1)
    with tf.GradientTape() as tape:
        logits = model(x, training=True)
        loss = keras.losses.SparseCategoricalCrossentropy(from_logits=True)(y, logits)
    optimizer.apply_gradients(zip(tape.gradient(loss, model.trainable_variables), model.trainable_variables))
    plain_loss, plain = float(loss), model.get_weights()
    plain_correct = int((np.argmax(logits.numpy(), axis=1) == y).sum())

    strategy = tf.distribute.MirroredStrategy(devices)
    with strategy.scope():
        model = build_blog_cnn(logits=True)
        model.set_weights(initial)
        optimizer = keras.optimizers.SGD(0.1)
    step = training.make_train_step(strategy, model, optimizer, 64)
    batches = training.distribute_batches(strategy, tf.data.Dataset.from_tensor_slices((x, y)).batch(64))
    shares = [int(t.shape[0]) for t in strategy.experimental_local_results(next(batches)[0])]
    batches = training.distribute_batches(strategy, tf.data.Dataset.from_tensor_slices((x, y)).batch(64))
    loss, correct = step(batches)
    diff = max(float(np.abs(a - b).max()) for a, b in zip(plain, model.get_weights()))

    # an optimizer with state (Adam), not built beforehand: two steps run and move the weights
    with strategy.scope():
        adam_model = build_blog_cnn(logits=True)
        adam_model.set_weights(initial)
        adam = keras.optimizers.Adam(1e-3)
    adam_step = training.make_train_step(strategy, adam_model, adam, 32)
    repeated = training.distribute_batches(strategy, tf.data.Dataset.from_tensor_slices((x, y)).batch(32).repeat())
    adam_loss, _ = training.run_epoch(adam_step, repeated, 2, 32)
    adam_moved = max(float(np.abs(a - b).max()) for a, b in zip(initial, adam_model.get_weights()))
    moved = max(float(np.abs(a - b).max()) for a, b in zip(initial, plain))
    return {"replicas": strategy.num_replicas_in_sync, "shares": shares, "loss": [plain_loss, float(loss)],
            "correct": [plain_correct, float(correct)], "diff": diff, "moved": moved,
            "adam": [adam_loss, adam_moved, int(adam.iterations.numpy())]}
"""


def test_two_replicas_take_the_step_a_plain_gradient_tape_takes(split_cpu_child):
    # The loop's claim: loss averaged over the GLOBAL batch on each replica, gradients summed by the
    # all-reduce, is exactly one ordinary step on the whole batch.
    out = split_cpu_child["plain_tape_step"]
    assert out["replicas"] == 2 and out["shares"] == [32, 32]
    assert out["loss"][1] == pytest.approx(out["loss"][0], rel=1e-5)
    assert out["correct"][1] == out["correct"][0]
    assert out["moved"] > 1e-3 and out["diff"] < 1e-5
    adam_loss, adam_moved, adam_steps = out["adam"]
    assert adam_loss > 0 and adam_moved > 1e-4 and adam_steps == 2


@pytest.mark.parametrize("policy", ["float32", "mixed_bfloat16"])
def test_loop_optimizer_leaves_the_optimizer_alone_without_float16(policy):
    # bfloat16 has float32's exponent range: its gradients do not underflow, so no loss scaling.
    optimizer = object()
    assert training.loop_optimizer(optimizer, policy) is optimizer


# A part of the split_cpu_child process (conftest.py): the loop on two replicas under mixed_float16.
# The loss is made 2**17 times smaller (averaged over a "global batch" of 64 * 2**17 images) and the
# learning rate 2**17 times larger: the same step in float32, but gradients below float16's smallest
# number (about 6e-8), as small gradients late in training are. Without loss scaling they round to zero.
MIXED_FLOAT16_STEP = TWO_CPUS + """
    from course_utils.distribute import training
    y = rng.integers(0, 10, 64).astype("int32")
    initial = build_blog_cnn(logits=True).get_weights()
    shrink = 2**17
    strategy = tf.distribute.MirroredStrategy(devices)
    data = tf.data.Dataset.from_tensor_slices((x, y)).batch(64).repeat()

    def loop(policy, wrap=True):
        # two steps of the course's loop under ``policy``; the global policy is float32 again afterwards
        keras.mixed_precision.set_global_policy(policy)
        try:
            with strategy.scope():
                model = build_blog_cnn(logits=True)
                model.set_weights(initial)
                optimizer = keras.optimizers.SGD(0.1 * shrink)
                if wrap:
                    optimizer = training.loop_optimizer(optimizer)
            step = training.make_train_step(strategy, model, optimizer, 64 * shrink)
            loss, _ = training.run_epoch(step, training.distribute_batches(strategy, data), 2, 64 * shrink)
        finally:
            keras.mixed_precision.set_global_policy("float32")
        return optimizer, loss, [w - w0 for w, w0 in zip(model.get_weights(), initial)]

    def plain_float16_without_scaling():
        # the same two steps written plainly, float16 but no loss scaling: what the loop must not do
        keras.mixed_precision.set_global_policy("mixed_float16")
        try:
            model = build_blog_cnn(logits=True)
            model.set_weights(initial)
            optimizer = keras.optimizers.SGD(0.1 * shrink)
            loss_fn = keras.losses.SparseCategoricalCrossentropy(from_logits=True)
            for _ in range(2):
                with tf.GradientTape() as tape:
                    loss = loss_fn(y, model(x, training=True)) / shrink
                grads = tape.gradient(loss, model.trainable_variables)
                optimizer.apply_gradients(zip(grads, model.trainable_variables))
        finally:
            keras.mixed_precision.set_global_policy("float32")
        return [w - w0 for w, w0 in zip(model.get_weights(), initial)]

    def off_by(moved, reference):
        # the largest difference between two weight updates, relative to the reference's largest change
        return max(float(np.abs(a - b).max()) for a, b in zip(moved, reference)) / max(
            float(np.abs(r).max()) for r in reference)

    f32_optimizer, f32_loss, f32_moved = loop("float32")
    f16_optimizer, f16_loss, f16_moved = loop("mixed_float16")
    try:
        loop("mixed_float16", wrap=False)
        refused = None
    except ValueError as error:
        refused = str(error)
    return {
        "float32": [type(f32_optimizer).__name__, f32_loss, max(float(np.abs(m).max()) for m in f32_moved)],
        "float16": [type(f16_optimizer).__name__, f16_loss, int(f16_optimizer.iterations.numpy()),
                    float(f16_optimizer.dynamic_scale.numpy()), bool(all(np.isfinite(m).all() for m in f16_moved)),
                    max(float(np.abs(m).max()) for m in f16_moved)],
        "scaled_off_by": off_by(f16_moved, f32_moved),
        "unscaled_off_by": off_by(plain_float16_without_scaling(), f32_moved),
        "refused": refused,
    }
"""


def test_float16_loop_scales_the_loss_and_takes_the_float32_step(split_cpu_child):
    out = split_cpu_child["mixed_float16_step"]
    name, f32_loss, f32_moved = out["float32"]
    assert name == "SGD", "float32: the optimizer is not wrapped"
    assert f32_moved > 1e-3
    name, f16_loss, steps, scale, finite, f16_moved = out["float16"]
    assert name == "LossScaleOptimizer"
    assert steps == 2 and scale == 2.0**15, "both steps applied: no overflow, no step skipped"
    assert finite and f16_moved > 1e-3, "the weights moved and stayed finite"
    assert f16_loss == pytest.approx(f32_loss, rel=1e-2), "the loss is reported unscaled"
    # The emulation bites: float16 without loss scaling loses the small gradients, so its step is far
    # from float32's; the loop's scaled step stays within float16's rounding of it.
    assert out["unscaled_off_by"] > 0.5
    assert out["scaled_off_by"] < 0.2
    assert "loop_optimizer" in out["refused"], "make_train_step refuses float16 without loss scaling"
