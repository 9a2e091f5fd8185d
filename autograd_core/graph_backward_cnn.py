"""``create_graph=True`` through the CNN ops: conv2d, max and average pooling, batch
norm (training and evaluation) and var, as Tensor rules registered into
``graph_backward.RULES``.

Each rule returns gradients computed by recorded ops, and every op it records has a
rule of its own, so the set is closed: gradients can be differentiated to any order.

* conv2d is bilinear, and so are its two gradients. The input gradient is a
  transposed convolution, :class:`Conv2dInputGrad` (g, weight -> dx), the weight
  gradient a correlation, :class:`Conv2dWeightGrad` (input, g -> dweight); both run
  the lean backward's NumPy code (``ops/conv.py``). With ``A_W x = conv2d(x, W)``,
  ``dx = A_Wᵀ g`` and ``<u, A_Wᵀ g> = <A_W u, g>``, so each one's gradients are a
  conv2d and the other one: the three ops close the set.
* max pooling sends g to each window's argmax, a linear map of g with the argmax
  fixed (:class:`MaxPool2dBackward`); its adjoint reads g back at the argmax
  (:class:`MaxPool2dGather`, which is also max pooling's tangent). Average pooling's
  backward spreads g over the windows (:class:`AvgPool2dBackward`), whose adjoint is
  average pooling itself.
* batch norm does not save its input (only x̂ and 1/std), and var saves its centred
  input. Both are shift-invariant per channel (per reduced slice): their value and
  every derivative is the same at x and at x - c for any c constant over the
  reduced axes. So the centred input x - mean, put on the input's edge (a Tensor with
  that value whose gradient flows to the input), stands for the input: the rule
  centres it again, recomputes the statistics from it with Tensor ops and writes the
  gradient with them. Its derivatives, of every order, are then exact.

These ops live here rather than in ``autograd_core.ops``, as ``IndexBackward`` lives
in ``graph_backward``: they only ever appear on the graph of a recorded backward.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

from .function import Function, Node
from .graph_backward import RULES, _constant, _reduced, _saved
from .ops import conv as cv
from .ops import normalization as bn
from .ops import pooling as pl
from .ops import reductions as red
from .ops._util import tangent_sum
from .recorded_numpy import RecordedContext
from .tensor import Tensor

__all__ = ["AvgPool2dBackward", "Conv2dInputGrad", "Conv2dWeightGrad", "MaxPool2dBackward",
           "MaxPool2dGather", "CNN_RULES"]

_GEOMETRY = ("stride", "padding", "dilation", "groups")


def _geometry(params: dict) -> dict:
    return {k: params[k] for k in _GEOMETRY}


def _conv(x, weight, p: dict) -> np.ndarray:
    """conv2d without bias, on arrays (N, C, H, W)."""
    return cv.convolve(x, weight, p["stride"], p["padding"], p["dilation"], p["groups"])


def _input_grad(g, weight, input_shape, p: dict) -> np.ndarray:
    return cv.input_grad(g, weight, input_shape, p["stride"], p["padding"], p["dilation"],
                         p["groups"])


def _weight_grad(x, g, weight_shape, p: dict) -> np.ndarray:
    return cv.weight_grad(g, x, weight_shape, p["stride"], p["padding"], p["dilation"],
                          p["groups"])


# -- conv2d ------------------------------------------------------------------------------
class Conv2dInputGrad(Function):
    """dx = conv2d's input gradient: g (N, O, OH, OW) and weight -> (N, C, H, W), the
    transposed convolution. Linear in g and in weight."""

    name = "conv2d_input_grad"
    rule = ("dgrad_output = conv2d(g, weight)   (the adjoint's adjoint is the convolution)\n"
            "dweight = conv2d_weight_grad(g, grad_output)   (g plays the input)")

    @staticmethod
    def forward(ctx, grad_output, weight, input_shape=(), stride=(1, 1), padding=(0, 0),
                dilation=(1, 1), groups=1):
        if ctx.needs_input_grad[0]:
            ctx.save(weight=weight)
        if ctx.needs_input_grad[1]:
            ctx.save(grad_output=grad_output)
        return cv.input_grad(grad_output, weight, input_shape, stride, padding, dilation,
                             groups)

    @staticmethod
    def backward(ctx, g):
        p, needs = ctx.params, ctx.needs_input_grad
        dg = _conv(g, ctx.load("weight"), p) if needs[0] else None
        dw = _weight_grad(g, ctx.load("grad_output"), ctx.input_shapes[1], p) if needs[1] \
            else None
        return dg, dw

    @staticmethod
    def jvp(ctx, tg, tw):
        """dout = conv2d_input_grad(tg, weight) + conv2d_input_grad(grad_output, tw)"""
        p, shape = ctx.params, ctx.params["input_shape"]
        return tangent_sum(
            None if tg is None else _input_grad(tg, ctx.load("weight"), shape, p),
            None if tw is None else _input_grad(ctx.load("grad_output"), tw, shape, p))


class Conv2dWeightGrad(Function):
    """dweight = conv2d's weight gradient: input (N, C, H, W) and g (N, O, OH, OW) ->
    (O, C / groups, kh, kw), the correlation of the input with g. Linear in each."""

    name = "conv2d_weight_grad"
    rule = ("dinput = conv2d_input_grad(grad_output, g)   (g plays the weight)\n"
            "dgrad_output = conv2d(input, g)")

    @staticmethod
    def forward(ctx, input, grad_output, weight_shape=(), stride=(1, 1), padding=(0, 0),
                dilation=(1, 1), groups=1):
        if ctx.needs_input_grad[0]:
            ctx.save(grad_output=grad_output)
        if ctx.needs_input_grad[1]:
            ctx.save(input=input)
        return cv.weight_grad(grad_output, input, weight_shape, stride, padding, dilation,
                              groups)

    @staticmethod
    def backward(ctx, g):
        p, needs = ctx.params, ctx.needs_input_grad
        dx = _input_grad(ctx.load("grad_output"), g, ctx.input_shapes[0], p) if needs[0] \
            else None
        dg = _conv(ctx.load("input"), g, p) if needs[1] else None
        return dx, dg

    @staticmethod
    def jvp(ctx, tx, tg):
        """dout = conv2d_weight_grad(tx, grad_output) + conv2d_weight_grad(input, tg)"""
        p, shape = ctx.params, ctx.params["weight_shape"]
        return tangent_sum(
            None if tx is None else _weight_grad(tx, ctx.load("grad_output"), shape, p),
            None if tg is None else _weight_grad(ctx.load("input"), tg, shape, p))


def _batched(t: Tensor, one_image: bool) -> Tensor:
    return t.reshape((1, *t.shape)) if one_image else t


def _conv2d(node: Node, g: Tensor) -> tuple:
    """dx = Conv2dInputGrad(g, W), dW = Conv2dWeightGrad(x, g), db = Σ g; a single
    (C, H, W) image is computed as a batch of one, as the lean backward does."""
    needs, geometry = node.needs_input_grad, _geometry(node.params)
    x_shape = node.input_shapes[0]
    one_image = len(x_shape) == 3
    g4 = _batched(g, one_image)
    dx = dw = db = None
    if needs[0]:
        dx = Conv2dInputGrad.apply(g4, _saved(node, "weight"),
                                   input_shape=(1, *x_shape) if one_image else x_shape,
                                   **geometry)
        dx = dx.reshape(x_shape) if one_image else dx
    if needs[1]:
        x4 = _batched(_saved(node, "input"), one_image)
        dw = Conv2dWeightGrad.apply(x4, g4, weight_shape=node.input_shapes[1], **geometry)
    if len(needs) > 2 and needs[2]:
        db = g4.sum(axis=(0, 2, 3))
    return dx, dw, db


def _conv2d_input_grad(node: Node, g: Tensor) -> tuple:
    needs, geometry = node.needs_input_grad, _geometry(node.params)
    dg = cv.Conv2d.apply(g, _saved(node, "weight"), **geometry) if needs[0] else None
    dw = Conv2dWeightGrad.apply(g, _saved(node, "grad_output"),
                                weight_shape=node.input_shapes[1], **geometry) \
        if needs[1] else None
    return dg, dw


def _conv2d_weight_grad(node: Node, g: Tensor) -> tuple:
    needs, geometry = node.needs_input_grad, _geometry(node.params)
    dx = Conv2dInputGrad.apply(_saved(node, "grad_output"), g,
                               input_shape=node.input_shapes[0], **geometry) \
        if needs[0] else None
    dg = cv.Conv2d.apply(_saved(node, "input"), g, **geometry) if needs[1] else None
    return dx, dg


# -- pooling -------------------------------------------------------------------------------
class MaxPool2dBackward(Function):
    """max_pool2d's backward as an op: g added at each window's argmax (``argmax``
    fixed, a param), zeros elsewhere. Linear in g; its backward is the gather."""

    name = "max_pool2d_backward"
    rule = "dgrad_output = g at each window's argmax   (max_pool2d_gather)"

    @staticmethod
    def forward(ctx, grad_output, argmax=None, input_shape=(), kernel_size=(2, 2),
                stride=(2, 2), padding=(0, 0)):
        return pl.scatter_to_argmax(grad_output, argmax, input_shape, kernel_size, stride,
                                    padding)

    @staticmethod
    def backward(ctx, g):
        p = ctx.params
        return (pl.gather_at_argmax(g, p["argmax"], p["kernel_size"], p["stride"],
                                    p["padding"]),)

    @staticmethod
    def jvp(ctx, tg):
        """dout = max_pool2d_backward(tg)   (the op is linear)"""
        return MaxPool2dBackward.forward(None, tg, **ctx.params)


class MaxPool2dGather(Function):
    """Each window's value of ``input`` at the window's argmax (a param): the adjoint
    of :class:`MaxPool2dBackward`, and max pooling's tangent."""

    name = "max_pool2d_gather"
    rule = "dinput = g added at each window's argmax   (max_pool2d_backward)"

    @staticmethod
    def forward(ctx, input, argmax=None, kernel_size=(2, 2), stride=(2, 2), padding=(0, 0)):
        return pl.gather_at_argmax(input, argmax, kernel_size, stride, padding)

    @staticmethod
    def backward(ctx, g):
        p = ctx.params
        return (pl.scatter_to_argmax(g, p["argmax"], ctx.input_shapes[0], p["kernel_size"],
                                     p["stride"], p["padding"]),)

    @staticmethod
    def jvp(ctx, tx):
        """dout = max_pool2d_gather(tx)   (the op is linear)"""
        return MaxPool2dGather.forward(None, tx, **ctx.params)


