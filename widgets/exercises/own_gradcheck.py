"""Your own gradient check (B1): central finite differences, written by the learner.

``_check_own_gradcheck(my_gradcheck)`` calls ``my_gradcheck(f, x)`` on three functions (a
smooth one of a vector, one with a kink that the point stays away from, one of a
matrix) and compares the numeric gradient it returns with the engine's. The functions
are engine ops, so the reference is the engine's own backward. The check watches every
point the learner's code evaluates ``f`` at, so it can say *how* the gradient was
measured, not only that it is off:

* one-sided differences, (f(x + h) − f(x)) / h: their error shrinks only like h, the
  central difference's like h², so the check compares the learner's error with that of
  a central difference with the same h;
* the scaling: dividing by h where the two points are 2h apart, not dividing at all,
  or writing ``/ 2 * h`` (which multiplies by h);
* nudging several entries at once: that measures one directional derivative, not a
  gradient;
* not putting a nudged entry back: later entries are measured at a moved point, and
  the caller's array is left changed;
* a step too large (truncation error) or too small (rounding error), points that are
  not float64, and calling ``f`` with something other than the whole ``x``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

import autograd_core as ag

from ..feedback import words
from ..feedback.check import check_gradient
from ..feedback.context import Mistake
from ..feedback.result import Result
from . import learner
from .exercise import Exercise, register
from .parts import answers
from .problems import rng

MAX_CALLS = 2000  # evaluations of f per function: a central difference needs 2 per entry
GOOD_STEPS = (1e-9, 1e-3)  # a step outside this range is named when the values are off
TOLERANCE = {"rtol": 1e-6, "atol": 1e-8}  # a central difference with h ~ 1e-5 is ~1e-10 off


@dataclass(frozen=True)
class GradcheckCase:
    """A function to differentiate numerically, built from engine ops (so the engine
    knows its gradient), and the seeded point to differentiate it at."""

    name: str  # the part's name: progress records each one
    formula: str
    fn: Callable  # Tensor -> a scalar Tensor
    point: Callable[[], np.ndarray]


def _off_the_kink() -> np.ndarray:
    """Six entries at least 0.2 away from relu's kink at 0, of both signs."""
    g = rng(62)
    return g.uniform(0.2, 1.5, 6) * np.where(g.random(6) < 0.5, -1.0, 1.0)


def _tanh_layer(w):
    return ag.tanh(ag.tensor(rng(64).standard_normal((4, 3))) @ w).sum()


FUNCTIONS: tuple[GradcheckCase, ...] = (
    GradcheckCase("smooth", "sum(x² · sin x), x a vector of 5",
             lambda x: (x * x * ag.sin(x)).sum(), lambda: rng(61).uniform(-2.0, 2.0, 5)),
    GradcheckCase("kink_avoided", "sum(relu(x) + x²/2), x a vector of 6 kept 0.2 or more away "
             "from the kink at 0", lambda x: (ag.relu(x) + x * x / 2).sum(), _off_the_kink),
    GradcheckCase("matrix", "sum(tanh(X @ W)), W a 3 × 2 matrix", _tanh_layer,
             lambda: rng(63).standard_normal((3, 2))),
)


class TooManyCalls(Exception):
    """The learner's code evaluated f far more often than a gradient check needs."""


class _Recorder:
    """The ``f`` the learner's code gets: evaluates the function (no recording) and keeps
    a copy of every point it was asked about, dtype included. The engine function it
    evaluates stays private: with it, ``my_gradcheck`` could return the engine's gradient."""

    def __init__(self, fn: Callable, size: int):
        self._fn, self.size, self.points = fn, size, []

    def __call__(self, x) -> float:
        if len(self.points) >= MAX_CALLS:
            raise TooManyCalls(f"f was evaluated more than {MAX_CALLS} times for an x of "
                               f"{self.size} entries; a central difference needs two "
                               "evaluations per entry")
        point = np.array(x, copy=True)
        self.points.append(point)
        with ag.no_grad():
            return float(self._fn(ag.tensor(point)).item())


@dataclass(frozen=True)
class _Found:
    """A mistake in *how* the gradient was measured (read from the points evaluated)."""

    code: str
    says: str
    hint: str


