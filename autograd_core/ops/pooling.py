"""2-D max and average pooling over the windows of the last two axes.

Both reuse the window view of ``conv.py`` (no loop over pixels) and, for the
backward, its ``fold``: every window sends its share of the upstream gradient back
to where it came from, and where windows overlap (stride < kernel) the shares add up.

* max pooling sends a window's whole gradient to the window's maximum. On a tie
  the *first* maximum in row-major window order wins (what ``np.argmax`` returns,
  and what PyTorch's CPU kernel does). Padding is -inf, so it never wins.
* average pooling sends 1/(kh·kw) of it to every input of the window. Padding
  counts as zeros in the average (PyTorch's default ``count_include_pad=True``),
  so the divisor is always kh·kw. It saves nothing: only shapes are needed.
"""

from __future__ import annotations

import numpy as np

from ..recording import rule
from ..recording.node import _UNRECORDED, Function
from .conv import fold, pad, windows

_NO_DILATION = (1, 1)


def scatter_to_argmax(g, argmax, input_shape, kernel_size, stride, padding) -> np.ndarray:
    """max pooling's backward: zeros of ``input_shape`` with each window's g added at
    the window's argmax (a linear map of g; its adjoint is ``gather_at_argmax``)."""
    (kh, kw), (sh, sw), (ph, pw) = kernel_size, stride, padding
    *lead, h, w = input_shape
    oh, ow = g.shape[-2:]
    # fold, placing g as it goes: for each kernel offset, the windows whose argmax
    # it is send g to their input pixel at that offset, the others send 0 (one
    # offset at a time: no (kh, kw, OH, OW) array of mostly zeros at once).
    # g·[argmax here] is that share, branch-free (np.where is several times slower
    # on a mask this irregular), unless g holds an inf or a NaN: inf·0 is NaN.
    finite = bool(np.isfinite(g).all())
    zero = np.zeros((), g.dtype)
    # Windows that do not overlap (stride >= kernel) each own their pixels: their
    # shares are written, not added, and where they tile the input (no padding, no
    # pixel left over) every pixel gets written, so nothing needs zeroing first.
    overlap = sh < kh or sw < kw
    tiled = not overlap and (sh, sw, ph, pw) == (kh, kw, 0, 0) and (h, w) == (oh * sh, ow * sw)
    dinput = (np.empty if tiled else np.zeros)((*lead, h + 2 * ph, w + 2 * pw), g.dtype)
    for i in range(kh):
        rows = slice(i, i + sh * (oh - 1) + 1, sh)
        for j in range(kw):
            here = argmax == i * kw + j
            share = np.multiply(g, here) if finite else np.where(here, g, zero)
            cols = slice(j, j + sw * (ow - 1) + 1, sw)
            if overlap:
                dinput[..., rows, cols] += share
            else:  # written as share + 0: g·0 is -0.0 where g < 0, and -0.0 + 0 is 0
                np.add(share, zero, out=dinput[..., rows, cols])
    return dinput[..., ph:ph + h, pw:pw + w]


def gather_at_argmax(t, argmax, kernel_size, stride, padding) -> np.ndarray:
    """Each window's value of ``t`` at the window's argmax: max pooling's tangent
    (the adjoint of ``scatter_to_argmax``)."""
    kh, kw = kernel_size
    view = windows(pad(t, padding), kernel_size, stride, _NO_DILATION)
    flat = view.reshape(*view.shape[:-2], kh * kw)
    argmax = argmax.astype(np.intp)
    return np.take_along_axis(flat, argmax[..., None], axis=-1)[..., 0]


def average_windows(x, kernel_size, stride, padding) -> np.ndarray:
    """The mean of each kh x kw window of ``x`` (zero padding counted): average pooling."""
    return windows(pad(x, padding), kernel_size, stride, _NO_DILATION).mean(axis=(-2, -1))


# the pooling rules name each other's ops (ops/recorded_numpy.py names the recorded
# sweep's: the ops themselves); spread_over_windows is defined below
rule.PLAIN.max_pool2d_backward = scatter_to_argmax
rule.PLAIN.max_pool2d_gather = gather_at_argmax
rule.PLAIN.avg_pool2d_backward = lambda g, input_shape, kernel_size, stride, padding: \
    spread_over_windows(g, input_shape, kernel_size, stride, padding)
rule.PLAIN.avg_pool2d = average_windows