class AvgPool2dBackward(Function):
    """avg_pool2d's backward as an op: g / (kh·kw) added to every input of its window.
    Linear in g; its backward is avg_pool2d."""

    name = "avg_pool2d_backward"
    rule = "dgrad_output = avg_pool2d(g)   (the adjoint of the spreading)"

    @staticmethod
    def forward(ctx, grad_output, input_shape=(), kernel_size=(2, 2), stride=(2, 2),
                padding=(0, 0)):
        return pl.spread_over_windows(grad_output, input_shape, kernel_size, stride, padding)

    @staticmethod
    def backward(ctx, g):
        p = ctx.params
        return (pl.AvgPool2d.forward(None, g, p["kernel_size"], p["stride"], p["padding"]),)

    @staticmethod
    def jvp(ctx, tg):
        """dout = avg_pool2d_backward(tg)   (the op is linear)"""
        return AvgPool2dBackward.forward(None, tg, **ctx.params)


def _pool_params(node: Node) -> dict:
    p = node.params
    return dict(kernel_size=p["kernel_size"], stride=p["stride"], padding=p["padding"])


def _max_pool2d(node: Node, g: Tensor) -> tuple:
    return (MaxPool2dBackward.apply(g, argmax=node.load("argmax"),
                                    input_shape=node.input_shapes[0], **_pool_params(node)),)


