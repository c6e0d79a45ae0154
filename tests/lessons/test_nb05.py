"""Notebook 05's lesson file: parameters it cannot run with are refused at setup; each exercise's check
accepts every answer its task allows and rejects the wrong ones with a reason that is true (the tables)."""

from __future__ import annotations

import functools

import pytest

import course_utils.lessons.nb05 as nb05
from course_utils.core.errors import ParameterError
from course_utils.lessons import EMPTY, RIGHT, WRONG
from course_utils.params import check_parameters

from .solutions import function, solved

NOTEBOOK = "05_cnn_cpu_vs_gpu"


def blog_cnn(last_activation):
    """The notebook's ``blog_cnn`` (its cell "blog-model"): the blog post's CNN with ``last_activation`` last."""
    import keras

    return function(NOTEBOOK, "blog-model", "blog_cnn", keras=keras)(last_activation)


def messages(result) -> str:
    return " ".join(result.messages)


# ----------------------------------------------------------------------------- what its parameters need


@pytest.mark.parametrize(
    "parameters, what, fix",
    [
        ({"EPOCHS": 1}, "EPOCHS = 1 leaves no epoch to time", "EPOCHS >= 2"),
        ({"MIXED_PRECISION": "fp16"}, "MIXED_PRECISION = 'fp16' is not understood", "None"),
        ({"TARGET_ACCURACY": 96}, "TARGET_ACCURACY = 96 is not an accuracy", "0.96, or None"),
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


# --------------------------------------------------------------------------- 5.1
# Exercise 5.1's task: "Write a model and a loss that agree: `my_model` and `my_loss`. Keep the post's layers."
# Section 1 gives the facts: the last layer's raw scores are the logits, softmax turns them into probabilities,
# and `from_logits=True` means the loss expects logits. Every model keeps the post's layers (93,322
# parameters) unless the row says otherwise; every loss is one that `model.compile(loss=...)` takes.


def model(kind: str):
    import keras

    return {
        "logits": lambda: blog_cnn(None),
        "linear": lambda: blog_cnn("linear"),
        "log_softmax": lambda: blog_cnn("log_softmax"),
        "softmax": lambda: blog_cnn("softmax"),
        "Softmax layer": lambda: keras.Sequential([*blog_cnn(None).layers, keras.layers.Softmax()]),
        "relu": lambda: blog_cnn("relu"),
        "one Dense layer": lambda: keras.Sequential(
            [keras.Input((28, 28, 1)), keras.layers.Flatten(), keras.layers.Dense(10)]),
        "flat input": lambda: keras.Sequential([keras.Input((784,)), keras.layers.Dense(10)]),
        "a string": lambda: "Dense(10)",
    }[kind]()


def loss(kind: str):
    import keras

    scce = keras.losses.SparseCategoricalCrossentropy
    return {
        "SCCE(from_logits=True)": lambda: scce(from_logits=True),
        "SCCE(from_logits=True, reduction='sum')": lambda: scce(from_logits=True, reduction="sum"),
        "SCCE()": lambda: scce(),
        "SCCE(from_logits=False)": lambda: scce(from_logits=False),
        "the class SCCE": lambda: scce,
        "'sparse_categorical_crossentropy'": lambda: "sparse_categorical_crossentropy",
        "'SparseCategoricalCrossentropy'": lambda: "SparseCategoricalCrossentropy",
        "the function": lambda: keras.losses.sparse_categorical_crossentropy,
        "partial(function, from_logits=True)": lambda: functools.partial(
            keras.losses.sparse_categorical_crossentropy, from_logits=True),
        "lambda, from_logits=True": lambda: lambda y, p: keras.losses.sparse_categorical_crossentropy(
            y, p, from_logits=True),
        "CategoricalCrossentropy(from_logits=True)": lambda: keras.losses.CategoricalCrossentropy(from_logits=True),
        "'categorical_crossentropy'": lambda: "categorical_crossentropy",
        "MeanSquaredError()": lambda: keras.losses.MeanSquaredError(),
        "'scce'": lambda: "scce",
        "'Sparse_Categorical_Crossentropy'": lambda: "Sparse_Categorical_Crossentropy",
    }[kind]()


ACCEPT_5_1 = [  # (model, loss, why the task allows it)
    ("linear", "SCCE(from_logits=True)", 'activation="linear" is no activation: the outputs are logits'),
    ("log_softmax", "SCCE(from_logits=True)", "log-probabilities are logits: softmax of them gives the same "
                                              "probabilities"),
    ("logits", "partial(function, from_logits=True)", "the loss function, told to expect logits"),
    ("logits", "lambda, from_logits=True", "a loss of one's own that expects logits"),
    ("logits", "SCCE(from_logits=True, reduction='sum')", "a sum instead of a mean: the same loss per image"),
    ("softmax", "SCCE()", "the other fix, in the solution: from_logits=False is the default"),
    ("softmax", "SCCE(from_logits=False)", "the other fix, with the default written out"),
    ("softmax", "'sparse_categorical_crossentropy'", "compile's name for the loss; it expects probabilities"),
    ("softmax", "'SparseCategoricalCrossentropy'", "compile also takes the class's name"),
    ("softmax", "the class SCCE", "compile makes the loss from the class, with its defaults"),
    ("softmax", "the function", "the loss function expects probabilities by default"),
    ("Softmax layer", "'sparse_categorical_crossentropy'", "the post's layers kept, a softmax added after them"),
]
REJECT_5_1 = [  # (model, loss, a fragment of the reason the check gives)
    ("softmax", "SCCE(from_logits=True)", "this is still the blog post's mismatch"),
    ("Softmax layer", "SCCE(from_logits=True)", "the model outputs probabilities"),
    ("logits", "SCCE()", "but the loss expects probabilities (from_logits=False, the default)"),
    ("logits", "'sparse_categorical_crossentropy'", "it would read raw scores as probabilities"),
    ("logits", "the function", "the model outputs logits"),
    ("log_softmax", "SCCE(from_logits=False)", "the model outputs logits"),
    ("relu", "SCCE(from_logits=True)", "the last layer applies relu: its outputs are neither logits"),
    ("logits", "CategoricalCrossentropy(from_logits=True)", "the loss is CategoricalCrossentropy: the labels are "
                                                            "whole numbers 0-9"),
    ("softmax", "'categorical_crossentropy'", "the loss is categorical_crossentropy"),
    ("logits", "MeanSquaredError()", "so use keras.losses.SparseCategoricalCrossentropy"),
    ("softmax", "'scce'", "Keras does not know the loss 'scce'"),
    ("softmax", "'Sparse_Categorical_Crossentropy'", "Keras does not know the loss"),  # compile fails on it too
    ("one Dense layer", "SCCE(from_logits=True)", "the model has 7,850 parameters, the blog post's has 93,322"),
    ("flat input", "SCCE(from_logits=True)", "cannot take a batch of 28x28x1 images"),
    ("a string", "SCCE(from_logits=True)", "`my_model` is a str: build it with keras.Sequential"),
]


@pytest.mark.parametrize(("model_kind", "loss_kind", "why"), ACCEPT_5_1)
def test_5_1_every_pair_the_task_allows_is_right(model_kind, loss_kind, why):
    result = nb05.check_model_and_loss(model(model_kind), loss(loss_kind))
    assert result.status == RIGHT, (why, result.messages)
    reads_logits = "from_logits=True" in loss_kind
    assert messages(result) == ("They agree: a logits output with from_logits=True." if reads_logits
                                else "They agree: a softmax output with from_logits=False.")


@pytest.mark.parametrize(("model_kind", "loss_kind", "says"), REJECT_5_1)
def test_5_1_a_pair_that_disagrees_is_wrong_and_says_why(model_kind, loss_kind, says):
    result = nb05.check_model_and_loss(model(model_kind), loss(loss_kind))
    assert result.status == WRONG and says in messages(result)
    assert len(result.messages) == 1  # the one true reason, not a second one that does not apply


def test_5_1_a_model_without_its_loss_is_not_answered_yet():
    assert nb05.check_model_and_loss(blog_cnn(None), None).status == EMPTY
    assert nb05.check_model_and_loss(None, "sparse_categorical_crossentropy").status == EMPTY


# --------------------------------------------------------------------------- 5.2
# Exercise 5.2's task: "A classmate trains this CNN at the blog post's batch size, 32, on a T4 GPU. Their plot shows
# GPU utilisation at about 35% during `fit`. Which change raises it most? (a) mixed precision; (b) batch 256;
# (c) a GPU with more memory; (d) `with tf.device("/GPU:0")` around the model." The cell asks for "a", "b", "c" or "d".
# Section 2 gives the facts: each step has a fixed cost; utilisation is the share of time a kernel runs; lower
# means the GPU waits, for the next batch or for Python.

# The letter's spellings, and a letter not offered: multiple_choice, test_feedback.py.
ACCEPT_5_2 = [("b", "fewer, bigger steps: the fixed cost of each step is paid eight times less often")]
REJECT_5_2 = [
    ("a", "so utilisation goes down, not up"),
    ("c", "counts the time a kernel runs, not the memory used"),
    ("d", "The model runs on the GPU already"),
]


@pytest.mark.parametrize(("answer", "why"), ACCEPT_5_2)
def test_5_2_the_answer_the_task_allows_is_right(answer, why):
    result = nb05.check_utilisation(answer)
    assert result.status == RIGHT and "eight times fewer steps" in messages(result), why


@pytest.mark.parametrize(("answer", "says"), REJECT_5_2)
def test_5_2_a_wrong_choice_says_why(answer, says):
    result = nb05.check_utilisation(answer)
    assert result.status == WRONG and says in messages(result)


# --------------------------------------------------------------------------- 5.3
# Exercise 5.3's task: "For each GPU, give a policy that runs on its Tensor Cores, or `None` if it has none." The cell:
# "mixed_bfloat16" or "mixed_float16" if it runs on its Tensor Cores, else None; RTX 3060 8.6, T4 7.5, GTX 1660 Ti
# 7.5, GTX 1080 6.1. Section 3 gives the facts: Tensor Cores from compute capability 7.0, none on GeForce GTX 16
# cards; from 8.0 they also run bfloat16. So "a policy" lets the RTX 3060 have either; the check does not ask
# whether mixed precision runs or helps at all on the GTX cards (it runs; the guide expects some gain from saved
# memory and bandwidth), only whether it runs on Tensor Cores.

RTX, T4, GTX16, GTX10 = "GeForce RTX 3060", "Tesla T4", "GeForce GTX 1660 Ti", "GeForce GTX 1080"
SOLUTION_5_3 = {RTX: "mixed_bfloat16", T4: "mixed_float16", GTX16: None, GTX10: None}

ACCEPT_5_3 = [
    ({**SOLUTION_5_3, RTX: "mixed_float16"}, "an 8.x GPU's Tensor Cores run float16 too: 'a policy', either one"),
    ({**SOLUTION_5_3, T4: " Mixed_Float16 "}, "the same policy, spelled with capitals and spaces"),
    ({**SOLUTION_5_3, GTX16: "float32", GTX10: "None"}, '"float32" and "None" both mean no mixed policy'),
]
REJECT_5_3 = [  # (answer, the GPU the reason is about, a fragment of the reason)
    ({**SOLUTION_5_3, T4: "mixed_bfloat16"}, T4, "its Tensor Cores run float16. bfloat16 needs compute capability "
                                                 "8.0"),
    ({**SOLUTION_5_3, T4: None}, T4, "it has Tensor Cores (7.0 and newer, not a GTX 16 card)"),
    ({**SOLUTION_5_3, T4: "float32"}, T4, "it has Tensor Cores"),
    ({**SOLUTION_5_3, RTX: None}, RTX, "it has Tensor Cores"),
    ({**SOLUTION_5_3, GTX16: "mixed_float16"}, GTX16, "a GTX 16 card has compute capability 7.5 but no Tensor "
                                                      "Cores, so no policy runs on Tensor Cores here"),
    ({**SOLUTION_5_3, GTX16: "mixed_bfloat16"}, GTX16, "no Tensor Cores"),
    ({**SOLUTION_5_3, GTX10: "mixed_float16"}, GTX10, "Tensor Cores came with compute capability 7.0, so no policy "
                                                      "runs on Tensor Cores here"),
    ({**SOLUTION_5_3, GTX10: "mixed_bfloat16"}, GTX10, "Mixed precision still runs"),
    ({**SOLUTION_5_3, RTX: "fp16"}, RTX, "'fp16' is not \"mixed_bfloat16\", \"mixed_float16\" or None"),
    ({T4: "mixed_float16", GTX16: None, GTX10: None}, RTX, "GeForce RTX 3060 (8.6) has no answer."),
]


@pytest.mark.parametrize(("answer", "why"), ACCEPT_5_3)
def test_5_3_every_answer_the_task_allows_is_right(answer, why):
    result = nb05.check_policies(answer)
    assert result.status == RIGHT and "LossScaleOptimizer" in messages(result), why


@pytest.mark.parametrize(("answer", "gpu", "says"), REJECT_5_3)
def test_5_3_a_wrong_policy_says_why_for_that_gpu(answer, gpu, says):
    result = nb05.check_policies(answer)
    assert result.status == WRONG and len(result.messages) == 1
    assert result.messages[0].startswith(gpu) and says in result.messages[0]


def test_5_3_a_policy_alone_is_not_the_dict():
    result = nb05.check_policies("mixed_float16")
    assert result.status == WRONG and "should be a dict" in messages(result)


def test_5_3_the_solution_shown_is_the_rule_of_the_course_s_tensor_core_function():
    from course_utils.lessons.nb05.speed import gpu_policy

    assert solved(NOTEBOOK, "Exercise 5.3")["answer"] == SOLUTION_5_3
    assert {gpu: gpu_policy(gpu, cc)[0] for gpu, cc in nb05.GPUS.items()} == SOLUTION_5_3
