"""The exercises' IDs, read from the items themselves: every item has its words in
``texts.toml``, so the IDs there are the package's (no second list to keep).

The question bank's items (G, T, S, W, E, L, in the bank's order) come first, then the
course's own (``COURSE_IDS``): B1 a finite-difference gradient check of your own (lesson
06), B2–B6 a layer's backward written as an op (07, 08), C1–C2 the capstone's tasks (12),
H1–H4 backprop by hand (13), D1–D4 second derivatives (14, taken after 09), A1–A3
a transformer's training memory (15, taken after 10). The
question bank (``shared/question-bank.md`` beside the repository) is the source of the
first group; a test parses it and fails if the items here and the bank disagree, or if an
ID has no registered exercise.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Mapping
from functools import cache
from importlib import resources
from types import MappingProxyType
from typing import Any

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

BANK_LETTERS = "GTSWEL"  # the question bank's tables, in its order
COURSE_LETTERS = "BCHDA"  # the course's own, in lesson order


@cache
def _item_words() -> Mapping[str, Mapping[str, Any]]:
    """Every word ``texts.toml`` keeps for every item, by ID (answers included: private,
    so that only the exercises read them, through a route that records it; a learner
    reads ``widgets.exercises.texts()``)."""
    source = resources.files(__package__).joinpath("texts.toml").read_text(encoding="utf-8")
    return MappingProxyType({i: MappingProxyType(w) for i, w in tomllib.loads(source).items()})


def _in_order(letters: str) -> tuple[str, ...]:
    ids = [i for i in _item_words() if i[0] in letters]
    return tuple(sorted(ids, key=lambda i: (letters.index(i[0]), int(i[1:]))))


QUESTION_BANK_IDS: tuple[str, ...] = _in_order(BANK_LETTERS)
COURSE_IDS: tuple[str, ...] = _in_order(COURSE_LETTERS)
# Every exercise the package registers: the question bank's, then the course's own.
EXERCISE_IDS: tuple[str, ...] = QUESTION_BANK_IDS + COURSE_IDS

_ROW = re.compile(r"^\|\s*([GTSWEL]\d+)\s*\|", re.MULTILINE)


def parse_question_bank(markdown: str) -> list[str]:
    """The IDs of the question bank, in order, from its Markdown tables.

    >>> parse_question_bank("| ID | claim |\\n|----|---|\\n| T1 | Forward ... |")
    ['T1']
    """
    return list(dict.fromkeys(_ROW.findall(markdown)))
