"""Reductions: sum, mean, max, min, amax, amin, var over ``axis`` (None = all axes, or
a tuple of axes).

The backward of a reduction is a copy, scaled: the upstream gradient, which has the
reduced shape, is broadcast back over the axes that were summed away and multiplied
by each value's local slope (1 for sum, 1/n for mean). ``max`` and ``min`` send it
only to the elements that won; when several elements tie for the maximum they share
it equally (the same convention as ``torch.amax``). ``amax`` and ``amin`` are the same
reductions under PyTorch's other name, and differ only at a nan, as PyTorch's do.
float16 is added up in float32 and rounded back once (``recording/accumulate.py``), as
PyTorch's CPU kernels do.
"""

from __future__ import annotations

import math

import numpy as np

from ..recording.accumulate import accumulated, widened
from ..recording.node import Function
from ._util import keepdims_shape


def _count(shape: tuple, axis) -> int:
    """How many input elements were reduced into each output element."""
    return int(np.prod(shape)) // max(int(np.prod(keepdims_shape(shape, axis))), 1)


def _reduce_sum(t, ctx):
    """Sum a tangent over the reduced axes, keeping dims as the forward did."""
    return accumulated(np.sum, t, axis=ctx.params["axis"], keepdims=ctx.params["keepdims"])


def kept_axes(ctx, g):
    """g as a reduction's rule reads it: with the reduced axes kept (size 1), so that it
    lines up with the input (``broadcast_to(g, a.shape)``)."""
    return g.reshape(keepdims_shape(ctx.input_shapes[0], ctx.params["axis"]))


class Sum(Function):
    """f(a) = sum of a over axis"""

    name = "sum"
    rule = "da = broadcast_to(g, a.shape)   (g keeps the summed axes, size 1)"
    rule_gradient = staticmethod(kept_axes)

    @staticmethod
    def forward(ctx, a, axis=None, keepdims=False):
        return accumulated(np.sum, a, axis=axis, keepdims=keepdims)

    @staticmethod
    def jvp(ctx, ta):
        """dout = sum of ta over axis"""
        return _reduce_sum(ta, ctx)


class Mean(Function):
    """f(a) = mean of a over axis: the sum of n values, divided by n"""

    name = "mean"
    rule = ("n = a.size // g.size if a.size else 1   (the values in each mean; none: 1)\n"
            "da = broadcast_to(g / n, a.shape)")
    rule_gradient = staticmethod(kept_axes)

    @staticmethod
    def forward(ctx, a, axis=None, keepdims=False):
        return accumulated(np.mean, a, axis=axis, keepdims=keepdims)

    @staticmethod
    def jvp(ctx, ta):
        """dout = mean of ta over axis"""
        return accumulated(np.mean, ta, axis=ctx.params["axis"],
                           keepdims=ctx.params["keepdims"])


class Max(Function):
    """f(a) = max of a over axis; the winners share the gradient. Where the max is nan,
    the nan values are the winners (as in PyTorch's ``max()``)."""

    name = "max"
    rule = ("da = g * (mask / sum(mask, axis))   (mask: the winners, a == out, saved by the "
            "forward; tied winners share g)")
    rule_gradient = staticmethod(kept_axes)
    _reduce = staticmethod(np.max)

    @classmethod
    def forward(cls, ctx, a, axis=None, keepdims=False):
        out = cls._reduce(a, axis=axis, keepdims=True)
        mask = a == out
        if np.isnan(out).any():  # nan == nan is False: name the nan winners
            mask |= np.isnan(a) & np.isnan(out)
        ctx.save(mask=mask)
        return out if keepdims else np.squeeze(out, axis=axis)

    @staticmethod
    def jvp(ctx, ta):
        """dout = sum of ta * mask / sum(mask) over axis (the winners' tangents, shared)"""
        mask = ctx.load("mask")
        return _reduce_sum(ta * (mask / mask.sum(axis=ctx.params["axis"], keepdims=True)), ctx)


class Min(Max):
    """f(a) = min of a over axis; the winners share the gradient."""

    name = "min"
    _reduce = staticmethod(np.min)


