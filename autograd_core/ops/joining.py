"""Joining: ``cat`` and ``stack``. The backward of joining is splitting: each
input gets back exactly the slice of the gradient that its values occupied."""

from __future__ import annotations

import numpy as np

from ..recording import rule
from ..recording.node import Function


def select(x, dim: int, i: int):
    """``x``'s slice ``i`` along ``dim`` (PyTorch's ``select``): a view of an array, the
    getitem op on a Tensor."""
    return x[(slice(None),) * dim + (i,)]


def narrow(x, dim: int, start: int, length: int):
    """``length`` slices of ``x`` along ``dim`` from ``start`` (PyTorch's ``narrow``): a
    view of an array, the getitem op on a Tensor."""
    return x[(slice(None),) * dim + (slice(start, start + length),)]


def offset(shapes, dim: int, i: int) -> int:
    """Where input ``i`` begins along ``dim`` in a concatenation of inputs of ``shapes``:
    the sizes of the inputs before it, added."""
    return sum(shape[dim] for shape in shapes[:i])


# a rule's select, narrow and offset (a recorded sweep's too: Tensors index)
rule.PLAIN.select = select
rule.PLAIN.narrow = narrow
rule.PLAIN.offset = offset


class _Joining(Function):
    """Cat and stack: forward joins the inputs, forward mode joins their tangents the
    same way, backward hands each input its own part of g."""

    @classmethod
    def forward(cls, ctx, *arrays, dim=0):
        return cls.join(arrays, axis=dim)

    @classmethod
    def jvp(cls, ctx, *tangents):
        """dout = the tangents joined the same way (zeros for inputs without one)"""
        return cls.join(_filled(ctx, tangents), axis=ctx.params["dim"])


class Cat(_Joining):
    """f(a1, ..., an) = the inputs concatenated along dim"""

    name = "cat"
    rule = ("da_i = narrow(g, dim, offset(shapes, dim, i), a_i.shape[dim])  (a_i's rows of g "
            "along dim, after those of a_0 .. a_(i-1))")
    join = staticmethod(np.concatenate)


class Stack(_Joining):
    """f(a1, ..., an) = the inputs stacked along a new axis dim"""

    name = "stack"
    rule = "da_i = select(g, dim, i)  (g's slice i along the new axis dim)"
    join = staticmethod(np.stack)


def _filled(ctx, tangents) -> list:
    """Each input's tangent, with zeros standing in for constants (they have none)."""
    return [np.zeros(shape, dtype=ctx.output_dtype) if t is None else t
            for t, shape in zip(tangents, ctx.input_shapes)]
