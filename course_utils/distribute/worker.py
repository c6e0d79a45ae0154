"""One worker of a multi-worker training run: ``train(options)``, in a process of its own.

``course_utils.distribute.run_local_workers`` starts one process per worker, each with its
own ``TF_CONFIG``, as ``python -m course_utils.system.child course_utils.distribute.worker:train
OPTIONS.json RESULT.json`` (the options: ``OPTIONS`` below). On a real cluster you would start
the same command on every machine, each with the shared ``cluster`` and its own ``task``.
A worker follows TensorFlow's tutorial "Custom training loop with Keras and MultiWorkerMirroredStrategy"
(tensorflow.org/tutorials/distribute/multi_worker_with_ctl):

1. create ``MultiWorkerMirroredStrategy`` first, before any other TensorFlow op (collective
   ops are configured at start-up), with ring all-reduce over gRPC - the collective
   implementation for CPUs;
2. read the data, batch it with the *global* batch size, and let the strategy give every
   worker its own share of each step (data sharding, set explicitly);
3. build the course CNN and its optimizer inside ``strategy.scope()`` and train with the
   custom loop of ``distribute.training`` (shown in notebook 07): ``strategy.run`` a step on
   every replica, the loss averaged over the *global* batch, gradients all-reduced by the optimizer
   (wrapped for loss scaling by ``loop_optimizer`` should the dtype policy be ``mixed_float16``);
4. checkpoint every epoch with ``tf.train.CheckpointManager`` - the chief (worker 0) into the
   real folder, the others into temporary folders they delete - and resume from the
   chief's latest checkpoint when the cluster is started again (fault tolerance);
5. return a report (written as JSON by the child process): losses, timings, a digest of the weights.

Why not ``model.fit``: with Keras 3 (TF >= 2.16) ``fit`` under ``MultiWorkerMirroredStrategy``
fails as soon as there are two workers (it calls ``strategy.reduce`` on the (x, y) batch;
keras-team/keras#20585, tensorflow/tensorflow#72388, open in Keras 3.15). ``fit`` with
``MirroredStrategy`` on one machine works, and notebook 07 uses it there.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import time
from collections.abc import Mapping
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from course_utils.errors import ParameterError, WorkerError
from course_utils.i18n import translator

_ = translator("course")

# A worker's options (the payload ``train`` gets) and their defaults.
OPTIONS: dict[str, Any] = {
    "epochs": 1,
    "dataset": "mnist",  # or "fashion-mnist"
    "images": None,  # training images to use (None: all)
    "batch_size": 64,  # the GLOBAL batch, shared by all workers
    "seed": 0,
    "checkpoint_dir": None,  # the chief's checkpoints (resumed from)
    "model_dir": None,  # the chief saves model.keras here at the end
    "crash_at_epoch": None,  # fail on purpose at this epoch (tests, demos)
}
DATASETS = ("mnist", "fashion-mnist")


def check_options(options: Mapping[str, Any]) -> dict[str, Any]:
    """``options`` over ``OPTIONS``' defaults, checked: names, types and the dataset (``ParameterError`` if wrong)."""
    unknown = sorted(set(options) - set(OPTIONS))
    if unknown:
        raise ParameterError(_("Unknown worker option(s): {names}.").format(names=", ".join(unknown)),
                             _("Use only {names}.").format(names=", ".join(OPTIONS)))
    merged = {**OPTIONS, **options}
    if merged["dataset"] not in DATASETS:
        raise ParameterError(_("Worker dataset {dataset!r} is not one of {choices}.").format(
            dataset=merged["dataset"], choices=DATASETS), _("Use 'mnist'."))
    for name in ("epochs", "batch_size", "seed", "images", "crash_at_epoch"):
        value = merged[name]
        if value is None and name in ("images", "crash_at_epoch"):
            continue  # optional
        if isinstance(value, bool) or not isinstance(value, int):
            raise ParameterError(_("Worker option {name}={value!r} is not a whole number.").format(
                name=name, value=value),
                                 _("Give {name} as an int.").format(name=name))
    for name in ("checkpoint_dir", "model_dir"):
        if merged[name] is not None:
            merged[name] = str(merged[name])
    return merged


def _arguments(options: Mapping[str, Any]) -> SimpleNamespace:
    """The checked options as attributes (``args.epochs``), folders as ``Path``."""
    args = SimpleNamespace(**check_options(options))
    for name in ("checkpoint_dir", "model_dir"):
        if getattr(args, name) is not None:
            setattr(args, name, Path(getattr(args, name)))
    return args


def read_tf_config() -> tuple[dict[str, Any], int]:
    """This worker's ``TF_CONFIG`` and its index, validated like ``distribute.tf_config`` builds it."""
    from course_utils.distribute import tf_config

    raw = os.environ.get("TF_CONFIG")
    if not raw:
        raise WorkerError(
            _("course_utils.distribute.worker: TF_CONFIG is not set, so this worker does not know its cluster."),
            _("Start workers with course_utils.distribute.run_local_workers, or set TF_CONFIG as "
              "distribute.tf_config builds it."),
        )
    config = json.loads(raw)
    index = config["task"]["index"]
    tf_config(config["cluster"]["worker"], index, task_type=config["task"]["type"])  # validates
    return config, index


def write_path(folder: Path, index: int) -> Path:
    """Where worker ``index`` writes: the chief (0) into ``folder``, the others into a temporary sub-folder.

    Every worker must write (a checkpoint may need all of them to take part), but never
    to the same place (tensorflow.org/tutorials/distribute/multi_worker_with_keras).
    """
    return folder if index == 0 else folder / f"workertemp_{index}"


