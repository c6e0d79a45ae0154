"""The smoke switch and parameter checks."""

from __future__ import annotations

import ast
import json
import math
import re

import pytest

from course_utils.core.errors import ParameterError
from course_utils.params import apply_smoke, check_parameters, check_positive_int, settle_smoke, smoke_enabled

from .conftest import NOTEBOOKS
from .exercises.solutions import cells, source


@pytest.mark.parametrize("value, expected", [("1", True), ("true", True), ("YES", True), ("0", False), ("", False)])
def test_smoke_values(value, expected):
    assert smoke_enabled({"COURSE_SMOKE": value}) is expected


def test_smoke_unset_is_off():
    assert smoke_enabled({}) is False


def test_unknown_smoke_value_is_an_error():
    with pytest.raises(ParameterError) as info:
        smoke_enabled({"COURSE_SMOKE": "fast"})
    assert "COURSE_SMOKE='fast'" in info.value.what and "COURSE_SMOKE=1" in info.value.fix


def test_smoke_lowers_to_caps_and_never_raises():
    ns = {"EPOCHS": 10, "IMAGES": None, "BATCH_SIZE": 32, "SMALL": 1}
    changed = apply_smoke(ns, {"EPOCHS": 2, "IMAGES": 500, "SMALL": 3}, smoke=True)
    assert ns == {"EPOCHS": 2, "IMAGES": 500, "BATCH_SIZE": 32, "SMALL": 1}
    assert changed == {"EPOCHS": (10, 2), "IMAGES": (None, 500)}


def test_no_smoke_changes_nothing():
    ns = {"EPOCHS": 10}
    assert apply_smoke(ns, {"EPOCHS": 1}, smoke=False) == {} and ns == {"EPOCHS": 10}


def test_caps_must_name_defined_parameters():
    with pytest.raises(ParameterError, match="EPOCH"):
        apply_smoke({"EPOCHS": 1}, {"EPOCH": 1}, smoke=True)


@pytest.mark.parametrize("value", [0, -3, 2.5, "10", True])
def test_positive_int_rejects(value):
    with pytest.raises(ParameterError, match="BATCH_SIZE"):
        check_positive_int("BATCH_SIZE", value)


def test_positive_int_accepts():
    check_positive_int("BATCH_SIZE", 128)
    check_positive_int("IMAGES", None, allow_none=True)


# --- every notebook's parameters, checked at setup: what their names promise, and what each notebook needs ------


def declared(path) -> tuple[dict, dict]:
    """A notebook's parameters cell as values, and the smoke caps its setup cell (the next code cell) gives."""
    cells = [c for c in json.loads(path.read_text(encoding="utf-8"))["cells"] if c["cell_type"] == "code"]
    at = next(i for i, c in enumerate(cells) if "parameters" in c.get("metadata", {}).get("tags", []))
    values: dict = {}
    exec("".join(cells[at]["source"]), {}, values)  # literals only (CONTRIBUTING)
    dicts = [n for n in ast.walk(ast.parse("".join(cells[at + 1]["source"]))) if isinstance(n, ast.Dict)]
    return values, (ast.literal_eval(dicts[0]) if dicts else {})


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_every_notebook_passes_its_own_checks_as_shipped_and_in_smoke_mode(path):
    values, caps = declared(path)
    check_parameters(values, path.stem)
    smoke = dict(values)
    apply_smoke(smoke, caps, smoke=True)
    check_parameters(smoke, path.stem)


@pytest.mark.parametrize(
    "name, value, message",
    [
        ("LEARNING_RATE", float("nan"), "LEARNING_RATE = nan is not a finite number"),
        ("SCALE", float("inf"), "SCALE = inf is not a finite number"),
        ("SIZES", [1.0, float("nan")], "SIZES = [1.0, nan] holds a number that is not finite"),
        ("LEARNING_RATE", 0, "LEARNING_RATE = 0 must be a number greater than 0"),
        ("SAMPLE_EVERY_S", -0.5, "SAMPLE_EVERY_S = -0.5 must be a number greater than 0"),
        ("TENSOR_MB", "64", "TENSOR_MB = '64' must be a number greater than 0"),
        ("EPOCHS", 0, "EPOCHS = 0 must be a positive integer"),
        ("EPOCHS", 2.5, "EPOCHS = 2.5 must be a positive integer"),
        ("BATCH_SIZE", -1, "BATCH_SIZE = -1 must be a positive integer"),
        ("BENCH_IMAGES", 0, "BENCH_IMAGES = 0 must be a positive integer (or None for all)"),
        ("WORKERS", 0, "WORKERS = 0 must be a positive integer"),
    ],
)
def test_values_their_names_rule_out_are_refused(name, value, message):
    with pytest.raises(ParameterError) as info:
        check_parameters({name: value})
    assert message in info.value.what and name in info.value.fix


