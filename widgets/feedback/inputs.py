"""Turning whatever a learner passed into an array, or into a sentence saying why not.

Learners pass ``None`` (a function that forgot to ``return``), strings, lists,
tensors, functions, dicts. Each gets a clear sentence instead of a traceback.
The learner's object is never modified: we always work on a copy. Text typed in
a box (the stepper's predict mode) is read by :func:`parse_answer`, as a Python
literal: never ``eval``.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

import numpy as np

from autograd_core import Tensor

from .. import messages
from . import words


class AnswerProblem(Exception):
    """The answer cannot be read as numbers; ``args[0]`` is the sentence to show."""

    def __init__(self, sentence: str, code: str, hint: str = ""):
        super().__init__(sentence)
        self.sentence, self.code, self.hint = sentence, code, hint


@dataclass(frozen=True)
class Answer:
    """The learner's answer as a private float-or-int array, plus notes about it."""

    array: np.ndarray
    notes: tuple[str, ...] = ()


def _short(value) -> str:
    return words.short(value, 40)


def _shape_words(shape) -> str:
    return "a single number" if shape == () else f"an array of shape {tuple(shape)}"


def as_answer(answer, expected_shape: tuple | None = None, name: str = "your answer") -> Answer:
    """A private copy of ``answer`` as a numeric array, or ``AnswerProblem``.

    >>> as_answer([[1, 2]]).array.shape
    (1, 2)
    """
    want = _shape_words(expected_shape) if expected_shape is not None else "an array"
    notes: list[str] = []
    if answer is None:
        raise AnswerProblem(
            f"{name} is None, so there is nothing to check yet.",
            "none", "If it comes from a function, make sure the function ends with "
                    "`return ...`.")
    if isinstance(answer, str | bytes):
        raise AnswerProblem(
            f"{name} is text ({_short(answer)}), but the check needs numbers: {want}.",
            "text", "Compute the value with NumPy (or the engine) instead of writing it as a "
                    "string.")
    if isinstance(answer, dict):
        raise AnswerProblem(f"{name} is a dict; the check needs {want}.", "type",
                            "Pass the array itself, not a dict holding it.")
    if callable(answer) and not hasattr(answer, "__array__"):
        raise AnswerProblem(f"{name} is a function ({_short(answer)}); the check needs its "
                            f"result: {want}.", "type", "Call the function and pass what it "
                                                        "returns.")
    if isinstance(answer, Tensor):  # read its values; its graph is never touched
        array = np.array(answer.numpy())  # numpy() is a read-only view: copy it
    elif hasattr(answer, "detach") and hasattr(answer, "numpy"):  # a PyTorch tensor
        array = np.array(answer.detach().cpu().numpy())
    else:
        array = _to_array(answer, name, want)
    if array.dtype == bool:
        raise AnswerProblem(f"{name} is an array of True/False values; the check needs {want} "
                            "of numbers.", "bool",
                            "A comparison like (x > 0) gives booleans: multiply it by the "
                            "gradient to get numbers.")
    if array.dtype.kind == "c":
        raise AnswerProblem(f"{name} has complex numbers; gradients here are real.", "complex")
    if array.dtype.kind not in "iuf":
        raise AnswerProblem(f"{name} holds {array.dtype} values, not numbers; the check needs "
                            f"{want}.", "type")
    return Answer(array, tuple(notes))


def _to_array(answer, name: str, want: str) -> np.ndarray:
    try:
        array = np.array(answer)  # a copy, so nothing we do reaches the learner's object
    except ValueError as exc:
        if "inhomogeneous" in str(exc) or "sequence" in str(exc):
            raise AnswerProblem(f"{name} is a nested list whose rows have different lengths, "
                                f"so it is not {want}.", "ragged",
                                "Every row must have the same number of entries.") from None
        raise AnswerProblem(f"{name} could not be read as numbers ({exc}).", "type") from None
    except (TypeError, RuntimeError) as exc:
        hint = ("If it is a PyTorch tensor, pass .detach().numpy()."
                if "grad" in str(exc) else "")
        raise AnswerProblem(f"{name} ({type(answer).__name__}) could not be read as numbers.",
                            "type", hint) from None
    if array.dtype.kind in "US":
        raise AnswerProblem(f"{name} contains text ({_short(answer)}); the check needs {want}.",
                            "text", "Write numbers, not strings: 0.5, not '0.5'.")
    if array.dtype == object:
        kinds = sorted({type(v).__name__ for v in np.ravel(array)})
        raise AnswerProblem(f"{name} mixes things that are not numbers ({', '.join(kinds)}); "
                            f"the check needs {want}.", "type",
                            "If it holds tensors, pass one array (e.g. np.stack of their "
                            "values) instead.")
    return array


def as_expected(expected) -> np.ndarray:
    """The engine's reference as a private float array (a Tensor is read, never changed)."""
    if isinstance(expected, Tensor):
        return np.array(expected.numpy())
    return np.array(expected)


def parse_answer(text: str) -> np.ndarray:
    """A number or nested list typed as a Python literal -> float array, or ``AnswerProblem``.

    >>> parse_answer("[[1, 2], [3, 4.5]]").shape
    (2, 2)
    """
    source = text.strip()
    if source.startswith(("np.array(", "array(")) and source.endswith(")"):
        source = source[source.index("(") + 1:-1]  # accept what NumPy prints
    try:
        value = ast.literal_eval(source)
    except (ValueError, SyntaxError, MemoryError, RecursionError) as exc:
        raise _unreadable(text, type(exc).__name__) from None
    try:
        return np.array(value, dtype=np.float64)
    except (ValueError, TypeError) as exc:
        raise _unreadable(text, str(exc).split("\n")[0]) from None


def _unreadable(text: str, reason: str) -> AnswerProblem:
    sentence, _, hint = str(messages.unreadable_answer(text, reason)).partition("\nHint: ")
    return AnswerProblem(sentence, "unreadable", hint)
