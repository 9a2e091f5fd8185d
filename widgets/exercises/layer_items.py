"""Layer-level items: the bias gradient's shape (G8), why a broadcast bias gets a summed
gradient (G9), and batch norm's input gradient and its dependence on the batch (G14)."""

from __future__ import annotations

import numpy as np

import autograd_core as ag
from autograd_core.sweep.engine import backward_steps

from .. import gate
from ..feedback import words
from ..feedback.context import Mistake
from ..feedback.result import Result
from ..lessons.report import Report
from .array_answers import Gradients, gradients
from .exercise import Exercise, register
from .parts import answers, one_answer
from .predictions import Fact, check_predictions
from .problems import Problem, rng


def _functional():
    from autograd_core.nn import functional

    return functional


# -- G8: shape of the bias gradient -----------------------------------------------------------


def _g8_engine_shape(batch: int = 64, units: int = 128) -> tuple:
    """Run a Linear layer on a batch and return the shape of the bias gradient."""
    g = rng(8)
    b = ag.tensor(np.zeros(units), requires_grad=True)
    x, w = ag.tensor(g.standard_normal((batch, 32))), ag.tensor(g.standard_normal((units, 32)))
    _functional().linear(x, w, b).mean().backward()
    return tuple(b.grad.shape)


@one_answer("shape")
def _check_g8(shape) -> Result:
    """``G8(shape=...)``: the shape of the bias gradient for a batch of 64, 128 units."""
    if shape is None:
        return Result(False, "Give your answer as G8(shape=(...)).", diagnosis="none")
    right = _g8_engine_shape()
    given = _shape_of(shape)
    if given is None:
        return Result(False, f"{words.short(shape)} is not a shape; write it as a tuple of "
                             "sizes, e.g. "
                             "(3, 4).", name="shape", diagnosis="type")
    if given == right:
        return Result(True, f"Right: {words.shape(right)}, one entry per unit; the batch axis is "
                            "summed away because every example uses the same bias.", name="shape")
    says = {
        (64, 128): ("That is the shape of the layer's output (one row per example). How "
                    "many examples use each bias, and what does a value used several times "
                    "collect?", "missing_broadcast_sum"),
        (1, 128): ("Right values, but a gradient has exactly its parameter's shape, with "
                   "no extra size-1 axis.", "reshape"),
        (64,): ("That sums over the units instead of over the batch.", "wrong_axis"),
        (128, 64): ("That is the transpose of the output's shape; the bias has one entry per "
                    "unit.", "shape"),
    }
    sentence, code = says.get(given, ("A parameter's gradient has exactly that parameter's "
                                      "shape: which shape does this layer's bias have?",
                                      "shape"))
    return Result(False, f"You said {words.shape(given)}. {sentence}", name="shape",
                  diagnosis=code)


def _shape_of(value):
    if isinstance(value, int | np.integer):
        return (int(value),)
    if isinstance(value, list | tuple) and all(isinstance(v, int | np.integer) for v in value):
        return tuple(int(v) for v in value)
    return None


# A shape found by trying the few likely ones is not the reasoning G8 asks for: past two
# wrong tries, a right answer counts as solved after seeing the solution.
register(Exercise("G8", "prediction", {"shape": _check_g8}, level="J", tries=2))


# -- G9: why a broadcast bias gets a summed gradient --------------------------------------------


def g9_problem() -> Problem:
    """z = x @ W.T + b for a batch of 5; G = dL/dz."""
    g = rng(9)
    return Problem("z = x @ W.T + b, with b (4,) broadcast over the batch of 5 rows; G = dL/dz "
                   "(5, 4). Find db = dL/db.", x=g.standard_normal((5, 3)),
                   W=g.standard_normal((4, 3)), b=g.standard_normal(4),
                   G=g.standard_normal((5, 4)))


def _g9_steps(p: Problem):
    b = ag.tensor(p.b, requires_grad=True)
    z = ag.tensor(p.x) @ ag.tensor(p.W).T + b  # an explicit add node shows the unbroadcast
    for step in backward_steps(z, p.G):
        for sent in step.sent:
            if sent.target is b:
                return sent, b
    raise AssertionError("the bias received no gradient")  # pragma: no cover


_check_g9 = gradients(Gradients(
    "G9", ("db",), g9_problem, lambda p: {"db": _g9_steps(p)[1].grad},
    lambda p, right: {"db": dict(of="b", batch_size=p.x.shape[0])}),
    """``G9(my_g9)``: your ``my_g9(p) -> {"db": ...}`` on ``G9.problem()``.""")


