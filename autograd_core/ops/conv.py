"""2-D convolution (NCHW) as one matrix product per image: im2col.

Each output pixel is a dot product of the kernel with one window of the input.
Copying every window into a column ("unfold", im2col) gives, per image, a matrix
``columns`` of shape (C·kh·kw, OH·OW), and the whole convolution becomes

    out[n] = W_flat @ columns[n] + b          W_flat: (out_channels, C·kh·kw)

Backward is two more products and a "fold", the inverse bookkeeping of unfold:

    dW         = Σₙ g[n] @ columns[n]ᵀ        (correlate the input with g)
    dcolumns   = W_flatᵀ @ g[n]               (each window's share of the gradient)
    dx         = fold(dcolumns)               (add every window back where it came from;
                                               overlapping windows accumulate. This is the
                                               "full convolution of g with the kernel
                                               rotated by 180°")
    db         = Σ g over the batch and the pixels

What conv2d saves is what PyTorch saves: its ``input`` (for dW) and its ``weight``
(for dx), each only when that gradient is needed, not the columns. The columns
are kh·kw times the input (9x for a 3x3 kernel); rebuilding them in backward is
one strided copy, 5-10% of a forward+backward step on the layers of
bench/bench_conv.py: a good price for 9x less memory held between the passes.

Backward's two column arrays (the input's, rebuilt for dW, and dcolumns) are scratch:
it writes them into work arrays it keeps from one call to the next (``workspace``),
because a fresh multi-MB array every call is new pages the OS must fault in, which
cost a CNN step about as much as the arithmetic on them. Every array an op returns
is still new.

``windows``, ``pad`` and ``fold`` are shared with the pooling ops.
"""

from __future__ import annotations

import math
import threading

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

from ..function import _UNRECORDED, Function
from ._util import tangent_sum


def output_size(size: int, kernel: int, stride: int, padding: int, dilation: int = 1) -> int:
    """How many windows fit along one axis: (size + 2p - d(k - 1) - 1) // s + 1."""
    return (size + 2 * padding - dilation * (kernel - 1) - 1) // stride + 1


def pad(x: np.ndarray, padding: tuple, value: float = 0.0) -> np.ndarray:
    """``x`` with ``padding`` = (ph, pw) rows/columns of ``value`` on each side of H, W."""
    ph, pw = padding
    if not (ph or pw):
        return x
    *lead, h, w = x.shape
    out = np.full((*lead, h + 2 * ph, w + 2 * pw), value, dtype=x.dtype)
    out[..., ph:ph + h, pw:pw + w] = x
    return out


def windows(padded: np.ndarray, kernel: tuple, stride: tuple, dilation: tuple) -> np.ndarray:
    """Every window of the last two axes, as a strided *view* (no copy):
    shape (..., OH, OW, kh, kw)."""
    (kh, kw), (sh, sw), (dh, dw) = kernel, stride, dilation
    span = (dh * (kh - 1) + 1, dw * (kw - 1) + 1)
    view = sliding_window_view(padded, span, axis=(-2, -1))
    return view[..., ::sh, ::sw, ::dh, ::dw]


def unfold(x: np.ndarray, kernel: tuple, stride: tuple, padding: tuple,
           dilation: tuple, out: np.ndarray | None = None) -> np.ndarray:
    """im2col: the windows of ``x`` copied as (..., C, kh, kw, OH, OW), contiguous
    (into ``out`` if given, an array of that shape).

    This order keeps each output row contiguous in memory, so the copy streams
    along input rows and ``reshape(..., C·kh·kw, OH·OW)`` is free.
    """
    view = np.moveaxis(windows(pad(x, padding), kernel, stride, dilation), (-2, -1), (-4, -3))
    if out is None:
        return np.ascontiguousarray(view)
    np.copyto(out, view)
    return out


class Workspace(threading.local):
    """Scratch arrays reused from call to call, one per role and dtype (per thread):
    ``workspace.get("columns", shape, dtype)`` is an uninitialised array of that shape,
    a view of the largest one of that role asked for so far."""

    def __init__(self):
        self.arrays: dict = {}

    def get(self, role: str, shape: tuple, dtype) -> np.ndarray:
        size = math.prod(shape)
        held = self.arrays.get((role, dtype))
        if held is None or held.size < size:
            held = self.arrays[role, dtype] = np.empty(size, dtype)
        return held[:size].reshape(shape)


workspace = Workspace()


