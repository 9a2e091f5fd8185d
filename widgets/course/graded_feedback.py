"""What the autograder writes for one graded question, and how the class report reads it.

A question's feedback is the lesson check's own words (``repr(Result)``: the named
mistake and where it is). A wrong answer's feedback ends with one line that lists the
named mistakes as progress keeps them (``mistake:check:part:diagnosis``), so the class
report can rank misconceptions from otter's ``results.json`` as it does from exported
progress:

    Named mistakes: mistake:gradients:dB:transpose mistake:gradients:dA:sign

A right answer to an item with a budget of tries that the autograder's replay found came
after seeing the solution (a search past the budget, a solution shown) or the skeleton
carries one more line, which the class report reads as the lesson's status:

    Progress: solved after seeing the solution (its solution was shown before this answer).
"""

from __future__ import annotations

import re

from ..exercises.tracking import AFTER_SOLUTION, MISTAKE, WITH_SKELETON, mistakes_named

MISTAKES_LINE = "Named mistakes:"
_KEY = re.compile(rf"{re.escape(MISTAKE)}[\w.\-]*:[\w.\-]*:[\w.\-]+")


def question_feedback(check: str, result) -> str:
    """The feedback of one graded question: the check's words, then (for a wrong answer
    with named mistakes) the line the class report reads."""
    text = repr(result)
    named = [] if result.ok else mistakes_named(check, result)
    return f"{text}\n{MISTAKES_LINE} {' '.join(named)}" if named else text


def mistakes_in(feedback: str) -> list[str]:
    """The ``mistake:...`` keys listed by :func:`question_feedback` in ``feedback`` (otter's
    output of a question), in order; none for a right answer or unrelated text."""
    found: list[str] = []
    for line in feedback.splitlines():
        if line.strip().startswith(MISTAKES_LINE):
            found += _KEY.findall(line)
    return found


PROGRESS_LINE = "Progress:"
_AFTER = {"solution": AFTER_SOLUTION, "help": WITH_SKELETON}


def progress_line(after: str, why: str) -> str:
    """The line that says a right answer came ``after`` ("solution" or "help"), and why."""
    return f"{PROGRESS_LINE} {_AFTER[after]} ({why})."


def progress_in(feedback: str) -> str | None:
    """"solution" or "help" if ``feedback`` (otter's output of a question) holds the line
    :func:`progress_line` writes (otter puts it after the test's name); None otherwise."""
    for after, status in _AFTER.items():
        if f"{PROGRESS_LINE} {status} (" in feedback:
            return after
    return None
