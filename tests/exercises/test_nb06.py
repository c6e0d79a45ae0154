"""Notebook 06's exercise checks: the notebook's own solutions are right, wrong answers say what is wrong."""

from __future__ import annotations

import pytest

from course_utils.exercises import EMPTY, RIGHT, WRONG, nb06

from .solutions import solved, task_cells

NOTEBOOK = "06_tensorboard"
EPOCHS = 3
# The logs a small run of the notebook writes: (run, split) -> {tag: one value per epoch}.
LOGGED = {
    ("dense_zeros", "validation"): {"epoch_loss": [0.9, 0.5, 0.375], "epoch_accuracy": [0.5, 0.75, 0.8125]},
    ("dense_zeros", "train"): {"epoch_loss": [1.25, 0.625, 0.4], "epoch_accuracy": [0.4, 0.7, 0.85]},
    ("dense_noise", "validation"): {"epoch_loss": [1.5, 1.0, 0.875], "epoch_accuracy": [0.3, 0.45, 0.5]},
}


@pytest.fixture(scope="module")
def root(tmp_path_factory):
    """A log folder with TF2-style scalar summaries (tensors of the scalars plugin), as Keras writes them."""
    from tensorboard.compat.proto import event_pb2
    from tensorboard.plugins.scalar.summary_v2 import scalar_pb
    from tensorboard.summary.writer.event_file_writer import EventFileWriter

    folder = tmp_path_factory.mktemp("logs")
    for (run, split), by_tag in LOGGED.items():
        writer = EventFileWriter(str(folder / run / split))
        for tag, values in by_tag.items():
            for step, value in enumerate(values):
                writer.add_event(event_pb2.Event(step=step, wall_time=1.0 + step, summary=scalar_pb(tag, value)))
        writer.close()
    return folder


def test_the_notebook_has_the_two_exercises_each_calling_its_check():
    tasks = task_cells(NOTEBOOK)
    assert set(tasks) == {"Exercise 6.1", "Exercise 6.2"}
    assert "nb06.check_series(answer, root)" in tasks["Exercise 6.1"]
    assert "nb06.check_profile_range(answer)" in tasks["Exercise 6.2"]
    for source in tasks.values():
        assert "answer = None" in source, "the task starts with an empty answer"


def test_the_task_cells_run_unattended_with_their_answers_empty(root, capsys):
    namespace = {"root": root}  # one kernel: the cells run in order
    for exercise, source in task_cells(NOTEBOOK).items():
        exec(source, namespace)  # noqa: S102 - the notebook's own task cell
        assert f"✏️ {exercise}: not answered yet" in capsys.readouterr().out


# ----------------------------------------------------------------------------- Exercise 6.1


def test_the_series_solution_reads_the_logged_values(root, capsys):
    from tensorboard.backend.event_processing import event_accumulator

    from course_utils.tf_setup import quiet_tensorflow

    names = {"root": root, "tf": quiet_tensorflow(), "event_accumulator": event_accumulator}
    answer = solved(NOTEBOOK, "Exercise 6.1", **names)["answer"]
    assert answer == pytest.approx(LOGGED[("dense_zeros", "validation")]["epoch_loss"])
    result = nb06.check_series(answer, root)
    assert result.status == RIGHT, result
    assert capsys.readouterr().out.startswith("✅ Exercise 6.1: right")


@pytest.mark.parametrize(("answer", "message"), [
    ([1.25, 0.625, 0.4], "These are the numbers of dense_zeros/train epoch_loss."),
    ([1.5, 1.0, 0.875], "These are the numbers of dense_noise/validation epoch_loss."),
    ([0.5, 0.75, 0.8125], "These are the numbers of dense_zeros/validation epoch_accuracy."),
    ([], "Your list is empty. `Scalars()` finds nothing in TF2 logs"),
    ([0.9, 0.5], "The log holds 3 epochs (steps 0 to 2); your list has 2 numbers."),
    ([0.9, 0.5, 0.4], "Epoch 2: your value is 0.4, the log holds 0.375."),
    ("0.9, 0.5, 0.375", "`answer` is str, not a list of numbers."),
])
def test_a_wrong_series_says_what_it_is(root, answer, message):
    result = nb06.check_series(answer, root, show=False)
    assert result.status == WRONG and any(message in m for m in result.messages), result


def test_numpy_values_and_tuples_are_read_too(root):
    import numpy as np

    assert nb06.check_series(tuple(np.float32([0.9, 0.5, 0.375])), root, show=False).ok
    assert nb06.check_series(np.array([0.9, 0.5, 0.375]), root, show=False).ok


def test_an_empty_series_answer_is_not_answered_yet(root):
    assert nb06.check_series(None, root, show=False).status == EMPTY


def test_logs_without_the_run_say_to_run_section_3_first(tmp_path):
    result = nb06.check_series([0.9, 0.5, 0.375], tmp_path, show=False)
    assert result.status == WRONG and "Run the cells of section 3 first" in result.messages[0]


# ----------------------------------------------------------------------------- Exercise 6.2


def test_the_profile_range_solution_is_right_and_passes_the_course_rules(capsys):
    from course_utils.tb_profile import check_profile_batch

    answer = solved(NOTEBOOK, "Exercise 6.2")["answer"]
    result = nb06.check_profile_range(answer)
    assert result.status == RIGHT, result
    start, stop = check_profile_batch(answer, total_batches=nb06.PROFILE_EPOCHS * nb06.BATCHES_PER_EPOCH)
    assert stop - start + 1 == nb06.PROFILE_STEPS and 21 <= start and stop <= 40, "5 batches of epoch 2"
    assert capsys.readouterr().out.startswith("✅ Exercise 6.2: right")


@pytest.mark.parametrize("answer", [(21, 25), (30, 34), (36, 40), [25, 29]])
def test_any_five_batches_of_epoch_2_are_right(answer):
    assert nb06.check_profile_range(answer, show=False).ok


@pytest.mark.parametrize(("answer", "message"), [
    ((20, 24), "Batch 20 is the last batch of epoch 1. Keras counts batches from 1, across epochs"),
    ((21, 26), "Keras counts both ends: (21, 26) profiles 6 batches, not 5."),
    ((1, 5), "the first batches are warm-up"),
    ((5, 9), "Batch 5 is in epoch 1. Epoch 2 is batches 21 to 40"),
    ((41, 45), "Batch 41 is in epoch 3."),
    ((38, 42), "Batch 42 is in epoch 3. Stop by batch 40"),
    ((58, 62), "ends at batch 62, but training runs only 60 batches"),
    ((21, 40), "profiles 20 batches"),
    ((25, 21), "ends before it starts"),
    ("21-25", "is not two whole numbers"),
    ((21.0, 25.0), "is not two whole numbers"),
])
def test_a_wrong_profile_range_says_what_is_wrong(answer, message):
    result = nb06.check_profile_range(answer, show=False)
    assert result.status == WRONG and any(message in m for m in result.messages), result


def test_an_empty_profile_range_is_not_answered_yet():
    assert nb06.check_profile_range(None, show=False).status == EMPTY
    assert nb06.check_profile_range((), show=False).status == EMPTY
