"""Layer-level items: the shapes of a Linear layer's gradients (G8), why a broadcast bias
gets a summed gradient and how the engine sums it (G9), and batch norm's input gradient and
its dependence on the batch (G14)."""

from __future__ import annotations

import itertools
from collections.abc import Mapping

import numpy as np

import autograd_core as ag
from autograd_core.sweep.engine import backward_steps, broadcast_axes

from .. import gate
from ..feedback import words
from ..feedback.check import check_gradient
from ..feedback.context import Mistake
from ..feedback.result import Result
from ..lessons.report import Report
from .array_answers import Gradients, gradients
from .exercise import Exercise, register
from .function_cases import Derivation, deriving
from .parts import answers
from .predictions import Fact, check_predictions
from .problems import Problem, rng


def _functional():
    from autograd_core.nn import functional

    return functional


# -- G8: the shapes of a Linear layer's gradients, on inputs of any rank ------------------------


G8_KEYS = ("dx", "dW", "db", "db_axes")


def _g8_measured(x_shape: tuple, units: int) -> dict:
    """What the engine gives for ``nn.Linear(x_shape[-1], units)`` on an input of shape
    ``x_shape``: the shape of each gradient, and the output's axes its un-broadcast step
    summed the bias's gradient over."""
    x = ag.tensor(np.zeros(x_shape), requires_grad=True)
    w = ag.tensor(np.zeros((units, x_shape[-1])), requires_grad=True)
    b = ag.tensor(np.zeros(units), requires_grad=True)
    out = _functional().linear(x, w, b)
    axes: tuple = ()
    for step in backward_steps(out, np.ones(out.shape)):
        for sent in step.sent:
            if sent.target is b and sent.unbroadcast_from is not None:
                axes = broadcast_axes(tuple(sent.unbroadcast_from), b.shape)
    return {"dx": tuple(x.grad.shape), "dW": tuple(w.grad.shape), "db": tuple(b.grad.shape),
            "db_axes": tuple(axes)}


def _g8_case(x_shape: tuple, units: int) -> tuple[tuple, dict, dict]:
    return (tuple(x_shape), units), _g8_measured(tuple(x_shape), units), {
        "x_shape": tuple(x_shape), "units": units}


def _g8_drawn(seed: int, lead: int) -> tuple[tuple, dict, dict]:
    """A set-up with ``lead`` axes in front of the features, sizes drawn for the learner
    (all different, so that no two axes can be mistaken for each other)."""
    g = rng(seed)
    sizes = [int(v) for v in g.choice(np.arange(2, 20), size=lead + 1, replace=False)]
    return _g8_case((*sizes[:lead], sizes[lead]), int(g.integers(21, 40)))


def _shape_of(value):
    """A shape as a learner writes it ((3, 4), [3, 4], 3, a NumPy shape), or None."""
    if isinstance(value, bool | np.bool_):
        return None
    if isinstance(value, int | np.integer):
        return (int(value),)
    if isinstance(value, list | tuple) and len(value) <= 32 and all(
            isinstance(v, int | np.integer) and not isinstance(v, bool) for v in value):
        return tuple(int(v) for v in value)
    return None


def _axes_of(value, ndim: int):
    """Axes as a learner writes them (1, (0, 1), [0, 1], {0, 1}, -2), normalised to a sorted
    tuple of axes of an ``ndim``-axis output; None if unreadable, a str if out of range."""
    if isinstance(value, int | np.integer) and not isinstance(value, bool | np.bool_):
        value = (value,)
    if not isinstance(value, list | tuple | set | frozenset) or len(value) > 32 or not all(
            isinstance(v, int | np.integer) and not isinstance(v, bool) for v in value):
        return None
    bad = [int(v) for v in value if not -ndim <= v < ndim]
    if bad:
        return (f"db_axes names axis {bad[0]}, but the output of this set-up has {ndim} "
                f"ax{'is' if ndim == 1 else 'es'}")
    return tuple(sorted({int(v) % ndim for v in value}))


