"""Notebook 07's exercise checks: the notebook's own solutions are right, wrong answers say what is wrong."""

from __future__ import annotations

import json

import pytest

from course_utils import distribute
from course_utils.exercises import EMPTY, RIGHT, WRONG, nb07

from .solutions import solved, task_cells

NOTEBOOK = "07_beyond_one_gpu"
WORKER_0 = {"cluster": {"worker": ["10.0.0.1:12345", "10.0.0.2:12345"]}, "task": {"type": "worker", "index": 0}}


def test_the_notebook_has_the_two_exercises_each_calling_its_check():
    tasks = task_cells(NOTEBOOK)
    assert set(tasks) == {"Exercise 7.1", "Exercise 7.2"}
    assert "nb07.check_batch_plan(per_replica, steps_per_epoch)" in tasks["Exercise 7.1"]
    assert "nb07.check_tf_config(answer)" in tasks["Exercise 7.2"]
    assert "per_replica = None" in tasks["Exercise 7.1"] and "steps_per_epoch = None" in tasks["Exercise 7.1"]
    assert "answer = None" in tasks["Exercise 7.2"]


def test_the_notebook_shows_worker_0_and_leaves_worker_1_to_the_student():
    from .solutions import cells, source

    code = "\n".join(source(c) for c in cells(NOTEBOOK) if c["cell_type"] == "code")
    shown = {}
    exec(next(source(c) for c in cells(NOTEBOOK) if "tf_config = {" in source(c)), shown)  # noqa: S102
    assert shown["tf_config"] == WORKER_0 == distribute.tf_config(WORKER_0["cluster"]["worker"], 0)
    assert '"index": 1' not in code, "the notebook's code does not give the answer away"


# ----------------------------------------------------------------------------- Exercise 7.1


def test_the_batch_plan_solution_is_right_and_is_batch_plan(capsys):
    answer = solved(NOTEBOOK, "Exercise 7.1")
    result = nb07.check_batch_plan(answer["per_replica"], answer["steps_per_epoch"])
    assert result.status == RIGHT, result
    plan = distribute.batch_plan(nb07.PLAN_GLOBAL_BATCH, nb07.PLAN_REPLICAS, nb07.PLAN_IMAGES)
    assert (answer["per_replica"], answer["steps_per_epoch"]) == (plan.per_replica, plan.steps_per_epoch) == (64, 234)
    assert capsys.readouterr().out.startswith("✅ Exercise 7.1: right")


@pytest.mark.parametrize(("per_replica", "steps", "message"), [
    (256, 234, "256 is the global batch: all replicas together."),
    (1024, 234, "1024 multiplies the global batch by the replicas."),
    (32, 234, "32 images per replica: 4 replicas would then take 128 images per step"),
    (64, 235, "235 counts a last, partial step. With drop_remainder=True the last 96 images make no step"),
    (64, 937, "937 steps counts per-replica batches."),
    (64, 938, "938 steps counts per-replica batches."),
    (64, 200, "200 steps of 256 images would be 51,200 images, not the 60,000 you have."),
    ("64", 234, "`per_replica` = '64' is not a whole number of images."),
    (64, 234.4, "`steps_per_epoch` = 234.4 is not a whole number of steps."),
])
def test_a_wrong_plan_names_the_slip(per_replica, steps, message):
    result = nb07.check_batch_plan(per_replica, steps, show=False)
    assert result.status == WRONG and any(message in m for m in result.messages), result


def test_whole_floats_count_as_whole_numbers():
    assert nb07.check_batch_plan(64.0, 60_000 / 256 // 1, show=False).ok


def test_an_empty_plan_is_not_answered_yet():
    assert nb07.check_batch_plan(None, None, show=False).status == EMPTY
    assert nb07.check_batch_plan(64, None, show=False).status == EMPTY


# ----------------------------------------------------------------------------- Exercise 7.2


def test_the_tf_config_solution_is_right_and_is_what_the_course_builds(capsys):
    answer = solved(NOTEBOOK, "Exercise 7.2")["answer"]
    result = nb07.check_tf_config(answer)
    assert result.status == RIGHT, result
    assert answer == distribute.tf_config(list(nb07.CLUSTER), 1)
    assert capsys.readouterr().out.startswith("✅ Exercise 7.2: right")


def test_the_json_text_of_the_solution_is_right_too():
    answer = solved(NOTEBOOK, "Exercise 7.2")["answer"]
    assert nb07.check_tf_config(json.dumps(answer), show=False).ok
    as_tuple = {"cluster": {"worker": tuple(nb07.CLUSTER)}, "task": {"type": "worker", "index": 1}}
    assert nb07.check_tf_config(as_tuple, show=False).ok, "a tuple makes the same JSON"


def config(workers=("10.0.0.1:12345", "10.0.0.2:12345"), task_type="worker", index=1):
    return {"cluster": {"worker": list(workers) if isinstance(workers, tuple) else workers},
            "task": {"type": task_type, "index": index}}


@pytest.mark.parametrize(("answer", "message"), [
    (WORKER_0, "Index 0 is the first worker, the chief, at 10.0.0.1:12345. This is the second machine."),
    (config(index=2), "Indexes count from 0: the second worker is index 1."),
    (config(index="1"), "The index is the number 1, not '1'."),
    (config(index=True), "The index is the number 1, not True."),
    (config(index=5), "The index 5 is not a place in the worker list."),
    (config(task_type="chief"), "This cluster has only workers: worker 0 acts as the chief."),
    (config(workers=("10.0.0.2:12345",)), "The cluster lists every worker, not only this one"),
    (config(workers=("10.0.0.2:12345", "10.0.0.1:12345")), "Keep the order ['10.0.0.1:12345', '10.0.0.2:12345']"),
    (config(workers="10.0.0.1:12345,10.0.0.2:12345"), "'worker' is a list of addresses"),
    (config(workers=("10.0.0.1", "10.0.0.2")), "both addresses, as 'host:port' text"),
    ({"cluster": {"worker": list(nb07.CLUSTER)}}, "TF_CONFIG has two keys, 'cluster' and 'task' (missing ['task'])"),
    ({"cluster": list(nb07.CLUSTER), "task": {"type": "worker", "index": 1}}, "'cluster' is a dict with one key"),
    ({"cluster": {"worker": list(nb07.CLUSTER)}, "task": 1}, "'task' is a dict with two keys"),
    ("{'cluster': ...}", "This text is not JSON"),
    (["10.0.0.1:12345", "10.0.0.2:12345"], "`answer` is list."),
])
def test_a_wrong_tf_config_says_what_is_wrong(answer, message):
    result = nb07.check_tf_config(answer, show=False)
    assert result.status == WRONG and any(message in m for m in result.messages), result


def test_an_empty_tf_config_is_not_answered_yet():
    assert nb07.check_tf_config(None, show=False).status == EMPTY
    assert nb07.check_tf_config({}, show=False).status == EMPTY
