"""A law the learner writes as a function, tried on cases the check draws when it runs.

G1, L6 and L8 ask what the engine does on a set-up; a set-up the lesson states can be run and
its answer read off. So each asks for the law instead (the bytes an MLP keeps from its width,
depth, batch and frozen layers; the masks from the seeds and calls; the float32 sums from the
numbers; the checkpointed peak and recomputed work from the depth and the segments). The check
runs the law without the engine (:func:`~.true_false.predicted`) on cases drawn now, measures
each case itself, and names a wrong law's slip where one of the known slips gives the same
number there, never the value.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

import numpy as np

from ..feedback import words
from ..feedback.result import Result
from . import learner
from .true_false import Flaw, Unfinished, predicted  # the law run without the engine

# The cases a law is tried on: drawn when the check runs (tests may seed it).
draw = np.random.default_rng()


@dataclass(frozen=True)
class Slip:
    """A known wrong law (``law`` on a case's arguments), what it gets wrong, its code."""

    law: Callable
    says: str
    code: str


def takes_laws(*names: str) -> Callable:
    """Decorator: the answers of a check that are laws (``check.laws``), for the rules that
    hold over every law part."""

    def mark(fn: Callable) -> Callable:
        fn.laws = tuple(names)
        return fn

    return mark


def _numbers(value) -> np.ndarray | None:
    """The law's output as a float array, or None when it is not numbers."""
    if value is None or isinstance(value, bool | np.bool_ | str | bytes):
        return None
    try:
        out = np.asarray(value, dtype=np.float64)
    except (TypeError, ValueError, OverflowError):
        return None
    if out.dtype == object or not np.isfinite(out).all():
        return None
    return out


def _equal(a: np.ndarray, b) -> bool:
    b = np.asarray(b, dtype=np.float64)
    return a.shape == b.shape and bool(np.array_equal(a, b))


def _gives(slip: Slip, case: tuple, got: np.ndarray, right: np.ndarray) -> bool:
    """Whether ``slip`` gives ``got`` on ``case`` (and is not itself right there)."""
    wrong = slip.law(*case)
    return wrong is not None and not _equal(right, wrong) and _equal(got, wrong)


def check_law(name: str, law: object, cases: Iterable[tuple], measure: Callable,
              slips: Sequence[Slip] = (), *, gives: str, where: Callable[..., str],
              hint: str, solved: str) -> Result:
    """``law`` (the learner's function called ``name``, giving ``gives``) tried on each case
    (a tuple of arguments) against ``measure(*case)`` (the engine, here). A wrong output is
    named by the first slip that gives it there, else by ``hint``; ``where(*case)`` says
    which case, never the value."""
    if law is None or law is Ellipsis:
        return Result(False, f"'{name}' is still a placeholder: write it as a function that "
                             f"gives {gives}.", name=name, diagnosis="none")
    if not callable(law):
        return Result(False, f"'{name}' should be your law, a function that gives {gives}; it "
                             f"is {words.short(law, 40)}.", name=name, diagnosis="type")
    wrong = []  # (case, the slips that give the law's output there)
    for case in cases:
        try:
            out = predicted(law, *case, name=name)
        except Unfinished:
            return Result(False, f"'{name}' still returns a placeholder (...): write your law "
                                 f"there, a function that gives {gives}.", name=name,
                          diagnosis="none")
        except Flaw as exc:
            return Result(False, str(exc), name=name, diagnosis="uses_engine")
        except learner.LearnerCodeFailed as exc:
            return learner.failed(exc, name=name)
        got = _numbers(out)
        if got is None:
            return Result(False, f"'{name}' should give {gives}; {where(*case)} it gave "
                                 f"{words.short(out, 40)}.", name=name, diagnosis="type")
        right = np.asarray(measure(*case), dtype=np.float64)
        if not _equal(got, right):
            wrong.append((case, [s for s in slips if _gives(s, case, got, right)]))
    if wrong:  # named where one slip alone gives it (two slips may agree on a case)
        case, named = next(((c, found) for c, found in wrong if len(found) == 1), wrong[0])
        if len(named) == 1:
            says = named[0].says
            return Result(False, f"Your '{name}' is not what the engine measures "
                                 f"{where(*case)}. {says[:1].upper()}{says[1:]}", name=name,
                          diagnosis=named[0].code)
        return Result(False, f"Your '{name}' is not what the engine measures {where(*case)}. "
                             f"Ask yourself {hint}", name=name, diagnosis="law")
    return Result(True, f"{solved} (tried on cases drawn at check time, measured there).",
                  name=name)
