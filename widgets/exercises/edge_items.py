"""Edge cases E1–E6: unused nodes, literals, sigmoid at 0, flat points, weight tying,
detach. Each check runs the engine on the case and compares the learner's answer."""

from __future__ import annotations

import numpy as np

import autograd_core as ag
from autograd_core.tools.graph import capture

from ..feedback import words
from ..feedback.check import check_gradient
from ..feedback.context import Mistake
from ..feedback.result import Result
from . import engine_watch
from .exercise import Exercise, register
from .parts import answers, check_named, one_answer
from .predictions import Fact, check_fact, predicting
from .problems import Problem, problem_for, rng

# -- E1: a node that never reaches the output ------------------------------------------------

E1_LEAVES = ("a", "b", "c", "d", "e")


def _e1_program(leaves: dict | None = None) -> ag.Tensor:
    """E1's loss, from its five leaves (fresh ones if none are given)."""
    a, b, c, d, e = (leaves or {k: ag.tensor([1.0, -1.0], requires_grad=True)
                              for k in E1_LEAVES}).values()
    ag.tanh(b) * e  # computed, never used by the loss
    return (a * 2).sum() + (c * 0.0).sum() + ag.relu(d).sum()


def _e1_facts() -> dict[str, Fact]:
    """What the engine shows, one fact per prediction of ``E1(grad_none=..., grad_zero=...)``:
    which of the five leaves of the question keep ``.grad`` None after backward, and which
    hold an array of zeros."""
    leaves = {k: ag.tensor(v, requires_grad=True) for k, v in zip(E1_LEAVES, (
        [1.0, 2.0], [3.0, -1.0], [0.5, 0.5], [-1.0, -2.0], [2.0, 1.0]))}
    _e1_program(leaves).backward()
    none = {k for k, t in leaves.items() if t.grad is None}
    zeros = {k for k, t in leaves.items() if t.grad is not None and not np.any(t.grad.numpy())}
    return {
        "grad_none": Fact(none, "The sweep starts at the loss and follows recorded edges "
                          "backwards, so it never reaches a leaf that feeds only ops the loss "
                          "does not use: nothing is written to its .grad, which stays None.",
                          "set", context={
                              "names": E1_LEAVES,
                              "extra": "{n} of the leaves you named {is} reached by the sweep",
                              "missing": "{n} of the leaves the sweep never reaches {is} "
                                         "missing"}),
        "grad_zero": Fact(zeros, "A leaf on a path to the loss is visited and gets an array, "
                          "even when every factor along the path makes it 0 (a product with "
                          "0, relu on negative inputs).", "set", context={
                              "names": E1_LEAVES,
                              "extra": "{n} of the leaves you named {is} not given an array "
                                       "of zeros",
                              "missing": "{n} of the leaves that end with all zeros {is} "
                                         "missing"}),
    }


register(Exercise("E1", "prediction", {"predict": predicting(_e1_facts)}))
engine_watch.asks_about("E1", _e1_program)  # its sweep fills the leaves' .grad: the answer


# -- E2: a hard-coded literal ------------------------------------------------------------------


E2_LITERAL = 2  # the question's literal; another literal is another problem (a lesson's demo)


def e2_problem(literal: int = E2_LITERAL) -> Problem:
    """z = 2·w·x + b (``literal``: another whole number from 3 to 9 draws another problem, so
    that a lesson can show a mistake without saying anything about the learner's own)."""
    if (not isinstance(literal, int) or isinstance(literal, bool)
            or not (literal == E2_LITERAL or 3 <= literal <= 9)):
        raise ValueError(f"E2 has the literals 2 to 9, not {words.short(literal, 40)}.")
    g = rng(62) if literal == E2_LITERAL else rng(620 + literal)
    return Problem(f"z = {literal} * w * x + b with loss = z.sum(). Find dw; is the {literal} a "
                   "graph node with a gradient?", w=g.standard_normal(3), x=g.standard_normal(3),
                   b=g.standard_normal(3))


