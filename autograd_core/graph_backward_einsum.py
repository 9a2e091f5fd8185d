"""``create_graph=True`` through einsum, amax and amin: their backward rules written with
recorded ops, registered into ``graph_backward.RULES``.

einsum's rule is einsum again: operand i's gradient is the recorded einsum of ``g`` with
the other operands (the Tensors it saved, on the graph they came from) and the constant
identities and ones of ``ops.einsum.gradient_plan``. It is linear in ``g`` and in each
other operand, so differentiating it again gives einsums of the same kind, to any order.
amax and amin share g among the winners exactly as max and min do (the mask is a
constant); a slice whose maximum is nan gives nan, as the lean rule does.
"""

from __future__ import annotations

import numpy as np

from .function import Node
from .graph_backward import RULES, _extreme, _saved
from .ops import einsum as es
from .ops import reductions as red
from .tensor import Tensor

__all__ = ["EINSUM_RULES"]


def _einsum(node: Node, g: Tensor) -> tuple:
    """da_i = einsum(plan_i, g, *the other operands, *constants), each a recorded op."""
    equation, shapes = node.params["equation"], node.input_shapes
    grads = []
    for i, needed in enumerate(node.needs_input_grad):
        if not needed:
            grads.append(None)
            continue
        plan, constants = es.gradient_plan(equation, i, shapes)
        others = [_saved(node, f"a_{k}") for k in range(len(shapes)) if k != i]
        fixed = [Tensor._wrap(c) for c in es.constant_arrays(constants, g.dtype)]
        grads.append(es.Einsum.apply(g, *others, *fixed, equation=plan))
    return tuple(grads)


def _shared_extreme(node: Node, g: Tensor) -> tuple:
    """amax / amin: the winners share g; a nan slice (no winner) gets nan."""
    with np.errstate(divide="ignore", invalid="ignore"):
        return _extreme(node, g)


EINSUM_RULES = {
    es.Einsum: _einsum,
    red.Amax: _shared_extreme,
    red.Amin: _shared_extreme,
}
RULES.update(EINSUM_RULES)
