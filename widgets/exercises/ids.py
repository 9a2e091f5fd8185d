"""The exercises' IDs: the question bank's, kept here so the package knows them without
../shared, and the course's own (``COURSE_IDS``).

The question bank (``shared/question-bank.md`` beside the repository) is the
source; a test parses it and fails if this copy and the bank disagree, or if an
ID has no registered exercise.
"""

from __future__ import annotations

import re

QUESTION_BANK_IDS: tuple[str, ...] = (
    *(f"G{i}" for i in range(1, 15)),
    *(f"T{i}" for i in range(1, 11)),
    *(f"S{i}" for i in range(1, 7)),
    *(f"W{i}" for i in range(1, 7)),
    *(f"E{i}" for i in range(1, 7)),
    *(f"L{i}" for i in range(1, 10)),
)

# The course's own exercises, beyond the question bank (not parsed from it), in lesson
# order: B1 a finite-difference gradient check of your own (lesson 06); B2–B6 the backward
# of a layer written as an op: conv2d, max pooling with ties (07), batch norm, dropout,
# softmax with cross-entropy (08).
# C1–C2: lesson 12, the capstone's tasks (a checkpoint plan within a byte budget; a planted
# gradient bug found with the debugging tools and fixed).
# H1–H4: lesson 13, backprop by hand (every intermediate of a small network, batch norm's
# and cross-entropy's backward in closed form, training with your own gradients).
COURSE_IDS: tuple[str, ...] = (*(f"B{i}" for i in range(1, 7)), "C1", "C2",
                               *(f"H{i}" for i in range(1, 5)))

# Every exercise the package registers: the question bank's, then the course's own.
EXERCISE_IDS: tuple[str, ...] = QUESTION_BANK_IDS + COURSE_IDS

_ROW = re.compile(r"^\|\s*([GTSWEL]\d+)\s*\|", re.MULTILINE)


def parse_question_bank(markdown: str) -> list[str]:
    """The IDs of the question bank, in order, from its Markdown tables.

    >>> parse_question_bank("| ID | claim |\\n|----|---|\\n| T1 | Forward ... |")
    ['T1']
    """
    return list(dict.fromkeys(_ROW.findall(markdown)))
