"""The question bank's IDs, kept here so the package knows them without ../shared.

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

_ROW = re.compile(r"^\|\s*([GTSWEL]\d+)\s*\|", re.MULTILINE)


def parse_question_bank(markdown: str) -> list[str]:
    """The IDs of the question bank, in order, from its Markdown tables.

    >>> parse_question_bank("| ID | claim |\\n|----|---|\\n| T1 | Forward ... |")
    ['T1']
    """
    return list(dict.fromkeys(_ROW.findall(markdown)))
