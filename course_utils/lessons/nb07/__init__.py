"""Notebook 07's lesson: what setup reads (``needs``: images enough for one step of run (c)), and the exercises.

- 7.1 ``check_global_batch``: the global batch for four GPUs with ``drop_remainder=True``, compared with
  ``distribute.batch_plan``, naming the usual slips.
- 7.2 ``check_cluster``: the second machine's ``TF_CONFIG`` (a dict or its JSON; the index may be text, as
  TensorFlow reads it with ``int()``), compared part by part with ``distribute.tf_config``'s.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from course_utils.core.i18n import translator
from course_utils.lessons import Feedback, dict_answer, whole
from course_utils.lessons.nb07.distribute import batch_plan
from course_utils.params import too_few

_ = translator("lessons")


NOTEBOOK = "07_beyond_one_gpu"  # the name the notebook gives setup
SMOKE = {"EPOCHS": 2, "IMAGES": 1024, "BATCH_SIZE": 64}
KEY_RESULTS = {  # name: what it means, as the run report explains it
    "replicas": "copies of the model that trained in step (GPUs, or logical CPUs on a machine without one)",
    "workers_in_sync": "whether the two workers ended with the same weights (expected: True)",
    "workers_vs_fit": "relative difference between the workers' first loss and model.fit's (expected: near 0)",
}


def needs(values: Mapping[str, Any]) -> None:
    """Refuse fewer images than one step of run (c): its global batch, BATCH_SIZE x CPU_REPLICAS."""
    images, batch = values.get("IMAGES"), values.get("BATCH_SIZE", 1)
    replicas = values.get("CPU_REPLICAS", 1)
    # Run (c) trains with a global batch of BATCH_SIZE x replicas, whole batches only (drop_remainder): one step
    # needs that many images. On several GPUs the replicas are the GPUs, known only after start-up (batch_plan).
    if images is not None and values.get("DEVICE", "auto") != "gpu" and images < batch * replicas:
        raise too_few(images, batch * replicas, _("one step of its run (c), whose global batch is BATCH_SIZE x "
                                                  "CPU_REPLICAS = {batch} x {replicas}.").format(
                                                      batch=batch, replicas=replicas))


# Exercise 7.1: one GPU's batch, the GPUs of the new machine, the images of an epoch; the plan that is right.
ONE_GPU_BATCH, GPUS, PLAN_IMAGES = 256, 4, 60_000
PLAN = batch_plan(ONE_GPU_BATCH * GPUS, GPUS, PLAN_IMAGES)

# Exercise 7.2: the cluster, in the order every machine gets it, the machine the student configures, its GPUs.
CLUSTER = ("10.0.0.1:12345", "10.0.0.2:12345")
TASK_INDEX = 1
GPUS_PER_MACHINE = 2


def _batch_problems(answer: Mapping[str, object]) -> list[str]:
    """What is wrong with 7.1's global batch and steps per epoch (empty: nothing)."""
    problems = []
    batch, steps = whole(answer.get("global_batch")), whole(answer.get("steps_per_epoch"))
    if batch is None:
        problems.append(_("`global_batch` = {value!r} is not a whole number of images.").format(
            value=answer.get("global_batch")))
    elif batch == ONE_GPU_BATCH:
        problems.append(_("With a global batch of {batch}, each of the {gpus} GPUs gets only {share} images: less "
                          "work than one GPU had. The global batch is all GPUs together.").format(
            batch=batch, gpus=GPUS, share=batch // GPUS))
    elif batch != PLAN.global_batch:
        problems.append(_("{batch} images over {gpus} GPUs gives each GPU {share:g} images, not the {want} that one "
                          "GPU had.").format(batch=batch, gpus=GPUS, share=batch / GPUS, want=ONE_GPU_BATCH))
    if steps is None:
        problems.append(_("`steps_per_epoch` = {value!r} is not a whole number of steps.").format(
            value=answer.get("steps_per_epoch")))
    elif steps == PLAN.steps_per_epoch + 1:
        problems.append(_("{steps} counts a last, partial step. With drop_remainder=True the last "
                          "{dropped} images make no step: round down.").format(
            steps=steps, dropped=PLAN_IMAGES - PLAN.images_per_epoch))
    elif steps in (PLAN_IMAGES // ONE_GPU_BATCH, PLAN_IMAGES // ONE_GPU_BATCH + 1):
        problems.append(_("{steps} steps is one GPU's epoch. One step now takes a whole global batch of {batch} "
                          "images, on all GPUs at once.").format(steps=steps, batch=PLAN.global_batch))
    elif batch and batch != PLAN.global_batch and steps == PLAN_IMAGES // batch:
        pass  # the right steps for the student's own global batch: the batch's message says what to change
    elif steps != PLAN.steps_per_epoch:
        problems.append(_("{steps} steps of {batch} images would be {images:,} images, not the {have:,} you "
                          "have.").format(steps=steps, batch=PLAN.global_batch, images=steps * PLAN.global_batch,
                                          have=PLAN_IMAGES))
    return problems


def check_global_batch(answer: object) -> Feedback:
    """Exercise 7.1: ``{"global_batch": ..., "steps_per_epoch": ...}`` for four GPUs that each keep one GPU's work."""
    return dict_answer(
        "Exercise 7.1", answer, _batch_problems, example='{"global_batch": ..., "steps_per_epoch": ...}',
        hint=_("Set both values of `answer` to whole numbers. Then run the cell."),
        right=_("A global batch of {batch} gives each of the {gpus} GPUs {share} images, as one GPU had. An epoch has "
                "{steps} steps; the last {dropped} images are dropped.").format(
            batch=PLAN.global_batch, gpus=GPUS, share=PLAN.per_replica, steps=PLAN.steps_per_epoch,
            dropped=PLAN_IMAGES - PLAN.images_per_epoch))


def _index_given(index: object) -> int | None:
    """The task index as TensorFlow reads it (``int(task["index"])``): 1, "1" or 1.0 is 1; None for a bool or
    anything that is no whole number."""
    if isinstance(index, str):
        try:
            return int(index)
        except ValueError:
            return None
    return whole(index)


def _config_problems(config: dict[str, Any]) -> list[str]:
    """What differs from worker 1's ``TF_CONFIG``, part by part (empty: nothing)."""
    expected = list(CLUSTER)
    if set(config) != {"cluster", "task"}:
        missing = sorted({"cluster", "task"} - set(config))
        extra = sorted(set(config) - {"cluster", "task"})
        parts = [_("missing {keys}").format(keys=missing) if missing else "",
                 _("unknown {keys}").format(keys=extra) if extra else ""]
        return [_("TF_CONFIG has two keys, 'cluster' and 'task' ({found}).").format(
            found=", ".join(p for p in parts if p))]
    problems = []
    cluster, task = config["cluster"], config["task"]
    if isinstance(cluster, dict) and "chief" in cluster:  # a layout TensorFlow allows, but not the task's
        return [_("The first machine is worker 0, and worker 0 acts as the chief: list both machines under "
                  "'worker', with no separate 'chief' task.")]
    workers = cluster.get("worker") if isinstance(cluster, dict) else None
    if not isinstance(cluster, dict) or set(cluster) != {"worker"}:
        problems.append(_("'cluster' is a dict with one key here, 'worker': the list of every worker's address."))
    elif isinstance(workers, str):
        problems.append(_("'worker' is a list of addresses, even for one machine."))
    elif (not isinstance(workers, (list, tuple)) or not all(isinstance(w, str) for w in workers)
          or sorted(workers) != sorted(expected)):
        if isinstance(workers, (list, tuple)) and len(workers) < len(expected):
            problems.append(_("The cluster lists every worker, not only this one: the same list on every machine."))
        else:
            problems.append(_("The workers are {workers}: both addresses, as 'host:port' text.").format(
                workers=expected))
    elif list(workers) != expected:
        problems.append(_("Keep the order {workers}. Every machine gets the same list, and the task index points "
                          "into it.").format(workers=expected))
    if not isinstance(task, dict) or set(task) != {"type", "index"}:
        problems.append(_("'task' is a dict with two keys: 'type' and 'index'."))
        return problems
    if task["type"] == "chief":
        problems.append(_("This cluster has only workers: worker 0 acts as the chief. Use the type 'worker'."))
    elif task["type"] != "worker":
        problems.append(_("The task type is {type!r}; here every machine is a 'worker'.").format(type=task["type"]))
    given = task["index"]
    index = _index_given(given)
    if index is None:
        problems.append(_("The index is the number {want}, not {index!r}.").format(want=TASK_INDEX, index=given))
    elif index == len(expected):
        problems.append(_("Indexes count from 0: the second worker is index {want}.").format(want=TASK_INDEX))
    elif index == 0:
        problems.append(_("Index 0 is the first worker, the chief, at {address}. This is the second machine.").format(
            address=expected[0]))
    elif index != TASK_INDEX:
        problems.append(_("The index {index!r} is not a place in the worker list. The second worker is index "
                          "{want}.").format(index=given, want=TASK_INDEX))
    return problems


def _replica_problems(replicas: object) -> list[str]:
    """What is wrong with the number of replicas in sync (empty: nothing)."""
    want = len(CLUSTER) * GPUS_PER_MACHINE
    count = whole(replicas)
    if count is None:
        return [_("`replicas` = {value!r} is not a whole number.").format(value=replicas)]
    if count == want:
        return []
    if count in (len(CLUSTER), GPUS_PER_MACHINE):
        return [_("{count} counts the machines or one machine's GPUs. MultiWorkerMirroredStrategy puts one replica "
                  "on each GPU of each worker.").format(count=count)]
    return [_("Each of the {machines} machines has {gpus} GPUs, and each GPU holds one replica.").format(
        machines=len(CLUSTER), gpus=GPUS_PER_MACHINE)]


def _cluster_problems(answer: Mapping[str, object]) -> list[str]:
    """What is wrong with 7.2's TF_CONFIG and replicas (empty: nothing)."""
    config, problems = answer.get("TF_CONFIG"), []
    if isinstance(config, str):
        try:
            config = json.loads(config)
        except ValueError as err:
            config = None
            problems.append(_("This text is not JSON ({error}). Write a dict, or the text `json.dumps` makes of "
                              "it.").format(error=err.msg))
    if isinstance(config, dict):
        problems += _config_problems(config)
    elif not problems:
        problems.append(_("`answer[\"TF_CONFIG\"]` is {type}. TF_CONFIG is a dict with 'cluster' and 'task'.").format(
            type=type(config).__name__))
    return problems + _replica_problems(answer.get("replicas"))


def check_cluster(answer: object) -> Feedback:
    """Exercise 7.2: ``{"TF_CONFIG": ..., "replicas": ...}`` for worker 1 of ``CLUSTER``, two GPUs on each machine."""
    return dict_answer(
        "Exercise 7.2", answer, _cluster_problems, example='{"TF_CONFIG": {...}, "replicas": ...}',
        hint=_("Write worker 1's TF_CONFIG as a dict: {example}, and the number of replicas. Then run the "
               "cell.").format(example='`{"cluster": ..., "task": ...}`'),
        right=_("Worker 1 gets the same cluster list as worker 0 and its own task, index 1. {machines} workers with "
                "{gpus} GPUs each: {replicas} replicas in sync.").format(
            machines=len(CLUSTER), gpus=GPUS_PER_MACHINE, replicas=len(CLUSTER) * GPUS_PER_MACHINE))


# The notebook's exercises, by number: its task cells call ``course.check("7.1", answer)``.
CHECKS = {
    "7.1": check_global_batch,
    "7.2": check_cluster,
}
