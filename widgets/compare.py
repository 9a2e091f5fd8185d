"""Is a predicted gradient right, and if not, how does it differ?

``compare(answer, expected)`` returns ``(ok, message)``. A wrong answer is named
where it can be: wrong shape (and whether it is the transpose, or has the right
number of elements), wrong sign, wrong scale (with the factor), transposed values,
all zeros; otherwise where it differs most. ``parse_answer`` reads what a learner
typed (a Python literal, read with ``ast.literal_eval``: never ``eval``).

>>> compare([1.0, -2.0], np.array([1.0, -2.0]))
(True, 'Right: [ 1. -2.]')
>>> compare([-1.0, 2.0], np.array([1.0, -2.0]))[1]
'Wrong sign: your answer is exactly minus the gradient.'
"""

from __future__ import annotations

import ast

import numpy as np

from autograd_core import errors

from .summary import shape_text, summarize

__all__ = ["compare", "parse_answer"]

RTOL, ATOL = 1e-3, 1e-6  # about three significant digits: enough for typed answers


def parse_answer(text: str) -> np.ndarray:
    """A number or nested list typed as a Python literal -> float array.

    >>> parse_answer("[[1, 2], [3, 4.5]]").shape
    (2, 2)
    """
    source = text.strip()
    if source.startswith(("np.array(", "array(")) and source.endswith(")"):
        source = source[source.index("(") + 1:-1]  # accept what NumPy prints
    try:
        value = ast.literal_eval(source)
    except (ValueError, SyntaxError, MemoryError, RecursionError) as exc:
        raise errors.unreadable_answer(text, type(exc).__name__) from None
    try:
        array = np.array(value, dtype=np.float64)
    except (ValueError, TypeError) as exc:
        raise errors.unreadable_answer(text, str(exc).split("\n")[0]) from None
    return array


def _close(a, b, rtol, atol) -> bool:
    return a.shape == b.shape and bool(np.allclose(a, b, rtol=rtol, atol=atol))


def compare(answer, expected, *, rtol: float = RTOL, atol: float = ATOL) -> tuple[bool, str]:
    """``(True, "Right: ...")`` if ``answer`` matches ``expected`` to ``rtol``/``atol``,
    else ``(False, a sentence saying how they differ)``.

    ``answer`` may be a number, nested lists, an array, a Tensor or the text a
    learner typed (parsed with :func:`parse_answer`).
    """
    e = np.asarray(expected, dtype=np.float64)
    if isinstance(answer, str):
        try:
            a = parse_answer(answer)
        except ValueError as exc:
            return False, str(exc).split("\n")[0]
    else:
        try:
            a = np.asarray(answer, dtype=np.float64)
        except (TypeError, ValueError):
            return False, (f"Expected numbers of shape {shape_text(e.shape)}, got a "
                           f"{type(answer).__name__} that is not numeric.")
    if not np.all(np.isfinite(a)):
        return False, "Your answer contains NaN or infinity; the gradient is finite."
    if a.shape != e.shape:
        return False, _shape_message(a, e, rtol, atol)
    if _close(a, e, rtol, atol):
        return True, f"Right: {summarize(e)}"
    return False, _value_message(a, e, rtol, atol)


def _shape_message(a, e, rtol, atol) -> str:
    given, want = shape_text(a.shape), shape_text(e.shape)
    head = f"Wrong shape: expected {want}, got {given}."
    if a.ndim == 2 and _close(a.T, e, rtol, atol):
        return head + " Your answer is the transpose of the gradient (a flipped transpose?)."
    if a.size == 1 and e.size > 1:
        return head + (" You gave one number; the gradient has one entry per element of the"
                       " input, so it has the input's shape.")
    if a.size == e.size:
        if _close(a.reshape(e.shape), e, rtol, atol):
            return head + " The values are right but laid out in another shape: reshape."
        return head + " Same number of elements: check the order of the axes."
    try:
        summed = np.broadcast_to(e, np.broadcast_shapes(a.shape, e.shape))
    except ValueError:
        return head + " A gradient always has the shape of the tensor it belongs to."
    if summed.shape == a.shape:
        return head + (" Your answer has the broadcast shape: the engine sums the gradient"
                       " back to the input's shape (un-broadcast).")
    return head + " A gradient always has the shape of the tensor it belongs to."


def _value_message(a, e, rtol, atol) -> str:
    if _close(-a, e, rtol, atol):
        return "Wrong sign: your answer is exactly minus the gradient."
    if not np.any(a) and np.any(e):
        return f"Your answer is all zeros; the gradient is not: {summarize(e)}."
    if a.ndim == 2 and a.shape[0] == a.shape[1] and _close(a.T, e, rtol, atol):
        return ("Transposed: your answer is the transpose of the gradient (same shape, "
                "since it is square).")
    ee = float(np.vdot(e, e))
    if ee > 0:
        c = float(np.vdot(a, e)) / ee
        # Any single number is some multiple of another: name a factor there only when
        # it is a whole number (or one over one), like a batch size.
        telling = e.size > 1 or _whole(abs(c)) or _whole(1 / abs(c)) if c else False
        if telling and _close(a, c * e, rtol, atol):
            return _scale_message(c)
    wrong = ~np.isclose(a, e, rtol=rtol, atol=atol)
    where = np.unravel_index(np.argmax(np.abs(a - e)), e.shape)
    index = tuple(int(i) for i in where)
    at = f" at index {index}" if e.ndim else ""
    return (f"{int(wrong.sum())} of {e.size} entries differ; the largest difference is{at}: "
            f"you gave {a[where]:.6g}, the gradient is {e[where]:.6g}.")


def _whole(x: float) -> bool:
    return x >= 2 and abs(x - round(x)) < 1e-6 * x


def _scale_message(c: float) -> str:
    sign = "minus " if c < 0 else ""
    m = abs(c)
    if _close(np.array(m), np.array(1.0), RTOL, 0):
        hint = "the right size, wrong sign"
    elif m > 1:
        hint = f"{m:.6g} times too large"
        if _whole(m):
            hint += ": a sum where the loss averaged over a batch of that size?"
    else:
        hint = f"{1 / m:.6g} times too small"
        if _whole(1 / m):
            hint += ": an average where the loss summed, or a missing factor?"
    return f"Wrong scale: your answer is {sign}{m:.6g} times the gradient ({hint})."
