"""Spot the error: a short buggy snippet (as text) the learner fixes; the check runs
the learner's fixed function against the engine and names what is still wrong.

S1 (overwrite instead of accumulate), S2 (gradients never reset), S3 (one expanded
formula instead of a graph), S4 (backward after the intermediates were freed), S5
(the upstream adjoint left out), S6 (two backward passes for two parameters). The
snippets of G10 and G12 are in ``backprop_bugs``.
"""

from __future__ import annotations

import numpy as np

import autograd_core as ag

from . import learner, snippets
from .context import Mistake
from .exercise import Exercise, register
from .feedback import check_gradient
from .problems import rng
from .report import Report
from .result import Result


def _pair(value, what: str, names=("first", "second")) -> tuple:
    """Unpack a function's result into two values, or raise LearnerCodeFailed."""
    if value is None:
        raise learner.LearnerCodeFailed(f"{what} returned None, so there is nothing to check "
                                        f"yet: make it return ({names[0]}, {names[1]}).",
                                        TypeError(), "none")
    if not isinstance(value, tuple | list) or len(value) != 2:
        got = type(value).__name__ if not isinstance(value, tuple | list) else \
            f"{len(value)} values"
        raise learner.LearnerCodeFailed(f"{what} should return two values ({names[0]}, "
                                        f"{names[1]}), but it returned {got}.", TypeError())
    return tuple(value)


# -- S1: overwrite instead of accumulate ------------------------------------------------------


def _s1_data():
    g = rng(21)
    return g.standard_normal(5), g.standard_normal(5)


def _s1_engine(x, y):
    """dL/dx, dL/dy for L = sum((x + y) * tanh(x)), and dL/dx split into its two paths."""
    xt, yt = ag.tensor(x, requires_grad=True), ag.tensor(y, requires_grad=True)
    ((xt + yt) * ag.tanh(xt)).sum().backward()
    paths = []
    for through_a in (True, False):
        xp = ag.tensor(x, requires_grad=True)
        a = xp + ag.tensor(y) if through_a else xp.detach() + ag.tensor(y)
        b = ag.tanh(xp.detach()) if through_a else ag.tanh(xp)
        (a * b).sum().backward()
        paths.append(xp.grad.numpy())
    return xt.grad.numpy(), yt.grad.numpy(), paths


def check_s1(fn=None) -> Result:
    """``S1(grads)``: your fixed ``grads(x, y) -> (x_bar, y_bar)``."""
    x, y = _s1_data()
    dx, dy, paths = _s1_engine(x, y)
    try:
        x_bar, y_bar = _pair(learner.call(fn, x.copy(), y.copy(), what="grads"), "grads",
                             ("x_bar", "y_bar"))
    except learner.LearnerCodeFailed as exc:
        return learner.failed(exc)
    alias = Mistake(dx, "Your y_bar equals x_bar: `x_bar = a_bar` made both names the same "
                    "array, so `x_bar += ...` changed y_bar too.", "Write x_bar = x_bar + ... "
                    "(a new array) instead of +=, or copy a_bar first.", "aliased")
    return Result.combine([
        check_gradient(x_bar, dx, name="x_bar", of="x",
                       paths={"the path through a = x + y": paths[0],
                              "the path through b = tanh(x)": paths[1]}),
        check_gradient(y_bar, dy, name="y_bar", of="y", mistakes=[alias]),
    ])


register(Exercise("S1", "spot_error", {"fixed": check_s1}, snippet=snippets.S1))


# -- S2: gradients never reset ---------------------------------------------------------------


def _s2_batches():
    g = rng(22)
    return [(g.standard_normal((4, 3)), g.standard_normal(4)) for _ in range(3)], \
        g.standard_normal(3)


def _batch_grad(w0, x, t) -> np.ndarray:
    w = ag.tensor(w0, requires_grad=True)
    ((ag.tensor(x) @ w - ag.tensor(t)) ** 2).mean().backward()
    return w.grad.numpy()


