"""The benchmark CNN written by hand in NumPy: forward, backward and SGD, no autograd.

    conv3x3 -> batch norm -> ReLU -> max pool 2
    -> residual block: conv3x3 -> batch norm -> ReLU -> conv3x3 -> batch norm, + identity
    -> global average pool -> linear -> softmax cross-entropy

Convs have no bias (batch norm shifts); batch norm is in training mode (batch
statistics, running estimates updated in place, PyTorch's momentum 0.1, eps 1e-5).

Written the way a NumPy programmer writes it from a course: every layer is a
``*_forward`` returning its output and a cache, and a ``*_backward`` that reads the
cache. The conv is the textbook im2col: rows of the column matrix are output pixels
(N·OH·OW, C·kh·kw) taken from ``sliding_window_view``, one matmul, and col2im with
one strided add per kernel offset; the columns are kept in the cache for dW. Max
pooling (2x2, stride 2) is the reshape trick: the gradient goes to every input equal
to its window's maximum. Ties only happen between ReLU zeros here, whose gradient
the ReLU backward then zeroes, so this is the same gradient as first-maximum routing.

``state`` is a dict of arrays named like the engine's ``state_dict`` (``conv.weight``,
``block.body.bn1.running_mean``, ...); ``train_step`` updates it in place.
"""

from __future__ import annotations

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

EPS = 1e-5
MOMENTUM = 0.1


def conv_forward(x, w, pad=1):
    """3x3 (or kxk) convolution, stride 1, zero padding ``pad``, no bias."""
    n, c, _, _ = x.shape
    o, _, k, _ = w.shape
    xp = np.pad(x, ((0, 0), (0, 0), (pad, pad), (pad, pad)))
    windows = sliding_window_view(xp, (k, k), axis=(2, 3))  # N, C, OH, OW, k, k
    oh, ow = windows.shape[2:4]
    cols = windows.transpose(0, 2, 3, 1, 4, 5).reshape(n * oh * ow, c * k * k)
    out = (cols @ w.reshape(o, -1).T).reshape(n, oh, ow, o).transpose(0, 3, 1, 2)
    return out, (x.shape, cols, w, pad)


def conv_backward(dout, cache, need_dx=True):
    """(dx or None, dw)."""
    (n, c, h, w_), cols, w, pad = cache
    o, _, k, _ = w.shape
    oh, ow = dout.shape[2:]
    g = dout.transpose(0, 2, 3, 1).reshape(-1, o)
    dw = (g.T @ cols).reshape(w.shape)
    if not need_dx:
        return None, dw
    dcols = (g @ w.reshape(o, -1)).reshape(n, oh, ow, c, k, k)
    dxp = np.zeros((n, c, h + 2 * pad, w_ + 2 * pad), dtype=dout.dtype)
    for i in range(k):
        for j in range(k):
            dxp[:, :, i:i + oh, j:j + ow] += dcols[:, :, :, :, i, j].transpose(0, 3, 1, 2)
    return dxp[:, :, pad:pad + h, pad:pad + w_], dw


def bn_forward(x, gamma, beta, running_mean, running_var):
    """Training-mode batch norm over (N, H, W) per channel; updates the running
    estimates in place (unbiased variance for running_var, as PyTorch)."""
    m = x.size // x.shape[1]
    mean = x.mean(axis=(0, 2, 3))
    var = x.var(axis=(0, 2, 3))
    running_mean *= 1 - MOMENTUM
    running_mean += MOMENTUM * mean
    running_var *= 1 - MOMENTUM
    running_var += MOMENTUM * var * (m / (m - 1))
    inv_std = 1 / np.sqrt(var + EPS)
    xhat = (x - mean[:, None, None]) * inv_std[:, None, None]
    out = gamma[:, None, None] * xhat + beta[:, None, None]
    return out, (xhat, gamma, inv_std)


