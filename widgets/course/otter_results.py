"""Otter's grades as the class report reads them: one ``results.json`` as one learner.

``otter run -a autograder.zip SUBMISSION.zip`` (and Gradescope) writes ``results.json``::

    {"tests": [{"name": "Public Tests", "output": ...},          a summary: no score
               {"name": "G6", "score": 0, "max_score": 1, "output": ..., ...},
               {"name": "G9_unbroadcast", "score": 1, "max_score": 1, ...}, ...]}

A question is named after its exercise cell (``lesson.graded_cells``): the item's ID
(``G6``), the ID and a check's name (``G9_unbroadcast``), or the ID and a number
(``G7_2``). A wrong question's output ends with the line
``graded_feedback.question_feedback`` wrote, listing its named mistakes.
:func:`learner_from_results` turns the file into the items of exported progress, so the
report counts both alike:

* ``solved``: every graded question of the item earned its max_score (and named no
  mistake: a question worth 0 points is wrong when its output names one);
* ``misses``: each named mistake once, and ``tries:`` the number of the item's wrong
  questions. Otter grades a submission once, so for graded submissions the report's
  "median wrong tries" is the median number of wrong questions (at most the item's graded
  cells), not the tries made before an answer was right;
* ``after_solution`` and ``after_help``: what the autograder's replay of the notebook
  found for an item with a budget of tries (C1, C2, A3, ...): a right question whose output
  holds the line ``graded_feedback.progress_line`` wrote (a search past the budget or a
  solution shown before the answer; the skeleton). Otherwise False: for other items a
  graded submission does not say whether the solution or the skeleton was seen (the
  student build withholds both), so the report counts neither, never a guess;
* ``parts``: one per question, so the item counts as tried.

Entries without a score (otter's summaries) and questions named after no exercise of the
course are not read; a question whose score is not a number is left out with a clause
saying so, and the rest of the file is read.
"""

from __future__ import annotations

from dataclasses import dataclass
from numbers import Real

from ..exercises import EXERCISE_IDS
from ..exercises.tracking import TRIES
from .graded_feedback import mistakes_in, progress_in


@dataclass(frozen=True)
class GradedQuestion:
    """One question of a ``results.json``: its name, whether it earned its points, and the
    named mistakes its output lists."""

    name: str
    right: bool
    mistakes: tuple[str, ...]
    after: str | None = None  # "solution" or "help": what the replay found before it


def is_otter_results(data: object) -> bool:
    """Whether a JSON value reads as otter's ``results.json``: a dict whose ``"tests"`` is a
    list of dicts, each with a ``"name"``."""
    tests = data.get("tests") if isinstance(data, dict) else None
    return isinstance(tests, list) and all(
        isinstance(test, dict) and isinstance(test.get("name"), str) for test in tests)


def exercise_of(question: str) -> str | None:
    """The exercise a question is named after: the longest ID of the course that is the
    whole name or comes before an ``_`` (``G10_2`` -> ``G10``, ``G9_unbroadcast`` -> ``G9``);
    None for a question of something else."""
    ids = [i for i in EXERCISE_IDS if question == i or question.startswith(f"{i}_")]
    return max(ids, key=len, default=None)


def _number(value: object) -> bool:
    return isinstance(value, Real) and not isinstance(value, bool)


def graded_question(test: dict) -> GradedQuestion:
    """One scored entry of ``"tests"`` read; a ValueError if its score is not a number."""
    score, most = test.get("score"), test.get("max_score")
    if not (_number(score) and _number(most)):
        raise ValueError(f"question {test['name'][:40]!r} has a score of {str(score)[:20]!r} "
                         f"out of {str(most)[:20]!r}, not numbers")
    output = test.get("output")
    mistakes = tuple(dict.fromkeys(mistakes_in(output))) if isinstance(output, str) else ()
    right = score >= most and not mistakes
    after = progress_in(output) if right and isinstance(output, str) else None
    return GradedQuestion(test["name"], right, mistakes, after)


def questions_by_item(data: dict) -> tuple[dict[str, list[GradedQuestion]], list[str]]:
    """The scored questions of a ``results.json``, grouped by the exercise each is named
    after, in the file's order; and a clause for each question left out (its score is not
    a number)."""
    by_item: dict[str, list[GradedQuestion]] = {}
    unread = []
    for test in data["tests"]:
        exercise = exercise_of(test["name"])
        if "score" in test and exercise is not None:
            try:
                question = graded_question(test)
            except ValueError as error:
                unread.append(str(error))
                continue
            by_item.setdefault(exercise, []).append(question)
    return by_item, unread


def item_record(questions: list[GradedQuestion]) -> dict:
    """What exported progress would hold for an item graded by ``questions`` (see the
    module docstring)."""
    wrong = sum(not q.right for q in questions)
    misses = {TRIES: wrong} | dict.fromkeys(
        (key for q in questions for key in q.mistakes), 1)
    after_solution = not wrong and any(q.after == "solution" for q in questions)
    after_help = not wrong and not after_solution and any(q.after == "help" for q in questions)
    return {"solved": not wrong, "after_solution": after_solution, "after_help": after_help,
            "misses": misses,
            "parts": {q.name: {"ok": q.right, "ever": q.right} for q in questions}}


def items_from_results(data: dict) -> tuple[dict, list[str]]:
    """One otter ``results.json`` as the items of exported progress, and a clause for each
    question left out; a ValueError (one clause, for a sentence) if the file is not otter
    results, or no question named after an exercise of the course could be read."""
    if not is_otter_results(data):
        raise ValueError("it has no list of graded tests")
    by_item, unread = questions_by_item(data)
    if not by_item and unread:
        raise ValueError(unread[0])
    unread = [f"{reason.split(' has a score', 1)[0]} (its score is not a number)"
              for reason in unread]
    if not by_item:
        names = ", ".join(test["name"][:20] for test in data["tests"][:5]) or "none"
        raise ValueError(f"no graded question is named after an exercise of the course; "
                         f"its tests: {names}")
    return {item: item_record(qs) for item, qs in by_item.items()}, unread
