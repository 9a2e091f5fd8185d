"""Neural-network ops: linear, dropout, embedding and the losses.

Each is one op, so the graph view shows one node with PyTorch's name and the
saved-tensor view shows what that layer really keeps: linear its input (and its
weight), dropout a 0/1 mask, embedding the indices, nll_loss the class indices,
mse_loss the difference. The losses take ``reduction`` = 'mean' | 'sum' | 'none';
their backward first spreads g back over the elements the reduction combined.
"""

from __future__ import annotations

import numpy as np

from ..recording import rule
from ..recording.node import Function
from ._util import tangent_sum


def reduce(loss: np.ndarray, reduction: str) -> np.ndarray:
    """The elementwise ``loss`` combined as asked: mean, sum, or kept ('none')."""
    if reduction == "none":
        return loss
    return np.asarray(loss.mean() if reduction == "mean" else loss.sum())


def spread(g, shape: tuple, reduction: str):
    """The backward of ``reduce``: the upstream gradient of each loss element (for 'mean'
    and 'sum' one value, which broadcasts to every element)."""
    if reduction == "none":
        return g
    return g / int(np.prod(shape)) if reduction == "mean" else g


def each_elements_share(ctx, g):
    """g as an elementwise loss's rule reads it: each element's share of the upstream
    gradient (g / n for 'mean', g for 'sum', g itself for 'none')."""
    shape = np.broadcast_shapes(*ctx.input_shapes[:2])
    return spread(g, shape, ctx.params.get("reduction", "mean"))


class Linear(Function):
    """out = input @ weightᵀ + bias, weight laid out (out_features, in_features)."""

    name = "linear"
    rule = ("dinput = g @ weight\n"
            "dweight = rows(g).T @ rows(input)   (any batch axes flattened into rows)\n"
            "dbias = g   (the engine sums it over the batch)")

    @staticmethod
    def forward(ctx, input, weight, bias=None):
        if ctx.needs_input_grad[0]:
            ctx.save(weight=weight)
        if ctx.needs_input_grad[1]:
            ctx.save(input=input)
        out = np.matmul(input, weight.T)
        if bias is None:
            return out
        if out.dtype == np.result_type(out, bias):
            out += bias  # out is a fresh array: adding in place saves one full pass
            return out
        return out + bias

    @staticmethod
    def jvp(ctx, tx, tw, tb=None):
        """dout = tx @ weightᵀ + input @ twᵀ + tb"""
        return tangent_sum(None if tx is None else np.matmul(tx, ctx.load("weight").T),
                           None if tw is None else np.matmul(ctx.load("input"), tw.T), tb)


class Dropout(Function):
    """out = input · mask / (1 - p), mask[i] = 1 with probability 1 - p."""

    name = "dropout"
    rule = "scale = 1 / (1 - p) if p < 1 else 0.0\ndinput = g * mask * scale"
    elementwise = True  # the mask is fixed: forward mode reads the same rule

    @staticmethod
    def forward(ctx, input, p=0.5, generator=None):
        # Drawn in float64 whatever the input's dtype, so a seed gives the same mask
        # in float32 and float64.
        mask = generator.numpy.random(input.shape) >= p
        ctx.save(mask=mask)
        return input * mask * _keep_scale(p)


def _keep_scale(p: float) -> float:
    """1 / (1 - p); with p = 1 nothing is kept and the output is all zeros."""
    return 1.0 / (1.0 - p) if p < 1 else 0.0


class Embedding(Function):
    """out = weight[indices]: one row of the table per index."""

    name = "embedding"
    rule = ("dweight = scatter(g, indices, weight.shape)  (zeros of weight's shape, each row "
            "of g added at its index: a repeated index gets the sum)")

    @staticmethod
    def forward(ctx, indices, weight):
        ctx.save(indices=indices)
        return weight[indices]

    @staticmethod
    def jvp(ctx, tindices, tweight):
        """dout = tweight[indices]"""
        return tweight[ctx.load("indices")]