def bn_backward(dout, cache):
    """(dx, dgamma, dbeta), with the closed-form dx."""
    xhat, gamma, inv_std = cache
    m = dout.size // dout.shape[1]
    dbeta = dout.sum(axis=(0, 2, 3))
    dgamma = (dout * xhat).sum(axis=(0, 2, 3))
    dx = (gamma * inv_std / m)[:, None, None] * (
        m * dout - dbeta[:, None, None] - xhat * dgamma[:, None, None])
    return dx, dgamma, dbeta


def maxpool_forward(x):
    """2x2 max pooling, stride 2 (H and W even)."""
    n, c, h, w = x.shape
    xr = x.reshape(n, c, h // 2, 2, w // 2, 2)
    out = xr.max(axis=(3, 5))
    return out, (xr, out)


def maxpool_backward(dout, cache):
    xr, out = cache
    mask = xr == out[:, :, :, None, :, None]
    dx = mask * dout[:, :, :, None, :, None]
    n, c, oh, _, ow, _ = xr.shape
    return dx.reshape(n, c, 2 * oh, 2 * ow)


def softmax_cross_entropy(logits, y):
    """Mean cross-entropy and its gradient with respect to the logits."""
    n = logits.shape[0]
    shifted = logits - logits.max(axis=1, keepdims=True)
    log_probs = shifted - np.log(np.exp(shifted).sum(axis=1, keepdims=True))
    loss = -log_probs[np.arange(n), y].mean()
    dlogits = np.exp(log_probs)
    dlogits[np.arange(n), y] -= 1
    return loss, dlogits / n


def train_step(state: dict, x: np.ndarray, y: np.ndarray, lr: float):
    """One SGD step on (x, y); returns (loss, gradients by parameter name)."""
    s = state

    def bn(a, name):
        return bn_forward(a, s[name + ".weight"], s[name + ".bias"],
                          s[name + ".running_mean"], s[name + ".running_var"])

    # forward
    a1, conv_c = conv_forward(x, s["conv.weight"])
    a2, bn_c = bn(a1, "bn")
    a3 = np.maximum(a2, 0)
    a4, pool_c = maxpool_forward(a3)
    r1, conv1_c = conv_forward(a4, s["block.body.conv1.weight"])
    r2, bn1_c = bn(r1, "block.body.bn1")
    r3 = np.maximum(r2, 0)
    r4, conv2_c = conv_forward(r3, s["block.body.conv2.weight"])
    r5, bn2_c = bn(r4, "block.body.bn2")
    a5 = r5 + a4
    features = a5.mean(axis=(2, 3))
    logits = features @ s["fc.weight"].T + s["fc.bias"]
    loss, dlogits = softmax_cross_entropy(logits, y)

    # backward
    g = {"fc.weight": dlogits.T @ features, "fc.bias": dlogits.sum(axis=0)}
    dfeatures = dlogits @ s["fc.weight"]
    h, w = a5.shape[2:]
    da5 = np.broadcast_to((dfeatures / (h * w))[:, :, None, None], a5.shape)
    dr4, g["block.body.bn2.weight"], g["block.body.bn2.bias"] = bn_backward(da5, bn2_c)
    dr3, g["block.body.conv2.weight"] = conv_backward(dr4, conv2_c)
    dr2 = dr3 * (r2 > 0)
    dr1, g["block.body.bn1.weight"], g["block.body.bn1.bias"] = bn_backward(dr2, bn1_c)
    da4, g["block.body.conv1.weight"] = conv_backward(dr1, conv1_c)
    da4 = da4 + da5  # the identity shortcut
    da3 = maxpool_backward(da4, pool_c)
    da2 = da3 * (a2 > 0)
    da1, g["bn.weight"], g["bn.bias"] = bn_backward(da2, bn_c)
    _, g["conv.weight"] = conv_backward(da1, conv_c, need_dx=False)

    # SGD
    for name, grad in g.items():
        s[name] -= lr * grad
    return loss, g