def _max_pool2d_backward(node: Node, g: Tensor) -> tuple:
    return (MaxPool2dGather.apply(g, argmax=node.params["argmax"], **_pool_params(node)),)


def _max_pool2d_gather(node: Node, g: Tensor) -> tuple:
    return (MaxPool2dBackward.apply(g, argmax=node.params["argmax"],
                                    input_shape=node.input_shapes[0], **_pool_params(node)),)


def _avg_pool2d(node: Node, g: Tensor) -> tuple:
    return (AvgPool2dBackward.apply(g, input_shape=node.input_shapes[0],
                                    **_pool_params(node)),)


def _avg_pool2d_backward(node: Node, g: Tensor) -> tuple:
    return (pl.AvgPool2d.apply(g, **_pool_params(node)),)


# -- shift-invariant ops: batch norm and var -------------------------------------------------
def _centred_input(node: Node, centred: Callable[[], np.ndarray],
                   shift: np.ndarray | None) -> Tensor:
    """The op's input 0 up to a shift constant over the reduced axes, on the graph
    (``RecordedContext.input_on_graph``): ``centred()`` is x - mean, from what the op
    saved."""
    return RecordedContext(node).input_on_graph(0, centred, shift)


def _per_channel(t: Tensor, ndim: int) -> Tensor:
    return t.reshape((-1,) + (1,) * (ndim - 2)) if t.ndim else t