def _at_target(target: np.ndarray) -> tuple:
    """The index of each sample's target entry in an (N, C, d1, ...) array: element
    [n, target[n, ...], ...]. One fancy index reads (or writes) them all."""
    if target.ndim == 1:  # (N,) classes of (N, C) scores: the usual batch
        return np.arange(len(target)), target
    grid = np.indices(target.shape, sparse=True)
    return (grid[0], target, *grid[1:])


def counted(target: np.ndarray, ignore_index: int) -> int:
    """How many targets count: those that are not ``ignore_index`` ('mean' divides by it)."""
    return int(np.count_nonzero(target != ignore_index))


def target_distribution(target: np.ndarray, shape: tuple, dtype, ignore_index: int = -100,
                        label_smoothing: float = 0.0) -> np.ndarray:
    """q, of the shape of log_probs (N, C, d1, ...): each sample's loss is
    -Σ_c q[n, c] · log_probs[n, c], so the loss is linear in log_probs and its gradient
    is -q (times each sample's share of g). q is the one-hot of the target, mixed with
    the uniform distribution as (1 - ε) · one_hot + ε / C, and 0 where the target is
    ``ignore_index``."""
    classes = shape[1]
    along_classes = np.arange(classes).reshape(classes, *[1] * (len(shape) - 2))
    target = np.expand_dims(target, 1)
    q = (target == along_classes).astype(dtype)
    if label_smoothing:
        q = (1 - label_smoothing) * q + label_smoothing / classes
    return q * (target != ignore_index)


def one_hot(target: np.ndarray, shape: tuple) -> np.ndarray:
    """True at each sample's target class of an (N, C, d1, ...) array, class axis 1."""
    return target_distribution(target, shape, bool)


# a rule names them (ops/recorded_numpy.py gives a recorded sweep's, on the target's values)
rule.PLAIN.one_hot = one_hot
rule.PLAIN.target_distribution = target_distribution


def sample_losses(log_probs: np.ndarray, target: np.ndarray, ignore_index: int = -100,
                  label_smoothing: float = 0.0) -> np.ndarray:
    """Each sample's -Σ_c q[n, c] · log_probs[n, c], as PyTorch computes it:
    (1 - ε) · (-log_probs[n, target[n]]) + ε / C · (-Σ_c log_probs[n, c]), and 0 for an
    ignored sample (whatever its scores: no 0 · inf)."""
    kept = target != ignore_index
    loss = np.where(kept, -log_probs[_at_target(np.where(kept, target, 0))], 0)
    if label_smoothing:
        smooth = np.where(kept, -log_probs.sum(axis=1), 0)
        with np.errstate(invalid="ignore"):  # ε = 1 and an infinite nll: 0 · inf, nan as PyTorch
            loss = (1 - label_smoothing) * loss + label_smoothing / log_probs.shape[1] * smooth
    return loss


def _reduce_counted(loss: np.ndarray, target: np.ndarray, reduction: str,
                    ignore_index: int) -> np.ndarray:
    """``reduce``, with 'mean' over the samples not ignored (nan when there are none)."""
    if reduction != "mean":
        return reduce(loss, reduction)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.asarray(loss.sum() / loss.dtype.type(counted(target, ignore_index)))


def _options(ctx) -> tuple:
    p = ctx.params
    return p.get("reduction", "mean"), p.get("ignore_index", -100), p.get("label_smoothing", 0.0)


