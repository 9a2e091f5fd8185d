"""Layer norm and RMS norm: each row normalised over its own trailing dims.

``normalized_shape`` names the last k dims of the input (the op gets them as
``axes = (-k, ..., -1)``). Each index of the leading dims is one *row* of
H = prod(normalized_shape) values, normalised with its own statistics: nothing couples
two rows (batch norm, ``normalization.py``, couples a channel across the batch).

    layer norm:  x̂ = (x - mean) · inv_std,  inv_std = 1 / sqrt(var + eps)  (biased var)
                 y = weight · x̂ + bias
    RMS norm:    x̂ = x · inv_rms,           inv_rms = 1 / sqrt(mean(x²) + eps)
                 y = weight · x̂

Backward, in closed form (``mean`` over the H values of each row, ĝ = g · weight):

    layer norm:  dx = inv_std · (ĝ - mean(ĝ) - x̂ · mean(ĝ · x̂))
    RMS norm:    dx = inv_rms · (ĝ - x̂ · mean(ĝ · x̂))
    both:        dweight = Σ over the rows of g · x̂,   dbias = Σ over the rows of g

The mean(ĝ) term is there because adding a constant to a row changes no x̂ of layer
norm (so each row of dx sums to 0); RMS norm does not centre, and has no such term. The
x̂ · mean(ĝ · x̂) term is there because scaling a row changes x̂ only through eps.

What is saved, and its size
---------------------------
For an input of S·B rows of H values (a transformer's (s, b, h) activation), each
norm saves, when x requires grad:

* ``normalized``: x̂ itself, **not the input x**, S·B·H values in x's dtype (2sbh bytes
  in fp16): the same size as the input that published memory formulas count as
  layer norm's saved activation (2sbh per layer norm in Korthikanti et al. 2022,
  "Reducing Activation Recomputation in Large Transformer Models"),
  but a new array, so a program that drops x after the layer still holds x̂;
* ``inv_std`` (layer norm) or ``inv_rms`` (RMS norm): one value per row, S·B values
  (keepdims shape (s, b, 1)), a factor H smaller;
* ``weight`` (when given): H values, a parameter, alive anyway (``memory`` counts it as
  parameter memory, not as an activation).

x̂ rather than x, because the backward is written in x̂: with x it would have to save
the mean too and normalise again. x̂ is also what dweight reads, so when only the weight
requires grad the op saves x̂ alone; the mean is never saved.

Weight and bias are applied *inside* the op, not as a mul and an add after it: the
graph shows one ``layer_norm`` node with inputs x, weight and bias, as PyTorch's
``NativeLayerNormBackward0`` is one node and as ``batch_norm`` and ``linear`` are here.
A separate mul would save x̂ again as its input (the same buffer, so no more saved
bytes), but the forward would make three layer-sized arrays (x̂, x̂ · w, x̂ · w + b) where
the fused op makes two (x̂, and the output, to which it adds the bias in place).

The op's inputs are (x), (x, weight) or (x, weight, bias); ``functional.layer_norm``
passes the constant 1 as the weight when only a bias is given.
"""

from __future__ import annotations

import math

import numpy as np

from ..recording.accumulate import accumulated, widened
from ..recording.node import Function
from ._util import tangent_sum


def row_count(shape: tuple, axes: tuple) -> int:
    """H: the number of values in one row (the product of the normalised dims)."""
    return math.prod(shape[a] for a in axes)


def row_mean(a: np.ndarray, axes: tuple) -> np.ndarray:
    """The mean of each row, keepdims (rows..., 1, ..., 1). A row of no values has mean
    0 (it meets no value, so the output stays empty), not nan with a warning. float16 is
    added up in float32 and the mean stays float32 (the accumulate type, as PyTorch)."""
    return np.sum(widened(a), axis=axes, keepdims=True) / max(row_count(np.shape(a), axes), 1)


def leading_axes(ndim: int, axes: tuple) -> tuple:
    """The axes that index the rows: all but the normalised ones."""
    return tuple(range(ndim - len(axes)))


