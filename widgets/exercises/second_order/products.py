"""D3: a Hessian-vector product written by the learner with the engine's
``autograd.grad``, checked for its value (against ``functional.hvp``) and for its cost (a few
gradients, never the n gradients of the whole Hessian); and the counted cost of a
gradient, an HVP and the full Hessian as the network grows (``cost_table``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

import autograd_core as ag
from autograd_core.autograd.functional import hessian, hvp
from autograd_core.tools.counting import count_ops

from ...feedback.check import check_gradient
from ...feedback.context import Mistake
from ...feedback.result import Result
from ..exercise import Exercise, register
from ..function_cases import Derivation
from ..parts import one_answer
from ..problems import Problem, rng
from .problems import Network, network

# A Hessian-vector product costs about 2.3 gradients on these networks (counted MACs);
# the whole Hessian costs n HVPs. More than this many gradients is building the Hessian.
MAX_GRADIENTS = 8
_LIBRARY_NAMES = frozenset({"hvp", "vhp", "hessian", "hessian_at", "hessian_fn"})


def _direction(net: Network, seed: int) -> np.ndarray:
    return rng(seed).standard_normal(net.W.shape)


def gradient_macs(net: Network) -> int:
    """The multiply-adds of one gradient of the network's loss (forward and backward)."""
    W = ag.tensor(net.W, requires_grad=True)
    with count_ops() as counts:
        net.loss(W).backward()
    return counts.total_macs


def _hvp_mistakes(net: Network, v: np.ndarray) -> list[Mistake]:
    """What a Hessian-vector product with one step wrong gives, each named."""
    g = net.gradient()
    return [
        Mistake(g, "Your function returns the gradient itself: that is the first sweep. "
                "Differentiate the gradient's dot product with v once more.",
                "Which scalar, made from the gradient and v, has H·v as its "
                "gradient?", "gradient_only"),
        Mistake(g * v, "Your function multiplies the gradient by v entry by entry; H·v is "
                "the gradient of that product's sum, taken with the gradient's own graph.",
                "Keep the gradient's graph and differentiate one scalar made from it and v.",
                "gradient_times_v"),
    ]


def _case(net: Network, seed: int) -> tuple[tuple, np.ndarray, dict]:
    v = _direction(net, seed)
    W = ag.tensor(net.W, requires_grad=True)
    return ((net.loss, W, ag.tensor(v)), net._hvp(v),
            {"mistakes": _hvp_mistakes(net, v), "net": net})


def _counted(fn: Callable) -> Callable:
    """``fn``, counting the multiply-adds of each call into ``counted.macs``."""
    def run(*args):
        with count_ops() as counts:
            out = fn(*args)
        run.macs = counts.total_macs
        return out

    run.macs = 0
    return run


@one_answer("my_hvp")
def _check_d3(my_hvp: Callable) -> Result:
    """``D3(my_hvp)``: your ``my_hvp(loss_fn, W, v)`` returns H·v, the Hessian of
    ``loss_fn`` at ``W`` (a Tensor that requires grad) times ``v``, with two sweeps of
    ``autograd.grad``; checked on the lesson's network and on a wider one (32 weights),
    for its value and for its cost in counted multiply-adds."""
    counted = _counted(my_hvp) if callable(my_hvp) else my_hvp

    def compare(out, expected, ctx) -> Result:
        net = ctx.pop("net")
        result = check_gradient(out, expected, name="my_hvp", reference="the engine's H·v",
                                **ctx)
        if result.ok:
            ratio = counted.macs / gradient_macs(net)
            if ratio > MAX_GRADIENTS:
                return Result(False, f"Your H·v is right, but it cost {ratio:.0f} gradients' "
                                     f"worth of multiply-adds on {net.size} weights: it seems "
                                     "to build the whole Hessian first. Two sweeps (about "
                                     "three gradients) are enough.", name="my_hvp",
                              diagnosis="too_costly")
        return result

    # D3 is written with the engine (two calls of autograd.grad): not by hand, but exact:
    # a difference of two gradients (a nudge along v) agrees only to about 1e-8
    return Derivation("my_hvp", (
        ("the lesson's network", lambda: _case(network(), 145)),
        ("a wider network (32 weights)", lambda: _case(network(seed=146, d=4, k=8), 147))),
        compare, right="H·v at the cost of a few gradients.", by_hand=False,
        forbidden=tuple(_LIBRARY_NAMES)).check(counted)  # exact: two sweeps, not a nudge


def hvp_problem() -> Problem:
    """D3's data: the lesson's network, its loss as a function of W, and a direction v."""
    net = network()
    return Problem("The lesson's network: loss_fn(W) is its loss (W a Tensor), W0 the "
                   "weights, v a direction of W's shape.", loss_fn=net.loss, W0=net.W,
                   v=_direction(net, 145))


register(Exercise("D3", "derivation", {"closed_form": _check_d3}, problem=hvp_problem))


# -- what a gradient, an HVP and the Hessian cost as the network grows -----------------------


@dataclass(frozen=True)
class CostRow:
    """Counted multiply-adds at one network size."""

    weights: int
    gradient: int
    hvp: int
    hessian: int

    def __str__(self) -> str:
        return (f"{self.weights:5} weights  gradient {self.gradient:7,}  H·v {self.hvp:7,} "
                f"({self.hvp / self.gradient:.1f} gradients)  whole Hessian "
                f"{self.hessian:10,} ({self.hessian / self.gradient:.0f} gradients)")


def cost_table(hidden: tuple[int, ...] = (2, 8, 32), inputs: int = 3) -> list[CostRow]:
    """The counted cost of one gradient, one HVP (``functional.hvp``) and the whole Hessian
    (``functional.hessian``: one HVP per weight) for networks with these hidden widths."""
    rows = []
    for k in hidden:
        net = network(seed=148, d=inputs, k=k)
        W, v = ag.tensor(net.W), ag.tensor(np.ones(net.W.shape))
        with count_ops() as one:
            hvp(net.loss, W, v)
        with count_ops() as whole:
            hessian(net.loss, W)
        rows.append(CostRow(net.size, gradient_macs(net), one.total_macs, whole.total_macs))
    return rows
