"""One gradient of lesson 13 against the engine's: a Result, and the word the tables of
H1 and H4 show for it (right, close, wrong, not written yet, not an array).

Every answer goes through :func:`~..feedback.check_gradient`, so a mistake is named the same
way as in the other lessons and no message shows an expected value; a right gradient of the
shape before a broadcast gets a sentence of its own.
"""

from __future__ import annotations

import numpy as np

from autograd_core import Tensor

from ...feedback import words
from ...feedback.check import check_gradient
from ...feedback.inputs import AnswerProblem, as_answer
from ...feedback.result import Result
from ...feedback.tolerance import close, tolerance_for
from .network import BATCH

CLOSE = 1e-2  # "close": wrong, but no entry off by more than 1% of the largest entry
_UNREADABLE = frozenset({"text", "type", "ragged", "bool", "complex", "unreadable", "tensor"})


def _status(result: Result, answer, expected: np.ndarray) -> str:
    """right / close / wrong / not written yet / not an array, for one row's Result."""
    if result.ok:
        return "right"
    if result.diagnosis == "none":
        return "not written yet"
    if result.diagnosis in _UNREADABLE:
        return "not an array"
    try:
        a = np.asarray(answer, dtype=np.float64)
    except (TypeError, ValueError):
        return "wrong"
    if a.shape != expected.shape or not np.all(np.isfinite(a)):
        return "wrong"
    scale = float(np.abs(expected).max()) or 1.0
    return "close" if float(np.abs(a - expected).max()) < CLOSE * scale else "wrong"


def _tensor_sentence(name: str) -> str:
    return (f"{name} is an engine Tensor, not a NumPy array: it was computed from a tensor of "
            "the forward pass (or is a .grad). Work on the NumPy values: p.W2, not W2.")


def check_one(name: str, answer, expected: np.ndarray, *, batch_size: int = BATCH,
              **context) -> tuple[Result, str]:
    """One gradient against the engine's, with a status for the table. ``name`` is the
    tensor's (``"W1"``); the Result is named ``d_W1``."""
    label = f"d_{name}"
    if answer is None:
        return Result(False, "not written yet", name=label, diagnosis="none"), "not written yet"
    if isinstance(answer, Tensor):
        return (Result(False, _tensor_sentence(label), name=label, diagnosis="tensor"),
                "not an array")
    result = _not_broadcast(label, name, answer, expected)
    if result is None:
        result = check_gradient(answer, expected, name=label, of=name, batch_size=batch_size,
                                **context)
    return result, _status(result, answer, expected)


def _not_broadcast(label: str, name: str, answer, expected: np.ndarray) -> Result | None:
    """A sentence for right values with the shape before a broadcast (None otherwise)."""
    try:
        a = as_answer(answer, expected.shape).array.astype(np.float64)
    except AnswerProblem:
        return None
    if a.size >= expected.size or a.ndim != expected.ndim:
        return None
    try:
        spread = np.broadcast_to(a, expected.shape)
    except ValueError:
        return None
    if not close(spread, expected, tolerance_for(np.float64)):
        return None
    return Result(False, f"Your {label} has shape {words.shape(a.shape)}, but {name} has shape "
                         f"{words.shape(expected.shape)} and each of its entries gets its own "
                         "gradient: copy yours along the missing axis (the backward of a sum or "
                         "mean sends the gradient to every entry it added).",
                  name=label, diagnosis="missing_broadcast",
                  hint="Each entry of the input gets its own copy of your value: the answer has "
                       "the input's shape.")


def _usable(answer, shape) -> np.ndarray | None:
    """The learner's array as floats if it has ``shape`` and is finite, else None."""
    if answer is None or isinstance(answer, Tensor):
        return None
    try:
        a = as_answer(answer, shape).array.astype(np.float64)
    except AnswerProblem:
        return None
    return a if a.shape == tuple(shape) and np.all(np.isfinite(a)) else None
