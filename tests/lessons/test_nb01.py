"""Notebook 01's exercise checks: the notebook's own solutions are right, wrong answers say what is wrong."""

from __future__ import annotations

import pytest

from course_utils.doctor.versions import load
from course_utils.lessons import EMPTY, RIGHT, WRONG, nb01

from .solutions import solved, task_cells

NOTEBOOK = "01_install_versions"


def test_the_notebook_has_the_three_exercises_each_calling_its_check():
    tasks = task_cells(NOTEBOOK)
    assert set(tasks) == {"Exercise 1.1", "Exercise 1.2", "Exercise 1.3"}
    assert 'course.check("1.1", answer)' in tasks["Exercise 1.1"]
    assert 'course.check("1.2", answer)' in tasks["Exercise 1.2"]
    assert 'course.check("1.3", answer)' in tasks["Exercise 1.3"]
    for source in tasks.values():
        assert "= None" in source, "the task starts with empty answers"


# ----------------------------------------------------------------------------- Exercise 1.1


def test_the_route_solution_is_right_and_names_the_wsl2_driver(capsys):
    assert nb01.check_route(solved(NOTEBOOK, "Exercise 1.1")["answer"]).status == RIGHT
    out = capsys.readouterr().out
    assert out.startswith("✅ Exercise 1.1: right") and f"{load().min_driver(12, 'wsl2')} or newer" in out


@pytest.mark.parametrize(("answer", "message"), [
    ("a", "it comes with Keras 2. The course needs Keras 3 (TF 2.16 or newer)"),
    ("C", "tensorflow-gpu is an empty package today"),
    ("(d)", "TensorFlow never calls the toolkit"),
    ("e", "'e' is not one of"),
])
def test_each_wrong_route_says_why(answer, message):
    result = nb01.check_route(answer)
    assert result.status == WRONG and message in result.messages[0], result


def test_an_empty_route_is_not_answered_yet():
    assert nb01.check_route(None).status == EMPTY


# ----------------------------------------------------------------------------- Exercises 1.2 and 1.3


def test_the_install_solutions_are_right_and_are_what_recommend_says():
    for exercise, check, machine in (("Exercise 1.2", nb01.check_laptop_install, nb01.LAPTOP),
                                     ("Exercise 1.3", nb01.check_server_install, nb01.SERVER)):
        answer = solved(NOTEBOOK, exercise)["answer"]
        result = check(answer)
        assert result.status == RIGHT, result
        requirement = answer.split('"')[1].split("==")[0]
        assert requirement in " ".join(machine.recommendation().commands), "the doctor's own requirement"


@pytest.mark.parametrize("answer", [
    'pip install "tensorflow[and-cuda]==2.21.*"',
    'python -m pip install --upgrade "tensorflow[and-cuda]==2.21.*"',
    '!pip install "tensorflow[and-cuda]==2.21.0"',
    "pip3 install 'tensorflow[and-cuda]~=2.21.0'",
])
def test_other_spellings_of_the_laptop_command_are_right(answer):
    assert nb01.check_laptop_install(answer).ok


LAPTOP_WRONG = [
    ("pip install tensorflow-gpu", "`tensorflow-gpu` is an empty package today"),
    ('pip install "tensorflow==2.21.*"', "add the extra [and-cuda]"),
    ('pip install "tensorflow[and-cuda]==2.20.*"', "A newer tested release also supports Python 3.12"),
    ('pip install "tensorflow[and-cuda]==2.13.*"', "It was tested with Python 3.8-3.11, not 3.12"),
    ('pip install "tensorflow[and-cuda]>=2.21"', "also lets pip take a later release"),
    ('pip install "tensorflow[and-cuda]==2.21.*" "numpy<2"', 'the pin "numpy<2" is only for TensorFlow before 2.18'),
    ("pip install tensorflow[and-cuda]==2.21.*", "Put tensorflow[and-cuda]==2.21.* in double quotes"),
    ('pip install "tensorflow[and-cuda]==2.21.*', "The quotes do not pair up"),
    ('conda install "tensorflow[and-cuda]==2.21.*"', "starts with `pip install`"),
    ('pip install "tensorflow-cpu==2.21.*"', "`tensorflow-cpu` has no GPU support"),
    ('pip install "numpy"', "the command has no TensorFlow in it"),
    ('pip install "tensorflow[and-cuda]=2.21"', "pip cannot read the requirement"),
    (42, "`answer` is not text"),
]


