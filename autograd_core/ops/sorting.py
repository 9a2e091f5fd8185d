"""Ordering along a dim: sort, topk (and argsort, their indices alone) and roll.

Sorting moves values, it computes none: ``sort(a).values`` is ``a`` read along ``dim``
at the sorting indices, ``gather(a, dim, indices)``. So :class:`Sort` and :class:`Topk`
are gathers named for what the learner wrote: the indices are worked out first, on the
values (they are constants: a small nudge of ``a`` that keeps the order keeps them),
and the derivative is gather's, stated once in its rule: ``g`` goes back to the place
each value was read from, and 0 to the entries topk left out.

Ties: the order is *stable*. Equal values keep the order of their positions, the
lower index first, ascending or descending alike; NaN counts as larger than every
number (last ascending, first descending), as in PyTorch. PyTorch promises the same
for ``sort(stable=True)``; the engine gives this order for every call.

``roll`` shifts the entries along dims, those pushed off one end coming back at the
other: its backward rolls ``g`` back by the opposite shifts.
"""

from __future__ import annotations

import numpy as np

from ..recording.node import Function
from .scatter import Gather


def sorting_indices(a: np.ndarray, axis: int, descending: bool) -> np.ndarray:
    """The int64 indices that sort ``a`` (at least 1-D) along ``axis``, stably: equal
    values keep their positions' order in both directions, NaN counts as the largest."""
    if not descending:
        return np.argsort(a, axis=axis, kind="stable").astype(np.int64, copy=False)
    # descending and stable: the ascending stable order of the reversed values, read
    # backwards (equal values then come lower index first, NaN first)
    n = a.shape[axis]
    order = np.argsort(np.flip(a, axis), axis=axis, kind="stable")
    return (n - 1 - np.flip(order, axis)).astype(np.int64, copy=False)


class Sort(Gather):
    """f(a) = a sorted along dim: a read along dim at the sorting indices (a gather)"""

    name = "sort"


class Topk(Gather):
    """f(a) = the k largest (or smallest) entries of a along dim: a gather at their
    indices"""

    name = "topk"


class Roll(Function):
    """f(a) = a with its entries shifted along dims, wrapping around (no dims: the
    flattened a, shape kept)"""

    name = "roll"
    rule = "da = roll(g, negative(shifts), dims)  (rolled back by the opposite shifts)"

    @staticmethod
    def forward(ctx, a, shifts=(), dims=None):
        return np.roll(a, shifts, dims)

    @staticmethod
    def jvp(ctx, ta):
        """dout = roll(ta, shifts, dims)"""
        return np.roll(ta, ctx.params["shifts"], ctx.params["dims"])

