"""Slow, obviously-correct references for the layer ops, used only by the tests.

* Naive loops (one output pixel at a time) for conv2d and the pools, forward *and*
  backward, written from the definitions rather than from the engine's im2col, so
  the two can be tested against each other.
* Composite graphs of the engine's primitive ops (mean, var, sqrt, div, logsumexp,
  indexing) for batch_norm and cross_entropy, whose gradients the engine derives
  itself, to test the closed-form backward rules.
"""

from __future__ import annotations

import itertools

import numpy as np

import autograd_core as ag


def _padded(x: np.ndarray, padding: tuple, value: float = 0.0) -> np.ndarray:
    ph, pw = padding
    return np.pad(x, ((0, 0), (0, 0), (ph, ph), (pw, pw)), constant_values=value)


def _out_size(size, kernel, stride, padding, dilation=1) -> int:
    return (size + 2 * padding - dilation * (kernel - 1) - 1) // stride + 1


def conv2d(x, w, b=None, stride=(1, 1), padding=(0, 0), dilation=(1, 1), groups=1):
    """out[n, o, i, j] = b[o] + Σ_{c in o's group, u, v} w[o, c, u, v] ·
    xpad[n, c, i·s + u·d, j·s + v·d], one output element at a time."""
    n_, c_, h, wd = x.shape
    o_, cg, kh, kw = w.shape
    og = o_ // groups
    oh = _out_size(h, kh, stride[0], padding[0], dilation[0])
    ow = _out_size(wd, kw, stride[1], padding[1], dilation[1])
    xp = _padded(x, padding)
    out = np.zeros((n_, o_, oh, ow))
    for n, o, i, j in itertools.product(range(n_), range(o_), range(oh), range(ow)):
        c0 = (o // og) * cg
        total = 0.0 if b is None else b[o]
        for c, u, v in itertools.product(range(cg), range(kh), range(kw)):
            total += w[o, c, u, v] * xp[n, c0 + c, i * stride[0] + u * dilation[0],
                                         j * stride[1] + v * dilation[1]]
        out[n, o, i, j] = total
    return out


def conv2d_backward(x, w, g, stride=(1, 1), padding=(0, 0), dilation=(1, 1), groups=1):
    """(dx, dw, db) of ``conv2d`` for the upstream gradient ``g``: each output element
    sends g·w to the input it read and g·x to the weight it used."""
    _, _, h, wd = x.shape
    o_, cg, kh, kw = w.shape
    og = o_ // groups
    xp = _padded(x, padding)
    dxp, dw = np.zeros_like(xp), np.zeros_like(w)
    n_, _, oh, ow = g.shape
    for n, o, i, j in itertools.product(range(n_), range(o_), range(oh), range(ow)):
        c0 = (o // og) * cg
        for c, u, v in itertools.product(range(cg), range(kh), range(kw)):
            r, s = i * stride[0] + u * dilation[0], j * stride[1] + v * dilation[1]
            dxp[n, c0 + c, r, s] += g[n, o, i, j] * w[o, c, u, v]
            dw[o, c, u, v] += g[n, o, i, j] * xp[n, c0 + c, r, s]
    ph, pw = padding
    return dxp[:, :, ph:ph + h, pw:pw + wd], dw, g.sum(axis=(0, 2, 3))


def _pool_windows(x, kernel, stride, padding):
    """(n, c, i, j, [(row, col) of each window element in the padded input])."""
    n_, c_, h, w = x.shape
    oh = _out_size(h, kernel[0], stride[0], padding[0])
    ow = _out_size(w, kernel[1], stride[1], padding[1])
    for n, c, i, j in itertools.product(range(n_), range(c_), range(oh), range(ow)):
        cells = [(i * stride[0] + u, j * stride[1] + v)
                 for u in range(kernel[0]) for v in range(kernel[1])]  # row-major
        yield n, c, i, j, cells


def _pool_shape(x, kernel, stride, padding):
    return x.shape[:2] + (_out_size(x.shape[2], kernel[0], stride[0], padding[0]),
                          _out_size(x.shape[3], kernel[1], stride[1], padding[1]))


def max_pool2d(x, g, kernel, stride, padding):
    """(out, dx): max of each window, and the gradient routed to its first maximum
    (scanning the window in row-major order, a later equal value does not win)."""
    xp = _padded(x, padding, -np.inf)
    out = np.zeros(_pool_shape(x, kernel, stride, padding))
    dxp = np.zeros_like(xp)
    for n, c, i, j, cells in _pool_windows(x, kernel, stride, padding):
        best = cells[0]
        for cell in cells[1:]:
            if xp[n, c][cell] > xp[n, c][best]:
                best = cell
        out[n, c, i, j] = xp[n, c][best]
        dxp[n, c][best] += g[n, c, i, j]
    ph, pw = padding
    return out, dxp[:, :, ph:ph + x.shape[2], pw:pw + x.shape[3]]


def avg_pool2d(x, g, kernel, stride, padding):
    """(out, dx): mean of each window (padding counted as zeros), and 1/(kh·kw) of
    the window's gradient to each of its cells."""
    xp = _padded(x, padding)
    out = np.zeros(_pool_shape(x, kernel, stride, padding))
    dxp = np.zeros_like(xp)
    k = kernel[0] * kernel[1]
    for n, c, i, j, cells in _pool_windows(x, kernel, stride, padding):
        out[n, c, i, j] = sum(xp[n, c][cell] for cell in cells) / k
        for cell in cells:
            dxp[n, c][cell] += g[n, c, i, j] / k
    ph, pw = padding
    return out, dxp[:, :, ph:ph + x.shape[2], pw:pw + x.shape[3]]


def batch_norm(x, running_mean, running_var, weight=None, bias=None, training=False,
               momentum=0.1, eps=1e-5):
    """batch_norm as a graph of the engine's primitive ops (mean, var, sqrt, div),
    so its gradient is the engine's chain rule through the batch statistics.
    The running estimates (NumPy arrays) are updated in place in training."""
    axes = (0, *range(2, x.ndim))
    shape = (1, -1) + (1,) * (x.ndim - 2)
    if training:
        mean = ag.mean(x, dim=axes, keepdim=True)
        var = ag.var(x, dim=axes, keepdim=True, correction=0)
        if running_mean is not None:
            count = x.numel() // x.shape[1]
            running_mean *= 1 - momentum
            running_mean += momentum * mean.numpy().reshape(-1)
            running_var *= 1 - momentum
            running_var += momentum * var.numpy().reshape(-1) * count / (count - 1)
    else:
        mean = ag.tensor(running_mean.reshape(shape))
        var = ag.tensor(running_var.reshape(shape))
    out = (x - mean) / ag.sqrt(var + eps)
    if weight is not None:
        out = out * weight.reshape(shape)
    if bias is not None:
        out = out + bias.reshape(shape)
    return out


def cross_entropy(logits, target, reduction="mean"):
    """logsumexp(logits) - logits[n, target[n]] from engine primitives (N, C)."""
    target = np.asarray(target)
    picked = logits[np.arange(len(target)), target]
    losses = ag.logsumexp(logits, dim=1) - picked
    return {"mean": ag.mean, "sum": ag.sum, "none": lambda t: t}[reduction](losses)


def embedding_backward(indices, g, num_embeddings):
    """The table gradient: every occurrence of an index adds its upstream row."""
    dweight = np.zeros((num_embeddings, g.shape[-1]))
    for position in np.ndindex(indices.shape):
        dweight[indices[position]] += g[position]
    return dweight
