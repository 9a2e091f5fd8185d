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

    @staticmethod
    def jvp(ctx, *tangents):
        """dout = the tangents concatenated (zeros for inputs without one)"""
        return np.concatenate(_filled(ctx, tangents), axis=ctx.params["dim"])


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

    @staticmethod
    def jvp(ctx, *tangents):
        """dout = the tangents stacked (zeros for inputs without one)"""
        return np.stack(_filled(ctx, tangents), axis=ctx.params["dim"])


def _filled(ctx, tangents) -> list:
    """Each input's tangent, with zeros standing in for constants (they have none)."""
    return [np.zeros(shape, dtype=ctx.output_dtype) if t is None else t
            for t, shape in zip(tangents, ctx.input_shapes)]
