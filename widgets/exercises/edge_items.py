"""Edge cases E1–E6: unused nodes, literals, sigmoid at 0, flat points, weight tying,
detach. Each check runs the engine on the case and compares the learner's answer: E2's,
E5's and E6's gradients are a function of the problem (the kind :class:`.Gradients`), E3's
and E4's a function of their inputs (:class:`.Derivation`), and the yes/no parts of E2 and
E6 are predictions, checks of their own (``E2.run("literal", ...)``)."""

from __future__ import annotations

import numpy as np

import autograd_core as ag
from autograd_core.tools.graph import capture

from ..feedback import words
from ..feedback.check import check_gradient
from ..feedback.context import Mistake
from ..feedback.result import Result
from . import engine_watch
from .array_answers import Gradients, gradients
from .exercise import Exercise, register
from .function_cases import MACHINE_AGREEMENT, Derivation, deriving, not_closed_form
from .predictions import Fact, predicting
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


def _with_a_yes_no_elsewhere(check, item: str, check_name: str, part: str):
    """``check`` (the item's Gradients check), answering the yes/no ``part`` passed to it
    (the old form, ``E2(literal_gets_gradient=...)``) with the sentence naming the check it
    belongs to, not as a misspelled option; anything else goes to ``check`` unchanged."""

    def checked(fn=None, **given) -> Result:
        if part in given and not set(given) & set(check.parts):
            return Result(False, f"{part} has a check of its own: "
                                 f'{item}.run("{check_name}", {part}=...). {item}(...) takes '
                                 f"your gradients as one function: "
                                 f"{check.gradients.written()}.", diagnosis="call")
        return check(fn, **given)

    for name in ("__signature__", "__doc__", "__name__", "__qualname__", "parts", "gradients"):
        setattr(checked, name, getattr(check, name))
    return checked


E2_LITERAL = 2  # the question's literal; another literal is another problem (a lesson's demo)


def e2_problem(literal: int = E2_LITERAL) -> Problem:
    """z = 2·w·x + b (``literal``: another whole number from 3 to 9 draws another problem, so
    that a lesson can show a mistake without saying anything about the learner's own). The
    problem holds its literal too (``p.literal``)."""
    if (not isinstance(literal, int) or isinstance(literal, bool)
            or not (literal == E2_LITERAL or 3 <= literal <= 9)):
        raise ValueError(f"E2 has the literals 2 to 9, not {words.short(literal, 40)}.")
    g = rng(62) if literal == E2_LITERAL else rng(620 + literal)
    return Problem(f"z = {literal} * w * x + b with loss = z.sum(). Find dw, and dk: what "
                   f"k.grad would hold if a leaf k took the {literal}'s place. Is the "
                   f"{literal} a graph node with a gradient?", w=g.standard_normal(3),
                   x=g.standard_normal(3), b=g.standard_normal(3), literal=literal)


def _e2_engine(p: Problem) -> dict:
    """The engine's dw for z = literal·w·x + b, and its dk with the literal made a leaf k."""
    w = ag.tensor(p.w, requires_grad=True)
    (p.literal * w * ag.tensor(p.x) + ag.tensor(p.b, requires_grad=True)).sum().backward()
    k = ag.tensor(float(p.literal), requires_grad=True)  # the literal made a leaf
    (k * ag.tensor(p.w) * ag.tensor(p.x) + ag.tensor(p.b)).sum().backward()
    return {"dw": w.grad, "dk": k.grad}


def _e2_context(p: Problem, right: dict) -> dict:
    n, wx = p.literal, p.w * p.x
    return {
        "dw": dict(of="w", mistakes=[
            Mistake(p.x, f"You dropped the {n}: a literal is a constant factor, and a "
                    "constant factor stays in the gradient.", f"Differentiate {n}·w_i·x_i "
                    "with respect to w_i as you would c·w_i·x_i for any constant c.",
                    "missing_constant")]),
        "dk": dict(of="k", mistakes=[
            Mistake(n * wx.sum(), f"You kept the {n} as a factor: k takes its place, so z_i "
                    f"moves by w_i·x_i per unit of k, not {n}·w_i·x_i.", "", "kept_literal"),
            Mistake(p.x.sum(), "You left w out: z_i = k·w_i·x_i moves by w_i·x_i per unit "
                    "of k.", "", "dropped_w"),
            Mistake(wx.sum() + p.b.sum(), "You added b: b does not move when k moves.", "",
                    "added_b")]),
    }


