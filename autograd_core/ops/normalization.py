"""Batch normalisation over the channel axis (dim 1) of (N, C) or (N, C, H, W) inputs.

For each channel c, over its M = N·H·W values:

    x̂ = (x - mean) · inv_std,   inv_std = 1 / sqrt(var + eps),   y = weight · x̂ + bias

In *training* mode mean and var are the batch's own (biased) statistics, so every
output depends on every input of its channel, and the backward carries that
dependence in closed form (Σ over the batch and pixels of the channel):

    dx = weight · inv_std / M · (M·g - Σ g - x̂ · Σ(g·x̂))

In *evaluation* mode mean and var are the running estimates, constants, and the
op is a per-channel affine map: dx = g · weight · inv_std.

The statistics come in as parameters: ``functional.batch_norm`` computes the batch
statistics once (``batch_statistics``), uses them to update the running
estimates, and hands them to the op.
"""

from __future__ import annotations

import math

import numpy as np

from ..recording.accumulate import widened
from ..recording.node import Function
from ._util import tangent_sum


def channel_axes(ndim: int) -> tuple:
    """The axes batch norm reduces over: all but the channel axis 1."""
    return (0, *range(2, ndim))


def batch_statistics(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per-channel mean and biased variance, in keepdims form (1, C, 1, ...). An empty
    input has none: 0 and 1 stand in (they meet no value, so the output is empty too)."""
    axes = channel_axes(x.ndim)
    x = widened(x)  # float16: the statistics in float32, as PyTorch's (accumulate.py)
    if x.size == 0:
        shape = (1, x.shape[1]) + (1,) * (x.ndim - 2)
        return np.zeros(shape, x.dtype), np.ones(shape, x.dtype)
    mean = x.mean(axis=axes, keepdims=True)
    centered = x - mean  # two passes, as np.var: no cancellation in mean(x²) - mean²
    var = channel_dot(centered, centered) / (x.size // x.shape[1])
    return mean, var


def channel_dot(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Σ a·b per channel over the batch and pixels, keepdims (1, C, 1, ...): one dot
    product per image and channel (a row times a column: BLAS), summed over the
    images. Unlike ``(a * b).sum(axes)`` it writes no layer-sized product."""
    n, c = a.shape[:2]
    a, b = widened(a), widened(b)  # float16: added up in float32
    pixels = math.prod(a.shape[2:])
    dots = np.matmul(a.reshape(n, c, 1, pixels), b.reshape(n, c, pixels, 1))
    return dots.sum(axis=0).reshape((1, c) + (1,) * (a.ndim - 2))


def _per_channel(v, ndim: int):
    """A (C,) vector shaped to broadcast along dim 1 of an ndim input: (C, 1, ...); an
    array, a number, or a Tensor of a recorded backward."""
    shape = (-1,) + (1,) * (ndim - 2)
    return v.reshape(shape) if hasattr(v, "reshape") else np.reshape(v, shape)


class BatchNorm(Function):
    """y = weight · (x - mean) / sqrt(var + eps) + bias, with the batch's statistics."""

    name = "batch_norm"
    rule = ("axes = (0, *range(2, x.ndim))  (each channel's values: every axis but dim 1)\n"
            "m = x.size // x.shape[1] if x.size else 1  (how many there are)\n"
            "c = x - sum(x, axes) / m  (x: see stand_ins)\n"
            "std = sqrt(sum(c * c, axes) / m + eps)\n"
            "x_hat = c / std\n"
            "w = 1 if weight is None else weight.reshape((-1,) + (1,) * (x.ndim - 2))  "
            "(one per channel)\n"
            "dx = w / std * (g - sum(g, axes) / m - x_hat * sum(g * x_hat, axes) / m)\n"
            "dweight = sum(g * x_hat, axes).reshape(-1)\n"
            "dbias = sum(g, axes).reshape(-1)")
    # x is not saved: a recorded sweep rebuilds it from x̂ and the statistics the forward
    # was given (as it computed 1/std), x up to rounding
    stand_ins = {"x": lambda node: node.load("normalized") * np.sqrt(
        node.params["var"] + node.params["eps"]) + node.params["mean"]}

    @classmethod
    def forward(cls, ctx, x, weight=None, bias=None, mean=None, var=None, eps=1e-5):
        inv_std = 1.0 / np.sqrt(var + eps)
        normalized = _times(widened(x) - mean, inv_std).astype(x.dtype, copy=False)
        inv_std = inv_std.astype(x.dtype, copy=False)  # saved in x's dtype, as PyTorch
        if ctx.needs_input_grad[0]:
            ctx.save(inv_std=inv_std)
            if weight is not None:
                ctx.save(weight=weight)
        if cls._reads_normalized(ctx.needs_input_grad):
            ctx.save(normalized=normalized)
        out = normalized
        if weight is not None:
            out = out * _per_channel(weight, x.ndim)
        if bias is not None:
            b = _per_channel(bias, x.ndim)
            out = _plus(out, b) if out is not normalized else out + b
        return out

    @classmethod
    def fast_backward(cls, ctx, g):
        """The rule on arrays, from the saved x̂ and 1/std, in place (Σ per channel, M
        values each): dx = weight · inv_std / M · (M·g - Σ g - x̂ · Σ g·x̂)."""
        needs = ctx.needs_input_grad  # (x,), (x, weight) or (x, weight, bias)
        axes = channel_axes(g.ndim)
        g_sum = widened(g).sum(axis=axes, keepdims=True)
        normalized = gx_sum = None
        if cls._reads_normalized(needs):
            normalized = ctx.load("normalized")
            gx_sum = channel_dot(g, normalized)
        grads = [None] * len(needs)
        if needs[0]:
            scale = ctx.load("inv_std")
            if len(needs) > 1:
                scale = scale * _per_channel(ctx.load("weight"), g.ndim)
            grads[0] = cls._input_grad(g, scale, normalized, g_sum, gx_sum)
        if len(needs) > 1 and needs[1]:
            grads[1] = gx_sum.reshape(-1)
        if len(needs) > 2 and needs[2]:
            grads[2] = g_sum.reshape(-1)
        return tuple(grads)

    @classmethod
    def jvp(cls, ctx, tx, tweight=None, tbias=None):
        """dout = weight · dx̂ + tweight · x̂ + tbias, where in training
        dx̂ = inv_std · (tx - mean(tx) - x̂ · mean(tx · x̂))   (means per channel)"""
        ndim = len(ctx.input_shapes[0])
        dx = None
        if tx is not None:
            dx = cls._normalized_tangent(ctx, tx)
            if len(ctx.input_shapes) > 1:
                dx = dx * _per_channel(ctx.load("weight"), ndim)
        return tangent_sum(
            dx,
            None if tweight is None else _per_channel(tweight, ndim) * ctx.load("normalized"),
            None if tbias is None else _per_channel(tbias, ndim))

    @staticmethod
    def _normalized_tangent(ctx, tx):
        axes = channel_axes(tx.ndim)
        normalized = ctx.load("normalized")
        centered = tx - tx.mean(axis=axes, keepdims=True)
        return ctx.load("inv_std") * (
            centered - normalized * (tx * normalized).mean(axis=axes, keepdims=True))

    # x̂ is read for dweight, and for dx in training mode only.
    _dx_reads_normalized = True

    @classmethod
    def _reads_normalized(cls, needs) -> bool:
        return (len(needs) > 1 and needs[1]) or (needs[0] and cls._dx_reads_normalized)

    @staticmethod
    def _input_grad(g, scale, normalized, g_sum, gx_sum):
        m = max(g.size // max(g_sum.size, 1), 1)  # values per channel (an empty input: 1)
        # scale * (g - g_sum / m - normalized * (gx_sum / m)), all in the one new array
        # the first product makes
        dx = normalized * (gx_sum / m)
        dx = np.subtract(g, dx, out=dx if _fits(dx, g) else None)
        return _times(_minus(dx, g_sum / m), scale)


def _times(a: np.ndarray, b) -> np.ndarray:
    """a * b, written into ``a`` (a temporary of the caller's) when the result has its
    dtype and shape: the same values, one layer-sized array fewer."""
    return np.multiply(a, b, out=a if _fits(a, b) else None)


def _minus(a: np.ndarray, b) -> np.ndarray:
    """a - b, into ``a`` when it fits (see ``_times``)."""
    return np.subtract(a, b, out=a if _fits(a, b) else None)


def _plus(a: np.ndarray, b) -> np.ndarray:
    """a + b, into ``a`` when it fits (see ``_times``)."""
    return np.add(a, b, out=a if _fits(a, b) else None)


def _fits(a, b) -> bool:
    return (isinstance(a, np.ndarray) and a.dtype == np.result_type(a, b)
            and a.shape == np.broadcast_shapes(a.shape, np.shape(b)))


class BatchNormEval(BatchNorm):
    """y = weight · (x - running_mean) / sqrt(running_var + eps) + bias (constants)."""

    name = "batch_norm_eval"
    rule = ("inv_std = 1 / sqrt(var + eps)  (the running estimates: constants)\n"
            "w = 1 if weight is None else weight.reshape((-1,) + (1,) * (x.ndim - 2))  "
            "(one per channel)\n"
            "dx = g * w * inv_std\n"
            "axes = (0, *range(2, x.ndim))  (each channel's values: every axis but dim 1)\n"
            "x_hat = (x - mean) * inv_std  (x: see stand_ins)\n"
            "dweight = sum(g * x_hat, axes).reshape(-1)\n"
            "dbias = sum(g, axes).reshape(-1)")

    _dx_reads_normalized = False

    @staticmethod
    def _input_grad(g, scale, normalized, g_sum, gx_sum):
        return g * scale

    @staticmethod
    def _normalized_tangent(ctx, tx):
        return ctx.load("inv_std") * tx