def test_values_their_names_allow_pass():
    check_parameters({"IMAGES": None, "SEED": 0, "HISTOGRAM_FREQ": 0, "SCALE": -1.5, "PROFILE_BATCH": None,
                      "LEARNING_RATE": 1e-3, "EPOCHS": 1, "DEVICE": "auto", "LABEL": "x", "FLAG": True})


@pytest.mark.parametrize(
    "notebook, parameters, message",
    [
        ("04_dense_noise_vs_zeros", {"IMAGES": 5, "DATASET": "mnist"}, "at least 4,000"),
        ("04_dense_noise_vs_zeros", {"IMAGES": 1, "DATASET": "fashion-mnist"}, "at least 2"),
        ("05_cnn_cpu_vs_gpu", {"IMAGES": 5}, "at least 2,000"),
        ("06_tensorboard", {"IMAGES": 5, "EPOCHS": 5, "BATCH_SIZE": 128, "PROFILE_BATCH": (10, 14)},
         "IMAGES >= 322"),
        ("06_tensorboard", {"IMAGES": 1, "EPOCHS": 5, "BATCH_SIZE": 128, "PROFILE_BATCH": None}, "at least 2"),
        ("07_beyond_one_gpu", {"IMAGES": 5, "BATCH_SIZE": 128, "CPU_REPLICAS": 2, "DEVICE": "auto"}, "at least 256"),
    ],
)
def test_too_few_images_for_what_a_notebook_does_is_refused_at_setup(notebook, parameters, message):
    with pytest.raises(ParameterError) as info:
        check_parameters(parameters, notebook)
    assert "IMAGES = " in info.value.what and message in info.value.what + info.value.fix


@pytest.mark.parametrize(
    "notebook, parameters, what, fix",
    [
        ("05_cnn_cpu_vs_gpu", {"EPOCHS": 1}, "EPOCHS = 1 leaves no epoch to time", "EPOCHS >= 2"),
        ("05_cnn_cpu_vs_gpu", {"MIXED_PRECISION": "fp16"}, "MIXED_PRECISION = 'fp16' is not understood", "None"),
        ("05_cnn_cpu_vs_gpu", {"TARGET_ACCURACY": 96}, "TARGET_ACCURACY = 96 is not an accuracy", "0.96, or None"),
        ("05_cnn_cpu_vs_gpu", {"TARGET_ACCURACY": True}, "TARGET_ACCURACY = True is not an accuracy", "None"),
    ],
)
def test_parameters_that_only_clash_with_each_other_are_refused_at_setup(notebook, parameters, what, fix):
    """Checked with the others before TensorFlow loads, not in the cell that would fail minutes later."""
    with pytest.raises(ParameterError) as info:
        check_parameters(parameters, notebook)
    assert what in info.value.what and fix in info.value.fix


def test_the_clashing_parameters_pass_when_they_agree():
    check_parameters({"EPOCHS": 2, "MIXED_PRECISION": None, "TARGET_ACCURACY": None}, "05_cnn_cpu_vs_gpu")
    check_parameters({"EPOCHS": 3, "MIXED_PRECISION": "mixed_float16", "TARGET_ACCURACY": 0.96}, "05_cnn_cpu_vs_gpu")


def test_the_fewest_images_each_notebook_takes_are_accepted():
    check_parameters({"IMAGES": 4000, "DATASET": "mnist"}, "04_dense_noise_vs_zeros")
    check_parameters({"IMAGES": 2, "DATASET": "fashion-mnist"}, "04_dense_noise_vs_zeros")
    check_parameters({"IMAGES": 2000}, "05_cnn_cpu_vs_gpu")
    check_parameters({"IMAGES": 1000, "EPOCHS": 2, "BATCH_SIZE": 128, "PROFILE_BATCH": (10, 14)}, "06_tensorboard")
    check_parameters({"IMAGES": 256, "BATCH_SIZE": 128, "CPU_REPLICAS": 2, "DEVICE": "cpu"}, "07_beyond_one_gpu")
    check_parameters({"IMAGES": 5}, "03_memory")


