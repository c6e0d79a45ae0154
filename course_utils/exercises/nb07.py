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
        return not_answered(name, "Set both `per_replica` and `steps_per_epoch` to whole numbers. Then run the "
                                  "cell.", show=show)
    plan = batch_plan(PLAN_GLOBAL_BATCH, PLAN_REPLICAS, PLAN_IMAGES)
    problems = []
    share, steps = _whole(per_replica), _whole(steps_per_epoch)
    if share is None:
        problems.append(f"`per_replica` = {per_replica!r} is not a whole number of images.")
    elif share == PLAN_GLOBAL_BATCH:
        problems.append(f"{share} is the global batch: all replicas together. Each replica gets its share of it.")
    elif share == PLAN_GLOBAL_BATCH * PLAN_REPLICAS:
        problems.append(f"{share} multiplies the global batch by the replicas. The replicas split it instead.")
    elif share != plan.per_replica:
        problems.append(f"{share} images per replica: {PLAN_REPLICAS} replicas would then take "
                        f"{share * PLAN_REPLICAS} images per step, not the global batch of {PLAN_GLOBAL_BATCH}.")
    if steps is None:
        problems.append(f"`steps_per_epoch` = {steps_per_epoch!r} is not a whole number of steps.")
    elif steps == plan.steps_per_epoch + 1:
        problems.append(f"{steps} counts a last, partial step. With drop_remainder=True the last "
                        f"{PLAN_IMAGES - plan.images_per_epoch} images make no step: round down.")
    elif steps in (PLAN_IMAGES // plan.per_replica, math.ceil(PLAN_IMAGES / plan.per_replica)):
        problems.append(f"{steps} steps counts per-replica batches. One step takes a whole global batch of "
                        f"{PLAN_GLOBAL_BATCH} images, on all replicas at once.")
    elif steps != plan.steps_per_epoch:
        problems.append(f"{steps} steps of {PLAN_GLOBAL_BATCH} images would be {steps * PLAN_GLOBAL_BATCH:,} "
                        f"images, not the {PLAN_IMAGES:,} you have.")
    return feedback(name, problems, right=f"{plan.per_replica} images per replica and {plan.steps_per_epoch} "
                                          f"steps per epoch; the last {PLAN_IMAGES - plan.images_per_epoch} "
                                          "images are dropped.", show=show)


def _config_problems(config: dict[str, Any]) -> list[str]:
    """What differs from worker 1's ``TF_CONFIG``, part by part (empty: nothing)."""
    expected = list(CLUSTER)
    if set(config) != {"cluster", "task"}:
        missing = sorted({"cluster", "task"} - set(config))
        extra = sorted(set(config) - {"cluster", "task"})
        parts = [f"missing {missing}" if missing else "", f"unknown {extra}" if extra else ""]
        return [f"TF_CONFIG has two keys, 'cluster' and 'task' ({', '.join(p for p in parts if p)})."]
    problems = []
    cluster, task = config["cluster"], config["task"]
    workers = cluster.get("worker") if isinstance(cluster, dict) else None
    if not isinstance(cluster, dict) or set(cluster) != {"worker"}:
        problems.append("'cluster' is a dict with one key here, 'worker': the list of every worker's address.")
    elif isinstance(workers, str):
        problems.append("'worker' is a list of addresses, even for one machine.")
    elif (not isinstance(workers, (list, tuple)) or not all(isinstance(w, str) for w in workers)
          or sorted(workers) != sorted(expected)):
        if isinstance(workers, (list, tuple)) and len(workers) < len(expected):
            problems.append("The cluster lists every worker, not only this one: the same list on every machine.")
        else:
            problems.append(f"The workers are {expected}: both addresses, as 'host:port' text.")
    elif list(workers) != expected:
        problems.append(f"Keep the order {expected}. Every machine gets the same list, and the task index points "
                        "into it.")
    if not isinstance(task, dict) or set(task) != {"type", "index"}:
        problems.append("'task' is a dict with two keys: 'type' and 'index'.")
        return problems
    if task["type"] == "chief":
        problems.append("This cluster has only workers: worker 0 acts as the chief. Use the type 'worker'.")
    elif task["type"] != "worker":
        problems.append(f"The task type is {task['type']!r}; here every machine is a 'worker'.")
    index = task["index"]
    if isinstance(index, (str, bool)) or not isinstance(index, int):
        problems.append(f"The index is the number {TASK_INDEX}, not {index!r}.")
    elif index == len(expected):
        problems.append(f"Indexes count from 0: the second worker is index {TASK_INDEX}.")
    elif index == 0:
        problems.append(f"Index 0 is the first worker, the chief, at {expected[0]}. This is the second machine.")
    elif index != TASK_INDEX:
        problems.append(f"The index {index!r} is not a place in the worker list. The second worker is index "
                        f"{TASK_INDEX}.")
    return problems


def check_tf_config(answer: object, *, show: bool = True) -> Feedback:
    """Exercise 7.2: worker 1's ``TF_CONFIG`` in the cluster ``CLUSTER`` (a dict, or its JSON text)."""
    from course_utils.distribute import tf_config

    name = "Exercise 7.2"
    if is_empty(answer):
        return not_answered(name, "Write worker 1's TF_CONFIG as a dict: `answer = {\"cluster\": ..., \"task\": "
                                  "...}`. Then run the cell.", show=show)
    config = answer
    if isinstance(answer, str):
        try:
            config = json.loads(answer)
        except ValueError as err:
            return feedback(name, [f"This text is not JSON ({err.msg}). Write a dict, or the text "
                                   "`json.dumps` makes of it."], right="", show=show)
    if not isinstance(config, dict):
        return feedback(name, [f"`answer` is {type(config).__name__}. TF_CONFIG is a dict with 'cluster' and "
                               "'task'."], right="", show=show)
    problems = _config_problems(config)
    built = tf_config(list(CLUSTER), TASK_INDEX)  # what the course's helper builds
    if not problems and json.loads(json.dumps(config)) != built:
        problems.append("This differs from the TF_CONFIG the course builds for worker 1; compare it part by part.")
    return feedback(name, problems, right="Worker 1 gets the same cluster list as worker 0 and its own task, "
                                          "index 1. Set it with os.environ[\"TF_CONFIG\"] = json.dumps(answer), "
                                          "before the strategy is created.", show=show)
