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
    rule = "da = zeros_like(a);  add.at(da, key, g)   (repeated indices add up)"

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


class Narrow(GetItem):
    """f(a) = one piece of ``split``: a[key], key = (:, ..., start:start+length) along
    dim. A getitem named for what the learner wrote; a slice picks no element twice."""

    name = "split"
    rule = "da = zeros_like(a);  da[key] = g"
