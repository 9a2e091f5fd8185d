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

That is the maths, and how backward runs for strides above 1 (``scatter_input_grad``,
``weight_grad``). With stride 1 (most layers), unless g has more than twice the
input's channels, it computes the same sums another way, ``gather_grads``: dx as the
full convolution itself, each input pixel *gathering* from the outputs that read it
rather than each window *scattering* its share back:

    gcolumns   = unfold(g padded by d·(k-1) - p)   (the windows of g; "full": every
                                                     window that overlaps the input)
    dx[n]      = rotated(W)_flat @ gcolumns[n]     (each kernel rotated 180°, its in and
                                                     out channels swapped)
    dW         = Σₙ gcolumns[n] @ x[n]ᵀ, with the kernel offsets rotated back
                                                    (the same products as Σₙ g[n] @ columns[n]ᵀ,
                                                     grouped the other way)

Both ways take one strided copy (of the input's columns or of g's) and two products;
the gather has no fold, whose kh·kw strided additions cost several times that copy.
On the 16-channel layer of bench/bench_cnn.py it takes under half the time. But its
copy and products grow with g's channels, the scatter's with the input's: a first
layer (3 channels in, 16 out) is faster scattered.

What conv2d saves is what PyTorch saves: its ``input`` (for dW) and its ``weight``
(for dx), each only when that gradient is needed, not the columns. The columns
are kh·kw times the input (9x for a 3x3 kernel); rebuilding them in backward is
one strided copy, 5-10% of a forward+backward step on the layers of
bench/bench_conv.py: a good price for 9x less memory held between the passes.

Columns are built a few images at a time (about ``CHUNK_BYTES``, 1 MB), each chunk
multiplied while it is still in the CPU's cache; one chunk of columns at a time is
also all the extra memory a convolution needs. Backward's column arrays are scratch:
it writes them into work arrays it keeps from one call to the next (``workspace``),
because a fresh array every call is new pages the OS must fault in, which cost a
CNN step about as much as the arithmetic on them. Every array an op returns is
still new.

