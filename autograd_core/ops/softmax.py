"""softmax, log_softmax and logsumexp along one axis, computed stably.

Subtracting the maximum before ``exp`` changes nothing mathematically (it cancels)
but keeps ``exp`` from overflowing. The backward rules reuse the saved output. float16
is computed in float32 and rounded once (``recording/accumulate.py``), as PyTorch does.
"""

from __future__ import annotations

import numpy as np

from ..recording.accumulate import accumulated, widened
from ..recording.node import Function
from ._util import keepdims_shape, normalize_axes


def _logsumexp(a, dim):
    """log(sum(exp(a))) along dim, keepdims; over no values it is log(0) = -inf, as in
    PyTorch (NumPy's max has nothing to reduce there, so it is skipped). ``dim`` None
    is the one axis-free case, a 0-d input."""
    if a.size == 0:
        with np.errstate(divide="ignore"):
            return np.log(np.sum(np.exp(a), axis=dim, keepdims=True))
    top = np.max(a, axis=dim, keepdims=True)
    top = np.where(np.isfinite(top), top, 0)
    return top + np.log(np.sum(np.exp(a - top), axis=dim, keepdims=True))


def _shifted(a, dim):
    """a - max(a) along dim, the max taken as it is (so +inf gives nan, as in PyTorch's
    softmax kernels; all -inf too: call it where invalid values are not reported)."""
    if a.size == 0:
        return a
    return a - a.max(axis=dim, keepdims=True)


class Softmax(Function):
    """f(a) = exp(a) / sum(exp(a)) along dim"""

    name = "softmax"
    rule = "da = out * (g - sum(g * out, dim))"

    @staticmethod
    def forward(ctx, a, dim=-1):
        with np.errstate(invalid="ignore", divide="ignore"):
            e = np.exp(_shifted(widened(a), dim))
            out = e / e.sum(axis=dim, keepdims=True)  # exactly 1/2 for (x, x, -big)
        out = out.astype(a.dtype, copy=False)
        ctx.save(out=out)
        return out

    @staticmethod
    def fast_backward(ctx, g):
        """The rule on arrays; float16 in float32, rounded once (as PyTorch's kernel)."""
        out, g = widened(ctx.load("out")), widened(g)
        return (out * (g - np.sum(g * out, axis=ctx.params["dim"], keepdims=True)),)

    @staticmethod
    def jvp(ctx, ta):
        """dout = out * (ta - sum(ta * out, dim))"""
        out = ctx.load("out")
        return out * (ta - accumulated(np.sum, ta * out, axis=ctx.params["dim"], keepdims=True))


class LogSoftmax(Function):
    """f(a) = a - logsumexp(a) along dim"""

    name = "log_softmax"
    rule = "da = g - exp(out) * sum(g, dim)"

    @staticmethod
    def forward(ctx, a, dim=-1):
        with np.errstate(divide="ignore", invalid="ignore"):
            shifted = _shifted(widened(a), dim)
            out = shifted - np.log(np.exp(shifted).sum(axis=dim, keepdims=True))
        out = out.astype(a.dtype, copy=False)
        ctx.save(out=out)
        return out

    @staticmethod
    def fast_backward(ctx, g):
        """The rule on arrays; float16 in float32, rounded once (as PyTorch's kernel)."""
        out, g = widened(ctx.load("out")), widened(g)
        return (g - np.exp(out) * np.sum(g, axis=ctx.params["dim"], keepdims=True),)

    @staticmethod
    def jvp(ctx, ta):
        """dout = ta - sum(exp(out) * ta, dim)"""
        weights = np.exp(ctx.load("out"))
        return ta - accumulated(np.sum, weights * ta, axis=ctx.params["dim"], keepdims=True)


def _dims_kept(ctx, g):
    """g as logsumexp's rule reads it: with the reduced dims kept (size 1), as the saved
    ``out`` has them, so that it lines up with the input."""
    shape = ctx.input_shapes[0]
    return g.reshape(keepdims_shape(shape, normalize_axes(ctx.params.get("dim", -1), len(shape))))


class LogSumExp(Function):
    """f(a) = log(sum(exp(a))) along dim"""

    name = "logsumexp"
    rule = "da = g * exp(a - out)   (g and out keep the reduced dims, size 1)"
    rule_gradient = staticmethod(_dims_kept)

    @staticmethod
    def forward(ctx, a, dim=-1, keepdims=False):
        # an array even when 0-d: the output's base; float16 computed in float32
        out = np.asarray(_logsumexp(widened(a), dim)).astype(a.dtype, copy=False)
        ctx.save(a=a, out=out)
        return out if keepdims else np.squeeze(out, axis=dim)

    @staticmethod
    def jvp(ctx, ta):
        """dout = sum(exp(a - out) * ta, dim)"""
        weights = np.exp(ctx.load("a") - ctx.load("out"))
        return accumulated(np.sum, weights * ta, axis=ctx.params["dim"],
                           keepdims=ctx.params["keepdims"])