class Amax(Function):
    """f(a) = max of a over axis (``torch.amax``); the winners share the gradient. Where
    the max is nan, nothing equals it and every value of that slice gets nan (PyTorch's
    rule for amax: g / 0 * 0), where ``max()`` sends g to the nan values."""

    name = "amax"
    rule = ("da = g * (mask / sum(mask, axis))   (mask: a == out, saved by the forward; tied "
            "winners share g; a slice whose max is nan has none: 0 / 0, nan for all of it)")
    rule_gradient = staticmethod(kept_axes)
    rule_quiet = True  # that 0 / 0 is meant: no NumPy warning
    _reduce = staticmethod(np.max)

    @classmethod
    def forward(cls, ctx, a, axis=None, keepdims=False):
        out = cls._reduce(a, axis=axis, keepdims=True)
        ctx.save(mask=a == out)
        return out if keepdims else np.squeeze(out, axis=axis)

    @staticmethod
    def jvp(ctx, ta):
        """dout = sum of ta * mask / sum(mask) over axis; nan in a nan slice"""
        mask = ctx.load("mask")
        with np.errstate(divide="ignore", invalid="ignore"):
            return _reduce_sum(ta * (mask / mask.sum(axis=ctx.params["axis"], keepdims=True)),
                               ctx)


class Amin(Amax):
    """f(a) = min of a over axis (``torch.amin``); the winners share the gradient."""

    name = "amin"
    _reduce = staticmethod(np.min)


class Var(Function):
    """f(a) = sum((a - mean(a))**2) / max(n - correction, 0) over axis

    At the edges this is PyTorch's rule: no values, or no more values than the
    correction, give nan (0 / 0) or inf; the gradient is then 2 / (n - correction)
    (inf when they are equal) times a - mean(a), and over all axes (axis None) with
    n <= correction it is nan where a == mean(a) and inf elsewhere, as in PyTorch.
    """

    name = "var"
    rule = ("n = a.size // g.size if g.size else 0  (the values each output element reduces)\n"
            "c = a - mean(a, axis) if n else a\n"
            "past = (axis is None or a.ndim == 0) and n <= correction  (PyTorch's edge)\n"
            "da = g * where(c == 0, nan, inf) if past else g * 2 * c / (n - correction)")
    rule_gradient = staticmethod(kept_axes)
    rule_quiet = True  # 2 * c / 0 where n == correction: inf, and nan where c == 0
    # a is not saved: a recorded sweep rebuilds it as the saved a - mean(a), a up to a
    # shift along axis, which var does not see (the rule centres it again)
    stand_ins = {"a": lambda node: node.load("centered")}

    @staticmethod
    def forward(ctx, a, axis=None, keepdims=False, correction=1):
        n = _count(a.shape, axis)
        work = widened(a)  # float16: all of it in float32 (its squares' sum overflows)
        centered = work - np.mean(work, axis=axis, keepdims=True) if n else work  # no mean
        ctx.save(centered=centered.astype(a.dtype, copy=False))
        with np.errstate(divide="ignore", invalid="ignore"):
            out = np.sum(centered * centered, axis=axis, keepdims=keepdims) / max(
                n - correction, 0)
        return out if work is a else np.asarray(out).astype(a.dtype)

    @staticmethod
    def fast_backward(ctx, g):
        """The rule on arrays, from the saved a - mean(a): no mean computed again."""
        return (np.broadcast_to(kept_axes(ctx, g) * Var.slope(ctx), ctx.input_shapes[0]),)

    @staticmethod
    def jvp(ctx, ta):
        """dout = sum of ta * 2 (a - mean(a)) / (n - correction) over axis"""
        return _reduce_sum(ta * Var.slope(ctx), ctx)

    @staticmethod
    def slope(ctx):
        """2 * (a - mean(a)) / (n - correction)"""
        centered = ctx.load("centered")
        axis = ctx.params["axis"]
        dof = _count(centered.shape, axis) - ctx.params["correction"]
        if dof <= 0 and (axis is None or centered.ndim == 0):
            return np.where(centered == 0, np.nan, np.inf).astype(centered.dtype)
        with np.errstate(invalid="ignore"):
            return centered * (2.0 / dof if dof else math.inf)