class MaxPool2d(Function):
    """out = max over each kh x kw window; the gradient goes to the first maximum."""

    name = "max_pool2d"
    rule = ("dinput = max_pool2d_backward(g, argmax, input.shape, kernel_size, stride, "
            "padding)  (g placed at each window's argmax and folded back: ties go to the "
            "first maximum in row-major order; overlapping windows add up)")

    @staticmethod
    def forward(ctx, input, kernel_size=(2, 2), stride=(2, 2), padding=(0, 0)):
        kh, kw = kernel_size
        lowest = -np.inf if input.dtype.kind == "f" else np.iinfo(input.dtype).min
        view = windows(pad(input, padding, lowest), kernel_size, stride, _NO_DILATION)
        # A few passes per kernel offset (never a loop over pixels). First the
        # maximum: np.maximum also lets a NaN through, as a max must.
        n = kh * kw
        best = view[..., 0, 0] if n > 1 else view[..., 0, 0].copy()
        for k in range(1, n):
            best = np.maximum(best, view[..., k // kw, k % kw])
        # Then where it was: the number of leading window positions (row-major) that
        # do not hold the maximum is the index of the FIRST maximum, so ties go to
        # the first one, like PyTorch. A NaN counts as the maximum (the first NaN of a
        # window; PyTorch's CPU kernel takes the last one when a window has two).
        argmax = np.zeros(best.shape, dtype=np.min_scalar_type(n - 1))  # a small dtype
        still_looking = np.ones(best.shape, dtype=bool)
        has_nan = input.dtype.kind == "f" and bool(np.isnan(best).any())
        for k in range(n - 1):
            candidate = view[..., k // kw, k % kw]
            hit = candidate == best
            if has_nan:
                hit |= np.isnan(candidate)
            still_looking &= ~hit
            argmax += still_looking
        ctx.save(argmax=argmax)
        return best

    @staticmethod
    def jvp(ctx, tx):
        """dout = tx at each window's argmax"""
        p = ctx.params
        return gather_at_argmax(tx, ctx.load("argmax"), p["kernel_size"], p["stride"],
                                p["padding"])


def spread_over_windows(g, input_shape, kernel_size, stride, padding) -> np.ndarray:
    """average pooling's backward: g / (kh·kw) added to every input of its window
    (a linear map of g; its adjoint is average pooling itself)."""
    kh, kw = kernel_size
    share = g / (kh * kw)
    columns = np.broadcast_to(share[..., None, None, :, :],
                              share.shape[:-2] + (kh, kw) + share.shape[-2:])
    return fold(columns, input_shape, stride, padding, _NO_DILATION)


class AvgPool2d(Function):
    """out = mean over each kh x kw window (zero padding counted in the mean)."""

    name = "avg_pool2d"
    rule = ("dinput = avg_pool2d_backward(g, input.shape, kernel_size, stride, padding)  "
            "(g / (kh·kw) copied to every input of its window, and folded back)")

    @staticmethod
    def forward(ctx, input, kernel_size=(2, 2), stride=(2, 2), padding=(0, 0)):
        return average_windows(input, kernel_size, stride, padding)

    @staticmethod
    def jvp(ctx, tx):
        """dout = avg_pool2d(tx)   (the op is linear)"""
        return AvgPool2d.forward(_UNRECORDED, tx, **ctx.params)


# -- The pooling backwards as ops ---------------------------------------------------------
# Each is linear in g, and each one's adjoint is an op of this file: so a gradient through
# pooling, recorded under create_graph, can be differentiated to any order.
class MaxPool2dBackward(Function):
    """max_pool2d's backward as an op: g added at each window's argmax (``argmax``
    fixed, a param), zeros elsewhere. Linear in g; its backward is the gather."""

    name = "max_pool2d_backward"
    rule = ("dgrad_output = max_pool2d_gather(g, argmax, kernel_size, stride, padding)  "
            "(g read at each window's argmax)")

    @staticmethod
    def forward(ctx, grad_output, argmax=None, input_shape=(), kernel_size=(2, 2),
                stride=(2, 2), padding=(0, 0)):
        return scatter_to_argmax(grad_output, argmax, input_shape, kernel_size, stride,
                                 padding)

    @staticmethod
    def jvp(ctx, tg):
        """dout = max_pool2d_backward(tg)   (the op is linear)"""
        return MaxPool2dBackward.forward(None, tg, **ctx.params)


class MaxPool2dGather(Function):
    """Each window's value of ``input`` at the window's argmax (a param): the adjoint
    of :class:`MaxPool2dBackward`, and max pooling's tangent."""

    name = "max_pool2d_gather"
    rule = ("dinput = max_pool2d_backward(g, argmax, input.shape, kernel_size, stride, "
            "padding)  (g added at each window's argmax)")

    @staticmethod
    def forward(ctx, input, argmax=None, kernel_size=(2, 2), stride=(2, 2), padding=(0, 0)):
        return gather_at_argmax(input, argmax, kernel_size, stride, padding)

    @staticmethod
    def jvp(ctx, tx):
        """dout = max_pool2d_gather(tx)   (the op is linear)"""
        return MaxPool2dGather.forward(None, tx, **ctx.params)


class AvgPool2dBackward(Function):
    """avg_pool2d's backward as an op: g / (kh·kw) added to every input of its window.
    Linear in g; its backward is avg_pool2d."""

    name = "avg_pool2d_backward"
    rule = ("dgrad_output = avg_pool2d(g, kernel_size, stride, padding)  (the adjoint of "
            "the spreading)")

    @staticmethod
    def forward(ctx, grad_output, input_shape=(), kernel_size=(2, 2), stride=(2, 2),
                padding=(0, 0)):
        return spread_over_windows(grad_output, input_shape, kernel_size, stride, padding)

    @staticmethod
    def jvp(ctx, tg):
        """dout = avg_pool2d_backward(tg)   (the op is linear)"""
        return AvgPool2dBackward.forward(None, tg, **ctx.params)
