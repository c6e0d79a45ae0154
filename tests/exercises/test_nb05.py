"""Notebook 05's exercise checks: the solutions shown in the notebook pass; wrong and empty answers say why."""

from __future__ import annotations

import statistics
from types import SimpleNamespace

import numpy as np
import pytest

import course_utils.exercises.nb05 as nb05
from course_utils.exercises import EMPTY, RIGHT, WRONG

from .solutions import solutions, task_cells

NOTEBOOK = "05_cnn_cpu_vs_gpu"


@pytest.fixture(scope="module")
def shown():
    return solutions(NOTEBOOK)


def keras_namespace() -> dict:
    import keras
    from keras import layers

    return {"keras": keras, "layers": layers}


def blog_cnn(activation: str | None):
    """The blog post's CNN, ending in a softmax (``"softmax"``) or in logits (``None``)."""
    from course_utils.models import build_blog_cnn

    return build_blog_cnn(logits=activation is None)


def messages(result) -> str:
    return " ".join(result.messages)


def test_every_exercise_has_its_task_and_solution():
    assert sorted(task_cells(NOTEBOOK)) == sorted(solutions(NOTEBOOK)) == ["Exercise 5.1", "Exercise 5.2",
                                                                         "Exercise 5.3"]


# --------------------------------------------------------------------------- 5.1


def test_5_1_the_solution_shown_is_right(shown, capsys):
    ns = keras_namespace()
    exec(shown["Exercise 5.1"], ns)
    result = nb05.check_model_and_loss(ns["my_model"], ns["my_loss"])
    assert result.status == RIGHT and "logits output with from_logits=True" in messages(result)
    assert "✅ Exercise 5.1: right" in capsys.readouterr().out


def test_5_1_the_other_fix_is_right_too():
    import keras

    for loss in (keras.losses.SparseCategoricalCrossentropy(), "sparse_categorical_crossentropy",
                 keras.losses.sparse_categorical_crossentropy):
        result = nb05.check_model_and_loss(blog_cnn("softmax"), loss, show=False)
        assert result.status == RIGHT and "softmax output with from_logits=False" in messages(result)
    softmax_layer = keras.Sequential([*blog_cnn(None).layers, keras.layers.Softmax()])
    assert nb05.check_model_and_loss(softmax_layer, "sparse_categorical_crossentropy", show=False).ok


def test_5_1_the_blog_posts_pair_is_wrong():
    import keras

    loss = keras.losses.SparseCategoricalCrossentropy(from_logits=True)
    result = nb05.check_model_and_loss(blog_cnn("softmax"), loss, show=False)
    assert result.status == WRONG and "outputs probabilities" in messages(result)
    assert "blog post's mismatch" in messages(result)


def test_5_1_logits_with_from_logits_false_is_wrong():
    import keras

    result = nb05.check_model_and_loss(blog_cnn(None), keras.losses.SparseCategoricalCrossentropy(), show=False)
    assert result.status == WRONG and "outputs logits" in messages(result) and "from_logits=False" in messages(result)


def test_5_1_other_layers_or_losses_are_named():
    import keras

    small = keras.Sequential([keras.Input((28, 28, 1)), keras.layers.Flatten(), keras.layers.Dense(10)])
    loss = keras.losses.SparseCategoricalCrossentropy(from_logits=True)
    assert "7,850 parameters" in messages(nb05.check_model_and_loss(small, loss, show=False))
    wrong_loss = nb05.check_model_and_loss(blog_cnn(None), keras.losses.CategoricalCrossentropy(from_logits=True),
                                           show=False)
    assert wrong_loss.status == WRONG and "SparseCategoricalCrossentropy" in messages(wrong_loss)
    flat = keras.Sequential([keras.Input((784,)), keras.layers.Dense(10)])
    broken = nb05.check_model_and_loss(flat, loss, show=False)
    assert broken.status == WRONG and "cannot take a batch of 28x28x1 images" in messages(broken)
    not_a_model = nb05.check_model_and_loss("Dense(10)", loss, show=False)
    assert not_a_model.status == WRONG and "keras.Sequential" in messages(not_a_model)


def test_5_1_empty_is_not_answered_and_the_task_cell_runs(capsys):
    ns = {}
    exec(task_cells(NOTEBOOK)["Exercise 5.1"], ns)  # what papermill and nbval run: answers empty
    assert "✏️ Exercise 5.1: not answered yet" in capsys.readouterr().out
    assert nb05.check_model_and_loss(blog_cnn(None), None, show=False).status == EMPTY


# --------------------------------------------------------------------------- 5.2

TIMES = [14.0, 5.0, 5.2, 9.0, 5.4]  # a warm-up epoch, then one slow epoch (the machine was busy)
IMAGES = 60_000