@answers("shape")
@one_answer("shape")
def _check_g9_unbroadcast(shape) -> Result:
    """``G9.run("unbroadcast", shape=...)``: the shape the engine sums b's gradient down from."""
    sent, _ = _g9_steps(g9_problem())
    fact = Fact(tuple(sent.unbroadcast_from), "The add rule hands b a gradient with the shape "
                f"of z, {words.shape(sent.unbroadcast_from)}; the engine sums it over the "
                "broadcast axis back to b's shape (4,). The stepper shows this step.", "shape",
                choices=(tuple(sent.unbroadcast_from), (4,)))  # z's shape or b's
    return check_predictions({"shape": shape} if shape is not None else {}, {"shape": fact})


register(Exercise(
    "G9", "derivation", {"db": _check_g9, "unbroadcast": _check_g9_unbroadcast}, level="M",
    problem=g9_problem,
))


# -- G14: batch norm ---------------------------------------------------------------------------


G14_BATCH = 6  # the exercise's batch; another batch size is another problem


def g14_problem(batch_size: int = G14_BATCH) -> Problem:
    """A batch of 6 with 3 features, γ, β and the upstream gradient G (``batch_size``:
    another batch of 2 to 32 draws another problem)."""
    if (not isinstance(batch_size, int) or isinstance(batch_size, bool)
            or not 2 <= batch_size <= 32):
        raise ValueError(f"G14 has batches of 2 to 32 samples, not {batch_size!r}.")
    g = rng(14) if batch_size == G14_BATCH else rng(1400 + batch_size)
    return Problem("y = batch_norm(x) in training mode: x̂ = (x - mean) / sqrt(var + eps) with "
                   "the batch's mean and (biased) variance per feature, y = gamma * x̂ + beta. "
                   "G = dL/dy. Find dx.", x=g.standard_normal((batch_size, 3)) * 2 + 1,
                   gamma=g.standard_normal(3), beta=g.standard_normal(3),
                   G=g.standard_normal((batch_size, 3)), eps=1e-5)


def _bn_dx(p: Problem, *, unbiased: bool = False) -> np.ndarray:
    """The engine's dx: functional.batch_norm, or batch norm built from engine ops with
    the unbiased variance (to recognise that mistake)."""
    x = ag.tensor(p.x, requires_grad=True)
    gamma, beta = ag.tensor(p.gamma), ag.tensor(p.beta)
    if unbiased:
        y = gamma * (x - x.mean(dim=0)) / ag.sqrt(x.var(dim=0, correction=1) + p.eps) + beta
    else:
        y = _functional().batch_norm(x, None, None, gamma, beta, training=True, eps=p.eps)
    y.backward(p.G)
    return x.grad.numpy()


def _bn_backward(x, gamma, g, eps, axis) -> np.ndarray:
    """Batch norm's dx in closed form, normalising over ``axis``."""
    inv = 1 / np.sqrt(x.var(axis=axis, keepdims=True) + eps)
    xhat = (x - x.mean(axis=axis, keepdims=True)) * inv
    d = g * gamma
    return inv * (d - d.mean(axis=axis, keepdims=True)
                  - xhat * (d * xhat).mean(axis=axis, keepdims=True))


def _bn_axis1(p: Problem) -> np.ndarray:
    return _bn_backward(p.x, p.gamma, p.G, p.eps, axis=1)


def _bn_dx_no_eps(p: Problem) -> np.ndarray:
    return _bn_backward(p.x, p.gamma, p.G, 0.0, axis=0)


