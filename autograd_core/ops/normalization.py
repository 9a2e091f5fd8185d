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

from ..recording.node import Function
from ._util import tangent_sum


def channel_axes(ndim: int) -> tuple:
    """The axes batch norm reduces over: all but the channel axis 1."""
    return (0, *range(2, ndim))


def batch_statistics(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per-channel mean and biased variance, in keepdims form (1, C, 1, ...). An empty
    input has none: 0 and 1 stand in (they meet no value, so the output is empty too)."""
    axes = channel_axes(x.ndim)
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
    rule = ("x̂ = (x - mean) · inv_std;  Σ over batch and pixels, M values per channel\n"
            "dx = weight · inv_std / M · (M·g - Σ g - x̂ · Σ g·x̂)\n"
            "dweight = Σ g·x̂\n"
            "dbias = Σ g")

    @classmethod
    def forward(cls, ctx, x, weight=None, bias=None, mean=None, var=None, eps=1e-5):
        inv_std = 1.0 / np.sqrt(var + eps)
        normalized = _times(x - mean, inv_std)
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
    def backward(cls, ctx, g):
        if ctx.recorded:
            return _recorded_batch_norm(ctx, g, training=cls is BatchNorm)
        needs = ctx.needs_input_grad  # (x,), (x, weight) or (x, weight, bias)
        axes = channel_axes(g.ndim)
        g_sum = g.sum(axis=axes, keepdims=True)
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
    rule = ("x̂ = (x - running_mean) · inv_std   (running estimates: constants)\n"
            "dx = g · weight · inv_std\n"
            "dweight = Σ g·x̂\n"
            "dbias = Σ g")

    _dx_reads_normalized = False

    @staticmethod
    def _input_grad(g, scale, normalized, g_sum, gx_sum):
        return g * scale

    @staticmethod
    def _normalized_tangent(ctx, tx):
        return ctx.load("inv_std") * tx


# -- Under create_graph: the rule as recorded ops ----------------------------------------
# Batch norm does not save its input (only x̂ and 1/std). It is shift-invariant per
# channel: its value and every derivative are the same at x and at x - c for any c
# constant over the reduced axes. So the centred input x - mean, put on the input's edge
# (RecordedContext.input_on_graph), stands for the input: the rule centres it again,
# recomputes the statistics from it with recorded ops and writes the gradient with them,
# exact to every order. The array backward above keeps its faster path;
# tests/engine/test_create_graph.py holds the two equal.
def _recorded_batch_norm(ctx, g, training: bool) -> tuple:
    """Training: x̂ and 1/std recomputed from the centred input, then
    dx = weight / std · (g - Σg / M - x̂ · Σ(g·x̂) / M), dweight = Σ g·x̂, dbias = Σ g.
    Evaluation: dx = g · weight · inv_std (running statistics: constants), x̂ linear in x."""
    p, node, constant_tensor = ctx.params, ctx.node, ctx.xp.constant_tensor
    needs = tuple(ctx.needs_input_grad) + (False,) * (3 - len(ctx.needs_input_grad))
    ndim = g.ndim
    axes = channel_axes(ndim)
    inv_std = 1.0 / np.sqrt(p["var"] + p["eps"])  # as the forward computed it
    weight = None
    if needs[0] and len(ctx.input_shapes) > 1:
        weight = _per_channel(ctx.load("weight"), ndim)
    x_hat = dx = None
    if needs[0] and (training or needs[1]):
        centred = ctx.input_on_graph(
            0, lambda: node.load("normalized") / node.load("inv_std"), p["mean"])
        if training:
            c = centred - centred.mean(axis=axes, keepdims=True)
            std = ((c * c).mean(axis=axes, keepdims=True) + p["eps"]).sqrt()
            x_hat = c / std
            m = max(g.numel() // max(g.shape[1], 1), 1)  # values per channel
            share = g - g.sum(axis=axes, keepdims=True) / m \
                - x_hat * ((g * x_hat).sum(axis=axes, keepdims=True) / m)
            dx = share / std if weight is None else share * (weight / std)
        else:
            x_hat = centred * constant_tensor(inv_std)
    if needs[0] and not training:
        scale = constant_tensor(inv_std)
        dx = g * (scale if weight is None else weight * scale)
    if x_hat is None and needs[1]:
        x_hat = constant_tensor(node.load("normalized"))  # the input needs no gradient
    dweight = (g * x_hat).sum(axis=axes) if needs[1] else None
    dbias = g.sum(axis=axes) if needs[2] else None
    return dx, dweight, dbias