def test_5_2_the_solution_shown_is_right(shown):
    ns = {"timer": SimpleNamespace(times=TIMES), "train_images": np.zeros((IMAGES, 28, 28), np.uint8)}
    exec(shown["Exercise 5.2"], ns)
    assert ns["answer"] == pytest.approx(IMAGES / 5.3)
    assert nb05.check_images_per_s(ns["answer"], epoch_s=TIMES, images=IMAGES, show=False).status == RIGHT
    assert nb05.check_images_per_s(round(ns["answer"]), epoch_s=TIMES, images=IMAGES, show=False).ok, "rounded"


@pytest.mark.parametrize(("answer", "says"), [
    (IMAGES / statistics.mean(TIMES[1:]), "mean of the later epochs"),
    (IMAGES / statistics.median(TIMES), "counted the first epoch"),
    (IMAGES / statistics.mean(TIMES), "counted the first epoch"),
    (5.3, "seconds per epoch"),
    (5.3 / IMAGES, "seconds per image"),
    (1234.0, "divide the number of training images (60,000)"),
    ("9917", "one number"),
])
def test_5_2_each_mistake_is_named(answer, says):
    result = nb05.check_images_per_s(answer, epoch_s=TIMES, images=IMAGES, show=False)
    assert result.status == WRONG and says in messages(result)


def test_5_2_empty_and_one_epoch_are_not_answered(capsys):
    ns = {"nb05": nb05, "timer": SimpleNamespace(times=TIMES), "train_images": np.zeros((10, 28, 28))}
    exec(task_cells(NOTEBOOK)["Exercise 5.2"], ns)
    assert "✏️ Exercise 5.2: not answered yet" in capsys.readouterr().out
    one = nb05.check_images_per_s(1000.0, epoch_s=[3.0], images=IMAGES, show=False)
    assert one.status == EMPTY and "EPOCHS >= 2" in messages(one)


# --------------------------------------------------------------------------- 5.3


def row(name, batch, rate, images_per_s, accuracy, keeps):
    return {"name": name, "batch_size": batch, "learning_rate": rate, "images_per_s": images_per_s,
            "test_accuracy": accuracy, "keeps_accuracy": keeps, "speedup_vs_baseline": images_per_s / 1000}


LONG_RUN = {"best": "tf.data cache+prefetch", "configs": [
    row("as in the blog post", 32, 0.001, 1000, 0.990, True),
    row("batch 256", 256, 0.002, 2400, 0.982, False),
    row("tf.data cache+prefetch", 256, 0.002, 2600, 0.988, True),
    row("XLA", 256, 0.002, 900, 0.987, True),
]}
SHORT_RUN = {"best": "as in the blog post", "configs": [
    row("as in the blog post", 32, 0.001, 700, 0.82, True),
    row("batch 256", 256, 0.002, 1300, 0.63, False),
    row("tf.data cache+prefetch", 256, 0.002, 1400, 0.58, False),
]}


@pytest.mark.parametrize(("report", "pair"), [(LONG_RUN, (256, 0.002)), (SHORT_RUN, (32, 0.001))])
def test_5_3_the_solution_shown_is_right_for_a_long_and_a_short_run(shown, report, pair):
    ns = {"report": report}
    exec(shown["Exercise 5.3"], ns)
    assert ns["answer"] == pair
    result = nb05.check_batch_and_rate(ns["answer"], report=report, show=False)
    assert result.status == RIGHT and report["best"] in messages(result)
    assert nb05.check_batch_and_rate({"batch_size": pair[0], "learning_rate": pair[1]}, report=report,
                                     show=False).ok


@pytest.mark.parametrize(("report", "answer", "says"), [
    (SHORT_RUN, (256, 0.002), "lost accuracy"),
    (LONG_RUN, (32, 0.001), "kept it too and was faster"),
    (LONG_RUN, (256, 0.008), "linear scaling rule"),
    (LONG_RUN, (512, 0.002), "did not measure batch 512"),
    (LONG_RUN, 256, "(batch_size, learning_rate)"),
    (LONG_RUN, ("256", "0.002"), "(batch_size, learning_rate)"),
])
def test_5_3_wrong_choices_say_why(report, answer, says):
    result = nb05.check_batch_and_rate(answer, report=report, show=False)
    assert result.status == WRONG and says in messages(result)


def test_5_3_empty_is_not_answered_and_the_task_cell_runs(capsys):
    exec(task_cells(NOTEBOOK)["Exercise 5.3"], {"nb05": nb05, "report": LONG_RUN})
    assert "✏️ Exercise 5.3: not answered yet" in capsys.readouterr().out
