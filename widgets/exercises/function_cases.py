"""The kind "derive it, then write it as a function": a :class:`Derivation`.

An item of this kind is data: the learner's function's name, the cases it is run on (the
lesson's own numbers first, then others of other sizes), how one output is compared with
the engine's answer (naming the known mistakes), and what a right answer is called. The
rules live here, once, for every such item:

* **Worked by hand.** The engine may not run inside the learner's function: the engine
  computing the derivative is the check's answer, not the learner's (``by_hand``).
* **A closed form, not a measurement.** Where the closed form is the point
  (``closed_form``), an answer must agree with the engine near machine precision: a
  closed form in float64 agrees to about 1e-15, central finite differences at best to
  about 1e-10, and arithmetic in float32 to about 1e-7.
* **Probed on a second problem.** Every item has at least two cases, so an array or a
  size of the lesson's problem built into the function shows, with a sentence that
  says so.
"""

from __future__ import annotations

import contextlib
import functools
import inspect
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from ..feedback.result import Result
from . import learner, problems
from .parts import one_answer

# One case: (where, make), make() -> (arguments, the engine's answer, context for compare)
Case = tuple[str, Callable[[], tuple[tuple, object, dict]]]

# The largest relative gap (max |answer − engine| / max |engine|) a closed form may have,
# for this kind, the Gradients kind and written backwards alike. Measured on every right
# answer the tests and lessons hold (the worked solutions of H2, H3, D1, D2, A1, the right
# functions of every Gradients check, the right ops of B2-B6): at worst 5.8e-16 (D2). Central
# differences at the best step: 2.1e-11 (D1's tanh'', h = 1e-6), 4.1e-11 (softplus), 1.2e-10
# (softmax cross-entropy), 2.9e-10 (batch norm). 1e-12 leaves a factor 1700 above the closed
# forms and 20 below the best difference. (Central differences of a linear op such as conv2d
# are exact up to rounding at a large step, 5.6e-16 at h = 1: no agreement tells those apart;
# a written backward that reruns its forward is refused for it, see backward_check.)
MACHINE_AGREEMENT = 1e-12


@dataclass(frozen=True)
class Derivation:
    """One item of the kind: ``answer`` names the learner's function (``"d2_tanh"``),
    ``cases`` are where it runs (the lesson's first), ``compare(out, expected, context)``
    judges one output and names its mistake, ``right`` ends the sentence of a function
    right on every case; ``label`` names the part (``answer`` by default); ``probe`` asks
    what a function right on the first case but wrong on another may have missed (E4: a
    sign of a and t it does not cover, rather than a size built in)."""

    answer: str
    cases: tuple[Case, ...]
    compare: Callable[[object, object, dict], Result]
    right: str
    label: str = ""
    by_hand: bool = True
    closed_form: bool = True
    forbidden: tuple[str, ...] = ()  # engine functions it may not call (when not by_hand)
    # what a function right on the first case but wrong on another may have missed
    probe: str = "Is a size, or an array of {first}, built into it?"

    def __post_init__(self):
        if len(self.cases) < 2:
            raise ValueError(f"{self.answer}: a derivation is probed on a second problem, "
                             "so it needs at least two cases")

    def check(self, fn) -> Result:
        """Run the learner's ``fn`` on each case (NumPy arguments copied, so it cannot
        change the next case's); the first wrong case answers."""
        label = self.label or self.answer
        if self.by_hand:
            run = learner.by_hand
        elif self.forbidden:
            run = functools.partial(learner.without, forbidden=self.forbidden)
        else:
            run = learner.call
        for i, (where, make) in enumerate(self.cases):
            # the lesson's case as shown; every other one drawn afresh for this check, so a
            # table of answers worked out on an earlier check's arguments does not carry over
            with contextlib.nullcontext() if i == 0 else problems.unseen():
                args, expected, ctx = make()
            args = tuple(np.array(a) if isinstance(a, np.ndarray) else a for a in args)
            try:
                out = run(fn, *args, what=self.answer)
            except learner.LearnerCodeFailed as exc:
                return learner.failed(exc, name=label)
            if out is None:
                return Result(False, f"Your {self.answer} returns None: nothing to check yet "
                                     "(replace `return None` with your expression).",
                              name=label, diagnosis="none")
            result = self.compare(out, expected, ctx)
            if result.ok and self.closed_form:
                measured = not_closed_form(out, expected, self.answer, label)
                result = result if measured is None else measured
            if not result.ok:
                if i:
                    probe = self.probe.format(first=self.cases[0][0])
                    result.message = (f"Right on {self.cases[0][0]}, but not on {where}: "
                                      f"{result.message[:1].lower()}{result.message[1:]} "
                                      f"({probe})")
                return result
        others = " and on ".join(where for where, _ in self.cases[1:])
        return Result(True, f"Correct on {self.cases[0][0]} and on {others}: {self.right}",
                      name=label)


def not_closed_form(out, expected, what: str, label: str = "") -> Result | None:
    """The sentence for an answer that agrees with the engine only as a measurement does
    (finite differences, float32), where a closed form in float64 is asked; None for an
    answer that agrees near machine precision (or cannot be lined up)."""
    gap = relative_gap(out, expected)
    if gap is None or gap <= MACHINE_AGREEMENT:
        return None
    return Result(False, f"Your {what} agrees with the engine only to about {gap:.0e} "
                         "(relative), as finite differences or float32 arithmetic do; a "
                         "closed form in float64 agrees to about 1e-15. This item asks for "
                         "the derivative written out.", name=label or what,
                  diagnosis="not_closed_form",
                  hint="Derive the expression on paper, then compute it in float64.")


def relative_gap(out, expected) -> float | None:
    """max |out − expected| / max |expected| over every entry (a tuple of arrays is read
    in order); None when the two cannot be lined up."""
    def flat(x):
        parts = x if isinstance(x, tuple | list) else (x,)
        return np.concatenate([np.ravel(np.asarray(p, dtype=np.float64)) for p in parts])

    try:
        a, e = flat(out), flat(expected)
    except (TypeError, ValueError):
        return None
    if a.shape != e.shape or not np.all(np.isfinite(e)):
        return None
    scale = float(np.max(np.abs(e))) if e.size else 0.0
    return float(np.max(np.abs(a - e))) / scale if scale > 0 else None


def deriving(kind: Derivation, doc: str) -> Callable[..., Result]:
    """The check of an item of the kind: ``ID(fn)`` or ``ID(answer=fn)``; ``doc`` says
    what the function takes and returns. The kind stays on it as ``.derivation``."""

    def answer(fn) -> Result:
        return kind.check(fn)

    # the one parameter is named as the lesson names the function: D1(d2_tanh=...)
    answer.__signature__ = inspect.Signature([inspect.Parameter(
        kind.answer, inspect.Parameter.POSITIONAL_OR_KEYWORD)], return_annotation=Result)
    check = one_answer(kind.answer)(answer)
    check.__doc__ = doc
    check.derivation = kind
    return check
