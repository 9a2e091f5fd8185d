"""What the autograder writes for one graded question, and how the class report reads it.

A question's feedback is the lesson check's own words (``repr(Result)``: the named
mistake and where it is). A wrong answer's feedback ends with one line that lists the
named mistakes as progress keeps them (``mistake:check:part:diagnosis``), so the class
report can rank misconceptions from otter's ``results.json`` as it does from exported
progress:

    Named mistakes: mistake:gradients:dB:transpose mistake:gradients:dA:sign
"""

from __future__ import annotations

import re

from ..exercises.tracking import MISTAKE, mistakes_named

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
