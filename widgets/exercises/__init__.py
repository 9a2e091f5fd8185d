"""Exercises that answer back: every question-bank item as a check against the engine.

Each item (G1..G14, T1..T10, S1..S6, W1..W6, E1..E6, L1..L9) is an
:class:`Exercise`. Call it with your answer; the :class:`Result` it returns prints
the feedback, naming the mistake where the evidence allows:

>>> from widgets import exercises
>>> p = exercises.G6.problem()                              # doctest: +SKIP
>>> exercises.G6(dA=p.G @ p.B.T, dB=p.A.T @ p.G)            # doctest: +SKIP
>>> exercises.check("T9", False, "a")                       # doctest: +SKIP
>>> exercises.T9.experiment()                   # doctest: +SKIP

Hints and solutions only on request: ``result.hint()``, ``exercises.G6.hint``,
``exercises.G6.solution``, ``check(..., hint=True)`` or the widget's buttons
(``exercises.G6.widget(lambda: dict(dA=dA, dB=dB))``). ``Progress("G1", "G2")``
summarises a notebook's exercises.

The core of every gradient-shaped check is :func:`check_gradient`; an op written by
the learner is checked with :func:`check_backward`.
"""

from __future__ import annotations

from .backward_check import SPECS as BACKWARD_SPECS
from .backward_check import check_backward
from .context import Mistake
from .exercise import Exercise, check, forget_results, last_results, registry
from .gradient import check_gradient
from .ids import QUESTION_BANK_IDS, parse_question_bank
from .problems import Problem
from .progress import Progress
from .report import Report
from .result import Result, Text

__all__ = [
    "registry", "check", "check_gradient", "check_backward", "BACKWARD_SPECS", "Exercise",
    "Result", "Text", "Mistake", "Problem", "Report", "Progress", "QUESTION_BANK_IDS",
    "parse_question_bank", "last_results", "forget_results",
]


def __getattr__(name: str) -> Exercise:
    """``exercises.G5`` is ``registry()["G5"]``."""
    if name in QUESTION_BANK_IDS:
        return registry()[name]
    raise AttributeError(f"module 'widgets.exercises' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(list(globals()) + list(QUESTION_BANK_IDS))