class LayerNorm(Function):
    """y = weight · (x - mean) / sqrt(var + eps) + bias, each row's mean and biased
    variance over its trailing ``axes``. Saves x̂ (x's size) and 1 / std (one per row)."""

    name = "layer_norm"
    rule = ("c = x - mean(x, axes)  (each row centred; see stand_ins)\n"
            "std = sqrt(mean(c * c, axes) + eps)\n"
            "x_hat = c / std\n"
            "gw = g if weight is None else g * weight\n"
            "dx = (gw - mean(gw, axes) - x_hat * mean(gw * x_hat, axes)) / std  "
            "(means over each row's normalized dims)\n"
            "dweight = g * x_hat  (summed over the rows, as a broadcast input's is)\n"
            "dbias = g  (summed over the rows)")
    # x is not saved: a recorded sweep rebuilds it as x̂ / inv_std = x - mean, x up to
    # each row's shift, which layer norm does not see (the rule centres it again)
    stand_ins = {"x": lambda node: node.load("normalized") / node.load("inv_std")}

    @classmethod
    def forward(cls, ctx, x, weight=None, bias=None, axes=(-1,), eps=1e-5):
        work = widened(x)  # float16: computed in float32 (its squares' sum overflows)
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):  # inf, nan, eps 0
            centered = work - row_mean(work, axes)
            var = row_mean(centered * centered, axes)  # two passes: no mean(x²) - mean²
            inv_std = 1.0 / np.sqrt(var + eps)
            normalized = np.multiply(centered, inv_std, out=centered)
        # saved in x's dtype, as PyTorch saves its rstd
        normalized, inv_std = (t.astype(x.dtype, copy=False) for t in (normalized, inv_std))
        _save_for_backward(ctx, normalized, weight, inv_std=inv_std)
        return _affine(normalized, weight, bias)

    @classmethod
    def fast_backward(cls, ctx, g):
        """The rule on arrays, from the saved x̂ and 1/std, in place:
        dx = inv_std · (ĝ - mean(ĝ) - x̂ · mean(ĝ · x̂))."""
        needs = ctx.needs_input_grad  # (x,), (x, weight) or (x, weight, bias)
        axes = ctx.params["axes"]
        grads = [None] * len(needs)
        normalized = ctx.load("normalized") if needs[0] or (len(needs) > 1 and needs[1]) \
            else None
        if needs[0]:
            gw = g * ctx.load("weight") if len(needs) > 1 else g
            dx = normalized * row_mean(gw * normalized, axes)
            dx = np.subtract(gw, dx, out=dx if dx.dtype == gw.dtype else None)
            dx -= row_mean(gw, axes)
            grads[0] = np.multiply(dx, ctx.load("inv_std"), out=dx)
        _affine_grads(grads, needs, g, normalized, axes)
        return tuple(grads)

    @classmethod
    def jvp(cls, ctx, tx, tweight=None, tbias=None):
        """dout = weight · dx̂ + tweight · x̂ + tbias, where
        dx̂ = inv_std · (tx - mean(tx) - x̂ · mean(tx · x̂))   (means over each row)"""
        axes = ctx.params["axes"]
        dx = None
        if tx is not None:
            normalized = ctx.load("normalized")
            dx = ctx.load("inv_std") * (tx - row_mean(tx, axes)
                                        - normalized * row_mean(tx * normalized, axes))
            if len(ctx.input_shapes) > 1:
                dx = dx * ctx.load("weight")
        return tangent_sum(dx, None if tweight is None else tweight * ctx.load("normalized"),
                           tbias)