def _moved(point: np.ndarray, x0: np.ndarray) -> np.ndarray:
    """Where ``point`` differs from ``x0`` by more than rounding (a few units in the last
    place: x + h - 2h + h need not give x back exactly)."""
    return np.abs(point - x0) > 4 * np.spacing(np.abs(x0))


_ONE_AT_A_TIME = ("Nudge one entry at a time: for each index i (np.ndindex(x.shape) visits "
                  "every index of any shape), evaluate f with only x[i] moved.")


def _how_it_was_measured(points: list, x0: np.ndarray, x_after: np.ndarray) -> _Found | None:
    """The first mistake the evaluated points show, or None."""
    if not points:
        return _Found("no_evaluations", "Your function never evaluated f, so what it returns "
                      "cannot be a numeric gradient: it must measure how f changes.",
                      "Evaluate f at x + h and x − h along each entry.")
    for p in points:
        if p.shape != x0.shape:
            return _Found("point_shape", f"Your function called f with an array of shape "
                          f"{words.shape(p.shape)}; f takes the whole x, shape "
                          f"{words.shape(x0.shape)}.", "Nudge one entry of a copy of x and "
                          "pass the whole array to f.")
        if p.dtype != np.float64:
            return _Found("not_float64", f"Your function evaluated f at {p.dtype} points. A "
                          "difference of two nearly equal values of f keeps only the digits "
                          "they do not share, so it needs all of float64's 16.",
                          "Keep x in float64: no astype(np.float32).")
    nudged: set[int] = set()
    sides: dict[int, set[float]] = {}
    at_x0 = False
    for p in points:
        moved = np.flatnonzero(_moved(p, x0))
        if moved.size == 0:
            at_x0 = True
        elif moved.size == 1:
            i = int(moved[0])
            delta = float(p.flat[i] - x0.flat[i])
            nudged.add(i)
            sides.setdefault(i, set()).add(np.sign(delta))
        elif nudged & set(moved.tolist()):
            return _not_put_back(f"it evaluates f with {moved.size} entries moved, one of them "
                                 "an entry it nudged before")
        else:
            return _Found("all_at_once", f"Your function nudges {moved.size} entries at once "
                          f"(of {x0.size}). That measures how f changes along one direction "
                          "(a single number), not how it changes with each entry.",
                          _ONE_AT_A_TIME)
    if _moved(x_after, x0).any():
        return _not_put_back("the x it was given is left changed when it returns")
    if sides and at_x0 and all(len(s) == 1 for s in sides.values()):
        return _Found("one_sided", "Your differences are one-sided, (f(x + h) − f(x)) / h. "
                      "Their error shrinks only like h, the central difference's like h²",
                      "Evaluate f at x + h and at x − h, and divide the difference by 2h: "
                      "the first-order errors of the two sides cancel.")
    return None


def _not_put_back(evidence: str) -> _Found:
    return _Found("not_restored", f"Your function does not put each nudged entry back: "
                  f"{evidence}. Every later entry is then measured at a moved point.",
                  "After evaluating f at x[i] + h and x[i] − h, set x[i] back to its "
                  "original value (or nudge a copy of x).")


def _step(points: list, x0: np.ndarray) -> float | None:
    """The step the learner used: the median size of the single-entry nudges."""
    sizes = [float(np.max(np.abs(p - x0))) for p in points if _moved(p, x0).sum() == 1]
    return float(np.median(sizes)) if sizes else None


def _central(test: GradcheckCase, x0: np.ndarray, h: float) -> np.ndarray:
    """Central differences of ``test`` at ``x0`` with step ``h`` (for comparing errors)."""
    f = _Recorder(test.fn, x0.size)
    grad = np.zeros_like(x0)
    for index in np.ndindex(x0.shape):
        x = x0.copy()
        x[index] += h
        plus = f(x)
        x[index] -= 2 * h
        grad[index] = (plus - f(x)) / (2 * h)
    return grad


def _one_sided(found: _Found, answer, test: GradcheckCase, x0, h: float,
               expected: np.ndarray) -> Result:
    """One-sided differences: how much larger the error is than a central difference's."""
    sentence = found.says
    try:
        error = float(np.max(np.abs(np.asarray(answer, dtype=np.float64) - expected)))
    except (TypeError, ValueError):
        error = None
    if error is not None and np.isfinite(error):
        central = float(np.max(np.abs(_central(test, x0, h) - expected)))
        ratio = error / central if central > 0 else np.inf
        if ratio > 10:
            how = (f"about {10 ** round(np.log10(ratio)):,.0f} times" if np.isfinite(ratio)
                   else "far")
            sentence += (f": with your step h = {h:.0e} your largest error is {how} larger "
                         "than a central difference's with the same h")
    return Result(False, sentence + ".", name=test.name, diagnosis=found.code, hint=found.hint)


