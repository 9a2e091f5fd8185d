"""One gate: a helper that computes what an exercise asks reports it here, and the
learner's progress records it, on that item.

Lesson support (``widgets.lessons``) measures what some items ask (A3's plans, L8's
checkpointed step) and the exercises keep reference answers (a true-or-false item's
reference experiment, lesson 13's engine gradients). Lesson support never imports the
exercises, so such a helper calls :func:`measured` (or wears :func:`answers`), which hands
the record to ``widgets.exercises.tracking.helper_measured``, loaded when first needed:
a measured candidate counts as a try, a shown answer as seeing the solution. A check that
uses the same helper to grade an answer runs it inside :func:`quietly`: the check records
its own result.

>>> from widgets import gate
>>> @gate.answers("T9")                          # doctest: +SKIP
... def reference_t9(): ...
"""

from __future__ import annotations

import importlib
import inspect
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from functools import wraps
from pathlib import Path

_QUIET: ContextVar[bool] = ContextVar("gate_quiet", default=False)
_PACKAGE = str(Path(__file__).resolve().parent)  # widgets/: the code that may be quiet


def measured(item: str, gives: str = "solution", *, by_learner: bool = False) -> None:
    """Record that a helper just computed what ``item`` asks: ``gives`` is "try" (a
    candidate measured, counted against the item's tries) or "solution" (its answer
    shown). Nothing is recorded once the item is solved, nor inside :func:`quietly`
    unless the helper was called by the learner's code (``by_learner``: a learner's
    function that a check runs, measuring on its own).

    >>> with quietly():
    ...     measured("A3", "try")                 # a check's own measurement: not recorded
    """
    if _QUIET.get() and not by_learner:
        return
    tracking = importlib.import_module("widgets.exercises.tracking")
    tracking.helper_measured(item, gives)


def is_quiet() -> bool:
    """Whether the code running now is inside :func:`quietly` (a check's own use)."""
    return _QUIET.get()


def answers(item: str, gives: str = "solution") -> Callable[[Callable], Callable]:
    """Decorate a helper whose every call computes what ``item`` asks: each call outside
    :func:`quietly` is recorded by :func:`measured` first. The gated helper keeps the
    helper's name, words and signature, but no way back to it (no ``__wrapped__``)."""

    def gate(fn: Callable) -> Callable:
        @wraps(fn)
        def gated(*args, **kwargs):
            measured(item, gives)
            return fn(*args, **kwargs)

        gated.__signature__ = inspect.signature(fn)  # what help() shows, read once here
        del gated.__wrapped__  # an audit called the helper itself through it, unrecorded
        gated.gate_item = item  # the item it answers (the teaching-rules tests read it)
        return gated

    return gate


@contextmanager
def quietly() -> Iterator[None]:
    """Run helpers without recording them: a check grading an answer with the helper
    that measures it (the check records the result itself). Only the lessons' own code
    (this package) can: from a learner's cell it changes nothing, so it is no way around
    the gate."""
    caller = sys._getframe(2).f_code.co_filename  # the `with` statement's frame
    token = _QUIET.set(True) if caller.startswith(_PACKAGE) else None
    try:
        yield
    finally:
        if token is not None:
            _QUIET.reset(token)
