"""Notebook 05's lesson file: parameters it cannot run with are refused at setup; in its exercise checks,
the solutions shown in the notebook pass; wrong and empty answers say why."""

from __future__ import annotations

import pytest

import course_utils.lessons.nb05 as nb05
from course_utils.core.errors import ParameterError
from course_utils.lessons import EMPTY, RIGHT, WRONG
from course_utils.params import check_parameters

from .solutions import solutions, task_cells

NOTEBOOK = "05_cnn_cpu_vs_gpu"


@pytest.fixture(scope="module")
def shown():
    return solutions(NOTEBOOK)


def keras_namespace() -> dict:
    import keras
    from keras import layers

    return {"keras": keras, "layers": layers, "blog_cnn": blog_cnn}


def blog_cnn(activation: str | None):
    """The blog post's CNN, ending in a softmax (``"softmax"``) or in logits (``None``)."""
    from course_utils.models import build_blog_cnn

    return build_blog_cnn(logits=activation is None)


def messages(result) -> str:
    return " ".join(result.messages)


def test_every_exercise_has_its_task_and_solution():
    assert sorted(task_cells(NOTEBOOK)) == sorted(solutions(NOTEBOOK)) == ["Exercise 5.1", "Exercise 5.2",
                                                                         "Exercise 5.3"]


# ----------------------------------------------------------------------------- what its parameters need


def test_too_few_images_for_its_checkpoint_are_refused_at_setup():
    with pytest.raises(ParameterError) as info:
        check_parameters({"IMAGES": 5}, nb05.needs)
    assert "IMAGES = 5 " in info.value.what and "at least 2,000" in info.value.what


@pytest.mark.parametrize(
    "parameters, what, fix",
    [
        ({"EPOCHS": 1}, "EPOCHS = 1 leaves no epoch to time", "EPOCHS >= 2"),
        ({"MIXED_PRECISION": "fp16"}, "MIXED_PRECISION = 'fp16' is not understood", "None"),
        ({"TARGET_ACCURACY": 96}, "TARGET_ACCURACY = 96 is not an accuracy", "0.96, or None"),
        ({"TARGET_ACCURACY": True}, "TARGET_ACCURACY = True is not an accuracy", "None"),
    ],
)
def test_parameters_that_only_clash_with_each_other_are_refused_at_setup(parameters, what, fix):
    """Checked with the others before TensorFlow loads, not in the cell that would fail minutes later."""
    with pytest.raises(ParameterError) as info:
        check_parameters(parameters, nb05.needs)
    assert what in info.value.what and fix in info.value.fix


def test_the_clashing_parameters_pass_when_they_agree():
    check_parameters({"EPOCHS": 2, "MIXED_PRECISION": None, "TARGET_ACCURACY": None}, nb05.needs)
    check_parameters({"EPOCHS": 3, "MIXED_PRECISION": "mixed_float16", "TARGET_ACCURACY": 0.96}, nb05.needs)
    nb05.needs({"IMAGES": 2000})


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
        result = nb05.check_model_and_loss(blog_cnn("softmax"), loss)
        assert result.status == RIGHT and "softmax output with from_logits=False" in messages(result)
    softmax_layer = keras.Sequential([*blog_cnn(None).layers, keras.layers.Softmax()])
    assert nb05.check_model_and_loss(softmax_layer, "sparse_categorical_crossentropy").ok


def test_5_1_the_blog_posts_pair_is_wrong():
    import keras

    loss = keras.losses.SparseCategoricalCrossentropy(from_logits=True)
    result = nb05.check_model_and_loss(blog_cnn("softmax"), loss)
    assert result.status == WRONG and "outputs probabilities" in messages(result)
    assert "blog post's mismatch" in messages(result)


def test_5_1_logits_with_from_logits_false_is_wrong():
    import keras

    result = nb05.check_model_and_loss(blog_cnn(None), keras.losses.SparseCategoricalCrossentropy())
    assert result.status == WRONG and "outputs logits" in messages(result) and "from_logits=False" in messages(result)


