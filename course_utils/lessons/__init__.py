"""Lessons: one home per notebook, ``course_utils/lessons/nbNN`` (a file, or a package with helpers of its own);
CONTRIBUTING, "A notebook" and "Exercises", says what a lesson file holds. This module holds what the exercise checks
share: ``Feedback`` and the shapes of a check. A check never raises on a wrong or empty answer: a notebook run
unattended leaves the answers empty and must still finish.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass

from course_utils.core.i18n import listed, translator

RIGHT, WRONG, EMPTY = "right", "wrong", "not answered yet"
MARKS = {RIGHT: "✅", WRONG: "❌", EMPTY: "✏️"}
_ = translator("lessons")


@dataclass(frozen=True)
class Feedback:
    """What a check says about one answer."""

    exercise: str  # e.g. "Exercise 3.1"
    status: str  # RIGHT, WRONG or EMPTY
    messages: tuple[str, ...]

    @property
    def ok(self) -> bool:
        return self.status == RIGHT

    def _ipython_display_(self) -> None:
        """Nothing: the check printed this feedback already; as a cell's last value it would show twice."""

    def __str__(self) -> str:
        """In the chosen language (the status constants stay English: code compares them)."""
        status = {RIGHT: _("right"), WRONG: _("wrong"), EMPTY: _("not answered yet")}[self.status]
        exercise = _("Exercise {number}").format(number=self.exercise.removeprefix("Exercise "))
        head = _("{mark} {exercise}: {status}").format(mark=MARKS[self.status], exercise=exercise, status=status)
        return "\n".join([head, *(f"   - {m}" for m in self.messages)])


def feedback(exercise: str, problems: Iterable[str], *, right: str) -> Feedback:
    """Feedback from a list of problems, printed: none means right (with ``right`` as the message)."""
    problems = tuple(problems)
    result = Feedback(exercise, WRONG, problems) if problems else Feedback(exercise, RIGHT, (right,))
    print(result)
    return result


def not_answered(exercise: str, hint: str) -> Feedback:
    """Feedback for an answer still empty (None, "" or ...), printed: what to do next."""
    result = Feedback(exercise, EMPTY, (hint,))
    print(result)
    return result


def multiple_choice(exercise: str, answer: object, letters: Iterable[str], said: Mapping[str, str], *,
                    right: str) -> Feedback:
    """A question answered by a letter: ``said`` has what to look at for each wrong letter; any other is right.

    The letter may come as "B", "(b)" or " b "; anything that is not one of ``letters`` is wrong, and says so.
    """
    letters = tuple(letters)
    choices = listed(f'"{letter}"' for letter in letters)
    if is_empty(answer):
        return not_answered(exercise, _("Set `answer` to one of {letters}. Then run the cell.").format(letters=choices))
    given = str(answer).strip().lower().strip("()")
    if given not in letters:
        return feedback(exercise, [_("{answer!r} is not one of {letters}.").format(answer=answer, letters=choices)],
                        right="")
    return feedback(exercise, [said[given]] if given in said else [], right=right)


def dict_answer(exercise: str, answer: object, problems: Callable[[Mapping], Iterable[str | None]], *, hint: str,
                example: str, right: str, none_answers: bool = False) -> Feedback:
    """A task answered by a dict: ``problems(answer)`` says what is wrong with it (None entries: nothing).
    ``hint``: what to do while it is unanswered; ``example``: the dict's first entry; ``none_answers``: None is an
    answer of its own (the task cell's placeholders are ``...``)."""
    if unanswered(answer, none_answers):
        return not_answered(exercise, hint)
    if not isinstance(answer, Mapping):
        return feedback(exercise, [_("`answer` should be a dict, such as {example}; it is {answer!r}.").format(
            example=example, answer=answer)], right="")
    return feedback(exercise, [problem for problem in problems(answer) if problem], right=right)


def unanswered(answer: object, none_answers: bool = False) -> bool:
    """``is_empty``, or a task cell's skeleton dict still unfilled: every value a placeholder (``{"T4": None}``;
    only ``...`` where None is an answer)."""
    blank = (lambda value: value is Ellipsis) if none_answers else is_empty
    return is_empty(answer) or (isinstance(answer, dict) and all(blank(value) for value in answer.values()))


def number(value: object) -> float | None:
    """A number as a student writes it (an int or a float, not a bool), finite; None for anything else."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or not math.isfinite(value):
        return None
    return float(value)


def whole(value: object) -> int | None:
    """A whole number as a student writes it (an int, or a float without a fraction); None for anything else."""
    found = number(value)
    return int(found) if found is not None and found.is_integer() else None


def is_empty(answer: object) -> bool:
    """True for the placeholders a task cell starts with: None, ..., "" or an empty collection."""
    if answer is None or answer is Ellipsis:
        return True
    if isinstance(answer, str):
        return not answer.strip()
    try:
        return len(answer) == 0  # type: ignore[arg-type]
    except TypeError:
        return False