_check_e2 = gradients(Gradients(
    "E2", ("dw", "dk"), e2_problem, _e2_engine, _e2_context,
    options={"literal": E2_LITERAL}),
    """``E2(my_e2)``: your ``my_e2(p) -> {"dw": ..., "dk": ...}`` on ``E2.problem()``, dk
    being what ``k.grad`` would hold if the literal were a leaf ``k`` that requires grad;
    ``literal=`` runs it on ``E2.problem(literal)``.""")


def _e2_facts(literal: int = E2_LITERAL) -> dict[str, Fact] | Result:
    """``E2.run("literal", literal_gets_gradient=...)``: whether the literal of
    ``E2.problem()`` is a graph node that gets a gradient (read from the captured graph)."""
    p = problem_for("E2", e2_problem, literal=literal)
    if isinstance(p, Result):
        return p
    w = ag.tensor(p.w, requires_grad=True)
    z = p.literal * w * ag.tensor(p.x) + ag.tensor(p.b, requires_grad=True)
    constants = [t for t in capture(z.sum()).tensors
                 if t.kind == "constant" and t.label is not None]
    labels = ", ".join(t.label for t in constants) or "none"
    return {"literal_gets_gradient": Fact(
        not constants, "The literal enters the graph as a constant input (captured "
        f"constants: {labels}), not a leaf that requires grad: no gradient is computed "
        "for it.")}


register(Exercise("E2", "derivation", {"gradients": _with_a_yes_no_elsewhere(
                                           _check_e2, "E2", "literal", "literal_gets_gradient"),
                                       "literal": predicting(_e2_facts, ("literal",))},
                  problem=e2_problem))


# -- E3: sigmoid's slope on a log scale, finite over the whole range ----------------------------

E3_REACH = 800.0  # the check's points run to |z| = 800, past where e^|z| overflows (~709)


def _e3_points(seed: int, low: float, high: float, n: int) -> np.ndarray:
    """n points drawn for this learner with |z| from low to high, both signs, sorted (the
    centre's include 0 and its ends, where finite differences are least exact; the far
    tails' the ends ±E3_REACH)."""
    g = rng(seed)
    z = np.sign(g.uniform(-1, 1, n)) * g.uniform(low, high, n)
    extra = [-high, 0.0, high] if low == 0 else ([-high, high] if high == E3_REACH else [])
    return np.sort(np.concatenate([z, extra]))


def _e3_mistakes(z: np.ndarray) -> list[Mistake]:
    """log σ'(z) with one thing wrong, each named in the learner's terms."""
    log_sigma = -np.logaddexp(0.0, -z)                  # log σ(z)
    right = log_sigma - np.logaddexp(0.0, z)            # log σ(z) + log σ(−z)
    a = np.abs(z)
    return [
        Mistake(log_sigma, "Your log_slope is the log of σ(z) itself, not of its slope: the "
                "derivative of σ has a second factor besides σ.", "Differentiate "
                "(1 + e^(−z))^(−1) with the chain rule before taking any log.", "sigma"),
        Mistake(np.exp(right), "Your log_slope returns the slope σ'(z) itself; the item asks "
                "for its natural log, which stays a moderate number where σ' underflows.", "",
                "not_log"),
        Mistake(-right, "Your values have the wrong sign everywhere: that is the log of "
                "1/σ'(z), the slope turned upside down (a slope below 1 has a negative log).",
                "", "inverted"),
        Mistake(-a + 2 * np.log1p(np.exp(-a)), "A sign slip: your formula adds the log of "
                "σ''s denominator where log(a / b) = log a − log b subtracts it.", "",
                "sign"),
        Mistake(-a, "Right far from 0, wrong near it: you kept only how σ' behaves in the "
                "tail; near 0 its denominator is not close to 1.", "Keep every factor of "
                "σ', then simplify only what is exact.", "tail_only"),
        Mistake(-a - np.log1p(np.exp(-a)), "Your formula keeps one of the two factors of "
                "σ' and drops the other: near 0 neither factor is close to 1.", "",
                "one_factor"),
    ]


