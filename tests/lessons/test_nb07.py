"""Notebook 07's exercise checks: every answer the task allows is right, wrong answers say what is wrong."""

from __future__ import annotations

import json

import pytest

from course_utils.lessons import RIGHT, WRONG, nb07
from course_utils.lessons.nb07 import distribute

from .solutions import cells, solved, source, task_cells

NOTEBOOK = "07_beyond_one_gpu"
WORKER_1 = {"cluster": {"worker": ["10.0.0.1:12345", "10.0.0.2:12345"]}, "task": {"type": "worker", "index": 1}}


def test_the_tasks_start_with_the_keys_the_checks_read_and_no_values():
    tasks = task_cells(NOTEBOOK)
    assert 'answer = {"global_batch": None, "steps_per_epoch": None}' in tasks["Exercise 7.1"]
    assert 'answer = {"TF_CONFIG": None, "replicas": None}' in tasks["Exercise 7.2"]


def test_with_gpus_the_images_one_step_needs_are_checked_at_start_up():
    nb07.needs({"IMAGES": 5, "BATCH_SIZE": 128, "CPU_REPLICAS": 2, "DEVICE": "gpu"})  # the GPUs: known then


def test_the_notebooks_code_does_not_give_worker_1s_config_away():
    code = "\n".join(source(c) for c in cells(NOTEBOOK) if c["cell_type"] == "code")
    assert '"index": 1' not in code and "10.0.0.2" not in code


# ----------------------------------------------------------------------------- Exercise 7.1

# Exercise 7.1's task: "On one GPU, you train with a batch of 256 [...]. Now a machine has four such GPUs. Choose the
# global batch that gives each GPU the same work as before. How many steps make an epoch of 60,000 images, with
# `drop_remainder=True`?" The cell: "replace each None with a whole number". Every answer it allows: a global batch
# of 4 x 256 = 1024 (each GPU keeps its 256 images), and 60,000 // 1024 = 58 whole steps.
ACCEPT_7_1 = [
    ({"global_batch": 1024, "steps_per_epoch": 58}, "4 x 256 images; 58 whole steps, the last 608 images dropped"),
    ({"global_batch": 1024.0, "steps_per_epoch": 58.0}, "the same whole numbers, written as floats"),
]
REJECT_7_1 = [
    ({"global_batch": 256, "steps_per_epoch": 234}, "each of the 4 GPUs gets only 64 images: less work than one "
                                                     "GPU had"),  # the one-GPU batch kept as the global batch
    ({"global_batch": 512, "steps_per_epoch": 58}, "512 images over 4 GPUs gives each GPU 128 images, not the 256"),
    ({"global_batch": 2048, "steps_per_epoch": 29}, "2048 images over 4 GPUs gives each GPU 512 images, not the 256"),
    ({"global_batch": 512, "steps_per_epoch": 234}, "234 steps is one GPU's epoch."),
    ({"global_batch": 512, "steps_per_epoch": 100}, "100 steps of 1024 images would be 102,400 images"),
    ({"global_batch": 1024, "steps_per_epoch": 59}, "59 counts a last, partial step. With drop_remainder=True the "
                                                     "last 608 images make no step: round down."),  # no drop_remainder
    ({"global_batch": 1024, "steps_per_epoch": 234}, "234 steps is one GPU's epoch."),
    ({"global_batch": 1024, "steps_per_epoch": 235}, "235 steps is one GPU's epoch."),
    ({"global_batch": 1024, "steps_per_epoch": 50}, "50 steps of 1024 images would be 51,200 images, not the 60,000 "
                                                     "you have."),
    ({"global_batch": 1024, "steps_per_epoch": 58.59375}, "`steps_per_epoch` = 58.59375 is not a whole number of "
                                                          "steps."),  # 60,000 / 1024, not rounded
    ({"global_batch": 1024, "steps_per_epoch": None}, "`steps_per_epoch` = None is not a whole number of steps."),
    ({"global_batch": "1024", "steps_per_epoch": 58}, "`global_batch` = '1024' is not a whole number of images."),
]