def _batch_norm_dx_mistakes(p: Problem) -> list[Mistake]:
    """The wrong dx of training-mode batch norm a derivation tends to give, each named, for
    a problem with ``x`` (N, C), ``gamma``, ``beta``, the upstream gradient ``G`` and
    ``eps`` (G14's, and the batch-norm op a learner writes in lesson 08)."""
    inv = 1 / np.sqrt(p.x.var(axis=0) + p.eps)
    xhat = (p.x - p.x.mean(axis=0)) * inv
    dxhat = p.G * p.gamma
    return [
        Mistake(inv * (dxhat - dxhat.mean(0)), "Your dx has the path through the mean but not "
                "the one through the variance: the variance also depends on every input.",
                "Follow the path from the variance back to x: which term does it add?",
                "batchnorm_no_variance"),
        Mistake(inv * (dxhat - xhat * (dxhat * xhat).mean(0)), "Your dx has the path through "
                "the variance but not the one through the mean.", "Follow the path from the "
                "mean back to x: which term does it add?", "batchnorm_no_mean"),
        Mistake(inv * (p.G - p.G.mean(0) - xhat * (p.G * xhat).mean(0)), "Your dx forgets γ: "
                "the gradient reaching x̂ passes through the scale γ first.",
                "Look at the first step back, from the output to x̂: what multiplies x̂ in the "
                "forward pass?", "missing_gamma"),
        Mistake(_bn_dx(p, unbiased=True), "Your dx normalises with the unbiased variance "
                "(divided by N - 1); batch norm uses the biased one (divided by N).",
                "Compare the divisor of your variance with the forward pass's.",
                "unbiased_variance"),
        Mistake(inv * (dxhat - dxhat.sum(0) - xhat * (dxhat * xhat).sum(0)), "Your dx uses sums "
                "over the batch where batch norm's mean and variance take means: the terms of "
                "the mean and variance paths are N times too large.", "μ and σ² are means "
                "over the batch: each carries a 1/N.", "batchnorm_sums"),
        Mistake(inv * (dxhat - dxhat.mean(0) + xhat * (dxhat * xhat).mean(0)), "Your dx has "
                "the wrong sign on the variance path's term: a larger σ shrinks x̂, so that "
                "term pulls the other way from the direct path.", "Differentiate 1/σ with "
                "respect to σ²: it has a minus sign.", "batchnorm_variance_sign"),
        Mistake(_bn_axis1(p), "Your dx takes the means over the wrong axis (over the features "
                "of each sample, axis 1); batch norm normalises each feature over the batch "
                "(axis 0).", "Every mean in the formula runs over the batch axis.",
                "batchnorm_wrong_axis"),
        Mistake(_bn_dx_no_eps(p), "Your dx leaves out ε: batch norm divides by √(σ² + ε), "
                "and the check compares to rounding error, so even this small term shows.",
                "Compare the denominator of your x̂ with the forward pass's, term by term.",
                "missing_eps"),
    ]


def _g14_engine(p: Problem) -> dict:
    return {"dx": _bn_dx(p)}


def _g14_context(p: Problem, right: dict) -> dict:
    naive = p.G * p.gamma / np.sqrt(p.x.var(axis=0) + p.eps)  # through x̂ only
    return {"dx": dict(of="x", naive=naive, batch_size=p.x.shape[0],
                       mistakes=_batch_norm_dx_mistakes(p))}


_check_g14 = gradients(Gradients(
    "G14", ("dx",), g14_problem, _g14_engine, _g14_context, options={"batch_size": G14_BATCH}),
    """``G14(my_g14)``: your ``my_g14(p) -> {"dx": ...}`` on ``G14.problem()``;
    ``batch_size=`` runs it on ``G14.problem(batch_size)``.""")


@gate.answers("G14")
def batch_dependence() -> Report:
    """One sample, two different sets of batch-mates: its input gradient in training and in
    evaluation mode (running statistics)."""
    F = _functional()
    g = rng(140)
    sample = g.standard_normal((1, 3))
    mates = [g.standard_normal((5, 3)), g.standard_normal((5, 3)) * 3 + 1]
    weights = g.standard_normal((6, 3))  # loss = sum(y * weights): a fixed upstream gradient
    rows, grads = [], {}
    for training in (True, False):
        row_grads = []
        for others in mates:
            x = ag.tensor(np.concatenate([sample, others]), requires_grad=True)
            mean, var = ag.zeros(3), ag.ones(3)
            y = F.batch_norm(x, mean, var, training=training)
            (y * ag.tensor(weights)).sum().backward()
            row_grads.append(x.grad.numpy()[0])
        diff = float(np.max(np.abs(row_grads[0] - row_grads[1])))
        mode = "training" if training else "evaluation"
        grads[mode] = row_grads
        rows.append((mode, diff, diff > 1e-9))
    return Report("BatchNorm: the same sample with two different sets of batch-mates",
                  "In training mode the sample's gradient changes with its batch-mates (they "
                  "set the mean and variance); in evaluation mode (running statistics, "
                  "constants) it does not.",
                  ("mode", "max |dx₀(batch A) − dx₀(batch B)|", "depends on the batch"),
                  rows, data=grads, supports=rows[0][2] and not rows[1][2])


@answers("training", "evaluation")
def _check_g14_batch(**predictions) -> Result:
    """``G14.run("batch", training=..., evaluation=...)``: does the gradient depend on the batch?"""
    with gate.quietly():  # G14's own check
        report = batch_dependence()
    facts = {mode: Fact(depends, f"Measured: {report.summary}") for mode, _, depends in
             report.rows}
    return check_predictions(predictions, facts)


register(Exercise(
    "G14", "derivation", {"dx": _check_g14, "batch": _check_g14_batch}, level="S",
    problem=g14_problem, experiment=batch_dependence,
))