``windows``, ``pad`` and ``fold`` are shared with the pooling ops.
"""

from __future__ import annotations

import math
import threading

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

from ..recording import rule
from ..recording.node import _UNRECORDED, Function
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


# Columns are built for a few images at a time, about this many bytes of them: small
# enough to stay in the CPU's cache from the copy to the product that reads them.
CHUNK_BYTES = 1 << 20


def column_chunks(x, kernel, stride, padding, dilation, groups, scratch=None):
    """The columns of ``x`` (N, C, H, W), a few images at a time (about CHUNK_BYTES):
    yields ``(images, part)``, a slice of the batch and its columns as
    (images, groups, C / groups·kh·kw, OH·OW), ready for one batched product. Every
    chunk is copied into one array: a new one, or the ``workspace`` array named
    ``scratch`` (backward's)."""
    n, c, h, w = x.shape
    kh, kw = kernel
    oh, ow = (output_size(size, k, s, p, d)
              for size, k, s, p, d in zip((h, w), kernel, stride, padding, dilation))
    shape = (c, kh, kw, oh, ow)
    step = max(1, CHUNK_BYTES // max(math.prod(shape) * x.itemsize, 1))
    size = (min(step, n), *shape)
    columns = np.empty(size, x.dtype) if scratch is None else workspace.get(scratch, size,
                                                                            x.dtype)
    for start in range(0, n, step):
        images = slice(start, min(start + step, n))
        part = unfold(x[images], kernel, stride, padding, dilation,
                      out=columns[:images.stop - start])
        yield images, part.reshape(-1, groups, c // groups * kh * kw, oh * ow)


def convolve(x, weight, stride, padding, dilation, groups):
    """The convolution proper, ``W_flat @ unfold(x)`` per image and group:
    (N, C, H, W) or (C, H, W), weight (O, C / groups, kh, kw) -> (N, O, OH, OW) or
    (O, OH, OW)."""
    if x.ndim == 3:  # one image: a batch of one
        return convolve(x[None], weight, stride, padding, dilation, groups)[0]
    o, cg, kh, kw = weight.shape
    n, _, h, w = x.shape
    (sh, sw), (ph, pw), (dh, dw) = stride, padding, dilation
    oh, ow = output_size(h, kh, sh, ph, dh), output_size(w, kw, sw, pw, dw)
    w_flat = weight.reshape(groups, o // groups, cg * kh * kw)
    out = np.empty((n, groups, o // groups, oh * ow), np.result_type(x, weight))
    for images, part in column_chunks(x, (kh, kw), stride, padding, dilation, groups):
        np.matmul(w_flat, part, out=out[images])
    return out.reshape(n, o, oh, ow)


def rotated(weight, groups: int) -> np.ndarray:
    """The kernel of the input gradient as a convolution: every kernel rotated 180°
    and, group by group, in and out channels swapped: (C, O / groups, kh, kw)."""
    o, cg, kh, kw = weight.shape
    per_group = weight.reshape(groups, o // groups, cg, kh, kw)
    return per_group.swapaxes(1, 2)[..., ::-1, ::-1].reshape(groups * cg, o // groups, kh, kw)


def _full_padding(kernel, padding, dilation) -> tuple:
    """The padding of g that makes its convolution "full": d·(k - 1) - p on each axis,
    so every window that overlaps the input is counted (negative: padding > d·(k - 1))."""
    return tuple(d * (k - 1) - p for k, p, d in zip(kernel, padding, dilation))


def gather_grads(g, weight, x, full, dilation, groups) -> tuple:
    """Stride 1: (dx, dW), dW None without ``x``, from one unfold of g.

    dx = conv(g padded by ``full``, rotated kernel): each input pixel gathers from
    the outputs that read it. The same columns give dW, read with the kernel rotated
    back: dWᵀ_rotated = Σₙ gcolumns[n] @ x[n]ᵀ  (O·kh·kw, C) per group."""
    o, cg, kh, kw = weight.shape
    n, c = len(g), groups * cg
    h, w = (output_size(size, k, 1, p, d)
            for size, k, p, d in zip(g.shape[-2:], (kh, kw), full, dilation))
    w_flat = rotated(weight, groups).reshape(groups, cg, o // groups * kh * kw)
    dx = np.empty((n, groups, cg, h * w), np.result_type(g, weight))
    if x is not None:
        x_rows = x.reshape(n, groups, cg, h * w)
        dw_rotated = np.zeros((groups, o // groups * kh * kw, cg), np.result_type(g, x))
    for images, part in column_chunks(g, (kh, kw), (1, 1), full, dilation, groups,
                                      "gcolumns"):
        np.matmul(w_flat, part, out=dx[images])
        if x is not None:
            dw_rotated += np.matmul(part, np.swapaxes(x_rows[images], -1, -2)).sum(axis=0)
    dw = None
    if x is not None:  # (groups, O/groups, kh, kw, C/groups) rotated back to (O, C/groups, kh, kw)
        per_group = dw_rotated.reshape(groups, o // groups, kh, kw, cg)[:, :, ::-1, ::-1]
        dw = np.moveaxis(per_group, -1, 2).reshape(o, cg, kh, kw)
    return dx.reshape(n, c, h, w), dw


def gathers(stride, full, out_channels: int, in_channels: int) -> bool:
    """Whether the input gradient is computed by ``gather_grads`` (else the scatter).

    The gather unfolds g (O channels), the scatter the input (C) then folds: the
    gather is faster unless g has several times the input's channels (measured: they
    cross near O = 4·C; at O <= 2·C the gather is clearly ahead). It needs stride 1
    and a full padding that is not negative."""
    return stride == (1, 1) and min(full) >= 0 and out_channels <= 2 * in_channels


def input_grad(g, weight, x_shape, stride, padding, dilation, groups):
    """dx alone, (N, O, OH, OW) -> ``x_shape`` (N, C, H, W), the way ``Conv2d.backward``
    computes it: the adjoint of the convolution in its input (a transposed convolution)."""
    full = _full_padding(weight.shape[2:], padding, dilation)
    if gathers(stride, full, weight.shape[0], x_shape[1]):
        return gather_grads(g, weight, None, full, dilation, groups)[0]
    return scatter_input_grad(g, weight, x_shape, stride, padding, dilation, groups)


def scatter_input_grad(g, weight, x_shape, stride, padding, dilation, groups):
    """dx = fold(W_flatᵀ @ g): every window's share of g, added back where it came from."""
    o, cg, kh, kw = weight.shape
    n, _, oh, ow = g.shape
    w_flat = weight.reshape(groups, o // groups, cg * kh * kw)
    dcolumns = workspace.get("dcolumns", (n, groups, cg * kh * kw, oh * ow),
                             np.result_type(w_flat, g))
    np.matmul(np.swapaxes(w_flat, -1, -2), g.reshape(n, groups, o // groups, oh * ow),
              out=dcolumns)
    dcolumns = dcolumns.reshape(n, groups * cg, kh, kw, oh, ow)
    return fold(dcolumns, x_shape, stride, padding, dilation)


def weight_grad(g, x, w_shape, stride, padding, dilation, groups):
    """dW from the input's columns, rebuilt a few images at a time:
    dWᵀ = Σₙ columns[n] @ g[n]ᵀ, the same sum as Σₙ g[n] @ columns[n]ᵀ in the
    operand order OpenBLAS runs faster here."""
    o, cg, kh, kw = w_shape
    n, _, oh, ow = g.shape
    g_rows = g.reshape(n, groups, o // groups, oh * ow)
    dw_t = np.zeros((groups, cg * kh * kw, o // groups), np.result_type(x, g))
    for images, part in column_chunks(x, (kh, kw), stride, padding, dilation, groups,
                                      "columns"):
        dw_t += np.matmul(part, np.swapaxes(g_rows[images], -1, -2)).sum(axis=0)
    return np.swapaxes(dw_t, -1, -2).reshape(w_shape)


def input_grad_of(g, weight, x_shape, stride, padding, dilation, groups, compute=None):
    """conv2d's input gradient for a batch or one (C, H, W) image (a batch of one): the
    rules' ``conv2d_input_grad``. ``compute(g, weight, x_shape, stride, padding,
    dilation, groups)`` takes a batch: :func:`input_grad` on arrays by default, the
    Conv2dInputGrad op on a recorded sweep's Tensors."""
    compute = compute or input_grad
    if len(x_shape) == 3:
        dx = compute(g.reshape((1, *g.shape)), weight, (1, *x_shape), stride, padding,
                     dilation, groups)
        return dx.reshape(tuple(x_shape))
    return compute(g, weight, tuple(x_shape), stride, padding, dilation, groups)


def weight_grad_of(x, g, w_shape, stride, padding, dilation, groups, compute=None):
    """conv2d's weight gradient (input first, as the op takes it) for a batch or one
    image: the rules' ``conv2d_weight_grad``. ``compute(x, g, w_shape, stride, padding,
    dilation, groups)`` takes a batch (default: :func:`weight_grad` on arrays)."""
    compute = compute or (lambda x, g, *rest: weight_grad(g, x, *rest))
    if x.ndim == 3:
        x, g = x.reshape((1, *x.shape)), g.reshape((1, *g.shape))
    return compute(x, g, tuple(w_shape), stride, padding, dilation, groups)


# conv2d's rules name the convolution and its two adjoints (ops/recorded_numpy.py names a
# recorded sweep's: the three ops)
rule.PLAIN.conv2d = convolve
rule.PLAIN.conv2d_input_grad = input_grad_of
rule.PLAIN.conv2d_weight_grad = weight_grad_of


class Conv2d(Function):
    """out = conv2d(input, weight) + bias, as W_flat @ unfold(input) per image
    (``convolve``); backward: ``gather_grads`` for stride 1, else fold and dW.

    input (N, C, H, W) or (C, H, W); weight (O, C / groups, kh, kw); bias (O,).
    Groups split the channels into ``groups`` independent convolutions: one batched
    product over a group axis.
    """

    name = "conv2d"
    rule = ("dinput = conv2d_input_grad(g, weight, input.shape, stride, padding, dilation, "
            "groups)  (fold(W_flatᵀ @ g): a full convolution of g with the kernel turned "
            "180°)\n"
            "dweight = conv2d_weight_grad(input, g, weight.shape, stride, padding, dilation, "
            "groups)  (Σ g @ unfold(input)ᵀ: the input correlated with g)\n"
            "dbias = sum(g, (0, 2, 3) if g.ndim == 4 else (1, 2)).reshape(-1)  (Σ g over "
            "the batch and the pixels)")

    @staticmethod
    def forward(ctx, input, weight, bias=None, stride=(1, 1), padding=(0, 0), dilation=(1, 1),
                groups=1):
        if ctx.needs_input_grad[0]:
            ctx.save(weight=weight)
        if ctx.needs_input_grad[1]:
            ctx.save(input=input)
        out = convolve(input, weight, stride, padding, dilation, groups)
        if bias is not None:
            in_place = out.dtype == np.result_type(out, bias)
            out = np.add(out, bias.reshape(-1, 1, 1), out=out if in_place else None)
        return out

    @staticmethod
    def fast_backward(ctx, g):
        """The rule on arrays, faster: for stride 1, dinput and dweight from one unfold of
        g (``gather_grads``)."""
        stride, padding, dilation, groups = _geometry(ctx)
        needs = ctx.needs_input_grad
        one_image = g.ndim == 3  # (O, OH, OW): computed as a batch of one
        g = g[None] if one_image else g
        x_shape, w_shape = (len(g), *ctx.input_shapes[0][-3:]), ctx.input_shapes[1]
        x = ctx.load("input") if needs[1] else None
        if x is not None and one_image:
            x = x[None]
        full = _full_padding(w_shape[2:], padding, dilation)
        dx = dw = db = None
        if needs[0] and gathers(stride, full, w_shape[0], x_shape[1]):  # both from g's columns
            dx, dw = gather_grads(g, ctx.load("weight"), x, full, dilation, groups)
        else:
            if needs[0]:
                dx = scatter_input_grad(g, ctx.load("weight"), x_shape, stride, padding,
                                        dilation, groups)
            if needs[1]:
                dw = weight_grad(g, x, w_shape, stride, padding, dilation, groups)
        if len(needs) > 2 and needs[2]:
            db = g.sum(axis=(0, 2, 3))
        return (dx[0] if one_image and dx is not None else dx), dw, db

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


# -- conv2d's gradients as ops --------------------------------------------------------
# conv2d is bilinear, and so are its two gradients. The input gradient is a transposed
# convolution, Conv2dInputGrad (g, weight -> dx), the weight gradient a correlation,
# Conv2dWeightGrad (input, g -> dweight); both run the array code above. With
# A_W x = conv2d(x, W), dx = A_Wᵀ g and <u, A_Wᵀ g> = <A_W u, g>, so each one's
# gradients are a conv2d and the other one: the three ops close the set, and conv2d's
# rule, recorded under create_graph, can be differentiated to any order. conv2d's
# fast_backward on arrays keeps its fused path; tests/engine/test_create_graph.py holds
# it equal to the rule.
class Conv2dInputGrad(Function):
    """dx = conv2d's input gradient: g (N, O, OH, OW) and weight -> (N, C, H, W), the
    transposed convolution. Linear in g and in weight."""

    name = "conv2d_input_grad"
    rule = ("dgrad_output = conv2d(g, weight, stride, padding, dilation, groups)  (the "
            "adjoint's adjoint is the convolution)\n"
            "dweight = conv2d_weight_grad(g, grad_output, weight.shape, stride, padding, "
            "dilation, groups)  (g plays the input)")

    @staticmethod
    def forward(ctx, grad_output, weight, input_shape=(), stride=(1, 1), padding=(0, 0),
                dilation=(1, 1), groups=1):
        if ctx.needs_input_grad[0]:
            ctx.save(weight=weight)
        if ctx.needs_input_grad[1]:
            ctx.save(grad_output=grad_output)
        return input_grad(grad_output, weight, input_shape, stride, padding, dilation, groups)

    @staticmethod
    def jvp(ctx, tg, tw):
        """dout = conv2d_input_grad(tg, weight) + conv2d_input_grad(grad_output, tw)"""
        return tangent_sum(
            None if tg is None else ctx.run(Conv2dInputGrad, tg, ctx.load("weight"), **ctx.params),
            None if tw is None else ctx.run(Conv2dInputGrad, ctx.load("grad_output"), tw,
                                            **ctx.params))


class Conv2dWeightGrad(Function):
    """dweight = conv2d's weight gradient: input (N, C, H, W) and g (N, O, OH, OW) ->
    (O, C / groups, kh, kw), the correlation of the input with g. Linear in each."""

    name = "conv2d_weight_grad"
    rule = ("dinput = conv2d_input_grad(grad_output, g, input.shape, stride, padding, "
            "dilation, groups)  (g plays the weight)\n"
            "dgrad_output = conv2d(input, g, stride, padding, dilation, groups)")

    @staticmethod
    def forward(ctx, input, grad_output, weight_shape=(), stride=(1, 1), padding=(0, 0),
                dilation=(1, 1), groups=1):
        if ctx.needs_input_grad[0]:
            ctx.save(grad_output=grad_output)
        if ctx.needs_input_grad[1]:
            ctx.save(input=input)
        return weight_grad(grad_output, input, weight_shape, stride, padding, dilation, groups)

    @staticmethod
    def jvp(ctx, tx, tg):
        """dout = conv2d_weight_grad(tx, grad_output) + conv2d_weight_grad(input, tg)"""
        return tangent_sum(
            None if tx is None else ctx.run(Conv2dWeightGrad, tx, ctx.load("grad_output"),
                                            **ctx.params),
            None if tg is None else ctx.run(Conv2dWeightGrad, ctx.load("input"), tg,
                                            **ctx.params))