@pytest.mark.parametrize(("answer", "message"), LAPTOP_WRONG)
def test_a_wrong_laptop_command_says_what_is_wrong(answer, message):
    result = nb01.check_laptop_install(answer)
    assert result.status == WRONG and any(message in m for m in result.messages), result


@pytest.mark.parametrize(("answer", "message"), [
    ("pip install tensorflow==2.13.* numpy<2", "In a terminal, < and > without quotes redirect"),
    ('pip install "tensorflow[and-cuda]==2.13.*" "numpy<2"', "The extra [and-cuda] exists from TensorFlow 2.14 on"),
    ('pip install "tensorflow==2.12.*" "numpy<2"', "A newer tested release also supports Python 3.8"),
    ('pip install "tensorflow==2.13.*" "numpy>=2"', 'The NumPy pin must keep NumPy 1'),
    ('pip install "tensorflow==2.21.*"', "It was tested with Python 3.10-3.13, not 3.8"),
])
def test_a_wrong_server_command_says_what_is_wrong(answer, message):
    result = nb01.check_server_install(answer)
    assert result.status == WRONG and any(message in m for m in result.messages), result


@pytest.mark.parametrize("answer", [None, "", "   "])
def test_an_empty_command_is_not_answered_yet(answer, capsys):
    assert nb01.check_laptop_install(answer).status == EMPTY
    assert nb01.check_server_install(answer).status == EMPTY
    assert capsys.readouterr().out.count("not answered yet") == 2


def test_the_expected_answer_follows_the_table(monkeypatch):
    """The checks read the answer from recommend(): a machine the table places elsewhere changes it."""
    monkeypatch.setattr(nb01, "LAPTOP", nb01.Machine("wsl2", "3.9", "560.94", "a WSL2 laptop with Python 3.9"))
    assert nb01.check_laptop_install('pip install "tensorflow[and-cuda]==2.20.*"').ok
    assert not nb01.check_laptop_install('pip install "tensorflow[and-cuda]==2.21.*"').ok


@pytest.mark.parametrize(("check", "answer"), [
    (nb01.check_laptop_install, 'pip install "tensorflow[and-cuda]"'),  # the official command: pip takes 2.21
    (nb01.check_server_install, 'pip install "tensorflow"'),  # pip on Python 3.8 takes 2.13 by itself
    (nb01.check_server_install, 'pip install "tensorflow==2.13.*"'),  # 2.13 caps NumPy itself
    (nb01.check_server_install, 'pip install "tensorflow==2.13.*" "numpy<2"'),  # the pin is harmless
])
def test_every_correct_command_is_right(check, answer):
    assert check(answer).ok, check(answer)


def test_a_release_that_does_not_cap_numpy_still_needs_the_pin(monkeypatch):
    """TF 2.11 and older let pip install NumPy 2 beside them: there the pin is required."""
    monkeypatch.setattr(nb01, "SERVER", nb01.Machine("linux", "3.7", "535.183.01", "a server with Python 3.7"))
    result = nb01.check_server_install('pip install "tensorflow==2.11.*"')
    assert result.status == WRONG and any('Add "numpy<2"' in m for m in result.messages), result
    assert nb01.check_server_install('pip install "tensorflow==2.11.*" "numpy<2"').ok


def test_no_pin_is_wrong_where_pip_would_take_another_release(monkeypatch):
    """Without a pin pip takes the newest release for the Python; when that is not the one the table gives, say so."""
    older = next(b for b in load().linux if b.minor == "2.20")
    monkeypatch.setattr(nb01, "_newest_for_python", lambda python: older)
    result = nb01.check_laptop_install('pip install "tensorflow[and-cuda]"')
    assert result.status == WRONG and any("pip takes the newest TensorFlow for Python 3.12: TF 2.20" in m
                                          for m in result.messages), result
