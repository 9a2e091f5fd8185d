"""D1 and D2: second derivatives derived by the learner, checked against the engine's
(the gradient's own graph differentiated again): tanh'' at a set of points, then the
Hessian of a small network's loss with respect to its hidden weights.

Each check runs the learner's NumPy function on the lesson's numbers and on a second set
of another size; the mistake builders below are the derivations with one thing wrong,
each named.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from ...feedback.check import check_gradient
from ...feedback.context import Mistake
from ...feedback.result import Result
from ..exercise import Exercise, register
from ..function_cases import Derivation, deriving
from ..problems import Problem
from .problems import (
    Network,
    _engine_tanh_second,
    network,
    network_problem,
    tanh_points,
)

# -- D1: tanh'' --------------------------------------------------------------------------------


def _tanh_mistakes(x: np.ndarray) -> list[Mistake]:
    """tanh'' with one thing wrong, each named."""
    t = np.tanh(x)
    return [
        Mistake(1 - t ** 2, "Your function returns the first derivative, 1 - tanh²: "
                "differentiate it once more.",
                "Differentiate 1 - t² with the chain rule: t depends on x.", "first_derivative"),
        Mistake(-2 * t, "Your answer is -2·tanh(x): the chain rule's inner factor is missing "
                "(t = tanh(x) depends on x, so d(t²)/dx = 2t · dt/dx).",
                "What is dt/dx? You met it in the first derivative.", "missing_chain"),
        Mistake(2 * t * (1 - t ** 2), "Your answer has the right size but the wrong sign: "
                "1 - t² falls as t grows, so its derivative has a minus.",
                "Check the sign of d(1 - t²)/dt.", "sign"),
        Mistake(-2 * x * (1 - x ** 2), "Your answer differentiates 1 - x² instead of "
                "1 - tanh(x)²: the first derivative is written in t = tanh(x), not in x.",
                "Differentiate 1 - t² with t = tanh(x).", "wrong_variable"),
    ]


def _tanh_case(x: np.ndarray) -> tuple[tuple, np.ndarray, dict]:
    return (x,), _engine_tanh_second(x), {"mistakes": _tanh_mistakes(x)}


def _compare(label: str) -> Callable[[object, object, dict], Result]:
    def compare(out, expected, ctx) -> Result:
        return check_gradient(out, expected, name=label, reference="the engine's value", **ctx)

    return compare


_check_d1 = deriving(Derivation("d2_tanh", (
    ("the lesson's points", lambda: _tanh_case(tanh_points())),
    ("50 other points in [-4, 4]", lambda: _tanh_case(np.linspace(-4, 4, 50)))),
    _compare("d2_tanh"), right="the second derivative of tanh."),
    """``D1(d2_tanh)``: your ``d2_tanh(x)`` returns tanh''(x) elementwise (NumPy), checked
    at the lesson's points and at 50 more of another range.""")


# -- D2: the Hessian of a small network's loss ----------------------------------------------------


def _pieces(net: Network) -> dict:
    z = net.X @ net.W
    t = np.tanh(z)
    return {"t1": 1 - t ** 2, "t2": -2 * t * (1 - t ** 2), "r": np.tanh(z) @ net.u - net.y,
            "n": len(net.y)}


def _outer_term(net: Network, t1: np.ndarray) -> np.ndarray:
    """(2/N) Σₙ (u_j t'ₙⱼ xₙ)(u_l t'ₙₗ xₙ)ᵀ: the product of two first-derivative paths."""
    a = net.u * t1  # (N, k)
    return 2 / len(net.y) * np.einsum("na,nj,nb,nl->ajbl", net.X, a, net.X, a)


