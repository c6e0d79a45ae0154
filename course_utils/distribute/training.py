"""The custom training loop of notebook 07's workers, in three small functions a student can read.

``distribute_batches`` gives every replica its share of each global batch, ``make_train_step``
builds one synchronous training step, ``run_epoch`` runs the steps of one epoch. The workers
(``distribute.worker``) use them with ``MultiWorkerMirroredStrategy``; notebook 07 shows their
source and runs them with ``MirroredStrategy`` in its own kernel. They follow TensorFlow's tutorial
"Custom training with tf.distribute.Strategy" (tensorflow.org/tutorials/distribute/custom_training).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any


def distribute_batches(strategy: Any, dataset: Any) -> Iterator[Any]:
    """An iterator over ``dataset`` (batched with the GLOBAL batch) that gives each replica its share.

    Sharding by data: every worker reads the same batches and keeps its own part of each.
    """
    import tensorflow as tf

    options = tf.data.Options()
    options.experimental_distribute.auto_shard_policy = tf.data.experimental.AutoShardPolicy.DATA
    return iter(strategy.experimental_distribute_dataset(dataset.with_options(options)))


def make_train_step(strategy: Any, model: Any, optimizer: Any, global_batch: int) -> Callable[[Any], Any]:
    """One training step on every replica at once; returns the step's summed loss and correct answers.

    ``model`` and ``optimizer`` must be created inside ``strategy.scope()``.
    """
    import keras
    import tensorflow as tf

    if not optimizer.built:
        with strategy.scope():
            optimizer.build(model.trainable_variables)  # its variables must exist before the step is traced

    per_example_loss = keras.losses.SparseCategoricalCrossentropy(from_logits=True, reduction=None)

    def replica_step(inputs):
        images, labels = inputs
        with tf.GradientTape() as tape:
            logits = model(images, training=True)
            # Average over the GLOBAL batch: the all-reduce then SUMS the replicas' gradients.
            losses = per_example_loss(labels, logits)
            loss = tf.nn.compute_average_loss(losses, global_batch_size=global_batch)
        grads = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(grads, model.trainable_variables, strict=True))
        right = tf.equal(tf.argmax(logits, axis=1), tf.cast(labels, tf.int64))
        correct = tf.reduce_sum(tf.cast(right, tf.float32))
        return loss, correct

    @tf.function
    def train_step(batches):
        loss, correct = strategy.run(replica_step, args=(next(batches),))
        total_loss = strategy.reduce(tf.distribute.ReduceOp.SUM, loss, axis=None)
        total_correct = strategy.reduce(tf.distribute.ReduceOp.SUM, correct, axis=None)
        return total_loss, total_correct

    return train_step


def run_epoch(
    train_step: Callable[[Any], Any],
    batches: Iterator[Any],
    steps: int,
    global_batch: int,
    after_step: Callable[[int], None] | None = None,
) -> tuple[float, float]:
    """``steps`` training steps; returns the epoch's mean loss and its training accuracy.

    ``after_step(step)`` is called after each step (the workers use it to fail on purpose).
    """
    total_loss = total_correct = 0.0
    for step in range(steps):
        loss, correct = train_step(batches)
        total_loss += float(loss)
        total_correct += float(correct)
        if after_step is not None:
            after_step(step)
    return total_loss / steps, total_correct / (steps * global_batch)