class NLLLoss(Function):
    """loss = -log_probs[n, target[n]], reduced; class axis 1.

    Its forward is the general one (``SmoothedNLLLoss`` below shares it, with a rule of
    its own for the general case): with ``ignore_index`` and ``label_smoothing`` the
    loss of sample n is
    -Σ_c q[n, c] · log_probs[n, c] (see ``target_distribution``), and 'mean' divides by
    the number of samples not ignored (0 / 0 = nan when all are, as in PyTorch).
    ``F.nll_loss`` and ``F.cross_entropy`` use this op when no target is ignored and
    ``label_smoothing`` is 0, so that its rule is the one shown.
    """

    name = "nll_loss"
    rule = ("n = target.size or 1 if reduction == 'mean' else 1  (for 'mean': the targets "
            "that share g)\n"
            "share = g[:, None] if reduction == 'none' else g / n  (each sample's g; 'none': "
            "on a class axis)\n"
            "dlog_probs = 0.0 - one_hot(target, log_probs.shape) * share  (-share at each "
            "target, +0 elsewhere)")

    @staticmethod
    def forward(ctx, log_probs, target, reduction="mean", ignore_index=-100,
                label_smoothing=0.0):
        ctx.save(target=target)
        return _reduce_counted(sample_losses(log_probs, target, ignore_index, label_smoothing),
                               target, reduction, ignore_index)

    @staticmethod
    def jvp(ctx, tlog_probs, ttarget):
        """dloss = -Σ_c q[n, c] · tlog_probs[n, c], reduced (the loss is linear)"""
        target = ctx.load("target")
        reduction, ignore_index, label_smoothing = _options(ctx)
        return _reduce_counted(sample_losses(tlog_probs, target, ignore_index, label_smoothing),
                               target, reduction, ignore_index)


class SmoothedNLLLoss(NLLLoss):
    """nll_loss with ignored targets or label smoothing (PyTorch's ``ignore_index`` and
    cross_entropy's ``label_smoothing``): NLLLoss's forward, with the rule that covers
    them."""

    rule = ("n = count_nonzero(target != ignore_index) or 1 if reduction == 'mean' else 1"
            "  (for 'mean': the targets that count share g)\n"
            "share = g[:, None] if reduction == 'none' else g / n  (each sample's g; 'none': "
            "on a class axis)\n"
            "q = target_distribution(target, log_probs.shape, share.dtype, ignore_index, "
            "label_smoothing)  (the one-hot target mixed with uniform by label_smoothing, 0 "
            "for an ignored one)\n"
            "dlog_probs = 0.0 - q * share  (+0, never -0, off the target)")


class MSELoss(Function):
    """loss = (input - target)², reduced."""

    name = "mse_loss"
    rule = "dinput = 2 * (input - target) * g   (g per element: / n for 'mean')\ndtarget = -dinput"
    rule_gradient = staticmethod(each_elements_share)

    @staticmethod
    def forward(ctx, input, target, reduction="mean"):
        ctx.save(input=input, target=target)
        diff = input - target
        return reduce(diff * diff, reduction)

    @staticmethod
    def jvp(ctx, tx, ttarget):
        """dloss = 2 · (input - target) · (tx - ttarget), reduced"""
        tdiff = tangent_sum(tx, None if ttarget is None else -ttarget)
        diff = ctx.load("input") - ctx.load("target")
        return reduce(2 * diff * tdiff, ctx.params["reduction"])


class BCEWithLogits(Function):
    """loss = -(t·log σ(x) + (1 - t)·log(1 - σ(x))), computed stably from the logit x
    as max(x, 0) - x·t + log(1 + exp(-|x|)); reduced."""

    name = "binary_cross_entropy_with_logits"
    rule = ("s = sigmoid(input)   (1 / (1 + exp(-input)))\n"
            "dinput = (s - target) * g   (g per element: / n for 'mean')\n"
            "dtarget = -input * g")
    rule_gradient = staticmethod(each_elements_share)

    @staticmethod
    def forward(ctx, input, target, reduction="mean"):
        ctx.save(input=input, target=target)
        loss = np.maximum(input, 0) - input * target + np.log1p(np.exp(-np.abs(input)))
        return reduce(loss, reduction)

    @staticmethod
    def jvp(ctx, tx, ttarget):
        """dloss = (σ(input) - target) · tx - input · ttarget, reduced"""
        x, target = ctx.load("input"), ctx.load("target")
        sigmoid = 0.5 * (1 + np.tanh(0.5 * x))
        tloss = tangent_sum(None if tx is None else (sigmoid - target) * tx,
                            None if ttarget is None else -x * ttarget)
        return reduce(np.broadcast_to(tloss, np.broadcast_shapes(np.shape(x),
                                                                 np.shape(target))),
                      ctx.params["reduction"])