def test_the_06_minimum_is_the_smallest_that_reaches_the_profiled_batch():
    for epochs, batch, stop in [(2, 128, 14), (5, 128, 14), (1, 32, 9), (3, 64, 10)]:
        with pytest.raises(ParameterError) as info:
            check_parameters({"IMAGES": 2, "EPOCHS": epochs, "BATCH_SIZE": batch, "PROFILE_BATCH": (stop - 4, stop)},
                             "06_tensorboard")
        least = int(info.value.fix.split("IMAGES >= ")[1].split()[0].replace(",", ""))
        batches = [math.ceil(math.floor(n * (1.0 - 0.2)) / batch) * epochs for n in (least - 1, least)]
        assert batches[1] >= stop > batches[0]
        check_parameters({"IMAGES": least, "EPOCHS": epochs, "BATCH_SIZE": batch,
                          "PROFILE_BATCH": (stop - 4, stop)}, "06_tensorboard")


# --- smoke caps never turn a legal choice into an error --------------------------------------------------------


def notebook_setup(name: str) -> tuple[dict, dict, list[tuple[str, object]]]:
    """A notebook's parameters cell (as values), its setup call's smoke caps, and its header's parameters to try."""
    notebook_cells = cells(name)
    parameters: dict = {}
    exec(next(source(c) for c in notebook_cells if "parameters" in c["metadata"].get("tags", [])), parameters)  # noqa: S102
    parameters = {k: v for k, v in parameters.items() if k.isupper()}
    setup = next(source(c) for c in notebook_cells if "course_utils.setup(" in source(c))
    call = next(n for n in ast.walk(ast.parse(setup)) if isinstance(n, ast.Call) and "setup" in ast.unparse(n.func))
    caps = next((ast.literal_eval(k.value) for k in call.keywords if k.arg == "smoke"), {})
    header = next(s for s in map(source, notebook_cells) if "**Parameters to try**" in s)
    tries = [(n, ast.literal_eval(v)) for n, v in re.findall(r"^- `([A-Z_]+) = ([^`]+)`", header, re.M)]
    return parameters, caps, tries


@pytest.mark.parametrize("name", [p.stem for p in NOTEBOOKS])
def test_every_value_a_notebook_invites_passes_in_a_full_and_a_smoke_run(name):
    parameters, caps, tries = notebook_setup(name)
    assert tries or name == "01_install_versions", f"{name}'s header names no parameter to try"
    for parameter, value in [(None, None), *tries]:
        chosen = {**parameters, **({parameter: value} if parameter else {})}
        check_parameters(chosen, name)  # a full run
        namespace = dict(chosen)
        changes = apply_smoke(namespace, caps, smoke=True)
        settle_smoke(lambda namespace=namespace: namespace, namespace, changes, name)  # a smoke run
        assert all(namespace[k] <= (chosen[k] if chosen[k] is not None else namespace[k]) for k in changes), changes


def test_a_smoke_cap_gives_way_to_what_the_notebook_needs():
    """`course run 06 --smoke -p EPOCHS 1`: the cap of 1,000 images leaves no step 10-14 to profile in one epoch."""
    parameters, caps, _ = notebook_setup("06_tensorboard")
    namespace = {**parameters, "EPOCHS": 1}
    changes = apply_smoke(namespace, caps, smoke=True)
    with pytest.raises(ParameterError, match="too few"):
        check_parameters(namespace, "06_tensorboard")  # what happened before: the cap alone broke the run
    settle_smoke(lambda: namespace, namespace, changes, "06_tensorboard")
    least = namespace["IMAGES"]
    assert caps["IMAGES"] < least < 4000 and changes["IMAGES"] == (parameters["IMAGES"], least)
    check_parameters({**namespace, "IMAGES": least}, "06_tensorboard")
    with pytest.raises(ParameterError):
        check_parameters({**namespace, "IMAGES": least - 1}, "06_tensorboard")


def test_a_value_the_student_chose_that_is_too_few_still_fails_in_smoke_mode():
    parameters, caps, _ = notebook_setup("06_tensorboard")
    namespace = {**parameters, "EPOCHS": 1, "IMAGES": 1500}
    changes = apply_smoke(namespace, caps, smoke=True)
    with pytest.raises(ParameterError, match="IMAGES = 1,500 is too few"):
        settle_smoke(lambda: namespace, namespace, changes, "06_tensorboard")
    assert namespace["IMAGES"] == 1500 and "IMAGES" not in changes
