"""``distribute.training``: the custom loop notebook 07 shows and its workers run."""

from __future__ import annotations

import pytest

from course_utils.distribute import training


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
PLAIN_TAPE_STEP = """
    import numpy as np
    from course_utils.tf_setup import quiet_tensorflow
    from course_utils.distribute import split_cpu
    tf = quiet_tensorflow()
    devices = split_cpu(tf, 2)
    import keras
    from course_utils.models import build_blog_cnn
    from course_utils.distribute import training
    keras.utils.set_random_seed(0)
    rng = np.random.default_rng(0)
    x = rng.random((64, 28, 28, 1), dtype=np.float32)
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
