"""Notebook 01's exercise checks: the notebook's own solutions are right, wrong answers say what is wrong."""

from __future__ import annotations

import pytest

from course_utils.doctor.versions import load
from course_utils.exercises import EMPTY, RIGHT, WRONG, nb01

from .solutions import solved, task_cells

NOTEBOOK = "01_install_versions"


def test_the_notebook_has_the_three_exercises_each_calling_its_check():
    tasks = task_cells(NOTEBOOK)
    assert set(tasks) == {"Exercise 1.1", "Exercise 1.2", "Exercise 1.3"}
    assert "nb01.check_table_row(cuda, cudnn)" in tasks["Exercise 1.1"]
    assert "nb01.check_laptop_install(answer)" in tasks["Exercise 1.2"]
    assert "nb01.check_server_install(answer)" in tasks["Exercise 1.3"]
    for source in tasks.values():
        assert "= None" in source, "the task starts with empty answers"


# ----------------------------------------------------------------------------- Exercise 1.1


def test_the_table_row_solution_is_right_and_matches_the_table(capsys):
    answer = solved(NOTEBOOK, "Exercise 1.1")
    result = nb01.check_table_row(answer["cuda"], answer["cudnn"])
    assert result.status == RIGHT, result
    row = next(b for b in load().linux if b.minor == nb01.ROW_TENSORFLOW)
    assert (answer["cuda"], answer["cudnn"]) == (row.cuda, row.cudnn)
    assert capsys.readouterr().out.startswith("✅ Exercise 1.1: right")


@pytest.mark.parametrize(("cuda", "cudnn", "message"), [
    ("12.5", "8.9", "CUDA 12.5 is in the rows of TF 2.18-2.21. Read the CUDA column of the row 2.16.1."),
    ("11.7", "8.4", "No TensorFlow in the table was built with cuDNN 8.4."),
    ("12.3", "eight", "`cudnn` = 'eight' holds no version number."),
])
def test_a_wrong_row_names_where_that_version_is(cuda, cudnn, message):
    result = nb01.check_table_row(cuda, cudnn, show=False)
    assert result.status == WRONG and any(message in m for m in result.messages), result


def test_numbers_and_longer_versions_are_read_too():
    assert nb01.check_table_row(12.3, 8.9, show=False).ok
    assert nb01.check_table_row("CUDA 12.3.0", "8.9.7", show=False).ok


def test_an_empty_row_answer_is_not_answered_yet():
    assert nb01.check_table_row(None, None, show=False).status == EMPTY
    assert nb01.check_table_row("12.3", "", show=False).status == EMPTY


# ----------------------------------------------------------------------------- Exercises 1.2 and 1.3


def test_the_install_solutions_are_right_and_are_what_recommend_says():
    for exercise, check, machine in (("Exercise 1.2", nb01.check_laptop_install, nb01.LAPTOP),
                                     ("Exercise 1.3", nb01.check_server_install, nb01.SERVER)):
        answer = solved(NOTEBOOK, exercise)["answer"]
        result = check(answer, show=False)
        assert result.status == RIGHT, result
        assert answer in machine.recommendation().commands, "the solution is the doctor's own command"


@pytest.mark.parametrize("answer", [
    'pip install "tensorflow[and-cuda]==2.21.*"',
    'python -m pip install --upgrade "tensorflow[and-cuda]==2.21.*"',
    '!pip install "tensorflow[and-cuda]==2.21.0"',
    "pip3 install 'tensorflow[and-cuda]~=2.21.0'",
])
def test_other_spellings_of_the_laptop_command_are_right(answer):
    assert nb01.check_laptop_install(answer, show=False).ok


LAPTOP_WRONG = [
    ("pip install tensorflow-gpu", "`tensorflow-gpu` is an empty package today"),
    ('pip install "tensorflow==2.21.*"', "add the extra [and-cuda]"),
    ('pip install "tensorflow[and-cuda]"', "Pin the release you chose from the table"),
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
    result = nb01.check_laptop_install(answer, show=False)
    assert result.status == WRONG and any(message in m for m in result.messages), result


@pytest.mark.parametrize(("answer", "message"), [
    ('pip install "tensorflow==2.13.*"', 'Add "numpy<2": TF 2.13 was built against NumPy 1'),
    ("pip install tensorflow==2.13.* numpy<2", "In a terminal, < and > without quotes redirect"),
    ('pip install "tensorflow[and-cuda]==2.13.*" "numpy<2"', "The extra [and-cuda] exists from TensorFlow 2.14 on"),
    ('pip install "tensorflow==2.12.*" "numpy<2"', "A newer tested release also supports Python 3.8"),
    ('pip install "tensorflow==2.13.*" "numpy>=2"', 'The NumPy pin must keep NumPy 1'),
    ('pip install "tensorflow==2.21.*"', "It was tested with Python 3.10-3.13, not 3.8"),
])
def test_a_wrong_server_command_says_what_is_wrong(answer, message):
    result = nb01.check_server_install(answer, show=False)
    assert result.status == WRONG and any(message in m for m in result.messages), result


@pytest.mark.parametrize("answer", [None, "", "   "])
def test_an_empty_command_is_not_answered_yet(answer, capsys):
    assert nb01.check_laptop_install(answer).status == EMPTY
    assert nb01.check_server_install(answer).status == EMPTY
    assert capsys.readouterr().out.count("not answered yet") == 2


def test_the_expected_answer_follows_the_table(monkeypatch):
    """The checks read the answer from recommend(): a machine the table places elsewhere changes it."""
    monkeypatch.setattr(nb01, "LAPTOP", nb01.Machine("wsl2", "3.9", "560.94", "a WSL2 laptop with Python 3.9"))
    assert nb01.check_laptop_install('pip install "tensorflow[and-cuda]==2.20.*"', show=False).ok
    assert not nb01.check_laptop_install('pip install "tensorflow[and-cuda]==2.21.*"', show=False).ok
