"""Exercises that answer back: every question-bank item as a check against the engine.

Each item (G1..G14, T1..T10, S1..S6, W1..W6, E1..E6, L1..L9 of the question bank, and the
course's own B1..B6, C1..C2, H1..H4, D1..D4 and A1..A3) is an :class:`Exercise`. Call it with
your answer; the :class:`Result` it returns prints the feedback, naming the mistake where
the evidence allows:

>>> from widgets import exercises
>>> def my_g6(p):                                           # doctest: +SKIP
...     return {"dA": ..., "dB": ...}   # your derivation, in NumPy, from p.A, p.B, p.G
>>> exercises.G6(my_g6)                                     # doctest: +SKIP
>>> exercises.T9(verdict=..., because="...", experiment=my_experiment)  # doctest: +SKIP

Hints and solutions only on request: ``result.hint()``, ``exercises.G6.hint``,
``exercises.G6.solution``, ``check(..., hint=True)`` or the widget's buttons
(``exercises.G6.widget(lambda: my_g6)``). Asking for a solution is
recorded, and reading ``exercises.G6.skeleton`` is recorded as help. ``Progress("G1",
"G2")`` summarises a notebook's exercises and ``progress()`` every lesson, from small
files that survive a kernel restart and several kernels at once
(``~/.autograd-lessons/``, or ``$AUTOGRAD_LESSONS_PROGRESS``; see ``store``). A lesson
showing what a mistake looks like runs ``exercises.G7.demo(..., stride=1, padding=1)``
(or ``demo=True``) on another problem than the learner's: shown, never recorded (on the
learner's own problem a demonstration is refused; see ``demos``). ``set_learner("ada")``
(or ``$AUTOGRAD_LESSONS_LEARNER`` for a class) draws the numeric problems for one learner,
so classmates get different numbers; the stored lessons use the shared default.

The core of every gradient-shaped check is :func:`check_gradient`, in the package
``widgets.feedback`` that the stepper's predict mode uses too (as
:func:`check_predicted_gradient`); an op written by the learner is checked with
:func:`check_backward`.
"""

from __future__ import annotations

import importlib

from .ids import COURSE_IDS, EXERCISE_IDS, QUESTION_BANK_IDS, parse_question_bank

# Names are imported on first use (a dotted value is a module outside this package).
_EXPORTS = {
    "registry": "exercise", "check": "exercise", "demo": "exercise", "Exercise": "exercise",
    "last_results": "exercise", "forget_results": "exercise", "watch_answers": "exercise",
    "check_gradient": "widgets.feedback.check",
    "check_predicted_gradient": "widgets.feedback.check",
    "check_derivation": "widgets.feedback.derivation",
    "check_backward": "backward_check", "BACKWARD_SPECS": "backward_check",
    "Result": "widgets.feedback.result", "Text": "widgets.feedback.result",
    "Mistake": "widgets.feedback.context", "Problem": "problems",
    "Report": "widgets.lessons.report", "Progress": "tracking", "progress": "tracking",
    "reset_progress": "tracking", "export_progress": "tracking", "set_learner": "problems",
    "after_solving": "reveal",
}
_RENAMED = {"BACKWARD_SPECS": "SPECS"}

__all__ = [*_EXPORTS, "QUESTION_BANK_IDS", "COURSE_IDS", "EXERCISE_IDS", "parse_question_bank"]


def __getattr__(name: str):
    """``exercises.G5`` is ``registry()["G5"]``; other names load their module on first use."""
    if name in _EXPORTS:
        where = _EXPORTS[name]
        module = importlib.import_module(where if "." in where else f"{__name__}.{where}")
        value = getattr(module, _RENAMED.get(name, name))
        globals()[name] = value
        return value
    if name in EXERCISE_IDS:
        return __getattr__("registry")()[name]
    raise AttributeError(f"module 'widgets.exercises' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__) | set(EXERCISE_IDS))