def _e3_case(z: np.ndarray, centre: bool = False) -> tuple[tuple, np.ndarray, dict]:
    """(z,), log σ'(z) = log σ(z) + log σ(−z) with each log σ from np.logaddexp (finite
    for every z), and what the comparison needs. The engine's own σ' agrees near 0; past
    |z| ≈ 37 it is 0, its σ rounded to 0 or 1."""
    expected = -np.logaddexp(0.0, -z) - np.logaddexp(0.0, z)
    inside = np.abs(z) <= 10  # its σ is 0.5·(1 + tanh(z/2)): exact to ~1e-12 there
    if inside.any():
        t = ag.tensor(z[inside], requires_grad=True)
        ag.sigmoid(t).sum().backward()
        assert np.allclose(np.log(t.grad.numpy()), expected[inside], rtol=1e-9, atol=0)
    return (z,), expected, {"z": z, "centre": centre, "mistakes": _e3_mistakes(z)}


def _e3_where(z: np.ndarray) -> str:
    """Where a set of points lies, in the learner's terms: "z beyond 37" and the like."""
    sides = []
    if (z > 0).any():
        sides.append(f"z above {np.floor(z[z > 0].min()):.0f}")
    if (z < 0).any():
        sides.append(f"z below {np.ceil(z[z < 0].max()):.0f}")
    return " and ".join(sides) or "z = 0"


def _e3_compare(out, expected, ctx) -> Result:
    """log σ' where it is finite, a sentence for a formula that leaves float64's range in a
    tail or loses its digits there, the known slips named."""
    z = ctx["z"]
    try:
        values = np.asarray(out, dtype=np.float64)
    except (TypeError, ValueError):
        values = None
    if values is not None and values.shape == z.shape and not np.all(np.isfinite(values)):
        bad = ~np.isfinite(values)
        kinds = sorted({"nan" if np.isnan(v) else ("inf" if v > 0 else "-inf")
                        for v in values[bad]})
        return Result(False, f"Your log_slope returns {' and '.join(kinds)} at {int(bad.sum())} "
                             f"of {z.size} points, for {_e3_where(z[bad])}: there a step of "
                             "your formula leaves float64's range (e to a large power "
                             "overflows to inf; a tiny e^(−|z|), or 1 − σ(z) with σ(z) "
                             "rounded to 1, becomes 0, and log(0) is −inf).",
                      name="log_slope", diagnosis="overflow",
                      hint="σ' is the same at z and −z: write it with e^(−|z|), which never "
                           "overflows, and take the log of each factor by hand (np.log1p(x) "
                           "is log(1 + x), exact for tiny x).")
    result = check_gradient(out, expected, name="log_slope", reference="log σ'(z)",
                            mistakes=ctx["mistakes"])
    named = not result.ok and any(m.code == result.diagnosis for m in ctx["mistakes"])
    if named or values is None or values.shape != z.shape:
        return result
    off = np.abs(values - expected) > MACHINE_AGREEMENT * np.maximum(1.0, np.abs(expected))
    if not ctx["centre"] and off.any():
        return Result(False, f"Your log_slope loses digits for {_e3_where(z[off])}: there "
                             "σ(z) is within rounding of 0 or 1, and a step of your formula "
                             "subtracts two nearly equal numbers (such as 1 − σ(z)), which "
                             "keeps only a few correct digits.", name="log_slope",
                      diagnosis="cancellation", hint="Write σ' with e^(−|z|) only, so that "
                      "nothing nearly equal is ever subtracted.")
    if not result.ok:
        return result
    # a difference of logs is the slope's relative error: held to machine precision point by
    # point (the kind's own gap is relative to the largest |log σ'|, which hides it)
    return not_closed_form(np.exp(values - expected), np.ones(z.shape), "log_slope") or result


