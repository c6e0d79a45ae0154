"""The custom training loop of notebook 07's workers, in four small functions a student can read.

``distribute_batches`` gives every replica its share of each global batch, ``loop_optimizer`` wraps
the optimizer for loss scaling when the dtype policy is ``mixed_float16``, ``make_train_step`` builds
one synchronous training step, ``run_epoch`` runs the steps of one epoch. The workers
(``distribute.worker``) use them with ``MultiWorkerMirroredStrategy``; notebook 07 shows their
source and runs them with ``MirroredStrategy`` in its own kernel. They follow TensorFlow's tutorial
"Custom training with tf.distribute.Strategy" (tensorflow.org/tutorials/distribute/custom_training).

Loss scaling: float16 gradients smaller than about 6e-8 round to zero, so under ``mixed_float16``
the loss is multiplied by a large scale before the gradients are taken and the gradients divided by
it before they are applied (https://www.tensorflow.org/guide/mixed_precision). ``Model.fit`` does it
by itself (``compile`` wraps the optimizer); a custom loop must wrap its optimizer in
``keras.optimizers.LossScaleOptimizer`` (https://keras.io/api/mixed_precision/loss_scale_optimizer/)
and call ``optimizer.scale_loss(loss)`` inside the tape. In Keras 3 its ``apply_gradients`` divides
the gradients by the scale itself (TensorFlow 2's ``get_unscaled_gradients`` is gone), skips a step
whose gradients overflowed and lowers the scale. ``bfloat16`` keeps float32's range and needs none.
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


def loop_optimizer(optimizer: Any, policy: str | None = None) -> Any:
    """``optimizer`` ready for a custom loop under ``policy`` (default: Keras's global dtype policy).

    Under ``mixed_float16`` it is wrapped in ``keras.optimizers.LossScaleOptimizer`` (dynamic loss
    scaling, as ``Model.compile`` does for ``fit``); under ``mixed_bfloat16`` or ``float32`` it is returned
    as it is. Call it where the optimizer is created: inside ``strategy.scope()``.
    """
    import keras

    policy = policy or keras.mixed_precision.global_policy().name
    if policy == "mixed_float16" and not isinstance(optimizer, keras.optimizers.LossScaleOptimizer):
        return keras.optimizers.LossScaleOptimizer(optimizer)
    return optimizer


def make_train_step(strategy: Any, model: Any, optimizer: Any, global_batch: int) -> Callable[[Any], Any]:
    """One training step on every replica at once; returns the step's summed loss and correct answers.

    ``model`` and ``optimizer`` must be created inside ``strategy.scope()``. A ``mixed_float16`` model
    needs a ``LossScaleOptimizer`` (``loop_optimizer``), else its small gradients underflow to zero:
    ``ValueError`` without one. The step takes the gradients of ``optimizer.scale_loss(loss)`` (the loss
    itself for an optimizer without a loss scale) and reports the loss unscaled.
    """
    import keras
    import tensorflow as tf

    if model.dtype_policy.name == "mixed_float16" and not isinstance(optimizer, keras.optimizers.LossScaleOptimizer):
        raise ValueError(
            "The model computes in float16 (mixed_float16), but its optimizer does not scale the loss, so small "
            "gradients would underflow to zero. Create it with loop_optimizer(optimizer) inside strategy.scope()."
        )
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
            scaled_loss = optimizer.scale_loss(loss)  # x the loss scale under mixed_float16, else the loss
        grads = tape.gradient(scaled_loss, model.trainable_variables)
        # A LossScaleOptimizer divides the gradients by the scale before it applies them.
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
