"""Each lesson file against its notebook: one per notebook; its smoke caps name the notebook's parameters, shorten
them and keep every value the header invites legal; its exercises' task cells, solutions and checks agree. That
setup finds it and the notebook records its key results, the course-run tier checks (tests/tiers/test_course_run.py:
each run's key results are its lesson's KEY_RESULTS, all recorded)."""

from __future__ import annotations

import ast

import pytest

from course_utils.core.errors import ParameterError
from course_utils.lessons import EMPTY, RIGHT
from course_utils.notebook import lesson_file
from course_utils.params import apply_smoke, check_parameters, check_value, settle_smoke

from ..conftest import NOTEBOOKS, ROOT
from .solutions import declared_parameters, function, parameters_to_try, solutions, solved, task_cells

NAMES = [p.stem for p in NOTEBOOKS]


def test_every_lesson_has_its_notebook():
    """A lesson is a file (nb03.py) or a package (nb06/__init__.py with the notebook's own helpers)."""
    folder = ROOT / "course_utils" / "lessons"
    files = sorted([p.stem for p in folder.glob("nb*.py")] + [p.parent.name for p in folder.glob("nb*/__init__.py")])
    assert files == [f"nb{name[:2]}" for name in NAMES]


@pytest.mark.parametrize("name", NAMES)
def test_smoke_caps_name_parameters_the_notebook_defines_and_shorten_them(name):
    caps, parameters = lesson_file(name).SMOKE, declared_parameters(name)
    assert set(caps) <= set(parameters), f"caps on no parameter of {name}: {sorted(set(caps) - set(parameters))}"
    for parameter, cap in caps.items():
        check_value(parameter, cap)
        assert parameters[parameter] is None or cap < parameters[parameter], f"{parameter}: its cap shortens nothing"


# The fewest images each lesson takes (for its checkpoint, one step of each run, the batch it profiles), with the
# parameters that decide it: one image fewer is refused at setup (params.check_parameters), naming what it needs.
FEWEST = [
    ("04", {"IMAGES": 4000, "DATASET": "mnist"}, "at least 4,000"),
    ("04", {"IMAGES": 2, "DATASET": "fashion-mnist"}, "at least 2"),
    ("05", {"IMAGES": 2000}, "at least 2,000"),
    ("06", {"IMAGES": 2, "EPOCHS": 5, "BATCH_SIZE": 128, "PROFILE_BATCH": None}, "at least 2"),
    ("07", {"IMAGES": 256, "BATCH_SIZE": 128, "CPU_REPLICAS": 2, "DEVICE": "cpu"}, "at least 256"),
]


@pytest.mark.parametrize(("number", "fewest", "message"), FEWEST)
def test_the_fewest_images_a_lesson_takes_and_one_fewer_refused_at_setup(number, fewest, message):
    needs = lesson_file(next(n for n in NAMES if n.startswith(number))).needs
    check_parameters(fewest, needs)
    with pytest.raises(ParameterError) as info:
        check_parameters({**fewest, "IMAGES": fewest["IMAGES"] - 1}, needs)
    assert f"IMAGES = {fewest['IMAGES'] - 1:,} " in info.value.what and message in info.value.what + info.value.fix


# A value the header invites that the caps alone leave too few images for: the cap gives way (settle_smoke).
# 06's PROFILE_BATCH = (20, 24) profiles up to batch 24, which 1,000 images in 2 epochs never reach.
GIVES_WAY = {("06_tensorboard", "PROFILE_BATCH")}


@pytest.mark.parametrize("name", NAMES)
def test_every_value_a_notebook_invites_passes_in_a_full_and_a_smoke_run(name):
    """A full run takes the value; in a smoke run the caps alone pass the lesson's needs (but where GIVES_WAY says
    they give way), and settle_smoke only ever lowers a value."""
    lesson, parameters, tries = lesson_file(name), declared_parameters(name), parameters_to_try(name)
    needs = getattr(lesson, "needs", None)
    assert tries or name == "01_install_versions", f"{name}'s header names no parameter to try"
    for parameter, value in [(None, None), *tries]:
        chosen = {**parameters, **({parameter: value} if parameter else {})}
        check_parameters(chosen, needs)  # a full run
        namespace = dict(chosen)
        changes = apply_smoke(namespace, lesson.SMOKE, smoke=True)
        if (name, parameter) not in GIVES_WAY:
            check_parameters(namespace, needs)
        else:
            with pytest.raises(ParameterError) as info:
                check_parameters(namespace, needs)
            assert getattr(info.value, "least_images", None), "only too few images may make a cap give way"
        settle_smoke(lambda namespace=namespace: namespace, namespace, changes, needs)  # a smoke run
        assert all(namespace[k] <= (chosen[k] if chosen[k] is not None else namespace[k]) for k in changes), changes


# --- exercises: each task cell calls course.check with its own number; the course records the outcome -----------


@pytest.mark.parametrize("name", NAMES)
def test_every_exercise_has_its_task_and_its_solution(name):
    checks = [f"Exercise {n}" for n in lesson_file(name).CHECKS]
    assert sorted(task_cells(name)) == sorted(solutions(name)) == checks
    assert len(checks) >= 2 and all(n.startswith(f"Exercise {int(name[:2])}.") for n in checks), checks


def defined_before(exercise: str) -> dict:
    """What the notebook defines before a solution that uses it: 05's ``blog_cnn``, from its own cell."""
    if exercise != "Exercise 5.1":
        return {}
    import keras

    return {"keras": keras, "blog_cnn": function("05_cnn_cpu_vs_gpu", "blog-model", "blog_cnn", keras=keras)}


@pytest.mark.parametrize("name", NAMES)
def test_each_check_finds_the_solution_shown_right_and_an_empty_answer_not_answered_yet(name):
    """For every exercise: the per-notebook files hold only the answers with a reason of their own."""
    tasks = task_cells(name)
    for number, check in lesson_file(name).CHECKS.items():
        exercise = f"Exercise {number}"
        call = next(n for n in ast.walk(ast.parse(tasks[exercise]))
                    if isinstance(n, ast.Call) and ast.unparse(n.func) == "course.check")
        names = [a.id for a in call.args[1:]]
        shown = solved(name, exercise, **defined_before(exercise))
        assert check(*(shown[n] for n in names)).status == RIGHT, exercise
        for empty in (None, "", " "):
            result = check(*(empty,) * len(names))
            assert (result.status, result.exercise) == (EMPTY, exercise), (check.__name__, empty)
