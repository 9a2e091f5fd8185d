"""Feedback on a learner's array: the one module every exercise and the stepper's
predict mode call.

:func:`check_gradient` compares a learner's array with the engine's gradient and,
when they differ, says *why* wherever the evidence allows: wrong shape (and the
transpose, reshape or sum that fixes it), the transpose of a square answer, a
factor of the batch size, the wrong sign, a constant factor, all zeros, a missing
upstream gradient, a missing or misplaced activation derivative, a broadcast that
was not summed back, one path overwriting another, batch norm without its
mean/variance paths, or a mistake the calling check built on purpose
(``mistakes=[Mistake(...)]``). :func:`check_predicted_gradient` is the same check
for a gradient predicted by hand (the stepper): typed text is read, and three
significant digits are enough.

The diagnoses, each with its sentence, live in ``shapes`` (wrong shape) and
``diagnosis`` (right shape, wrong values); the one tolerance in ``tolerance``;
reading an answer in ``inputs``. Every Result is built here, so what feedback may
show is decided in one place.
"""

from __future__ import annotations

import numpy as np

from . import words
from .context import make_context
from .diagnosis import diagnose_values
from .inputs import AnswerProblem, as_answer, as_expected, parse_answer
from .result import Result
from .shapes import diagnose_shape
from .tolerance import HAND_WRITTEN, close, tolerance_for

__all__ = ["check_gradient", "check_predicted_gradient"]


def _sentence(text: str) -> str:
    return text[:1].upper() + text[1:]


def check_gradient(answer, expected, *, name: str = "", hint: bool = False,
                   rtol: float | None = None, atol: float | None = None, **context) -> Result:
    """Compare ``answer`` with the engine's gradient ``expected``; name the mistake if any.

    Context (all optional) lets it name more mistakes: ``batch_size=N``,
    ``upstream=g``, ``activation_derivative=f1`` (with ``before_activation=`` and
    ``wrong_derivatives={"f'(z2)": f2}``), ``paths=[c1, c2]``, ``naive=`` (batch
    norm through x̂ only), ``mistakes=[Mistake(...)]``, ``of="W2"``, and
    ``reference="the engine's value"`` (how messages name the expected value).

    >>> import numpy as np
    >>> r = check_gradient(np.array([[1.0, 3.0], [2.0, 4.0]]), np.array([[1.0, 2.0], [3.0, 4.0]]),
    ...                    name="dA")
    >>> r.diagnosis
    'transpose'
    """
    try:
        reference = as_expected(expected)
    except Exception as exc:  # a bug in the calling check, not the learner's answer
        raise TypeError(f"check_gradient: expected must be an array or Tensor ({exc})") from None
    try:
        given = as_answer(answer, reference.shape, "your answer")
    except AnswerProblem as problem:
        return _wrong(name, problem.sentence, problem.code, problem.hint, [], hint)
    a = given.array
    tol = tolerance_for(a.dtype, reference.dtype, rtol=rtol, atol=atol)
    is_int = a.dtype.kind in "iu"
    ctx = make_context(tol, is_int, name="your answer", **context)
    e = reference.astype(np.float64)
    af = a.astype(np.float64)
    notes = list(given.notes)

    if af.shape != e.shape:
        d = diagnose_shape(af, e, ctx)
        return _wrong(name, d.sentence, d.code, d.hint, notes, hint)

    bad = _non_finite(af, e, ctx.reference)
    if bad:
        return _wrong(name, bad, "nonfinite", "Print the intermediate values of your formula and "
                      "find the first one that is not finite.", notes, hint)

    if close(af, e, tol):
        return Result(True, " ".join([f"Correct: it matches {ctx.reference}.", *notes]),
                      name=name)

    d = diagnose_values(af, e, ctx)
    if is_int and d.code != "integer" and not np.array_equal(e, np.round(e)):
        notes.append(f"(Your array has integer dtype {a.dtype}: integer arrays cannot hold "
                     "fractions, so build it from floats.)")
    return _wrong(name, d.sentence, d.code, d.hint, notes, hint)


def check_predicted_gradient(answer, expected, *, name: str = "", **context) -> Result:
    """:func:`check_gradient` for a gradient predicted by hand (the stepper's predict mode).

    ``answer`` may also be the text typed in a box, read as a Python literal (never
    ``eval``); it is held to :data:`~.tolerance.HAND_WRITTEN` (about three significant
    digits).

    >>> import numpy as np
    >>> check_predicted_gradient("[0.333, -1]", np.array([1 / 3, -1.0])).ok
    True
    """
    if isinstance(answer, str):
        try:
            answer = parse_answer(answer)
        except AnswerProblem as problem:
            return _wrong(name, problem.sentence, problem.code, problem.hint, [], False)
    return check_gradient(answer, expected, name=name, rtol=HAND_WRITTEN.rtol,
                          atol=HAND_WRITTEN.atol, **context)


def _wrong(name, sentence, code, hint_text, notes, show_hint) -> Result:
    return Result(False, " ".join([_sentence(sentence), *notes]), name=name, diagnosis=code,
                  hint=hint_text, show_hint=show_hint)


def _non_finite(a: np.ndarray, e: np.ndarray, reference: str) -> str:
    """A sentence about NaN/inf entries of ``a`` where ``e`` is finite ('' if none)."""
    for test, what, cause in (
            (np.isnan, "NaN (not a number)", "NaN comes from 0/0, inf - inf, or the log or "
                                            "square root of a negative number"),
            (np.isinf, "inf", "inf comes from an overflow (exp of a large number) or a "
                              "division by zero")):
        bad = test(a) & np.isfinite(e)
        if bad.any():
            first = np.argwhere(bad)[0] if a.ndim else ()
            where = f" (the first at index {words.index(first)})" if a.ndim else ""
            return (f"Your answer contains {what} in {int(bad.sum())} of {a.size} entries"
                    f"{where}, where {reference} is a finite number. {cause}.")
    return ""