def check_s2(fn=None) -> Result:
    """``S2(gradient_per_batch)``: your fixed ``gradient_per_batch(w, batches) -> list``."""
    batches, w0 = _s2_batches()
    w = ag.tensor(w0, requires_grad=True)
    tensors = [(ag.tensor(x), ag.tensor(t)) for x, t in batches]
    try:
        grads = learner.call(fn, w, tensors, what="gradient_per_batch")
    except learner.LearnerCodeFailed as exc:
        return learner.failed(exc)
    if grads is None:
        return Result(False, "gradient_per_batch returned None, so there is nothing to check "
                             "yet: make it return a list with one gradient per batch.",
                      diagnosis="none")
    if not isinstance(grads, list | tuple) or len(grads) != len(batches):
        return Result(False, f"gradient_per_batch should return a list of {len(batches)} "
                             f"gradients, one per batch; it returned {type(grads).__name__}"
                             f"{f' of length {len(grads)}' if hasattr(grads, '__len__') else ''}.",
                      diagnosis="type")
    fresh = [_batch_grad(w0, x, t) for x, t in batches]
    results = []
    for k, (given, right) in enumerate(zip(grads, fresh)):
        summed = Mistake(sum(fresh[: k + 1]), f"Batch {k + 1}'s gradient still contains the "
                         f"gradients of the {k} batch(es) before it: .grad accumulates "
                         "(+=) across backward calls until you reset it.",
                         "Set w.grad = None (or w.grad.zero_()) before each backward.",
                         "not_reset")
        results.append(check_gradient(given, right, name=f"batch {k + 1}", of="w",
                                      mistakes=[summed] if k else []))
    return Result.combine(results)


def loss_curves(steps: int = 12, lr: float = 0.1) -> Report:
    """SGD on the same data with and without resetting .grad between steps."""
    batches, w0 = _s2_batches()
    x = np.concatenate([b[0] for b in batches])
    t = np.concatenate([b[1] for b in batches])
    curves = {}
    for reset in (True, False):
        w = ag.tensor(w0, requires_grad=True)
        losses = []
        for _ in range(steps):
            if reset:
                w.grad = None
            loss = ((ag.tensor(x) @ w - ag.tensor(t)) ** 2).mean()
            loss.backward()
            losses.append(loss.item())
            with ag.no_grad():
                w.sub_(w.grad * lr)
        curves["reset" if reset else "never reset"] = losses
    rows = [(i + 1, curves["reset"][i], curves["never reset"][i]) for i in range(steps)]
    return Report("SGD with and without resetting .grad", "Without a reset each step uses the "
                  "sum of all past gradients: the steps grow and the loss stops following the "
                  "gradient (it oscillates or diverges).", ("step", "loss (reset)",
                                                            "loss (never reset)"),
                  rows, data=curves)


register(Exercise(
    "S2", "spot_error", {"fixed": check_s2}, snippet=snippets.S2, experiment=loss_curves,
))


# -- S3: "I expanded the whole nested function into one formula" -------------------------------


def _logistic_grad(x: float, n: int) -> float:
    xt = ag.tensor(float(x), requires_grad=True)
    l = xt
    for _ in range(n):
        l = 4 * l * (1 - l)
    l.backward()
    return float(xt.grad.item())


def check_s3(fn=None) -> Result:
    """``S3(derivative)``: your ``derivative(x, n)`` = d l_n / dx for every depth n."""
    from .true_false_experiments import expression_swell

    results = []
    for n in (1, 2, 3, 6, 10):
        xs = [0.1, 0.3]
        try:
            got = [learner.call(fn, x, n, what="derivative") for x in xs]
        except learner.LearnerCodeFailed as exc:
            return learner.failed(exc)
        if all(v is None for v in got):
            return Result(False, "derivative returned None, so there is nothing to check yet: "
                                 "make it return d l_n / dx.", diagnosis="none")
        results.append(check_gradient(got, [_logistic_grad(x, n) for x in xs],
                                      name=f"n = {n}"))
    result = Result.combine(results)
    if result.ok:
        sizes = expression_swell(10)
        result.message += (f" At depth 10 the expanded derivative has {sizes.data['formula'][-1]}"
                           f" nodes; the recorded graph has {sizes.data['graph'][-1]} ops.")
    return result


register(Exercise("S3", "spot_error", {"fixed": check_s3}, snippet=snippets.S3))


# -- S4: backward after the intermediates were freed -------------------------------------------


def _s4_data():
    g = rng(24)
    return g.standard_normal((3, 4)), g.standard_normal(4)


def _s4_engine(x, w0):
    out = []
    for power in (1, 2):
        w = ag.tensor(w0, requires_grad=True)
        (ag.tanh(ag.tensor(x) @ w) ** power).sum().backward()
        out.append(w.grad.numpy())
    return out