def test_5_1_other_layers_or_losses_are_named():
    import keras

    small = keras.Sequential([keras.Input((28, 28, 1)), keras.layers.Flatten(), keras.layers.Dense(10)])
    loss = keras.losses.SparseCategoricalCrossentropy(from_logits=True)
    assert "7,850 parameters" in messages(nb05.check_model_and_loss(small, loss))
    wrong_loss = nb05.check_model_and_loss(blog_cnn(None), keras.losses.CategoricalCrossentropy(from_logits=True))
    assert wrong_loss.status == WRONG and "SparseCategoricalCrossentropy" in messages(wrong_loss)
    flat = keras.Sequential([keras.Input((784,)), keras.layers.Dense(10)])
    broken = nb05.check_model_and_loss(flat, loss)
    assert broken.status == WRONG and "cannot take a batch of 28x28x1 images" in messages(broken)
    not_a_model = nb05.check_model_and_loss("Dense(10)", loss)
    assert not_a_model.status == WRONG and "keras.Sequential" in messages(not_a_model)


def test_5_1_a_model_without_its_loss_is_not_answered_yet():
    assert nb05.check_model_and_loss(blog_cnn(None), None).status == EMPTY


# --------------------------------------------------------------------------- 5.2


def test_5_2_the_solution_shown_is_right(shown):
    ns: dict = {}
    exec(shown["Exercise 5.2"], ns)
    result = nb05.check_utilisation(ns["answer"])
    assert result.status == RIGHT and "eight times fewer steps" in messages(result)


@pytest.mark.parametrize(("answer", "says"), [
    ("a", "utilisation goes down, not up"),
    ("c", "counts the time a kernel runs, not the memory used"),
    ("d", "runs on the GPU already"),
])
def test_5_2_each_wrong_choice_says_why(answer, says):
    result = nb05.check_utilisation(answer)
    assert result.status == WRONG and says in messages(result)


def test_5_2_spellings_and_odd_answers():
    assert nb05.check_utilisation(" (B) ").ok
    assert nb05.check_utilisation("e").status == WRONG
    assert nb05.check_utilisation("").status == EMPTY


# --------------------------------------------------------------------------- 5.3


def test_5_3_the_solution_shown_is_right(shown):
    ns: dict = {}
    exec(shown["Exercise 5.3"], ns)
    assert set(ns["answer"]) == set(nb05.GPUS)
    result = nb05.check_policies(ns["answer"])
    assert result.status == RIGHT and "LossScaleOptimizer" in messages(result)


def test_5_3_the_rule_comes_from_the_course_s_tensor_core_function():
    from course_utils.speed import gpu_policy

    assert {gpu: gpu_policy(gpu, cc)[0] for gpu, cc in nb05.GPUS.items()} == {
        "GeForce RTX 3060": "mixed_bfloat16", "Tesla T4": "mixed_float16", "GeForce GTX 1660 Ti": None,
        "GeForce GTX 1080": None}


def test_5_3_every_correct_answer_is_accepted():
    """float16 on an 8.x GPU is right too (with loss scaling); "float32" and "None" mean no policy."""
    answer = {"GeForce RTX 3060": "mixed_float16", "Tesla T4": " Mixed_Float16 ", "GeForce GTX 1660 Ti": "float32",
              "GeForce GTX 1080": "None"}
    assert nb05.check_policies(answer).ok


@pytest.mark.parametrize(("gpu", "given", "says"), [
    ("Tesla T4", "mixed_bfloat16", "bfloat16 needs compute capability 8.0"),
    ("Tesla T4", None, "it has Tensor Cores"),
    ("GeForce GTX 1660 Ti", "mixed_float16", "no Tensor Cores"),
    ("GeForce GTX 1080", "mixed_float16", "Tensor Cores came with compute capability 7.0"),
    ("GeForce RTX 3060", None, "it has Tensor Cores"),
    ("GeForce RTX 3060", "fp16", "is not \"mixed_bfloat16\""),
])
def test_5_3_a_wrong_policy_says_what_to_look_at(shown, gpu, given, says):
    ns: dict = {}
    exec(shown["Exercise 5.3"], ns)
    result = nb05.check_policies({**ns["answer"], gpu: given})
    assert result.status == WRONG and len(result.messages) == 1
    assert result.messages[0].startswith(gpu) and says in result.messages[0]


def test_5_3_missing_gpus_and_odd_answers():
    partial = nb05.check_policies({"Tesla T4": "mixed_float16"})
    assert partial.status == WRONG and "GeForce RTX 3060 (8.6) has no answer." in partial.messages
    assert "should be a dict" in messages(nb05.check_policies("mixed_float16"))