_check_e3 = deriving(Derivation("log_slope", (
    ("the centre, |z| ≤ 5", lambda: _e3_case(_e3_points(73, 0.0, 5.0, 40), centre=True)),
    ("the shoulders, 5 ≤ |z| ≤ 40", lambda: _e3_case(_e3_points(173, 5.0, 40.0, 40))),
    ("the far tails, 40 ≤ |z| ≤ 800", lambda: _e3_case(_e3_points(273, 40.0, E3_REACH, 40)))),
    _e3_compare, right="log σ'(z), finite and exact from the centre to the far tails.",
    probe="Does it hold far from 0, where float64 rounds σ(z) to 0 or 1?"),
    """``E3(log_slope)``: your ``log_slope(z)`` returns log σ'(z), the natural log of the
    sigmoid's slope, entry by entry for a NumPy array z, finite and exact for every z from
    −800 to 800; checked near 0, on the shoulders and in the far tails, at points drawn for
    you.""")


register(Exercise("E3", "derivation", {"log_slope": _check_e3}))


# -- E4: every point where a loss is exactly flat -------------------------------------------


def e4_problem() -> Problem:
    """One weight w and ℓ(w) = (a·w² − t)², with a and t of the same sign (the check's other
    cases have the other signs, and t = 0)."""
    g = rng(64)
    a = round(float(g.choice([-1.0, 1.0]) * g.uniform(0.5, 3.0)), 2)
    t = round(float(np.sign(a) * g.uniform(0.5, 4.0)), 2)
    return Problem("ℓ(w) = (a * w**2 - t)**2 for one weight w. Write flat_points(a, t): every "
                   "w where backward returns a gradient of exactly 0, for any a ≠ 0 and t.",
                   a=a, t=t)


def _e4_slope(a: float, t: float, w: float) -> float:
    """The engine's dℓ/dw at w, for ℓ(w) = (a·w² − t)²."""
    x = ag.tensor(float(w), requires_grad=True)
    ((a * x ** 2 - t) ** 2).backward()
    return float(x.grad.numpy())


def _e4_case(a: float, t: float) -> tuple[tuple, np.ndarray, dict]:
    """(a, t), every flat point in increasing order, and what the comparison needs. By hand:
    dℓ/dw = 2(a·w² − t)·2a·w, zero where w = 0 or where a·w² = t (real only if t/a > 0)."""
    flat = [0.0]
    if t / a > 0:
        root = float(np.sqrt(t / a))
        flat = [-root, 0.0, root]
    slopes = [_e4_slope(a, t, w) for w in flat]  # the engine agrees: flat there
    assert max(abs(s) for s in slopes) <= 1e-12 * (1 + abs(a * t)), slopes
    return (a, t), np.array(flat), {"a": a, "t": t}


def _e4_other(seed: int, sign_a: float, sign_t: float) -> tuple[tuple, np.ndarray, dict]:
    g = rng(seed)
    a = round(sign_a * float(g.uniform(0.5, 3.0)), 2)
    t = round(sign_t * float(g.uniform(0.5, 4.0)), 2)
    return _e4_case(a, t)


# two points are one where they agree to the precision of a closed form in float64
_E4_SAME = 1e-11
_E4_NEAR = 1e-3  # and a point this close to a flat one was found by a search, not derived


def _e4_points(out) -> np.ndarray | str:
    """The learner's points as a 1-D float array, or the sentence saying why not."""
    if isinstance(out, bool | np.bool_ | str | dict) or callable(out):
        return f"it returns {words.a_type(out)}"
    try:
        points = np.asarray(out, dtype=np.float64).ravel()
    except (TypeError, ValueError):
        return f"it returns {words.a_type(out)}, not numbers"
    if points.size > 100:
        return f"it returns {points.size} numbers"
    return points