def fold(columns: np.ndarray, shape: tuple, stride: tuple, padding: tuple,
         dilation: tuple) -> np.ndarray:
    """col2im, the adjoint of ``unfold``: sum window values (..., C, kh, kw, OH, OW)
    back into an array of ``shape`` (..., C, H, W).

    One strided add per kernel offset (kh·kw of them), each over all images,
    channels and output pixels at once; overlapping windows accumulate.
    """
    *_, kh, kw, oh, ow = columns.shape
    (sh, sw), (ph, pw), (dh, dw) = stride, padding, dilation
    *lead, h, w = shape
    out = np.zeros((*lead, h + 2 * ph, w + 2 * pw), dtype=columns.dtype)
    for i in range(kh):
        rows = slice(i * dh, i * dh + sh * (oh - 1) + 1, sh)
        for j in range(kw):
            cols = slice(j * dw, j * dw + sw * (ow - 1) + 1, sw)
            out[..., rows, cols] += columns[..., i, j, :, :]
    return out[..., ph:ph + h, pw:pw + w]


def _geometry(ctx) -> tuple:
    p = ctx.params
    return p["stride"], p["padding"], p["dilation"], p["groups"]


class Conv2d(Function):
    """out = conv2d(input, weight) + bias, as W_flat @ unfold(input) per image.

    input (N, C, H, W) or (C, H, W); weight (O, C / groups, kh, kw); bias (O,).
    Groups split the channels into ``groups`` independent convolutions: one batched
    product over a group axis.
    """

    name = "conv2d"
    rule = ("dinput = fold(W_flatᵀ @ g)   (full convolution of g with the kernel "
            "rotated 180°)\n"
            "dweight = Σ g @ unfold(input)ᵀ   (correlation of the input with g)\n"
            "dbias = Σ g over batch and pixels")

    @staticmethod
    def forward(ctx, input, weight, bias=None, stride=(1, 1), padding=(0, 0), dilation=(1, 1),
                groups=1):
        if ctx.needs_input_grad[0]:
            ctx.save(weight=weight)
        if ctx.needs_input_grad[1]:
            ctx.save(input=input)
        o, _, kh, kw = weight.shape
        columns = unfold(input, (kh, kw), stride, padding, dilation)
        *lead, c, _, _, oh, ow = columns.shape
        columns = columns.reshape(*lead, groups, c // groups * kh * kw, oh * ow)
        w_flat = weight.reshape(groups, o // groups, -1)
        out = np.matmul(w_flat, columns).reshape(*lead, o, oh * ow)
        if bias is not None:
            in_place = out.dtype == np.result_type(out, bias)
            out = np.add(out, bias.reshape(o, 1), out=out if in_place else None)
        return out.reshape(*lead, o, oh, ow)

    @staticmethod
    def backward(ctx, g):
        stride, padding, dilation, groups = _geometry(ctx)
        x_shape, w_shape = ctx.input_shapes[:2]
        o, cg, kh, kw = w_shape
        *lead, _, oh, ow = g.shape
        g_groups = g.reshape(*lead, groups, o // groups, oh * ow)
        dx = dw = db = None
        if ctx.needs_input_grad[0]:
            w_flat = ctx.load("weight").reshape(groups, o // groups, -1)
            dcolumns = workspace.get("dcolumns", (*lead, groups, cg * kh * kw, oh * ow),
                                     np.result_type(w_flat, g))
            np.matmul(np.swapaxes(w_flat, -1, -2), g_groups, out=dcolumns)
            dcolumns = dcolumns.reshape(*lead, groups * cg, kh, kw, oh, ow)
            dx = fold(dcolumns, x_shape, stride, padding, dilation)
        if ctx.needs_input_grad[1]:
            x = ctx.load("input")
            columns = workspace.get("columns", (*lead, groups * cg, kh, kw, oh, ow), x.dtype)
            columns = unfold(x, (kh, kw), stride, padding, dilation, out=columns)
            columns = columns.reshape(*lead, groups, cg * kh * kw, oh * ow)
            per_image = np.matmul(g_groups, np.swapaxes(columns, -1, -2))
            dw = per_image.sum(axis=tuple(range(len(lead)))).reshape(w_shape)
        if len(ctx.needs_input_grad) > 2 and ctx.needs_input_grad[2]:
            db = g.sum(axis=(*range(len(lead)), -2, -1))
        return dx, dw, db

    @staticmethod
    def jvp(ctx, tx, tw, tb=None):
        """dout = conv2d(tx, weight) + conv2d(input, tw) + tb   (conv2d is bilinear)"""
        p = ctx.params
        geometry = {k: p[k] for k in ("stride", "padding", "dilation", "groups")}

        def conv(x, w):  # the same forward, on tangents, keeping nothing
            return Conv2d.forward(_UNRECORDED, x, w, **geometry)

        return tangent_sum(None if tx is None else conv(tx, ctx.load("weight")),
                           None if tw is None else conv(ctx.load("input"), tw),
                           None if tb is None else tb.reshape(-1, 1, 1))
