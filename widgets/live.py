"""Links from a captured graph back to the live program: nodes, leaves, values.

``capture`` gives plain data with ids; the widgets also want what only the live
objects know: each tensor's values (to summarise them), the leaf tensors (to read
and set ``.grad``) and the names an op's rule gives its inputs (``a``, ``b``).
Nothing here computes anything: values are the arrays the program and the
graph already hold.
"""

from __future__ import annotations

import functools
import inspect
from dataclasses import dataclass

import numpy as np

from autograd_core.recording.node import Node
from autograd_core.recording.tensor import Tensor
from autograd_core.sweep.engine import reverse_topological
from autograd_core.tools.graph import Graph, capture

from . import messages
from .graph_ids import holder_id

__all__ = ["Live", "live", "input_names"]


@dataclass
class Live:
    """A graph plus the live objects behind it.

    ``nodes``: op id -> recorded ``Node``; ``leaves``: tensor id -> leaf ``Tensor``
    (those that require grad); ``values``: node id -> array, for every tensor whose
    values are still held (by the program, as a leaf, or as a saved tensor) and
    every op-made saved array; ``input_names``: op id -> the names of its inputs.
    """

    output: Tensor
    graph: Graph
    nodes: dict[str, Node]
    leaves: dict[str, Tensor]
    values: dict[str, np.ndarray]
    input_names: dict[str, tuple[str, ...]]


def live(output, what: str = "live") -> Live:
    """Capture ``output``'s graph and collect the live objects behind it.

    >>> view = live(loss)                             # doctest: +SKIP
    >>> view.values["t0"].shape  # doctest: +SKIP
    (2, 3)
    """
    if not isinstance(output, Tensor):
        raise messages.view_needs_tensor(what, output, f"{what}(loss)")
    graph = capture(output)
    nodes: dict[str, Node] = {}
    leaves: dict[str, Tensor] = {}
    values: dict[str, np.ndarray] = {graph.output: output.numpy()}
    if output.grad_fn is None:
        if output.requires_grad:
            leaves[graph.output] = output
        return Live(output, graph, nodes, leaves, values, {})
    for node in reverse_topological(output.grad_fn):
        nodes[graph.id_of(node)] = node
    names: dict[str, tuple[str, ...]] = {}
    for op in graph.ops:
        node = nodes[op.id]
        names[op.id] = input_names(node.op, len(op.inputs))
        for edge, tid in zip(node.edges, op.inputs):
            if isinstance(edge, Tensor):
                leaves[tid] = edge
                values[tid] = edge.numpy()
        out = node.output
        if out is not None:
            values[op.output] = out.numpy()
        for info, saved in zip(op.saved, node.saved.values()):
            if isinstance(saved.array, np.ndarray) or np.isscalar(saved.array):
                values.setdefault(holder_id(info), np.asarray(saved.array))
    return Live(output, graph, nodes, leaves, values, names)


@functools.cache
def _signature_names(forward) -> tuple[tuple[str, ...], str | None]:
    params = list(inspect.signature(forward).parameters.values())[1:]  # skip ctx
    fixed = tuple(p.name for p in params
                  if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD))
    var = next((p.name for p in params if p.kind == p.VAR_POSITIONAL), None)
    return fixed, var


def input_names(op, n: int) -> tuple[str, ...]:
    """The names ``op``'s forward (and so its rule) gives its ``n`` inputs; inputs caught
    by ``*arrays`` are called ``a_0``, ``a_1``... as the joining rules write them.

    >>> from autograd_core.ops.matmul import MatMul
    >>> input_names(MatMul, 2)
    ('a', 'b')
    """
    fixed, var = _signature_names(op.forward)
    return tuple(fixed[i] if i < len(fixed) else (f"a_{i}" if var else str(i))
                 for i in range(n))