def test_the_global_batch_solution_is_batch_plan():
    answer = solved(NOTEBOOK, "Exercise 7.1")["answer"]
    plan = distribute.batch_plan(answer["global_batch"], nb07.GPUS, nb07.PLAN_IMAGES)
    assert plan.per_replica == nb07.ONE_GPU_BATCH, "each GPU keeps the work one GPU had"
    assert answer == {"global_batch": 1024, "steps_per_epoch": plan.steps_per_epoch} == {"global_batch": 1024,
                                                                                       "steps_per_epoch": 58}


def test_the_task_says_the_epoch_drops_its_last_partial_batch():
    """Without drop_remainder, Keras would run a 59th, partial step: the task must say which epoch it means."""
    task = next(source(c) for c in cells(NOTEBOOK) if "### Exercise 7.1" in source(c))
    assert "drop_remainder=True" in task.split("### Exercise 7.1")[1]


def test_steps_that_fit_a_wrong_global_batch_get_only_the_batch_s_reason():
    """29 steps of 2048 images is right arithmetic: the slip is the batch, and only the batch is named."""
    result = nb07.check_global_batch({"global_batch": 2048, "steps_per_epoch": 29})
    assert result.status == WRONG and len(result.messages) == 1 and "2048 images over 4 GPUs" in result.messages[0]


# ----------------------------------------------------------------------------- Exercise 7.2


def config(workers=("10.0.0.1:12345", "10.0.0.2:12345"), task_type="worker", index=1):
    return {"cluster": {"worker": list(workers) if isinstance(workers, tuple) else workers},
            "task": {"type": task_type, "index": index}}


def cluster_answer(tf_config=WORKER_1, replicas=4):
    return {"TF_CONFIG": tf_config, "replicas": replicas}


CHIEF_LAYOUT = {"cluster": {"chief": ["10.0.0.1:12345"], "worker": ["10.0.0.2:12345"]},
                "task": {"type": "worker", "index": 0}}  # valid TensorFlow, but the task makes the first worker 0

# Exercise 7.2's task: "The machines `10.0.0.1:12345` and `10.0.0.2:12345` have two GPUs each. The first is worker 0,
# the chief. Write `TF_CONFIG` for the second machine. How many replicas train in sync?" Section 4: every machine is
# a worker, the cluster is "every worker's host:port, the same list everywhere", and each has "its own task index".
# The cell: "TF_CONFIG as a dict, and the replicas as a whole number". Every answer it allows: worker 1 of that list,
# as a dict or as the JSON text the variable holds, the index as TensorFlow reads it (int()), and 2 x 2 replicas.
ACCEPT_7_2 = [
    (cluster_answer(), "the dict, as the course builds it"),
    (cluster_answer(json.dumps(WORKER_1)), "the JSON text that the environment variable TF_CONFIG holds"),
    (cluster_answer(config(workers=tuple(nb07.CLUSTER))), "a tuple of addresses makes the same JSON list"),
    (cluster_answer(config(index="1")), "TensorFlow reads the index with int(): \"1\" is index 1"),
    (cluster_answer(json.dumps(config(index="1"))), "the same, in JSON text"),
    (cluster_answer(replicas=4.0), "a whole number of replicas, written as a float"),
]
REJECT_7_2 = [
    (cluster_answer(config(index=0)), "Index 0 is the first worker, the chief, at 10.0.0.1:12345. This is the "
                                      "second machine."),
    (cluster_answer(config(index=2)), "Indexes count from 0: the second worker is index 1."),
    (cluster_answer(config(index=5)), "The index 5 is not a place in the worker list."),
    (cluster_answer(config(index="one")), "The index is the number 1, not 'one'."),
    (cluster_answer(config(index=1.5)), "The index is the number 1, not 1.5."),
    (cluster_answer(config(index=True)), "The index is the number 1, not True."),
    (cluster_answer(config(task_type="chief")), "This cluster has only workers: worker 0 acts as the chief."),
    (cluster_answer(config(task_type="Worker")), "The task type is 'Worker'; here every machine is a 'worker'."),
    (cluster_answer(CHIEF_LAYOUT), "The first machine is worker 0, and worker 0 acts as the chief: list both "
                                   "machines under 'worker', with no separate 'chief' task."),
    (cluster_answer(config(workers=("10.0.0.2:12345",), index=0)), "The cluster lists every worker, not only this "
                                                                   "one"),
    (cluster_answer(config(workers=("10.0.0.2:12345", "10.0.0.1:12345"), index=0)),
     "Keep the order ['10.0.0.1:12345', '10.0.0.2:12345']"),  # the second machine made worker 0
    (cluster_answer(config(workers=("10.0.0.2:12345", "10.0.0.1:12345"))), "Keep the order"),
    (cluster_answer(config(workers="10.0.0.1:12345,10.0.0.2:12345")), "'worker' is a list of addresses"),
    (cluster_answer(config(workers=("10.0.0.1", "10.0.0.2"))), "both addresses, as 'host:port' text"),
    (cluster_answer({"cluster": {"worker": list(nb07.CLUSTER)}}), "TF_CONFIG has two keys, 'cluster' and 'task' "
                                                                  "(missing ['task'])"),
    (cluster_answer({"cluster": list(nb07.CLUSTER), "task": {"type": "worker", "index": 1}}),
     "'cluster' is a dict with one key"),
    (cluster_answer({"cluster": {"worker": list(nb07.CLUSTER)}, "task": 1}), "'task' is a dict with two keys"),
    (cluster_answer("{'cluster': ...}"), "This text is not JSON"),
    (cluster_answer(list(nb07.CLUSTER)), "`answer[\"TF_CONFIG\"]` is list."),
    (cluster_answer(replicas=2), "2 counts the machines or one machine's GPUs."),
    (cluster_answer(replicas=1), "Each of the 2 machines has 2 GPUs, and each GPU holds one replica."),
    (cluster_answer(replicas=8), "Each of the 2 machines has 2 GPUs"),
    (cluster_answer(replicas="4"), "`replicas` = '4' is not a whole number."),
]


