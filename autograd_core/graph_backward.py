"""The ops' gradient rules written with Tensors, for ``create_graph=True``.

The engine's sweep (``autograd_core.engine``) runs each op's ``backward`` on NumPy
arrays. Under ``create_graph=True`` it runs the same loop with Tensors and, for each
node, the rule here (:data:`RULES`, :func:`recorded_rule`), so every multiply and sum
of the backward pass is itself an op of a new graph. The arrays an op saved come back
as Tensors *attached to the graph they came from*: an input the op saved is that
input (a leaf itself, or a Tensor whose ``grad_fn`` is the node that made it), the
output is a Tensor of the node itself, and an array the op made (relu's mask) is a
constant. Differentiating a gradient therefore reaches the original leaves through
both the forward graph and the backward graph: second derivatives, Hessian-vector
products (Pearlmutter 1994), gradient penalties.

The rules left here: the CNN ops' (conv2d, pooling, batch norm) and var's in
``graph_backward_cnn``. Every other op runs its own ``backward``,
written once for both modes (see ``recorded_numpy``).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from .function import Node
from .recorded_numpy import RecordedContext
from .tensor import Tensor

__all__ = ["RULES"]


def _saved(node: Node, name: str) -> Tensor:
    """The array ``node`` saved as ``name``, as a Tensor on the graph it came from."""
    return RecordedContext(node).load(name)


def _reduced(node: Node, g: Tensor) -> Tensor:
    """A reduction's ``g`` with its reduced axes kept (size 1), broadcast to the input."""
    shape = node.input_shapes[0]
    axis = node.params.get("axis")
    axes = range(len(shape)) if axis is None else (axis if isinstance(axis, tuple) else (axis,))
    axes = {a % len(shape) for a in axes} if shape else set()
    kept = tuple(1 if i in axes else s for i, s in enumerate(shape))
    return g.reshape(kept).expand(*shape) if shape else g


def _constant(array) -> Tensor:
    return Tensor._wrap(np.asarray(array))


# op class -> (node, g) -> one gradient per input (None where none is needed), each a
# Tensor computed by recorded ops; the same rules as each op's ``rule`` text.
RULES: dict[type, Callable[[Node, Tensor], tuple]] = {
}


# The CNN ops' rules (conv2d, pooling, batch norm, var) live in their own module, which
# adds them to RULES when it is imported (here, after everything it uses is defined).
from . import graph_backward_cnn as _cnn  # noqa: E402, F401