def train(options: Mapping[str, Any]) -> dict[str, Any]:
    """One worker's whole run (``options``: see ``OPTIONS``); returns its report.

    Reads ``TF_CONFIG`` for the cluster and this worker's place in it (``WorkerError`` without it).
    """
    args = _arguments(options)
    config, index = read_tf_config()
    workers = len(config["cluster"]["worker"])
    is_chief = index == 0

    from course_utils.tf_setup import quiet_tensorflow

    tf = quiet_tensorflow()
    # 1. The strategy first: it starts this worker's gRPC server and configures collective ops.
    options = tf.distribute.experimental.CommunicationOptions(
        implementation=tf.distribute.experimental.CommunicationImplementation.RING
    )
    strategy = tf.distribute.MultiWorkerMirroredStrategy(communication_options=options)

    import keras
    import numpy as np
    import psutil

    from course_utils import data
    from course_utils.distribute import batch_plan
    from course_utils.distribute.training import distribute_batches, loop_optimizer, make_train_step, run_epoch
    from course_utils.models import build_blog_cnn
    from course_utils.system.rss import peak_rss_mib

    keras.utils.set_random_seed(args.seed)

    # 2. Data: the same shuffled order on every worker (same seed), batched with the global batch;
    #    the strategy hands each worker its share of every batch. Images stay uint8 until batched.
    (x, y), _test = data.load(args.dataset, images=args.images, quiet=True)
    images = len(x)
    plan = batch_plan(args.batch_size, strategy.num_replicas_in_sync, images)
    dataset = (
        tf.data.Dataset.from_tensor_slices((x[:images, ..., None], y[:images].astype("int32")))
        .shuffle(min(images, 10_000), seed=args.seed)
        .batch(plan.global_batch, drop_remainder=True)
        .map(lambda xb, yb: (tf.cast(xb, tf.float32) / 255.0, yb))
        .repeat()
    )
    del x, y
    batches = distribute_batches(strategy, dataset)

    # 3. Model, optimizer and state inside the strategy's scope: mirrored on every worker.
    with strategy.scope():
        model = build_blog_cnn(logits=True)
        optimizer = loop_optimizer(keras.optimizers.Adam(1e-3))  # loss scaling, should the policy be mixed_float16
        optimizer.build(model.trainable_variables)  # before the checkpoint restores its state
        epoch_var = tf.Variable(0, dtype=tf.int64, trainable=False, name="epoch")
    train_step = make_train_step(strategy, model, optimizer, plan.global_batch)

    # 4. Fault tolerance: resume from the chief's latest checkpoint, if any; every worker writes its own.
    manager = None
    start_epoch = 0
    if args.checkpoint_dir is not None:
        checkpoint = tf.train.Checkpoint(model=model, optimizer=optimizer, epoch=epoch_var)
        latest = tf.train.latest_checkpoint(str(args.checkpoint_dir))
        if latest:
            checkpoint.restore(latest)
            start_epoch = int(epoch_var.numpy())
        own = write_path(args.checkpoint_dir, index)
        manager = tf.train.CheckpointManager(checkpoint, directory=str(own), max_to_keep=1)

    losses: list[float] = []
    accuracies: list[float] = []
    epoch_s: list[float] = []
    start = time.perf_counter()
    for epoch in range(start_epoch, args.epochs):
        t0 = time.perf_counter()

        def after_step(step: int, epoch: int = epoch) -> None:
            if args.crash_at_epoch is not None and epoch >= args.crash_at_epoch:
                # After a step every worker took part in: the peers' checkpoints of the last epoch are written.
                raise RuntimeError(f"worker {index} crashed on purpose during epoch {epoch} (crash_at_epoch)")

        loss, accuracy = run_epoch(train_step, batches, plan.steps_per_epoch, plan.global_batch, after_step)
        epoch_s.append(round(time.perf_counter() - t0, 3))
        losses.append(loss)
        accuracies.append(accuracy)
        epoch_var.assign(epoch + 1)
        if manager is not None:
            manager.save()
    train_s = time.perf_counter() - start
    if manager is not None and not is_chief:
        shutil.rmtree(write_path(args.checkpoint_dir, index), ignore_errors=True)

    # 5. The model: the chief saves it; the others save to a temporary folder and delete it.
    saved = None
    if args.model_dir is not None:
        folder = write_path(args.model_dir, index)
        folder.mkdir(parents=True, exist_ok=True)
        model.save(folder / "model.keras")
        if is_chief:
            saved = str(folder / "model.keras")
        else:
            shutil.rmtree(folder, ignore_errors=True)

    weights = model.get_weights()
    digest = hashlib.sha256(b"".join(np.ascontiguousarray(w).tobytes() for w in weights)).hexdigest()
    return {
        "index": index,
        "is_chief": is_chief,
        "workers": workers,
        "address": config["cluster"]["worker"][index],
        "pid": os.getpid(),
        "replicas_in_sync": int(strategy.num_replicas_in_sync),
        "global_batch": plan.global_batch,
        "per_replica_batch": plan.per_replica,
        "steps_per_epoch": plan.steps_per_epoch,
        "dataset": args.dataset,
        "images": images,
        "start_epoch": start_epoch,
        "epochs": args.epochs,
        "loss": losses,
        "accuracy": accuracies,
        "epoch_s": epoch_s,
        "train_s": round(train_s, 3),
        "weights_sha256": digest,
        "saved_model": saved,
        "peak_rss_mib": round(peak_rss_mib(), 1),  # counts TensorFlow's shared libraries in every process
        "private_mib": round(psutil.Process().memory_full_info().uss / 2**20, 1),  # this worker's own memory
        "tensorflow": tf.__version__,
    }
