"""``create_graph=True`` through layer norm and RMS norm: their backward written again
with Tensor ops, registered into ``graph_backward.RULES``.

Neither op saves its input (only x̂ and one 1/std or 1/rms per row, see
``ops/layer_norm.py``), so the rules, as batch norm's in ``graph_backward_cnn``, put a
stand-in for the input on the input's edge (a Tensor with that value whose gradient
flows to the input) and recompute the statistics from it with recorded ops:

* layer norm is shift-invariant per row (its value and every derivative are the same
  at x and at x - c for c constant over each row), so x - mean = x̂ / inv_std stands
  for x exactly; the rule centres it again before using it.
* RMS norm is not, so the stand-in is x itself, x̂ / inv_rms (x up to rounding).

A leaf input needs no stand-in: it is its own edge. Every op the rules record has a
rule of its own, so gradients can be differentiated to any order.
"""

from __future__ import annotations

import numpy as np

from .function import Node
from .graph_backward import RULES, _constant, _saved
from .graph_backward_cnn import _centred_input
from .ops import layer_norm as ln
from .tensor import Tensor

__all__ = ["NORM_RULES"]


def _weight(node: Node) -> Tensor | None:
    """The op's weight as a Tensor on its graph (None without one); the constant 1 that
    functional.layer_norm puts in front of a lone bias as a constant."""
    if len(node.input_shapes) < 2:
        return None
    weight = node.load("weight")
    return _saved(node, "weight") if isinstance(weight, np.ndarray) else _constant(weight)


def _needs(node: Node, n: int) -> tuple:
    return tuple(node.needs_input_grad) + (False,) * (n - len(node.needs_input_grad))


def _layer_norm(node: Node, g: Tensor) -> tuple:
    """x̂ and std recomputed from the centred input, then
    dx = (ĝ - mean(ĝ) - x̂ · mean(ĝ · x̂)) / std with ĝ = g · weight (means per row),
    dweight = Σ g·x̂, dbias = Σ g over the rows."""
    needs = _needs(node, 3)
    axes, eps = node.params["axes"], node.params["eps"]
    x_hat = dx = None
    if needs[0]:
        centred = _centred_input(
            node, lambda: node.load("normalized") / node.load("inv_std"), None)
        c = centred - centred.mean(axes, keepdim=True)
        std = ((c * c).mean(axes, keepdim=True) + eps).sqrt()
        x_hat = c / std
        weight = _weight(node)
        gw = g if weight is None else g * weight
        dx = (gw - gw.mean(axes, keepdim=True)
              - x_hat * (gw * x_hat).mean(axes, keepdim=True)) / std
    elif needs[1]:
        x_hat = _constant(node.load("normalized"))  # the input needs no gradient
    return (dx, *_affine_grads(needs, g, x_hat, axes))


def _rms_norm(node: Node, g: Tensor) -> tuple:
    """x̂ and rms recomputed from the input, then dx = (ĝ - x̂ · mean(ĝ · x̂)) / rms with
    ĝ = g · weight (means per row), dweight = Σ g·x̂ over the rows."""
    needs = _needs(node, 3)
    axes, eps = node.params["axes"], node.params["eps"]
    x_hat = dx = None
    if needs[0]:
        x = _centred_input(node, lambda: node.load("normalized") / node.load("inv_rms"), None)
        rms = ((x * x).mean(axes, keepdim=True) + eps).sqrt()
        x_hat = x / rms
        weight = _weight(node)
        gw = g if weight is None else g * weight
        dx = (gw - x_hat * (gw * x_hat).mean(axes, keepdim=True)) / rms
    elif needs[1]:
        x_hat = _constant(node.load("normalized"))
    return (dx, *_affine_grads(needs, g, x_hat, axes)[:1])


def _affine_grads(needs: tuple, g: Tensor, x_hat: Tensor | None, axes: tuple) -> tuple:
    lead = tuple(range(g.ndim - len(axes)))
    dweight = (g * x_hat).sum(axis=lead) if needs[1] else None  # axis=(): NumPy's, none
    dbias = g.sum(axis=lead) if needs[2] else None
    return dweight, dbias


NORM_RULES = {
    ln.LayerNorm: _layer_norm,
    ln.RMSNorm: _rms_norm,
}

RULES.update(NORM_RULES)
