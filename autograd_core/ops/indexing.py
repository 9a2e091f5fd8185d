"""Indexing: ``a[key]`` with ints, slices, None, Ellipsis, boolean masks and
integer arrays.

Forward gathers; backward scatters the gradient back into a zero array of the
input's shape. With integer-array indices the same element can be picked more
than once, so the scatter *adds* (``np.add.at``): repeated indices accumulate.
"""

from __future__ import annotations

import numpy as np

from ..function import Function


def is_advanced(key) -> bool:
    """Whether a key uses integer-array or boolean-mask (NumPy "advanced") indexing."""
    parts = key if isinstance(key, tuple) else (key,)
    return any(isinstance(p, np.ndarray | list) for p in parts)


class GetItem(Function):
    """f(a) = a[key]"""

    name = "getitem"
    rule = "da = zeros_like(a);  da[key] += g"

    @staticmethod
    def forward(ctx, a, key=None):
        return a[key]

    @staticmethod
    def backward(ctx, g):
        key = ctx.params["key"]
        da = np.zeros(ctx.input_shapes[0], dtype=g.dtype)
        if is_advanced(key):
            np.add.at(da, key, g)
        else:
            da[key] = g
        return (da,)

    @staticmethod
    def jvp(ctx, ta):
        """dout = ta[key]"""
        return ta[ctx.params["key"]]


class Narrow(Function):
    """f(a) = the slice start:start+length of a along dim (one piece of ``split``)"""

    name = "split"
    rule = "da = zeros_like(a);  da[piece] = g"

    @staticmethod
    def forward(ctx, a, dim=0, start=0, length=0):
        index = (slice(None),) * dim + (slice(start, start + length),)
        return a[index]

    @staticmethod
    def backward(ctx, g):
        p = ctx.params
        da = np.zeros(ctx.input_shapes[0], dtype=g.dtype)
        da[(slice(None),) * p["dim"] + (slice(p["start"], p["start"] + p["length"]),)] = g
        return (da,)

    @staticmethod
    def jvp(ctx, ta):
        """dout = the same slice of ta"""
        p = ctx.params
        return ta[(slice(None),) * p["dim"] + (slice(p["start"], p["start"] + p["length"]),)]