@answers("dw", "literal_gets_gradient", "dk")
def _check_e2(*, literal: int = E2_LITERAL, **answers) -> Result:
    """``E2(dw=..., literal_gets_gradient=..., dk=...)`` for ``E2.problem()``: dk is what
    ``k.grad`` would hold if the literal were a leaf ``k`` that requires grad. ``literal=``
    for answers to ``E2.problem(literal)``."""
    p = problem_for("E2", e2_problem, literal=literal)
    if isinstance(p, Result):
        return p

    def run(given):
        w = ag.tensor(p.w, requires_grad=True)
        z = literal * w * ag.tensor(p.x) + ag.tensor(p.b, requires_grad=True)
        graph = capture(z.sum())
        z.sum().backward()
        constants = [t for t in graph.tensors if t.kind == "constant" and t.label is not None]
        out = []
        if "dw" in given:
            out.append(check_gradient(given["dw"], w.grad, name="dw", of="w", mistakes=[
                Mistake(p.x, f"You dropped the {literal}: a literal is a constant factor, and a "
                        "constant factor stays in the gradient.",
                        f"Differentiate {literal}·w_i·x_i with respect to w_i as you would "
                        "c·w_i·x_i for any constant c.", "missing_constant")]))
        if "literal_gets_gradient" in given:
            labels = ", ".join(t.label for t in constants) or "none"
            fact = Fact(not constants, "The literal enters the graph as a constant input "
                        f"(captured constants: {labels}), not a leaf that requires grad: no "
                        "gradient is computed for it.")
            out.append(check_fact("literal_gets_gradient", given["literal_gets_gradient"], fact))
        if "dk" in given:
            k = ag.tensor(float(literal), requires_grad=True)  # the literal made a leaf
            (k * ag.tensor(p.w) * ag.tensor(p.x) + ag.tensor(p.b)).sum().backward()
            wx = p.w * p.x
            out.append(check_gradient(given["dk"], k.grad, name="dk", of="k", mistakes=[
                Mistake(literal * wx.sum(), f"You kept the {literal} as a factor: k takes its "
                        f"place, so z_i moves by w_i·x_i per unit of k, not {literal}·w_i·x_i.",
                        "", "kept_literal"),
                Mistake(p.x.sum(), "You left w out: z_i = k·w_i·x_i moves by w_i·x_i per unit "
                        "of k.", "", "dropped_w"),
                Mistake(wx.sum() + p.b.sum(), "You added b: b does not move when k moves.", "",
                        "added_b")]))
        return out

    return check_named(answers, ("dw", "literal_gets_gradient", "dk"), run)


register(Exercise("E2", "derivation", {"gradients": _check_e2}, problem=e2_problem))


# -- E3: where sigmoid is steepest, and how fast its slope falls away -----------------------------

E3_FAR = 20.0  # the fall-off is measured from z = 20 to z = 21, deep in the tail


def _sigmoid_slopes(z) -> np.ndarray:
    """σ'(z) entry by entry, from the engine's own backward through sigmoid."""
    t = ag.tensor(np.asarray(z, dtype=np.float64), requires_grad=True)
    ag.sigmoid(t).sum().backward()
    return t.grad.numpy()


def _e3_engine() -> dict[str, float]:
    """Where σ' is largest on a fine grid from -10 to 10 (step 0.01), its value there, and
    how many times smaller it gets from z = 20 to z = 21."""
    grid = np.arange(-1000, 1001) / 100
    slopes = _sigmoid_slopes(grid)
    tail = _sigmoid_slopes([E3_FAR, E3_FAR + 1])
    return {"peak_z": float(grid[np.argmax(slopes)]), "peak_slope": float(slopes.max()),
            "falloff": float(tail[0] / tail[1])}


@answers("peak_z", "peak_slope", "falloff")
def _check_e3(**answers) -> Result:
    """``E3(peak_z=..., peak_slope=..., falloff=...)``: where sigmoid's slope is largest,
    how large it is there, and by what factor it shrinks per unit of z far out in the tail
    (from z = 20 to z = 21)."""
    def run(given):
        want = _e3_engine()
        mistakes = {
            "peak_z": [],
            "peak_slope": [
                Mistake(0.5, "That is σ(0), the sigmoid's value there, not its slope.", "",
                        "value"),
                Mistake(1.0, "That is tanh's slope at its peak; sigmoid rises from 0 to 1 "
                        "over a wider stretch of z, so it is less steep.", "", "tanh")],
            "falloff": [
                Mistake(1 / want["falloff"], "That is how much the slope grows per unit step "
                        "toward 0; the question asks how many times smaller it gets per unit "
                        "step away from 0.", "", "inverse")],
        }
        what = {"peak_z": "the z where the engine's sigmoid is steepest",
                "peak_slope": "the engine's slope of sigmoid there",
                "falloff": "the engine's fall-off factor of sigmoid's slope"}
        return [check_gradient(given[k], want[k], name=k, reference=what[k],
                               mistakes=mistakes[k])
                for k in ("peak_z", "peak_slope", "falloff") if k in given]

    return check_named(answers, ("peak_z", "peak_slope", "falloff"), run)


register(Exercise("E3", "derivation", {"slope": _check_e3}))


# -- E4: exactly flat ------------------------------------------------------------------------


def e4_problem() -> Problem:
    g = rng(64)
    return Problem("L = sum((a * w - t)**2), entry by entry. Find the point w_flat where "
                   "backward returns an all-zero gradient.",
                   a=np.array([2.0, -0.5, 4.0, 1.5]), t=g.standard_normal(4))