def _scaling_mistakes(expected: np.ndarray, h: float | None) -> list[Mistake]:
    """What a central difference gives with the wrong divisor."""
    out = [
        Mistake(2 * expected, "Your gradient is twice too large: f(x + h) and f(x − h) are "
                "2h apart, so divide their difference by 2h, not by h.",
                "slope = (f(x + h) − f(x − h)) / (2h).", "divided_by_h"),
        Mistake(expected / 2, "Your gradient is half the right size: divide the difference "
                "of f by the distance between the two points (2h for x + h and x − h), not "
                "by twice that.", "slope = (f(x + h) − f(x − h)) / (2h).", "divided_by_4h"),
    ]
    if h is not None:
        out += [
            Mistake(expected * h * h, "Your gradient is far too small, by a factor of h²: "
                    "Python reads `d / 2 * h` as `(d / 2) * h`, a multiplication by h.",
                    "Put the divisor in parentheses: d / (2 * h).", "precedence"),
            Mistake(2 * h * expected, "Your gradient is the difference of f itself: it was "
                    "never divided by the distance 2h between the points.",
                    "slope = (f(x + h) − f(x − h)) / (2h).", "not_divided"),
        ]
    return out


# the engine's own finite differences: B1 asks the learner to write them
_THE_ENGINES_OWN = ("numeric_jacobian", "gradcheck", "gradgradcheck")


def _check_one(fn: Callable, test: GradcheckCase) -> Result:
    x0 = test.point()
    t = ag.tensor(x0.copy(), requires_grad=True)
    test.fn(t).backward()
    expected = t.grad.numpy()
    f = _Recorder(test.fn, x0.size)
    given = x0.copy()
    try:
        answer = learner.without(fn, f, given, forbidden=_THE_ENGINES_OWN,
                                 what=getattr(fn, "__name__", "my_gradcheck"))
    except learner.LearnerCodeFailed as exc:
        return learner.failed(exc, name=test.name)
    h = _step(f.points, x0)
    found = _how_it_was_measured(f.points, x0, given)
    if found is not None and found.code == "one_sided":
        return _one_sided(found, answer, test, x0, h, expected)
    if found is not None:
        return Result(False, found.says, name=test.name, diagnosis=found.code, hint=found.hint)
    result = check_gradient(answer, expected, name=test.name,
                            reference=f"the engine's gradient of {test.formula}",
                            mistakes=_scaling_mistakes(expected, h), **TOLERANCE)
    if not result.ok and result.diagnosis == "values" and h is not None and not (
            GOOD_STEPS[0] <= h <= GOOD_STEPS[1]):
        big = h > GOOD_STEPS[1]
        says = (f"Your step h = {h:.0e} is too {'large' if big else 'small'}: "
                + ("a central difference is exact only up to a term in h², which is not "
                   "small at this h." if big else "f's values are rounded to about 16 "
                   "digits, and that rounding, divided by a tiny h, swamps the slope."))
        return Result(False, says, name=test.name, diagnosis="step_size",
                      hint="A step near 1e-6 balances the two errors in float64.")
    return result


@answers("smooth", "kink_avoided", "matrix")
def _check_own_gradcheck(fn: Callable | None = None) -> Result:
    """``B1(my_gradcheck)``: your ``my_gradcheck(f, x)`` (the numeric gradient of a scalar
    function ``f`` at the float64 array ``x``, by central differences) on three functions,
    against the engine's gradients.

    >>> _check_own_gradcheck(my_gradcheck)          # doctest: +SKIP
    """
    parts = []
    for test in FUNCTIONS:
        part = _check_one(fn, test)
        if part.diagnosis in ("none", "type"):  # nothing written yet, or not a function
            return Result(part.ok, part.message, diagnosis=part.diagnosis, hint=part._hint)
        parts.append(part)
    return Result.combine(parts)


register(Exercise("B1", "derivation", {"fn": _check_own_gradcheck}))
