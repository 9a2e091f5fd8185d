"""``create_graph=True`` through masked_fill, tril/triu, cumsum, flip, pad, gather and
scatter_add: their backward rules written with recorded ops, registered into
``graph_backward.RULES``.

All seven ops are linear in what gets a gradient, so each rule applies ops of the
same family to ``g`` and the set is closed: masked_fill's rule is a masked_fill (and a
``where`` for the value), tril's a tril, cumsum's two flips around a cumsum, flip's a
flip, pad's a pad with the pads negated; gather's is a scatter_add into zeros and
scatter_add's a gather (padded with zeros when src is larger than the index). Only
the index and the mask the forward saved are read, as constants.
"""

from __future__ import annotations

from .function import Node
from .graph_backward import RULES, _saved
from .ops import masking as mk
from .ops import scatter as sc
from .tensor import Tensor

__all__ = ["MASKING_RULES"]


def _scatter_add(node: Node, g: Tensor) -> tuple:
    """da = g; dsrc = gather(g, dim, index), padded with zeros up to src's shape."""
    needs = node.needs_input_grad
    dsrc = None
    if needs[2]:
        dsrc = sc.Gather.apply(g, _saved(node, "index"), dim=node.params["dim"])
        shape = node.input_shapes[2]
        if dsrc.shape != shape:
            if not shape:  # a 0-d src read through a one-element index
                dsrc = dsrc.reshape(())
            else:
                missing = [s - n for s, n in zip(shape, dsrc.shape, strict=True)]
                pads = tuple(p for m in reversed(missing) for p in (0, m))
                dsrc = mk.Pad.apply(dsrc, pad=pads, value=0.0)
    return (g if needs[0] else None), None, dsrc


MASKING_RULES = {
    sc.ScatterAdd: _scatter_add,
}
RULES.update(MASKING_RULES)
