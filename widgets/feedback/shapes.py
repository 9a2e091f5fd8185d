"""Diagnosing an answer of the wrong shape: which transposition or reduction fixes it.

A gradient always has the shape of the tensor it belongs to. When an answer does
not, the cheapest useful feedback is the operation that would give the right
shape *and* the right values: a transpose, summing the batch axis away (the
backward of a broadcast), dropping a size-1 axis.
"""

from __future__ import annotations

import itertools

import numpy as np

from autograd_core.sweep.engine import sum_to

from . import words
from .context import Context
from .diagnosis import Diagnosis
from .tolerance import close

_SAME_SHAPE_HINT = ("A gradient always has exactly the shape of the tensor it is the gradient "
                    "of: dL/dW has W's shape.")


def diagnose_shape(answer: np.ndarray, expected: np.ndarray, ctx: Context) -> Diagnosis:
    """Why ``answer`` has the wrong shape, and what would fix it (shapes differ). The
    expected value is named as the caller names it (``reference=``, ``of=``): only a
    gradient's message speaks of a gradient and the tensor it belongs to."""
    name, tol = ctx.name, ctx.tol
    want = words.shape(expected.shape)
    got = words.shape(answer.shape)
    gradient = ctx.is_gradient
    hint = _SAME_SHAPE_HINT if gradient else ""
    whose = ""
    if gradient:
        whose = f" (the shape of {ctx.of or 'the tensor it belongs to'})"
    if answer.ndim == 0 and expected.size > 1:
        return Diagnosis("scalar", f"{name} is a single number, but the shape of "
                                   f"{ctx.reference} is {want}{whose}: one entry per entry"
                                   f"{' of that tensor' if gradient else ''}.", hint)
    if expected.ndim == 0:
        if answer.size == 1:
            return Diagnosis("shape", f"{name} has shape {got}, an array holding one number, "
                                      "where a single number is asked for: pass the number "
                                      "itself.", hint)
        if gradient and close(np.sum(answer), expected, tol):
            return Diagnosis("missing_reduction",
                             f"{name} has shape {got}, but {ctx.reference} is a single number: "
                             "your entries look like the per-entry terms before the "
                             "reduction.", "The output was reduced to one number.")
        return Diagnosis("shape", f"{name} has shape {got}, but a single number is asked for "
                                  f"({ctx.reference}).", hint)
    found = (_permuted(answer, expected, ctx) or _reshaped(answer, expected, ctx)
             or (_reduced(answer, expected, ctx) if gradient else None))
    if found:
        return found
    extra = ""
    if ctx.batch_size and ctx.batch_size in answer.shape and ctx.batch_size not in \
            expected.shape:
        extra = (f" Your answer has an axis of size {ctx.batch_size}, the batch size: the "
                 "parameter is shared by every example, so that axis must be summed away.")
    elif answer.size == expected.size:
        extra = " It has the right number of entries, but rearranging them does not match."
    elif gradient and _broadcasts_to(expected.shape, answer.shape):
        extra = (" Your answer has the broadcast shape: the engine sums the gradient back to "
                 "the input's shape (un-broadcast).")
    return Diagnosis("shape", f"{name} has shape {got}, but the shape of {ctx.reference} is "
                              f"{want}{whose}.{extra}", hint)


def _permuted(answer, expected, ctx: Context) -> Diagnosis | None:
    if answer.ndim != expected.ndim or answer.ndim > 5:
        return None
    for perm in itertools.permutations(range(answer.ndim)):
        moved = np.transpose(answer, perm)
        if moved.shape == expected.shape and close(moved, expected, ctx.tol):
            compare = (f" Compare its shape with {ctx.of or 'the tensor it belongs to'}'s."
                       if ctx.is_gradient else "")
            return Diagnosis(
                "transpose",
                f"{ctx.name} has shape {words.shape(answer.shape)}, but the shape of "
                f"{ctx.reference} is {words.shape(expected.shape)}: it looks transposed (its "
                f"axes are in another order).{compare}",
                "Write the shapes under each factor of your formula: the order of the factors "
                "that gives the right shape is the right one.")
    return None


def _broadcasts_to(shape, target) -> bool:
    """Whether broadcasting an array of ``shape`` gives ``target`` (so a sum undoes it)."""
    try:
        return np.broadcast_shapes(shape, target) == tuple(target)
    except ValueError:
        return False


def _reduced(answer, expected, ctx: Context) -> Diagnosis | None:
    if _broadcasts_to(expected.shape, answer.shape):
        lead = answer.ndim - expected.ndim
        axes = tuple(range(lead)) + tuple(
            lead + i for i, s in enumerate(expected.shape) if s == 1 and answer.shape[lead + i]
            != 1)
        if close(sum_to(answer, expected.shape), expected, ctx.tol):
            keep = ", with the size-1 axes kept" if lead == 0 else ""
            return Diagnosis(
                "missing_broadcast_sum",
                f"{ctx.name} still has the axis the forward pass broadcast over (axis "
                f"{_axes(axes)} of your shape {words.shape(answer.shape)}); the gradient has "
                f"shape {words.shape(expected.shape)}{keep}. The backward of a broadcast "
                "gathers the copies back into one.",
                "The forward pass copied this tensor to every example (a broadcast); the "
                "backward of a copy is a sum, so every copy's gradient is added up.")
        means = answer.mean(axis=axes, keepdims=True).reshape(expected.shape)
        if close(means, expected, ctx.tol):
            return Diagnosis(
                "missing_reduction",
                f"{ctx.name} still has the broadcast axis {_axes(axes)} (shape "
                f"{words.shape(answer.shape)}), and your per-example terms are each N times "
                "too large.",
                "Sum over the broadcast axis, and check where the 1/N of the mean loss went.")
    for axis in range(answer.ndim):
        for how in ("sum", "mean"):
            reduced = getattr(answer, how)(axis=axis)
            if reduced.shape == expected.shape and close(reduced, expected, ctx.tol):
                return Diagnosis(
                    "missing_broadcast_sum" if how == "sum" else "missing_reduction",
                    f"{ctx.name} has shape {words.shape(answer.shape)}, but the gradient has "
                    f"shape {words.shape(expected.shape)}: your axis {axis} is one the "
                    f"gradient does not have, and it was never "
                    f"{'summed' if how == 'sum' else 'averaged'} away.",
                    "The backward of a broadcast (a copy) gathers every copy's gradient.")
    return None


def _reshaped(answer, expected, ctx: Context) -> Diagnosis | None:
    if answer.size != expected.size:
        return None
    if not close(answer.reshape(expected.shape), expected, ctx.tol):
        return None
    squeezed = tuple(s for s in answer.shape if s != 1) == tuple(s for s in expected.shape
                                                               if s != 1)
    how = ("only a size-1 axis differs (keepdims)" if squeezed
           else "the entries are in the right order, only the shape is wrong")
    return Diagnosis(
        "reshape",
        f"{ctx.name} has shape {words.shape(answer.shape)} instead of "
        f"{words.shape(expected.shape)}; {how}.", _SAME_SHAPE_HINT)


def _axes(axes) -> str:
    return str(axes[0]) if len(axes) == 1 else str(tuple(axes))