def _g8_wrong_shape(key: str, got: tuple, x_shape: tuple, units: int) -> tuple[str, str]:
    """(sentence, diagnosis) for a wrong shape of ``key``, named where it can be."""
    lead, features = x_shape[:-1], x_shape[-1]
    out = (*lead, units)
    if key == "dx" and got == out:
        return ("dx has the output's shape: a gradient has the shape of what it is the "
                "gradient of, the layer's input x.", "output_shape")
    if key == "dW" and got == (features, units):
        return ("dW looks transposed: the layer stores W as (out_features, in_features).",
                "transpose")
    if key == "dW" and lead and got[-2:] == (units, features) and len(got) > 2:
        return ("dW keeps an axis per position: W is one matrix shared by every position, "
                "so its gradient is one matrix.", "kept_batch_axis")
    if key == "db" and lead and got == out:
        return ("db has the output's shape: one bias vector is added at every position, and "
                "a value used at every position gets one gradient from all its uses.",
                "kept_batch_axis")
    if key == "db" and lead and got == lead:
        return ("db has one entry per position, not one per unit: that sums over the units.",
                "wrong_axis")
    if key == "db" and len(got) > 1 and got[-1] == units and all(s == 1 for s in got[:-1]):
        return ("db has the right entries, with extra size-1 axes: a gradient has exactly "
                "its parameter's shape.", "reshape")
    if key == "db" and lead and len(got) > 1 and got[-1] == units and set(got[:-1]) <= set(
            lead):
        return ("db keeps one of the axes in front of the features: the bias was copied "
                "along every one of them.", "kept_batch_axis")
    return (f"{key} is not the shape of the engine's gradient for this set-up: a gradient "
            "has exactly the shape of the tensor it is the gradient of.", "shape")


def _g8_wrong_axes(got: tuple, want: tuple, ndim: int) -> tuple[str, str]:
    if not want:
        return ("This input has no axis in front of the features: which copies of the bias "
                "would the engine sum?", "nothing_copied")
    if ndim - 1 in got:
        return ("db_axes includes the last axis, the units: db keeps one entry per unit, so "
                "that axis is never summed.", "wrong_axis")
    if not got:
        return ("db_axes is empty, but the bias was copied: the engine sums the gradients of "
                "its copies.", "no_sum")
    return (f"db_axes leaves out {len(set(want) - set(got))} of the axes the bias was copied "
            "along: the bias is added at every position, not only once per example.",
            "kept_batch_axis")


def _g8_compare(out, expected, ctx) -> Result:
    """Each shape and the summed axes against the engine's, the first wrong one named."""
    x_shape, units = ctx["x_shape"], ctx["units"]
    if not isinstance(out, Mapping):
        return Result(False, "linear_grad_shapes should return a dict with "
                             f"{words.listing(G8_KEYS)}; it returns {words.a_type(out)}.",
                      name="shapes", diagnosis="type")
    absent = [k for k in G8_KEYS if k not in out]
    if absent:
        return Result(False, f"The dict linear_grad_shapes returns has no "
                             f"{words.listing(absent)}: it needs {words.listing(G8_KEYS)}.",
                      name="shapes", diagnosis="type")
    held = [k for k in G8_KEYS if out[k] is None or out[k] is Ellipsis]
    if held:
        return Result(False, f"{words.listing(held)} {'is' if len(held) == 1 else 'are'} still "
                             "a placeholder: nothing to check yet.", name="shapes",
                      diagnosis="none")
    for key in ("dx", "dW", "db"):
        got = _shape_of(out[key])
        if got is None:
            return Result(False, f"{key} should be a shape, a tuple of sizes such as (3, 4); "
                                 f"it is {words.a_type(out[key])}.", name="shapes",
                          diagnosis="type")
        if got != expected[key]:
            sentence, code = _g8_wrong_shape(key, got, x_shape, units)
            return Result(False, sentence, name="shapes", diagnosis=code)
    ndim = len(x_shape)
    got = _axes_of(out["db_axes"], ndim)
    if got is None or isinstance(got, str):
        return Result(False, f"{got}." if got else "db_axes should be the output's axes the "
                             "engine sums db over, as a tuple of axis numbers such as (0,) "
                             f"or (); it is {words.a_type(out['db_axes'])}.", name="shapes",
                      diagnosis="type")
    if got != tuple(expected["db_axes"]):
        sentence, code = _g8_wrong_axes(got, tuple(expected["db_axes"]), ndim)
        return Result(False, sentence, name="shapes", diagnosis=code)
    return Result(True, "Every shape, and the axes db is summed over.", name="shapes")


_check_g8 = deriving(Derivation("linear_grad_shapes", (
    ("the lesson's Linear(32, 128) on a batch of 64", lambda: _g8_case((64, 32), 128)),
    ("a batch of sequences (B, T, D)", lambda: _g8_drawn(81, 2)),
    ("one example (D,) with no batch axis", lambda: _g8_drawn(82, 0)),
    ("an input with three axes in front of the features", lambda: _g8_drawn(83, 3))),
    _g8_compare, right="a gradient has its tensor's shape, and the bias's copies are summed "
    "along every axis it was copied along.", label="shapes", closed_form=False,
    probe="Does it hold for any number of axes in front of the features?"),
    """``G8(linear_grad_shapes)``: your ``linear_grad_shapes(x_shape, units)`` returns the
    shapes of dx, dW and db for ``nn.Linear(x_shape[-1], units)`` on an input of shape
    ``x_shape``, and ``db_axes``, the output's axes the engine sums db over; checked against
    the engine on the lesson's layer and on inputs with other numbers of axes.""")


