"""A1: the backward of one head of causal attention, in NumPy.

The learner's ``attention_backward(q, k, v, d_out)`` returns (dq, dk, dv) for
out = softmax(q kᵀ / √d + causal mask) v; the check compares each with the engine's
gradient of ``F.scaled_dot_product_attention(..., is_causal=True)`` (float64) on the
lesson's arrays and on two more of other sizes, and names the usual slips: softmax
treated as elementwise, a missing scale, a transposed product, the mask forgotten.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

import autograd_core as ag
from autograd_core.nn import functional as F

from ... import gate
from ...feedback.check import check_gradient
from ...feedback.context import Mistake
from ...feedback.result import Result
from ..exercise import Exercise, register
from ..function_cases import Derivation, deriving
from ..problems import Problem, rng

NAMES = ("dq", "dk", "dv")


def _arrays(seed: int, t: int, d: int) -> tuple[np.ndarray, ...]:
    g = rng(seed)
    return tuple(g.standard_normal((t, d)) for _ in range(4))


def _engine_gradients(q, k, v, d_out) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The engine's dq, dk, dv of causal attention at (q, k, v), upstream ``d_out``."""
    leaves = [ag.tensor(np.array(a, dtype=np.float64), requires_grad=True) for a in (q, k, v)]
    out = F.scaled_dot_product_attention(*leaves, is_causal=True)
    out.backward(ag.tensor(np.array(d_out, dtype=np.float64)))
    return tuple(t.grad.numpy().copy() for t in leaves)


def _forward(q, k, v, masked=True):
    t, d = q.shape
    scale = 1 / np.sqrt(d)
    s = q @ k.T * scale
    if masked:
        s = np.where(np.tril(np.ones((t, t), dtype=bool)), s, -np.inf)
    w = np.exp(s - s.max(axis=1, keepdims=True))
    return w / w.sum(axis=1, keepdims=True), scale


# Each slip a mistake builder makes, as the switch of _backward that makes it.
SLIPS = {"elementwise": {"elementwise": True}, "unscaled": {"scaled": False},
         "transposed": {"transposed": True}, "unmasked": {"masked": False}}


def _backward(q, k, v, d_out, *, elementwise=False, scaled=True, masked=True,
              transposed=False):
    """dq, dk, dv with one slip switched on (a mistake builder, not the reference)."""
    w, scale = _forward(q, k, v, masked)
    dv = (w @ d_out) if transposed else (w.T @ d_out)
    dw = d_out @ v.T
    ds = w * dw if elementwise else w * (dw - (dw * w).sum(axis=1, keepdims=True))
    c = scale if scaled else 1.0
    dk = (ds @ q) if transposed else (ds.T @ q)
    return ds @ k * c, dk * c, dv


def _attention_mistakes(q, k, v, d_out) -> dict[str, list[Mistake]]:
    """For each of dq, dk, dv: the answers of the usual slips, each named."""
    slips = {
        "elementwise": ("treats the softmax as elementwise (each weight's gradient times "
                        "its own weight): every weight of a row depends on every score of "
                        "that row, and that coupling is missing.",
                        "Write the softmax's Jacobian for one row and multiply it by the "
                        "row's upstream gradient."),
        "unscaled": ("is missing the scale 1/√d the scores were multiplied by.",
                     "The scores are q kᵀ times a constant: the chain rule brings it back."),
        "transposed": ("uses a product in the wrong orientation (a matrix where its "
                       "transpose belongs).",
                       "Check which index each product sums over: dv[j] collects from every "
                       "query i that read key j."),
        "unmasked": ("lets queries read future keys: the causal mask was not applied.",
                     "Masked scores have weight 0, so they pass no gradient."),
    }
    out: dict[str, list[Mistake]] = {n: [] for n in NAMES}
    for code, options in SLIPS.items():
        says, hint = slips[code]
        for name, candidate in zip(NAMES, _backward(q, k, v, d_out, **options)):
            out[name].append(Mistake(candidate, f"Your {name} {says}", hint, code))
    return out


@gate.answers("A1")  # A1's answer but for one slip: seen, unless run after solving
def with_slip(code: str) -> Callable:
    """An ``attention_backward`` that makes one of :func:`_attention_mistakes`' slips
    (``"elementwise"``, ``"unscaled"``, ``"transposed"``, ``"unmasked"``): what a
    lesson's demonstration passes, behind ``after_solving("A1", ...)``. Undo the slip and
    it is A1's answer, so a call before A1 is solved records its solution as seen."""
    options = SLIPS[code]

    def attention_backward(q, k, v, d_out):
        return _backward(q, k, v, d_out, **options)

    return attention_backward


def _case(seed: int, t: int, d: int):
    q, k, v, d_out = _arrays(seed, t, d)
    return (q, k, v, d_out), _engine_gradients(q, k, v, d_out), {
        "mistakes": _attention_mistakes(q, k, v, d_out)}


def _compare(out, expected, ctx) -> Result:
    if not isinstance(out, tuple | list) or len(out) != 3:
        kind = type(out).__name__
        return Result(False, f"Your attention_backward returns a {kind}"
                             f"{f' of {len(out)}' if isinstance(out, tuple | list) else ''}; "
                             "it should return three arrays, (dq, dk, dv).",
                      name="gradients", diagnosis="format")
    return Result.combine([
        check_gradient(answer, want, name=name, mistakes=ctx["mistakes"][name],
                       reference="the engine's gradient")
        for name, answer, want in zip(NAMES, out, expected)])


_check_a1 = deriving(Derivation("attention_backward", (
    ("the lesson's arrays (T = 5, d = 4)", lambda: _case(150, 5, 4)),
    ("a longer sequence (T = 9, d = 3)", lambda: _case(151, 9, 3)),
    ("a wider head (T = 4, d = 8)", lambda: _case(152, 4, 8))),
    _compare, right="dq, dk and dv of causal attention.", label="gradients"),
    """``A1(attention_backward)``: your ``attention_backward(q, k, v, d_out)`` returns
    (dq, dk, dv) of one causal attention head, out = softmax(q kᵀ/√d + mask) v, for
    (T, d) arrays; checked on the lesson's arrays and on two more of other sizes.""")


def attention_problem() -> Problem:
    """A1's arrays: one head's q, k, v (T = 5, d = 4) and the upstream gradient d_out."""
    q, k, v, d_out = _arrays(150, 5, 4)
    return Problem("One causal attention head: out = softmax(q @ k.T / sqrt(d) + mask) @ v, "
                   "q, k, v and d_out of shape (T, d) = (5, 4); the mask hides the keys "
                   "after each query (-inf above the diagonal).", q=q, k=k, v=v, d_out=d_out)


register(Exercise("A1", "derivation", {"closed_form": _check_a1}, problem=attention_problem))