class RMSNorm(Function):
    """y = weight · x / sqrt(mean(x²) + eps), each row's mean square over its trailing
    ``axes`` (no centring, no bias). Saves x̂ (x's size) and 1 / rms (one per row)."""

    name = "rms_norm"
    rule = ("rms = sqrt(mean(x * x, axes) + eps)  (x: see stand_ins)\n"
            "x_hat = x / rms\n"
            "gw = g if weight is None else g * weight\n"
            "dx = (gw - x_hat * mean(gw * x_hat, axes)) / rms  "
            "(means over each row's normalized dims)\n"
            "dweight = g * x_hat  (summed over the rows, as a broadcast input's is)")
    # x is not saved: a recorded sweep rebuilds it as x̂ / inv_rms (x up to rounding)
    stand_ins = {"x": lambda node: node.load("normalized") / node.load("inv_rms")}

    @classmethod
    def forward(cls, ctx, x, weight=None, axes=(-1,), eps=1e-6):
        work = widened(x)  # float16: computed in float32, as layer norm
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            inv_rms = 1.0 / np.sqrt(row_mean(work * work, axes) + eps)
            normalized = work * inv_rms  # inf · 0 = nan, as PyTorch's
        normalized, inv_rms = (t.astype(x.dtype, copy=False) for t in (normalized, inv_rms))
        _save_for_backward(ctx, normalized, weight, inv_rms=inv_rms)
        return _affine(normalized, weight, None)

    @classmethod
    def fast_backward(cls, ctx, g):
        """The rule on arrays, from the saved x̂ and 1/rms, in place:
        dx = inv_rms · (ĝ - x̂ · mean(ĝ · x̂))."""
        needs = ctx.needs_input_grad  # (x,) or (x, weight)
        axes = ctx.params["axes"]
        grads = [None] * len(needs)
        normalized = ctx.load("normalized")
        if needs[0]:
            gw = g * ctx.load("weight") if len(needs) > 1 else g
            dx = normalized * row_mean(gw * normalized, axes)
            dx = np.subtract(gw, dx, out=dx if dx.dtype == gw.dtype else None)
            grads[0] = np.multiply(dx, ctx.load("inv_rms"), out=dx)
        _affine_grads(grads, needs, g, normalized, axes)
        return tuple(grads)

    @classmethod
    def jvp(cls, ctx, tx, tweight=None):
        """dout = weight · dx̂ + tweight · x̂, where
        dx̂ = inv_rms · (tx - x̂ · mean(tx · x̂))   (means over each row)"""
        axes = ctx.params["axes"]
        dx = None
        if tx is not None:
            normalized = ctx.load("normalized")
            dx = ctx.load("inv_rms") * (tx - normalized * row_mean(tx * normalized, axes))
            if len(ctx.input_shapes) > 1:
                dx = dx * ctx.load("weight")
        return tangent_sum(dx, None if tweight is None else tweight * ctx.load("normalized"))


def _save_for_backward(ctx, normalized: np.ndarray, weight, **inverse_scale) -> None:
    """What a norm's backward reads: the weight when x needs a gradient; the normalized
    input and the per-row inverse scale (x's stand-in, one value per row) when x or the
    weight does; nothing else."""
    needs = ctx.needs_input_grad
    x_or_weight = needs[0] or (len(needs) > 1 and needs[1])
    if x_or_weight:
        ctx.save(**inverse_scale)
    if needs[0] and weight is not None:
        ctx.save(weight=weight)
    if x_or_weight:
        ctx.save(normalized=normalized)


def _affine(normalized: np.ndarray, weight, bias) -> np.ndarray:
    """weight · x̂ + bias as one new array (x̂ itself may be saved: never written)."""
    if weight is None:
        return normalized if bias is None else normalized + bias
    out = normalized * weight
    if bias is not None:
        out = np.add(out, bias, out=out if out.dtype == np.result_type(out, bias) else None)
    return out


def _affine_grads(grads: list, needs, g, normalized, axes: tuple) -> None:
    """dweight = Σ g·x̂ and dbias = Σ g over the rows, into ``grads`` where needed."""
    lead = leading_axes(g.ndim, axes)
    if len(needs) > 1 and needs[1]:
        grads[1] = accumulated(np.sum, g * normalized, axis=lead)
    if len(needs) > 2 and needs[2]:
        grads[2] = accumulated(np.sum, g, axis=lead)
