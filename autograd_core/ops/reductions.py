"""Reductions: sum, mean, max, min, var over ``axis`` (None = all axes).

The backward of a reduction is a copy: the upstream gradient, which has the
reduced shape, is broadcast back over the axes that were summed away. ``max`` and
``min`` send it only to the elements that won; when several elements tie for the
maximum they share it equally (the same convention as ``torch.amax``).
"""

from __future__ import annotations

import numpy as np

from ..function import Function
from ._util import keepdims_shape


def _count(shape: tuple, axis) -> int:
    """How many input elements were reduced into each output element."""
    return int(np.prod(shape)) // max(int(np.prod(keepdims_shape(shape, axis))), 1)


def _reduce_sum(t, ctx):
    """Sum a tangent over the reduced axes, keeping dims as the forward did."""
    return np.sum(t, axis=ctx.params["axis"], keepdims=ctx.params["keepdims"])


def _expand(g, ctx):
    """The upstream gradient reshaped to keepdims form, ready to broadcast."""
    shape = ctx.input_shapes[0]
    return g.reshape(keepdims_shape(shape, ctx.params["axis"]))


class Sum(Function):
    """f(a) = sum of a over axis"""

    name = "sum"
    rule = "da = broadcast(g) over the summed axes"

    @staticmethod
    def forward(ctx, a, axis=None, keepdims=False):
        return np.sum(a, axis=axis, keepdims=keepdims)

    @staticmethod
    def backward(ctx, g):
        return (np.broadcast_to(_expand(g, ctx), ctx.input_shapes[0]),)

    @staticmethod
    def jvp(ctx, ta):
        """dout = sum of ta over axis"""
        return _reduce_sum(ta, ctx)


class Mean(Function):
    """f(a) = mean of a over axis"""

    name = "mean"
    rule = "da = broadcast(g) / n   (n = number of elements averaged)"

    @staticmethod
    def forward(ctx, a, axis=None, keepdims=False):
        return np.mean(a, axis=axis, keepdims=keepdims)

    @staticmethod
    def backward(ctx, g):
        shape = ctx.input_shapes[0]
        return (np.broadcast_to(_expand(g, ctx) / _count(shape, ctx.params["axis"]), shape),)

    @staticmethod
    def jvp(ctx, ta):
        """dout = mean of ta over axis"""
        return np.mean(ta, axis=ctx.params["axis"], keepdims=ctx.params["keepdims"])


class Max(Function):
    """f(a) = max of a over axis; the winners share the gradient."""

    name = "max"
    rule = "da = g * [a == max] / (number of ties)"
    _reduce = staticmethod(np.max)

    @classmethod
    def forward(cls, ctx, a, axis=None, keepdims=False):
        out = cls._reduce(a, axis=axis, keepdims=True)
        ctx.save(mask=a == out)
        return out if keepdims else np.squeeze(out, axis=axis)

    @staticmethod
    def backward(ctx, g):
        mask = ctx.load("mask")
        ties = mask.sum(axis=ctx.params["axis"], keepdims=True)
        return (mask * (_expand(g, ctx) / ties),)

    @staticmethod
    def jvp(ctx, ta):
        """dout = sum(ta * [a == max]) / (number of ties)"""
        mask = ctx.load("mask")
        ties = mask.sum(axis=ctx.params["axis"], keepdims=True)
        return _reduce_sum(ta * mask / ties, ctx)


class Min(Max):
    """f(a) = min of a over axis; the winners share the gradient."""

    name = "min"
    rule = "da = g * [a == min] / (number of ties)"
    _reduce = staticmethod(np.min)


class Var(Function):
    """f(a) = sum((a - mean(a))**2) / (n - correction) over axis"""

    name = "var"
    rule = "da = g * 2 * (a - mean(a)) / (n - correction)"

    @staticmethod
    def forward(ctx, a, axis=None, keepdims=False, correction=1):
        centered = a - np.mean(a, axis=axis, keepdims=True)
        ctx.save(centered=centered)
        n = _count(a.shape, axis)
        return np.sum(centered * centered, axis=axis, keepdims=keepdims) / (n - correction)

    @staticmethod
    def backward(ctx, g):
        centered = ctx.load("centered")
        n = _count(centered.shape, ctx.params["axis"])
        return (_expand(g, ctx) * (2.0 / (n - ctx.params["correction"])) * centered,)

    @staticmethod
    def jvp(ctx, ta):
        """dout = sum(2 * (a - mean(a)) * ta) / (n - correction)"""
        centered = ctx.load("centered")
        n = _count(centered.shape, ctx.params["axis"])
        return _reduce_sum(centered * ta, ctx) * (2.0 / (n - ctx.params["correction"]))