register(Exercise("G8", "derivation", {"shapes": _check_g8}, level="J"))


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


def _g9_engine_sum_to(g: np.ndarray, shape: tuple) -> np.ndarray:
    """What the engine's un-broadcast makes of the upstream gradient ``g`` for an input of
    ``shape`` that an add broadcast up to ``g``'s shape: that input's ``.grad``."""
    b = ag.tensor(np.zeros(shape), requires_grad=True)
    (ag.tensor(np.zeros(g.shape)) + b).backward(g)
    return b.grad.numpy()


def _g9_case(g: np.ndarray, shape: tuple) -> tuple[tuple, np.ndarray, dict]:
    axes = broadcast_axes(g.shape, tuple(shape))
    averaged = (g.mean(axis=axes, keepdims=True).reshape(shape) if axes else None)
    mistakes = [] if averaged is None else [Mistake(
        averaged, "Your sum_to averages the copies' gradients: each copy of the input sends "
        "back its own, and one value used several times collects them all.", "", "averaged")]
    return (g, tuple(shape)), _g9_engine_sum_to(g, tuple(shape)), {
        "mistakes": mistakes, "g": g, "shape": tuple(shape)}


def _g9_problem_case() -> tuple[tuple, np.ndarray, dict]:
    p = g9_problem()
    return _g9_case(np.array(p.G), p.b.shape)


def _g9_drawn(seed: int, kind: str) -> tuple[tuple, np.ndarray, dict]:
    """g of a broadcast shape the check draws for the learner, and the input's shape."""
    gen = rng(seed)
    n, c, h, w = (int(v) for v in gen.choice(np.arange(2, 9), size=4, replace=False))
    if kind == "image":
        return _g9_case(gen.standard_normal((n, c, h, w)), (c, 1, 1))
    g = gen.standard_normal((n, h))
    shapes = {"row": (1, h), "column": (n, 1), "scalar": (), "same": (n, h)}
    return _g9_case(g, shapes[kind])


def _g9_other_axes(out, g: np.ndarray, shape: tuple) -> tuple | None:
    """The axes of ``g`` whose sum (keeping them or not) is ``out``, when that sum does not
    have ``shape``: the learner summed other axes than those broadcasting added."""
    out = np.asarray(out, dtype=np.float64)
    right = broadcast_axes(g.shape, tuple(shape))
    for k in range(1, g.ndim + 1):
        for axes in itertools.combinations(range(g.ndim), k):
            if axes == right:  # the right axes, the size-1 ones dropped: check_gradient says
                continue
            for keep in (True, False):
                summed = g.sum(axis=axes, keepdims=keep)
                if (summed.shape == out.shape != tuple(shape)
                        and np.allclose(summed, out, rtol=1e-9, atol=1e-12)):
                    return axes
    return None


def _g9_compare(out, expected, ctx) -> Result:
    """The engine's un-broadcast of g, with an answer of other axes summed named."""
    numbers = isinstance(out, np.ndarray | float | int | np.number) and not isinstance(
        out, bool | np.bool_)
    if numbers and np.shape(out) != np.shape(expected):
        axes = _g9_other_axes(out, ctx["g"], ctx["shape"])
        if axes is not None:
            return Result(False, f"Your sum_to sums axis {axes[0] if len(axes) == 1 else axes} "
                                 f"of g, shape {words.shape(ctx['g'].shape)}, where the input "
                                 f"has shape {words.shape(ctx['shape'])}: which of g's axes was "
                                 "that input copied along?", name="sum_to",
                          diagnosis="wrong_axis")
    return check_gradient(out, expected, name="sum_to", of="the input",
                          reference="the engine's un-broadcast gradient",
                          mistakes=ctx["mistakes"])


_check_g9_unbroadcast = deriving(Derivation("sum_to", (
    ("G9.problem()'s G, for b of shape (4,)", _g9_problem_case),
    ("a bias stored as (1, H)", lambda: _g9_drawn(91, "row")),
    ("an input of shape (N, 1)", lambda: _g9_drawn(92, "column")),
    ("a per-channel bias (C, 1, 1) on images (N, C, H, W)", lambda: _g9_drawn(93, "image")),
    ("a scalar input, shape ()", lambda: _g9_drawn(94, "scalar")),
    ("an input nothing was broadcast to", lambda: _g9_drawn(95, "same"))),
    _g9_compare, right="the engine's un-broadcast, for every shape.", closed_form=False,
    probe="Which axes does broadcasting add, and which does it stretch?"),
    """``G9.run("unbroadcast", sum_to)``: your ``sum_to(g, shape)`` sums an upstream gradient
    ``g`` back down to ``shape``, the shape of an input that an add broadcast up to g's shape,
    as the engine does after add's rule; checked on G9's G and on inputs of shapes (1, H),
    (N, 1), (C, 1, 1), () and one nothing was broadcast to.""")


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
