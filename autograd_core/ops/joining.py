"""Joining: ``cat`` and ``stack``. The backward of joining is splitting: each
input gets back exactly the slice of the gradient that its values occupied."""

from __future__ import annotations

import numpy as np

from ..function import Function


class Cat(Function):
    """f(a1, ..., an) = the inputs concatenated along dim"""

    name = "cat"
    rule = "da_i = g[the rows of a_i along dim]"

    @staticmethod
    def forward(ctx, *arrays, dim=0):
        return np.concatenate(arrays, axis=dim)

    @staticmethod
    def backward(ctx, g):
        dim = ctx.params["dim"]
        sizes = [shape[dim] for shape in ctx.input_shapes]
        return tuple(np.split(g, np.cumsum(sizes)[:-1], axis=dim))


class Stack(Function):
    """f(a1, ..., an) = the inputs stacked along a new axis dim"""

    name = "stack"
    rule = "da_i = g.take(i, axis=dim)"

    @staticmethod
    def forward(ctx, *arrays, dim=0):
        return np.stack(arrays, axis=dim)

    @staticmethod
    def backward(ctx, g):
        dim = ctx.params["dim"]
        return tuple(np.take(g, i, axis=dim) for i in range(len(ctx.input_shapes)))