def _e4_compare(out, expected, ctx) -> Result:
    """Every flat point and nothing else, in any order; a missing one named by the factor of
    the chain rule that vanishes there, a wrong one by the engine's gradient there."""
    a, t = ctx["a"], ctx["t"]
    points = _e4_points(out)
    if isinstance(points, str):
        return Result(False, f"flat_points should return the flat points as a list of "
                             f"numbers; {points}.", name="flat_points", diagnosis="type")
    if np.any(np.isnan(points)):
        return Result(False, "One of your points is nan, which np.sqrt gives for a negative "
                             "number: for these a and t, which of the points you compute "
                             "exist at all?", name="flat_points", diagnosis="nan",
                      hint="For which signs of a and t does a·w² = t have a real solution?")
    if not np.all(np.isfinite(points)):
        return Result(False, "One of your points is infinite: a flat point is a number w "
                             "where the engine's slope is 0.", name="flat_points",
                      diagnosis="nonfinite")

    def matches(p, q, tol):
        return abs(p - q) <= tol * max(1.0, abs(q))

    extra = [p for p in points if not any(matches(p, q, _E4_SAME) for q in expected)]
    near = [p for p in extra if any(matches(p, q, _E4_NEAR) for q in expected)]
    if near:
        return Result(False, f"{len(near)} of your points {'is' if len(near) == 1 else 'are'} "
                             "close to a flat point but not on it: the engine's gradient there "
                             "is small, not 0. This item asks for the points worked out "
                             "exactly, not found by a search.", name="flat_points",
                      diagnosis="not_exact",
                      hint="Solve dℓ/dw = 0 on paper, then compute each solution in float64.")
    if extra:
        slopes = [_e4_slope(a, t, p) for p in extra]  # the engine's gradient at each
        assert all(s != 0 for s in slopes)
        no_root = t / a < 0 and all(matches(abs(p), np.sqrt(abs(t / a)), _E4_SAME)
                                    for p in extra)
        if no_root:
            return Result(False, "At your points ±√|t/a| the engine's gradient is not 0: for "
                                 "these a and t, a·w² never equals t (a·w² has a's sign "
                                 "whatever w is).", name="flat_points",
                          diagnosis="no_real_root")
        n = len(extra)
        return Result(False, f"At {n} of your points the engine's gradient is not 0: "
                             f"{'it is' if n == 1 else 'they are'} not flat.",
                      name="flat_points", diagnosis="not_flat",
                      hint="Differentiate (a·w² − t)² with the chain rule: the outer square, "
                           "then the inner a·w². Where is that product 0?")
    missing = [q for q in expected if not any(matches(p, q, _E4_SAME) for p in points)]
    if missing:
        return Result(False, _e4_missing(missing, expected), name="flat_points",
                      diagnosis=_e4_missing_code(missing, expected),
                      hint="dℓ/dw is a product of the outer square's derivative and the inner "
                           "a·w²'s: a product is 0 where any of its factors is.")
    return Result(True, "Every flat point, and no other.", name="flat_points")


def _e4_missing_code(missing, expected) -> str:
    if len(missing) == len(expected):
        return "missing"
    if 0.0 in missing:
        return "missed_inner"
    return "missed_outer" if len(missing) == 2 else "one_root"


def _e4_missing(missing, expected) -> str:
    roots = [q for q in expected if q != 0]
    pieces = []
    if 0.0 in missing:
        pieces.append("the one where the inner factor of the chain rule, d(a·w²)/dw, is 0")
    lost = [q for q in missing if q != 0]
    if lost and len(lost) == len(roots):
        pieces.append("the points where the outer factor, 2(a·w² − t), is 0")
    elif lost:
        pieces.append("one of the two points where a·w² = t (w² = t/a has two solutions)")
    n = len(missing)
    return (f"{n} flat point{'s are' if n > 1 else ' is'} missing: "
            + " and ".join(pieces) + ".")


