"""Notebook 07's exercises: plan the batches of a multi-GPU run, and write one worker's ``TF_CONFIG``.

- Exercise 7.1, ``check_batch_plan(per_replica, steps_per_epoch)``: 60,000 images, a global batch of
  256 over 4 replicas, ``drop_remainder=True``. The check compares with ``distribute.batch_plan``, the
  plan the notebook and its workers use, and names the usual slips (the global batch taken for the
  share, a partial last step, steps counted in per-replica batches).
- Exercise 7.2, ``check_tf_config(answer)``: the ``TF_CONFIG`` of worker 1 of a two-worker cluster,
  as a dict or as its JSON text. The check compares with ``distribute.tf_config`` part by part.
"""

from __future__ import annotations

import json
import math
from typing import Any

from course_utils.exercises import Feedback, feedback, is_empty, not_answered
from course_utils.i18n import translator

_ = translator("exercises")

# Exercise 7.1: the run the student plans.
PLAN_IMAGES, PLAN_GLOBAL_BATCH, PLAN_REPLICAS = 60_000, 256, 4

# Exercise 7.2: the cluster, in the order every machine gets it, and the worker the student configures.
CLUSTER = ("10.0.0.1:12345", "10.0.0.2:12345")
TASK_INDEX = 1


def _whole(value: object) -> int | None:
    """A whole number given as an int (or a float without a fraction); None otherwise."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return None


def check_batch_plan(per_replica: object, steps_per_epoch: object, *, show: bool = True) -> Feedback:
    """Exercise 7.1: the per-replica batch and the steps per epoch of 60,000 images, global batch 256, 4 replicas."""
    from course_utils.distribute import batch_plan

    name = "Exercise 7.1"
    if is_empty(per_replica) or is_empty(steps_per_epoch):
        return not_answered(name, _("Set both `per_replica` and `steps_per_epoch` to whole numbers. Then run the "
                                    "cell."), show=show)
    plan = batch_plan(PLAN_GLOBAL_BATCH, PLAN_REPLICAS, PLAN_IMAGES)
    problems = []
    share, steps = _whole(per_replica), _whole(steps_per_epoch)
    dropped = PLAN_IMAGES - plan.images_per_epoch
    if share is None:
        problems.append(_("`per_replica` = {value!r} is not a whole number of images.").format(value=per_replica))
    elif share == PLAN_GLOBAL_BATCH:
        problems.append(_("{share} is the global batch: all replicas together. Each replica gets its share of "
                          "it.").format(share=share))
    elif share == PLAN_GLOBAL_BATCH * PLAN_REPLICAS:
        problems.append(_("{share} multiplies the global batch by the replicas. The replicas split it "
                          "instead.").format(share=share))
    elif share != plan.per_replica:
        problems.append(_("{share} images per replica: {replicas} replicas would then take {images} images per "
                          "step, not the global batch of {batch}.").format(
            share=share, replicas=PLAN_REPLICAS, images=share * PLAN_REPLICAS, batch=PLAN_GLOBAL_BATCH))
    if steps is None:
        problems.append(_("`steps_per_epoch` = {value!r} is not a whole number of steps.").format(
            value=steps_per_epoch))
    elif steps == plan.steps_per_epoch + 1:
        problems.append(_("{steps} counts a last, partial step. With drop_remainder=True the last "
                          "{dropped} images make no step: round down.").format(steps=steps, dropped=dropped))
    elif steps in (PLAN_IMAGES // plan.per_replica, math.ceil(PLAN_IMAGES / plan.per_replica)):
        problems.append(_("{steps} steps counts per-replica batches. One step takes a whole global batch of "
                          "{batch} images, on all replicas at once.").format(steps=steps, batch=PLAN_GLOBAL_BATCH))
    elif steps != plan.steps_per_epoch:
        problems.append(_("{steps} steps of {batch} images would be {images:,} images, not the {have:,} you "
                          "have.").format(steps=steps, batch=PLAN_GLOBAL_BATCH, images=steps * PLAN_GLOBAL_BATCH,
                                          have=PLAN_IMAGES))
    return feedback(name, problems, right=_("{share} images per replica and {steps} steps per epoch; the last "
                                            "{dropped} images are dropped.").format(
        share=plan.per_replica, steps=plan.steps_per_epoch, dropped=dropped), show=show)


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
    index = task["index"]
    if isinstance(index, (str, bool)) or not isinstance(index, int):
        problems.append(_("The index is the number {want}, not {index!r}.").format(want=TASK_INDEX, index=index))
    elif index == len(expected):
        problems.append(_("Indexes count from 0: the second worker is index {want}.").format(want=TASK_INDEX))
    elif index == 0:
        problems.append(_("Index 0 is the first worker, the chief, at {address}. This is the second machine.").format(
            address=expected[0]))
    elif index != TASK_INDEX:
        problems.append(_("The index {index!r} is not a place in the worker list. The second worker is index "
                          "{want}.").format(index=index, want=TASK_INDEX))
    return problems


def check_tf_config(answer: object, *, show: bool = True) -> Feedback:
    """Exercise 7.2: worker 1's ``TF_CONFIG`` in the cluster ``CLUSTER`` (a dict, or its JSON text)."""
    from course_utils.distribute import tf_config

    name = "Exercise 7.2"
    if is_empty(answer):
        return not_answered(name, _("Write worker 1's TF_CONFIG as a dict: {example}. Then run the cell.").format(
            example='`answer = {"cluster": ..., "task": ...}`'), show=show)
    config = answer
    if isinstance(answer, str):
        try:
            config = json.loads(answer)
        except ValueError as err:
            return feedback(name, [_("This text is not JSON ({error}). Write a dict, or the text "
                                     "`json.dumps` makes of it.").format(error=err.msg)], right="", show=show)
    if not isinstance(config, dict):
        return feedback(name, [_("`answer` is {type}. TF_CONFIG is a dict with 'cluster' and 'task'.").format(
            type=type(config).__name__)], right="", show=show)
    problems = _config_problems(config)
    built = tf_config(list(CLUSTER), TASK_INDEX)  # what the course's helper builds
    if not problems and json.loads(json.dumps(config)) != built:
        problems.append(_("This differs from the TF_CONFIG the course builds for worker 1; compare it part by "
                          "part."))
    return feedback(name, problems, right=_("Worker 1 gets the same cluster list as worker 0 and its own task, "
                                            "index 1. Set it with os.environ[\"TF_CONFIG\"] = json.dumps(answer), "
                                            "before the strategy is created."), show=show)