def _batch_norm(node: Node, g: Tensor, training: bool) -> tuple:
    """Training: x̂ and 1/std recomputed by Tensor ops from the centred input, then
    dx = weight / std · (g - Σg / M - x̂ · Σ(g·x̂) / M), dweight = Σ g·x̂, dbias = Σ g.
    Evaluation: dx = g · weight · inv_std (running statistics: constants), x̂ linear in x."""
    p, needs = node.params, node.needs_input_grad
    needs = tuple(needs) + (False,) * (3 - len(needs))  # (x), (x, weight) or all three
    ndim = g.ndim
    axes = bn.channel_axes(ndim)
    inv_std = 1.0 / np.sqrt(p["var"] + p["eps"])  # as the forward computed it
    weight = None
    if needs[0] and len(node.input_shapes) > 1:
        weight = _per_channel(_saved(node, "weight"), ndim)
    x_hat = dx = None
    if needs[0] and (training or needs[1]):
        centred = _centred_input(
            node, lambda: node.load("normalized") / node.load("inv_std"), p["mean"])
        if training:
            c = centred - centred.mean(axis=axes, keepdims=True)
            std = ((c * c).mean(axis=axes, keepdims=True) + p["eps"]).sqrt()
            x_hat = c / std
            m = max(g.numel() // max(g.shape[1], 1), 1)  # values per channel
            share = g - g.sum(axis=axes, keepdims=True) / m \
                - x_hat * ((g * x_hat).sum(axis=axes, keepdims=True) / m)
            dx = share / std if weight is None else share * (weight / std)
        else:
            x_hat = centred * _constant(inv_std)
    if needs[0] and not training:
        scale = _constant(inv_std)
        dx = g * (scale if weight is None else weight * scale)
    if x_hat is None and needs[1]:
        x_hat = _constant(node.load("normalized"))  # the input needs no gradient
    dweight = (g * x_hat).sum(axis=axes) if needs[1] else None
    dbias = g.sum(axis=axes) if needs[2] else None
    return dx, dweight, dbias


def _var(node: Node, g: Tensor) -> tuple:
    """da = g · 2 (a - mean(a)) / (n - correction), a - mean(a) recomputed by Tensor ops
    from the saved centred input on the input's edge (the edge cases as ``Var.slope``)."""
    p = node.params
    axis, shape = p["axis"], node.input_shapes[0]
    centred = node.load("centered")
    n = red._count(shape, axis)
    dof = n - p["correction"]
    spread = _reduced(node, g)
    if dof <= 0 and (axis is None or not shape):  # nan where a == mean(a), inf elsewhere
        return (spread * _constant(np.where(centred == 0, np.nan, np.inf)
                                   .astype(centred.dtype)),)
    a = _centred_input(node, lambda: centred, None)
    if n:
        a = a - a.mean(axis=axis, keepdims=True)
    return (spread * a * (2.0 / dof if dof else math.inf),)


CNN_RULES = {
    cv.Conv2d: _conv2d,
    Conv2dInputGrad: _conv2d_input_grad,
    Conv2dWeightGrad: _conv2d_weight_grad,
    pl.MaxPool2d: _max_pool2d,
    MaxPool2dBackward: _max_pool2d_backward,
    MaxPool2dGather: _max_pool2d_gather,
    pl.AvgPool2d: _avg_pool2d,
    AvgPool2dBackward: _avg_pool2d_backward,
    bn.BatchNorm: lambda n, g: _batch_norm(n, g, training=True),
    bn.BatchNormEval: lambda n, g: _batch_norm(n, g, training=False),
    red.Var: _var,
}

RULES.update(CNN_RULES)