@one_answer("w_flat")
def _check_e4(w_flat) -> Result:
    """``E4(w_flat=...)`` for ``E4.problem()``: the engine's gradient at your point must be
    zero in every entry."""
    p = e4_problem()
    flat = p.t / p.a  # by hand: 2·a_i·(a_i·w_i − t_i) = 0 where a_i·w_i = t_i
    mistakes = [
        Mistake(p.t, "At w = t the loss is not flat: each term is (a_i·w_i − t_i)², so "
                "what must vanish is a_i·w_i − t_i, not w_i − t_i.", "", "ignored_scale"),
        Mistake(p.a * p.t, "You multiplied t by a: solve a_i·w_i − t_i = 0 for w_i.", "",
                "multiplied")]
    checked = check_gradient(w_flat, flat, name="w_flat", reference="the flat point",
                             mistakes=mistakes)
    if checked.ok:  # the engine confirms: backward returns zero there
        w = ag.tensor(np.asarray(w_flat, dtype=np.float64), requires_grad=True)
        ((ag.tensor(p.a) * w - ag.tensor(p.t)) ** 2).sum().backward()
        if np.any(np.abs(w.grad.numpy()) > 1e-9):
            return Result(False, "w_flat is close, but the engine's gradient there is not "
                                 "zero in every entry: compute it exactly, not rounded.",
                          name="w_flat", diagnosis="not_flat")
    return checked


register(Exercise("E4", "derivation", {"w_flat": _check_e4}, problem=e4_problem))


# -- E5: a weight shared by two layers ------------------------------------------------------


def e5_problem(other: bool = False) -> Problem:
    """The question's data, or (``other=True``) other data of other shapes: a lesson
    demonstrates a mistake on it, so that its feedback says nothing about the learner's own."""
    g = rng(165 if other else 65)
    n, d, k = (2, 3, 3) if other else (3, 4, 2)
    x, w, t = g.standard_normal((n, d)), g.standard_normal((d, k)), g.standard_normal((n, d))
    h = np.tanh(x @ w)
    return Problem("Weight tying: h = tanh(x @ W) and out = h @ W.T use the same W; "
                   "loss = sum(out * t). Find dW.", x=x, W=w, t=t, h=h)


def _check_e5(*args, other: bool = False, **answers) -> Result:
    """``E5(dW=...)`` for ``E5.problem()``; ``E5(dW=..., other=True)`` for
    ``E5.problem(other=True)``."""
    return one_answer("dW")(lambda dW: _check_e5_on(dW, other))(*args, **answers)  # noqa: N803


def _check_e5_on(dW, other: bool) -> Result:  # noqa: N803 - the learner's name for it
    p = e5_problem(bool(other))

    def grad(site=None):
        w = ag.tensor(p.W, requires_grad=True)
        first = w if site in (None, 1) else w.detach()
        second = w if site in (None, 2) else w.detach()
        out = ag.tanh(ag.tensor(p.x) @ first) @ second.T
        (out * ag.tensor(p.t)).sum().backward()
        return w.grad.numpy()

    return check_gradient(dW, grad(), name="dW", of="W",
                          paths={"the first layer (x @ W)": grad(1),
                                 "the second layer (h @ W.T)": grad(2)})


register(Exercise("E5", "derivation", {"dW": _check_e5}, problem=e5_problem))


# -- E6: detach ------------------------------------------------------------------------------


def e6_problem(other: bool = False) -> Problem:
    """The question's data, or (``other=True``) other data, for a lesson's demonstration."""
    return Problem("loss = sum(x.detach() * tanh(x) + x * x.detach()**2). Find dx; does "
                   "detach change the loss's value?",
                   x=rng(166 if other else 66).standard_normal(3 if other else 4))


def _e6_loss(x, cut: bool = True):
    """E6's loss; ``cut=False``: the same formula with nothing detached."""
    d = x.detach() if cut else x
    return (d * ag.tanh(x) + x * d ** 2).sum()


@answers("dx", "value_changes")
def _check_e6(**answers) -> Result:
    """``E6(dx=..., value_changes=...)`` for ``E6.problem()``; with ``other=True`` for
    ``E6.problem(other=True)``."""
    p = e6_problem(bool(answers.pop("other", False)))

    def run(given):
        x = ag.tensor(p.x, requires_grad=True)
        loss = _e6_loss(x)
        loss.backward()
        out = []
        if "dx" in given:
            whole = ag.tensor(p.x, requires_grad=True)
            _e6_loss(whole, cut=False).backward()
            th = np.tanh(p.x)
            out.append(check_gradient(given["dx"], x.grad, name="dx", of="x", mistakes=[
                Mistake(whole.grad.numpy(), "You differentiated as if nothing were detached: "
                        "you let the gradient flow through the detached copies too. detach() "
                        "cuts those paths.", "", "through_detach"),
                Mistake(p.x * (1 - th ** 2), "You kept only the first term: x also reaches "
                        "the loss, undetached, in the second.", "", "first_term_only"),
                Mistake(p.x ** 2, "You kept only the second term: x also reaches the loss, "
                        "undetached, inside the tanh of the first.", "", "second_term_only")]))
        if "value_changes" in given:
            same = bool(np.allclose(loss.numpy(), _e6_loss(ag.tensor(p.x), cut=False).numpy(),
                                    rtol=0, atol=0))
            out.append(check_fact("value_changes", given["value_changes"],
                               Fact(not same, "detach() shares the values; it only cuts the "
                                              "graph.")))
        return out

    return check_named(answers, ("dx", "value_changes"), run)


register(Exercise("E6", "derivation", {"gradients": _check_e6}, problem=e6_problem))