_check_e4 = deriving(Derivation("flat_points", (
    ("E4.problem()'s a and t", lambda: _e4_case(e4_problem().a, e4_problem().t)),
    ("a loss with a > 0 and t < 0", lambda: _e4_other(164, 1.0, -1.0)),
    ("a loss with a < 0 and t < 0", lambda: _e4_other(264, -1.0, -1.0)),
    ("a loss with a < 0 and t > 0", lambda: _e4_other(364, -1.0, 1.0)),
    ("a loss with t = 0", lambda: _e4_other(464, 1.0, 0.0))),
    _e4_compare, right="every point where the loss is flat, and no other.", closed_form=False,
    probe="Which signs of a and t does your function cover?"),
    """``E4(flat_points)``: your ``flat_points(a, t)`` returns every w where the gradient of
    ℓ(w) = (a·w² − t)² is exactly 0 (a list, any order), checked on E4.problem()'s a and t
    and on losses with the other signs of a and t, and t = 0; the engine's gradient is read
    at each point you return.""")


register(Exercise("E4", "derivation", {"flat_points": _check_e4}, problem=e4_problem))


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


def _e5_grad(p: Problem, site: int | None = None) -> np.ndarray:
    """The engine's dW, through both uses of W, or through use ``site`` (1 or 2) alone."""
    w = ag.tensor(p.W, requires_grad=True)
    first = w if site in (None, 1) else w.detach()
    second = w if site in (None, 2) else w.detach()
    out = ag.tanh(ag.tensor(p.x) @ first) @ second.T
    (out * ag.tensor(p.t)).sum().backward()
    return w.grad.numpy()


_check_e5 = gradients(Gradients(
    "E5", ("dW",), e5_problem, lambda p: {"dW": _e5_grad(p)},
    lambda p, right: {"dW": dict(of="W", paths={"the first layer (x @ W)": _e5_grad(p, 1),
                                               "the second layer (h @ W.T)": _e5_grad(p, 2)})},
    options={"other": False}),
    """``E5(my_e5)``: your ``my_e5(p) -> {"dW": ...}`` on ``E5.problem()``; ``other=True``
    runs it on ``E5.problem(other=True)``.""")


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


def _e6_engine(p: Problem) -> dict:
    x = ag.tensor(p.x, requires_grad=True)
    _e6_loss(x).backward()
    return {"dx": x.grad}


def _e6_context(p: Problem, right: dict) -> dict:
    whole = ag.tensor(p.x, requires_grad=True)
    _e6_loss(whole, cut=False).backward()
    th = np.tanh(p.x)
    return {"dx": dict(of="x", mistakes=[
        Mistake(whole.grad.numpy(), "You differentiated as if nothing were detached: you let "
                "the gradient flow through the detached copies too. detach() cuts those "
                "paths.", "", "through_detach"),
        Mistake(p.x * (1 - th ** 2), "You kept only the first term: x also reaches the loss, "
                "undetached, in the second.", "", "first_term_only"),
        Mistake(p.x ** 2, "You kept only the second term: x also reaches the loss, "
                "undetached, inside the tanh of the first.", "", "second_term_only")])}


_check_e6 = gradients(Gradients(
    "E6", ("dx",), e6_problem, _e6_engine, _e6_context, options={"other": False}),
    """``E6(my_e6)``: your ``my_e6(p) -> {"dx": ...}`` on ``E6.problem()``; ``other=True``
    runs it on ``E6.problem(other=True)``.""")


def _e6_facts(other: bool = False) -> dict[str, Fact] | Result:
    """``E6.run("value", value_changes=...)``: whether detach changes the value of the loss
    of ``E6.problem()`` (against the same formula with nothing detached)."""
    p = problem_for("E6", e6_problem, other=other)
    if isinstance(p, Result):
        return p
    cut = _e6_loss(ag.tensor(p.x)).numpy()
    same = bool(np.array_equal(cut, _e6_loss(ag.tensor(p.x), cut=False).numpy()))
    return {"value_changes": Fact(not same, "detach() shares the values; it only cuts the "
                                            "graph.")}


register(Exercise("E6", "derivation", {"gradients": _with_a_yes_no_elsewhere(
                                           _check_e6, "E6", "value", "value_changes"),
                                       "value": predicting(_e6_facts, ("other",))},
                  problem=e6_problem))
