"""Backprop bugs to find in G10 (an embedding backward that overwrites repeated ids)
and G12 (hand-derived mistakes that survive a shape check): each item has a
derivation check and a spot-the-error check of the learner's fixed function."""

from __future__ import annotations

import numpy as np

import autograd_core as ag

from .. import gate
from ..feedback.context import Mistake
from ..lessons.report import Report
from . import mlp
from .array_answers import Gradients, gradients
from .exercise import Exercise, register
from .problems import Problem, rng

# -- G10: an embedding row used several times ----------------------------------------------------


def g10_problem() -> Problem:
    """A table of 6 rows, ids with row 1 three times, and the upstream gradient G."""
    g = rng(10)
    return Problem("out = W[ids] (an embedding lookup); G = dL/dout, one row per id. Row 1 "
                   "appears three times. Find dW, and row1 = dW[1].", W=g.standard_normal((6, 3)),
                   ids=np.array([1, 4, 1, 2, 1]), G=g.standard_normal((5, 3)))


def _g10_engine(p: Problem) -> np.ndarray:
    from autograd_core.nn import functional as F

    w = ag.tensor(p.W, requires_grad=True)
    F.embedding(p.ids, w).backward(p.G)
    return w.grad.numpy()


def _overwritten(p: Problem) -> np.ndarray:
    dw = np.zeros_like(p.W)
    dw[p.ids] = p.G  # what an overwriting scatter leaves: the last occurrence wins
    return dw


def _g10_context(p: Problem, right: dict) -> dict:
    rows = {f"occurrence {i + 1} (position {k})": p.G[k]
            for i, k in enumerate(np.flatnonzero(p.ids == 1))}
    return {"dW": dict(of="W", mistakes=[Mistake(
                _overwritten(p), "Your dW keeps only the last occurrence of each repeated id: "
                "an overwrite (dW[ids] = G). Repeated ids must add up (scatter-add).",
                "Look at how your dW collects the rows of G for an id that appears more than "
                "once: every occurrence's row must end up in it.", "overwrite")]),
            "row1": dict(paths=rows)}


_check_g10 = gradients(Gradients(
    "G10", ("dW", "row1"), g10_problem,
    lambda p: {"dW": _g10_engine(p), "row1": _g10_engine(p)[1]}, _g10_context),
    """``G10(my_g10)``: your ``my_g10(p) -> {"dW": ..., "row1": ...}`` on ``G10.problem()``.""")


def _g10_fix_context(p: Problem, right: dict) -> dict:
    return {"dW": dict(of="W", mistakes=[Mistake(
        _overwritten(p), "Still an overwrite: each repeated id keeps only its last row of G.",
        "Look at the line that writes G's rows into dW: with a repeated id, does a later "
        "row replace an earlier one, or join it? (NumPy's fancy-index assignment is "
        "buffered.)", "overwrite")])}


# the fixed snippet: a function of the lookup's ids and upstream gradient, returning dW
_check_g10_fix = gradients(Gradients(
    "G10", ("dW",), g10_problem, lambda p: {"dW": _g10_engine(p)}, _g10_fix_context,
    arguments=lambda p: (p.ids.copy(), p.G.copy(), p.W.shape[0]), returns="dW",
    form=("embedding_backward", "ids, G, num_rows"), call='G10.run("fix", embedding_backward)'),
    """``G10.run("fix", embedding_backward)``: your fixed ``embedding_backward(ids, G,
    num_rows) -> dW``.""")


register(Exercise(
    "G10", "derivation", {"gradients": _check_g10, "fix": _check_g10_fix}, level="M",
    problem=g10_problem,
))


# -- G12: mistakes that survive a shape check ---------------------------------------------------


def _square_mlp() -> Problem:
    return mlp.problem(square=True)


_check_g12 = gradients(Gradients(
    "G12", mlp.PARTS, _square_mlp, mlp._engine_gradients, mlp._context,
    form=("backprop", "p")),
    """``G12(backprop)``: your fixed ``backprop(p) -> {"dW2", "db2", "delta1"}`` on the
    square MLP (``G12.problem()``).""")


@gate.answers("G12")
def silent_mistakes() -> Report:
    """Each mistake of G12's snippet: passes a shape check, yet the checker names it."""
    p = mlp.problem(square=True)
    n = len(p.x)
    delta2 = (((p.z3 - p.target) / n) @ p.W3) * (1 - p.a2 ** 2)
    wrong = {
        "flipped transpose (dW2 = a1.T @ delta2)": {"dW2": p.a1.T @ delta2},
        "activation derivative of the wrong layer": {"delta1": (delta2 @ p.W2) * (1 - p.a2 ** 2)},
        "dropped activation derivative": {"delta1": delta2 @ p.W2},
        "sum where the loss averaged": {"db2": delta2.sum(0) * n},
    }
    rows = []
    for label, answer in wrong.items():
        (r,) = mlp._check_parts(p, answer)
        key = next(iter(answer))
        rows.append((label, answer[key].shape == mlp._engine_gradients(p)[key].shape,
                     r.diagnosis))
    return Report("Mistakes that survive a shape check (square hidden layers)",
                  "Every one has the right shape; the derivation checker still names it.",
                  ("mistake", "passes a shape check", "named by the checker as"), rows)


register(Exercise(
    "G12", "spot_error", {"fixed": _check_g12}, level="S",
    experiment=silent_mistakes, problem=_square_mlp,
    snippet_gives=("G5",),  # its lines, right and wrong, derive G5's three gradients
))
