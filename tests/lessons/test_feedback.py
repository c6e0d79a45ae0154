"""The feedback every exercise check gives: right, wrong with what to look at, or not answered yet."""

from __future__ import annotations

import json

import pytest

from course_utils.lessons import EMPTY, RIGHT, WRONG, feedback, is_empty, not_answered, unanswered

from ..conftest import NOTEBOOKS


def test_no_problems_is_right_and_printed(capsys):
    result = feedback("Exercise 1.1", [], right="Both pins match the table.")
    assert result.ok and result.status == RIGHT
    assert capsys.readouterr().out == "✅ Exercise 1.1: right\n   - Both pins match the table.\n"


def test_each_problem_is_listed(capsys):
    result = feedback("Exercise 1.1", ["cuDNN is 8.1, not 8.4", "Python 3.11 is too new"], right="-")
    assert not result.ok and result.status == WRONG
    out = capsys.readouterr().out
    assert out.startswith("❌ Exercise 1.1: wrong\n") and "   - cuDNN is 8.1, not 8.4\n" in out
    assert "Python 3.11 is too new" in out and "-\n" not in out.replace("   - ", "")


def test_an_empty_answer_says_what_to_do_and_never_raises(capsys):
    result = not_answered("Exercise 2.1", "Set `answer` to the device name, then run the cell.")
    assert result.status == EMPTY and not result.ok
    assert "✏️ Exercise 2.1: not answered yet" in capsys.readouterr().out


@pytest.mark.parametrize(("answer", "empty"), [(None, True), (..., True), ("  ", True), ([], True),
                                               ("GPU:0", False), (0, False), ([1], False)])
def test_placeholders_count_as_empty(answer, empty):
    assert is_empty(answer) is empty


@pytest.mark.parametrize(("answer", "empty"), [(None, True), ({"T4": None, "A100": ...}, True),
                                               ({"T4": None, "A100": "cubin"}, False)])
def test_a_skeleton_dict_still_unfilled_is_unanswered(answer, empty):
    assert unanswered(answer) is empty


def test_where_none_is_an_answer_only_ellipsis_leaves_a_value_unanswered():
    assert unanswered({"T4": ..., "A100": ...}, none_answers=True)
    assert not unanswered({"T4": None, "A100": ...}, none_answers=True)


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_each_task_cell_as_shipped_runs_unattended_and_is_not_answered_yet(path, capsys, tmp_path):
    """What papermill, nbval and CI run: the task cells in order in one namespace, with the notebook's ``course``,
    answers empty. Each says it is not answered yet - never wrong, never an error - and counts no attempt."""
    from course_utils.notebook import Course
    from course_utils.results import Recorder

    from .solutions import task_cells

    record = tmp_path / "record.json"
    recorder = Recorder(path.stem, parameters={}, smoke=True, path=record)
    namespace: dict = {"course": Course(path.stem, device=None, recorder=recorder)}
    for exercise, source in task_cells(path.stem).items():
        exec(source, namespace)  # noqa: S102 - the notebook's own task cell, unanswered
        out = capsys.readouterr().out
        assert f"✏️ {exercise}: not answered yet" in out and "wrong" not in out, out
    exercises = json.loads(record.read_text(encoding="utf-8"))["exercises"]
    assert exercises and all(e == {"status": EMPTY, "attempts": 0, "right_at": None} for e in exercises.values())


def test_a_check_as_the_last_line_of_a_cell_shows_its_feedback_once(capsys):
    """A check prints its feedback; Jupyter must not add the Feedback object's repr under it."""
    from IPython.core.interactiveshell import InteractiveShell

    shell = InteractiveShell.instance()
    shell.user_ns["feedback"] = feedback
    shell.run_cell('feedback("Exercise 9.9", [], right="Fine.")')
    out = capsys.readouterr().out
    assert out.count("Exercise 9.9") == 1 and "Feedback(" not in out


def test_a_letter_answer_is_read_in_any_usual_spelling_and_anything_else_says_the_letters():
    from course_utils.lessons import multiple_choice

    said = {"a": "Look at the clock."}
    for given in (" (B) ", "c"):
        assert multiple_choice("Exercise 9.9", given, "abc", said, right="Yes.").ok, given
    wrong = multiple_choice("Exercise 9.9", "(A)", "abc", said, right="Yes.")
    assert wrong.status == WRONG and wrong.messages == ("Look at the clock.",)
    other = multiple_choice("Exercise 9.9", "e", "abc", said, right="Yes.")
    assert other.status == WRONG and other.messages == ("""'e' is not one of "a", "b", "c".""",)
    empty = multiple_choice("Exercise 9.9", None, "abc", said, right="Yes.")
    assert empty.status == EMPTY and 'one of "a", "b", "c"' in empty.messages[0]