def check_s4(fn=None) -> Result:
    """``S4(two_losses_grads)``: your fixed ``two_losses_grads(w, x) -> (g1, g2)``."""
    x, w0 = _s4_data()
    g1, g2 = _s4_engine(x, w0)
    try:
        got = _pair(learner.call(fn, ag.tensor(w0, requires_grad=True), ag.tensor(x),
                                 what="two_losses_grads"), "two_losses_grads", ("g1", "g2"))
    except learner.LearnerCodeFailed as exc:
        if "second time" in str(exc.error):
            return Result(False, "The second backward still fails: the first one freed the "
                                 "saved tensors (tanh's output) that the second needs.",
                          diagnosis="freed", hint="Recompute the forward pass before the second "
                                                  "backward (what checkpointing does), or keep "
                                                  "the graph with retain_graph=True.")
        return learner.failed(exc)
    both = Mistake(g1 + g2, "This is g1 + g2: .grad still held the first loss's gradient when "
                   "the second backward added to it.", "Reset w.grad = None in between.",
                   "not_reset")
    return Result.combine([check_gradient(got[0], g1, name="g1", of="w"),
                           check_gradient(got[1], g2, name="g2", of="w", mistakes=[both])])


register(Exercise("S4", "spot_error", {"fixed": check_s4}, snippet=snippets.S4))


# -- S5: the upstream adjoint left out ---------------------------------------------------------


def _s5_problem():
    g = rng(25)
    return {k: g.standard_normal(4) for k in ("w", "x", "b", "t")}


def check_s5(fn=None) -> Result:
    """``S5(grad_w)``: your fixed ``grad_w(w, x, b, t)`` for z = w*x + b, L = ½Σ(z - t)²."""
    p = _s5_problem()
    w = ag.tensor(p["w"], requires_grad=True)
    z = w * ag.tensor(p["x"]) + ag.tensor(p["b"])
    z.retain_grad()
    (0.5 * ((z - ag.tensor(p["t"])) ** 2).sum()).backward()
    try:
        got = learner.call(fn, *(p[k].copy() for k in ("w", "x", "b", "t")), what="grad_w")
    except learner.LearnerCodeFailed as exc:
        return learner.failed(exc)
    return check_gradient(got, w.grad, name="dL/dw", of="w", upstream=z.grad)


register(Exercise("S5", "spot_error", {"fixed": check_s5}, snippet=snippets.S5))


# -- S6: two backward passes -----------------------------------------------------------------


def _s6_data():
    g = rng(26)
    return g.standard_normal((4, 3)), g.standard_normal((3, 2)), g.standard_normal((5, 4))


def check_s6(fn=None) -> Result:
    """``S6(gradients)``: your fixed ``gradients(w1, w2, x) -> (g1, g2)`` with one pass."""
    w1_0, w2_0, x = _s6_data()
    w1, w2 = ag.tensor(w1_0, requires_grad=True), ag.tensor(w2_0, requires_grad=True)
    (ag.tanh(ag.tensor(x) @ w1) @ w2).sum().backward()
    right = (w1.grad.numpy(), w2.grad.numpy())
    calls = {"w1": 0, "w2": 0}
    t1, t2 = ag.tensor(w1_0, requires_grad=True), ag.tensor(w2_0, requires_grad=True)
    for name, t in (("w1", t1), ("w2", t2)):
        t.register_hook(lambda g, name=name: calls.__setitem__(name, calls[name] + 1))
    try:
        got = _pair(learner.call(fn, t1, t2, ag.tensor(x), what="gradients"), "gradients",
                    ("g1", "g2"))
    except learner.LearnerCodeFailed as exc:
        return learner.failed(exc)
    parts = [check_gradient(got[0], right[0], name="g1", of="w1"),
             check_gradient(got[1], right[1], name="g2", of="w2")]
    passes = max(calls.values())
    if passes == 1:
        parts.append(Result(True, "One backward pass filled both gradients.", name="passes"))
    else:
        parts.append(Result(False, f"Your function ran {passes} backward passes through the "
                                   "parameters; one pass already fills every leaf's .grad.",
                            name="passes", diagnosis="extra_passes",
                            hint="Call backward once, then read w1.grad and w2.grad."))
    return Result.combine(parts)


register(Exercise("S6", "spot_error", {"fixed": check_s6}, snippet=snippets.S6))
