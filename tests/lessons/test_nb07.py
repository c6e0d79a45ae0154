"""Notebook 07's lesson file: parameters it cannot run with are refused at setup; in its exercise checks,
the notebook's own solutions are right, wrong answers say what is wrong."""

from __future__ import annotations

import json

import pytest

from course_utils import distribute
from course_utils.core.errors import ParameterError
from course_utils.lessons import EMPTY, RIGHT, WRONG, nb07
from course_utils.params import check_parameters

from .solutions import cells, solved, source, task_cells

NOTEBOOK = "07_beyond_one_gpu"
WORKER_1 = {"cluster": {"worker": ["10.0.0.1:12345", "10.0.0.2:12345"]}, "task": {"type": "worker", "index": 1}}


def test_the_notebook_has_the_two_exercises_each_calling_its_check():
    tasks = task_cells(NOTEBOOK)
    assert set(tasks) == {"Exercise 7.1", "Exercise 7.2"}
    assert 'answer = {"global_batch": None, "steps_per_epoch": None}' in tasks["Exercise 7.1"]
    assert 'course.check("7.1", answer)' in tasks["Exercise 7.1"]
    assert 'answer = {"TF_CONFIG": None, "replicas": None}' in tasks["Exercise 7.2"]
    assert 'course.check("7.2", answer)' in tasks["Exercise 7.2"]


def test_the_notebooks_code_does_not_give_worker_1s_config_away():
    code = "\n".join(source(c) for c in cells(NOTEBOOK) if c["cell_type"] == "code")
    assert '"index": 1' not in code and "10.0.0.2" not in code


# ----------------------------------------------------------------------------- what its parameters need


def test_too_few_images_for_one_step_of_run_c_are_refused_at_setup():
    with pytest.raises(ParameterError) as info:
        check_parameters({"IMAGES": 5, "BATCH_SIZE": 128, "CPU_REPLICAS": 2, "DEVICE": "auto"}, nb07.needs)
    assert "IMAGES = 5 " in info.value.what and "at least 256" in info.value.what


def test_the_fewest_images_it_takes_are_accepted():
    nb07.needs({"IMAGES": 256, "BATCH_SIZE": 128, "CPU_REPLICAS": 2, "DEVICE": "cpu"})
    nb07.needs({"IMAGES": 5, "BATCH_SIZE": 128, "CPU_REPLICAS": 2, "DEVICE": "gpu"})  # the GPUs: known at start-up


# ----------------------------------------------------------------------------- Exercise 7.1


def test_the_global_batch_solution_is_right_and_is_batch_plan(capsys):
    answer = solved(NOTEBOOK, "Exercise 7.1")["answer"]
    assert nb07.check_global_batch(answer).status == RIGHT
    plan = distribute.batch_plan(answer["global_batch"], nb07.GPUS, nb07.PLAN_IMAGES)
    assert plan.per_replica == nb07.ONE_GPU_BATCH, "each GPU keeps the work one GPU had"
    assert answer == {"global_batch": 1024, "steps_per_epoch": plan.steps_per_epoch} == {"global_batch": 1024,
                                                                                       "steps_per_epoch": 58}
    assert "the last 608 images are dropped" in capsys.readouterr().out


@pytest.mark.parametrize(("batch", "steps", "message"), [
    (256, 58, "each of the 4 GPUs gets only 64 images: less work than one GPU had"),
    (512, 58, "512 images over 4 GPUs gives each GPU 128 images, not the 256"),
    (1024, 59, "59 counts a last, partial step. With drop_remainder=True the last 608 images make no step"),
    (1024, 234, "234 steps is one GPU's epoch."),
    (1024, 235, "235 steps is one GPU's epoch."),
    (1024, 50, "50 steps of 1024 images would be 51,200 images, not the 60,000 you have."),
    ("1024", 58, "`global_batch` = '1024' is not a whole number of images."),
    (1024, 58.5, "`steps_per_epoch` = 58.5 is not a whole number of steps."),
])
def test_a_wrong_global_batch_names_the_slip(batch, steps, message):
    result = nb07.check_global_batch({"global_batch": batch, "steps_per_epoch": steps})
    assert result.status == WRONG and any(message in m for m in result.messages), result


def test_whole_floats_count_and_an_unfilled_answer_is_not_answered_yet():
    assert nb07.check_global_batch({"global_batch": 1024.0, "steps_per_epoch": 58.0}).ok
    assert nb07.check_global_batch({"global_batch": None, "steps_per_epoch": None}).status == EMPTY
    assert nb07.check_global_batch(None).status == EMPTY


# ----------------------------------------------------------------------------- Exercise 7.2


def test_the_cluster_solution_is_right_and_is_what_the_course_builds(capsys):
    answer = solved(NOTEBOOK, "Exercise 7.2")["answer"]
    assert nb07.check_cluster(answer).status == RIGHT
    assert answer["TF_CONFIG"] == distribute.tf_config(list(nb07.CLUSTER), 1) == WORKER_1
    assert answer["replicas"] == 4
    assert capsys.readouterr().out.startswith("✅ Exercise 7.2: right")


def test_the_json_text_and_a_tuple_of_addresses_are_right_too():
    assert nb07.check_cluster({"TF_CONFIG": json.dumps(WORKER_1), "replicas": 4}).ok
    as_tuple = {"cluster": {"worker": tuple(nb07.CLUSTER)}, "task": {"type": "worker", "index": 1}}
    assert nb07.check_cluster({"TF_CONFIG": as_tuple, "replicas": 4}).ok, "a tuple makes the same JSON"


def config(workers=("10.0.0.1:12345", "10.0.0.2:12345"), task_type="worker", index=1):
    return {"cluster": {"worker": list(workers) if isinstance(workers, tuple) else workers},
            "task": {"type": task_type, "index": index}}


@pytest.mark.parametrize(("tf_config", "message"), [
    (config(index=0), "Index 0 is the first worker, the chief, at 10.0.0.1:12345. This is the second machine."),
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
    (["10.0.0.1:12345", "10.0.0.2:12345"], "`answer[\"TF_CONFIG\"]` is list."),
])
def test_a_wrong_tf_config_says_what_is_wrong(tf_config, message):
    result = nb07.check_cluster({"TF_CONFIG": tf_config, "replicas": 4})
    assert result.status == WRONG and any(message in m for m in result.messages), result


@pytest.mark.parametrize(("replicas", "message"), [
    (2, "2 counts the machines or one machine's GPUs."),
    (1, "Each of the 2 machines has 2 GPUs, and each GPU holds one replica."),
    (8, "Each of the 2 machines has 2 GPUs"),
    ("4", "`replicas` = '4' is not a whole number."),
])
def test_a_wrong_replica_count_says_what_to_count(replicas, message):
    result = nb07.check_cluster({"TF_CONFIG": WORKER_1, "replicas": replicas})
    assert result.status == WRONG and any(message in m for m in result.messages), result


def test_an_unfilled_cluster_answer_is_not_answered_yet():
    assert nb07.check_cluster({"TF_CONFIG": None, "replicas": None}).status == EMPTY
    assert nb07.check_cluster(None).status == EMPTY