def _curvature_term(net: Network, second: np.ndarray, r: np.ndarray,
                    same_unit: bool = True) -> np.ndarray:
    """(2/N) Σₙ rₙ u_j t''ₙⱼ xₙ xₙᵀ on the blocks j = l (every block if not same_unit)."""
    k = net.W.shape[1]
    c = np.einsum("n,nj,na,nb->ajb", r, net.u * second, net.X, net.X) * 2 / len(net.y)
    if same_unit:
        return np.einsum("ajb,jl->ajbl", c, np.eye(k))
    return np.repeat(c[..., None], k, axis=3)


def _network_mistakes(net: Network) -> list[Mistake]:
    """The network's Hessian with one thing wrong, each named."""
    p = _pieces(net)
    outer = _outer_term(net, p["t1"])
    curvature = _curvature_term(net, p["t2"], p["r"])
    return [
        Mistake(outer, "Your Hessian has the product of the two first-derivative paths but "
                "not tanh's own curvature: the term with the residual times tanh''(z) is "
                "missing (this is the Gauss-Newton approximation, not the Hessian).",
                "Differentiate the gradient's factor 1 - t² too: it depends on W.",
                "gauss_newton"),
        Mistake(outer + _curvature_term(net, p["t2"], p["r"], same_unit=False), "Your "
                "curvature term appears in every pair of hidden units; it belongs only where "
                "both weights feed the same unit (j = l): z_j depends on column j of W only.",
                "Only unit j's own factor (1 - t²) depends on column j of W.", "every_block"),
        Mistake(outer + _curvature_term(net, p["t1"], p["r"]), "Your curvature term uses "
                "tanh'(z) = 1 - t² where tanh''(z) belongs (your D1).",
                "The second derivative of tanh: D1.", "first_for_second"),
        Mistake(outer - curvature, "Your curvature term has the wrong sign.",
                "Check the sign of tanh'', your D1.", "curvature_sign"),
        Mistake((outer + curvature) / 2, "Your Hessian is half the engine's: the derivative "
                "of the square, 2·r, is missing its 2.", "d(r²)/dr = 2r.", "missing_two"),
        Mistake((outer + curvature) * p["n"], "Your Hessian is N times the engine's: the loss "
                "is a mean over the N examples, so every term carries 1/N.",
                "Divide the sums over examples by N.", "sum_not_mean"),
    ]


def _network_case(net: Network) -> tuple[tuple, np.ndarray, dict]:
    return ((net.X, net.W, net.u, net.y), net._hessian(),
            {"mistakes": _network_mistakes(net), "shape": net.W.shape})


def _compare_hessian(out, expected, ctx) -> Result:
    """Accept the Hessian as (d, k, d, k) or flattened to (d·k, d·k), W's order."""
    shape = ctx.pop("shape")
    size = int(np.prod(shape))
    try:
        flat = np.asarray(out, dtype=np.float64)
    except (TypeError, ValueError):
        flat = None
    if flat is not None and flat.shape == (size, size):
        out = flat.reshape(shape + shape)
    return check_gradient(out, expected, name="hessian", reference="the engine's Hessian", **ctx)


_check_d2 = deriving(Derivation("mlp_hessian", (
    ("the lesson's network", lambda: _network_case(network())),
    ("a second network (N = 5, d = 2, k = 4)",
     lambda: _network_case(network(seed=143, n=5, d=2, k=4)))),
    _compare_hessian, right="the Hessian of the network's loss.", label="hessian"),
    """``D2(mlp_hessian)``: your ``mlp_hessian(X, W, u, y)`` returns d²loss/dW² of
    ``mean((tanh(X @ W) @ u - y)**2)``, shape (d, k, d, k) (or (d·k, d·k)); checked on the
    lesson's network and on one with 5 examples, 2 inputs and 4 hidden units.""")


def points_problem() -> Problem:
    """D1's data: the points x where your tanh'' is checked first."""
    return Problem("The points where D1 checks your tanh'' first (a second check uses 50 "
                   "points of its own).", x=tanh_points())


register(Exercise("D1", "derivation", {"closed_form": _check_d1}, problem=points_problem))
register(Exercise("D2", "derivation", {"closed_form": _check_d2}, problem=network_problem))