def test_the_cluster_solution_is_what_the_course_builds():
    answer = solved(NOTEBOOK, "Exercise 7.2")["answer"]
    assert answer["TF_CONFIG"] == distribute.tf_config(list(nb07.CLUSTER), 1) == WORKER_1
    assert answer["replicas"] == 4


def test_tensorflow_reads_the_accepted_configs_as_worker_1_of_the_two_machines(monkeypatch):
    """What the check accepts, TensorFlow's TF_CONFIG reader takes as worker 1 of the task's cluster."""
    resolver = pytest.importorskip("tensorflow.python.distribute.cluster_resolver.tfconfig_cluster_resolver")
    for answer, _why in ACCEPT_7_2:
        value = answer["TF_CONFIG"]
        monkeypatch.setenv("TF_CONFIG", value if isinstance(value, str) else json.dumps(value))
        found = resolver.TFConfigClusterResolver()
        assert (found.task_type, found.task_id, found.cluster_spec().as_dict()) == (
            "worker", 1, {"worker": list(nb07.CLUSTER)}), answer


@pytest.mark.parametrize(("check", "answer", "why"), [(nb07.check_global_batch, *r) for r in ACCEPT_7_1]
                         + [(nb07.check_cluster, *r) for r in ACCEPT_7_2])
def test_every_answer_the_task_allows_is_right(check, answer, why):
    result = check(answer)
    assert result.status == RIGHT, (why, result)


@pytest.mark.parametrize(("check", "answer", "message"), [(nb07.check_global_batch, *r) for r in REJECT_7_1]
                         + [(nb07.check_cluster, *r) for r in REJECT_7_2])
def test_a_wrong_answer_says_what_is_wrong(check, answer, message):
    result = check(answer)
    assert result.status == WRONG and any(message in m for m in result.messages), result


def test_the_chief_layout_gets_one_reason_not_the_index_of_another_layout():
    result = nb07.check_cluster(cluster_answer(CHIEF_LAYOUT))
    assert len(result.messages) == 1, result


@pytest.mark.parametrize("check", [nb07.check_global_batch, nb07.check_cluster])
def test_an_answer_that_is_not_the_dict_is_wrong_and_says_so(check):
    result = check(1024)
    assert result.status == WRONG and "should be a dict" in result.messages[0]
