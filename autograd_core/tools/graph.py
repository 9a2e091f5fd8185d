"""The recorded graph as plain data, for looking at rather than running.

``capture(output)`` walks the nodes recorded behind ``output`` and returns a
:class:`Graph`: op nodes and tensor nodes with stable IDs that follow execution
order (``op0``, ``op1``, ... and ``t0``, ``t1``, ...), the edges between them, and
every saved tensor with its name, shape, dtype and byte size. The same program
always gives the same IDs, so a picture drawn from it is stable run to run.

Saved bytes follow the engine's one definition (``autograd_core.tools.buffers``): each
memory buffer counts once. A saved tensor's ``buffer`` names the buffer it lives in
(``b0``, ``b1``, ... in execution order; views of one array share one), so the
captured data gives the same totals as the live arrays (``held_bytes``).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

import numpy as np

from .. import errors
from ..errors import CycleError
from ..recording.node import Node
from ..sweep.engine import backward_steps, reverse_topological
from .buffers import owner, saved_buffer_bytes

__all__ = ["Graph", "OpInfo", "TensorInfo", "SavedInfo", "capture", "saved_bytes",
           "held_bytes", "backward_steps", "topological_order", "CycleError"]


@dataclass(frozen=True)
class TensorInfo:
    """A tensor in the graph. ``kind`` is one of ``"leaf"`` (requires grad),
    ``"constant"``, ``"frozen parameter"``, ``"intermediate"`` or ``"output"``."""

    id: str
    kind: str
    shape: tuple
    dtype: str
    name: str | None = None
    producer: str | None = None  # the op that computed it
    label: str | None = None  # a constant's value, e.g. "2.0"


@dataclass(frozen=True)
class SavedInfo:
    """One tensor an op saved for its backward. ``tensor`` is the graph tensor it
    is (an input or the output of the op) or ``None`` if the op made it itself.

    ``nbytes`` is the array's own size; ``buffer`` is the id of the memory buffer it
    lives in (shared by every view of one array) and ``buffer_nbytes`` that buffer's
    size, which is what keeping it costs. Released: ``nbytes`` 0, ``buffer`` None.
    """

    op: str
    name: str
    shape: tuple
    dtype: str
    nbytes: int
    tensor: str | None
    released: bool
    buffer: str | None = None
    buffer_nbytes: int = 0


@dataclass(frozen=True)
class OpInfo:
    """An op node: what ran, on which tensors, and what it kept.

    ``source`` is where the learner's code called it, ``(filename, lineno,
    function)``, if source lines were being recorded (``autograd_core.recording.source``), else
    ``None``. The filename differs from machine to machine (a notebook cell's is a
    temporary file), so it takes no part in equality or repr, and nothing drawn from
    a graph (what notebooks store) shows it: only the live inspector does.
    """

    id: str
    op: str
    rule: str
    inputs: tuple[str, ...]
    output: str
    saved: tuple[SavedInfo, ...]
    order: int
    module: str | None = None
    source: tuple[str, int, str] | None = field(default=None, compare=False, repr=False)
    # (path, type name) of the module the op ran in and of each module around it
    module_kinds: tuple[tuple[str, str], ...] = field(default=(), compare=False, repr=False)


@dataclass(frozen=True)
class Graph:
    """A captured graph. ``ops`` are in execution order; ``edges`` are (from, to) ids."""

    ops: tuple[OpInfo, ...]
    tensors: tuple[TensorInfo, ...]
    edges: tuple[tuple[str, str], ...]
    output: str
    node_ids: dict = field(default_factory=dict, repr=False, compare=False)
    leaf_ids: dict = field(default_factory=dict, repr=False, compare=False)

    @property
    def saved(self) -> list[SavedInfo]:
        return [s for op in self.ops for s in op.saved]

    @property
    def saved_bytes(self) -> int:
        """Bytes held for backward when captured (each buffer once, see ``held_bytes``)."""
        return held_bytes(self.saved)

    def op(self, op_id: str) -> OpInfo:
        return next(o for o in self.ops if o.id == op_id)

    def tensor(self, tensor_id: str) -> TensorInfo:
        return next(t for t in self.tensors if t.id == tensor_id)

    def id_of(self, target) -> str | None:
        """The graph id of a live ``Node`` (its op id) or leaf ``Tensor`` (its tensor id)."""
        if isinstance(target, Node):
            return self.node_ids.get(target.seq)
        return self.leaf_ids.get(id(target))


def _dtype_name(dtype) -> str:
    return str(np.dtype(dtype)) if dtype is not None else "python number"


def capture(output) -> Graph:
    """The graph recorded behind ``output``, as plain data.

    >>> g = capture(loss)                       # doctest: +SKIP
    >>> [op.op for op in g.ops]                 # doctest: +SKIP
    ['matmul', 'add', 'tanh', 'mean']
    """
    root = output.grad_fn
    if root is None:
        kind = "leaf" if output.requires_grad else "constant"
        t = TensorInfo("t0", kind, output.shape, _dtype_name(output.dtype), output.name)
        return Graph((), (t,), (), "t0", {}, {id(output): "t0"})

    nodes = sorted(reverse_topological(root), key=lambda n: n.seq)
    node_ids = {n.seq: f"op{i}" for i, n in enumerate(nodes)}
    output_ids: dict[int, str] = {}
    leaf_ids: dict[int, str] = {}
    tensors: list[TensorInfo] = []
    edges: list[tuple[str, str]] = []
    ops: list[OpInfo] = []
    buffers: dict[int, str] = {}  # id of a saved array's owner -> "b0", "b1", ...

    def new_tensor(**kw) -> str:
        tid = f"t{len(tensors)}"
        tensors.append(TensorInfo(tid, **kw))
        return tid

    for order, node in enumerate(nodes):
        op_id = node_ids[node.seq]
        inputs = []
        for i, edge in enumerate(node.edges):
            if isinstance(edge, Node):
                tid = output_ids[edge.seq]
            elif edge is not None:  # a leaf that requires grad
                tid = leaf_ids.get(id(edge))
                if tid is None:
                    tid = leaf_ids[id(edge)] = new_tensor(
                        kind="leaf", shape=edge.shape, dtype=_dtype_name(edge.dtype),
                        name=edge.name)
            else:
                kind, label = (node.constants or {}).get(i, ("tensor", None))
                tid = new_tensor(
                    kind="frozen parameter" if kind == "frozen parameter" else "constant",
                    shape=node.input_shapes[i], dtype=_dtype_name(node.input_dtypes[i]),
                    name=label if kind in ("tensor", "frozen parameter") else None,
                    label=repr(label) if kind == "number" else None)
            inputs.append(tid)
            edges.append((tid, op_id))
        out_id = output_ids[node.seq] = new_tensor(
            kind="output" if node is root else "intermediate", shape=node.output_shape,
            dtype=_dtype_name(node.output_dtype), name=node.output_name, producer=op_id)
        edges.append((op_id, out_id))
        saved = tuple(_saved_info(op_id, s, inputs, out_id, buffers)
                      for s in node.saved.values())
        ops.append(OpInfo(op_id, node.op.name, node.op.rule, tuple(inputs), out_id, saved,
                          order, node.module, node.source, node.module_kinds))
    return Graph(tuple(ops), tuple(tensors), tuple(edges), output_ids[root.seq], node_ids,
                 leaf_ids)


def _saved_info(op_id, saved, inputs, out_id, buffers: dict[int, str]) -> SavedInfo:
    """``saved`` as data; ``buffers`` (id of an owner array -> its buffer id) grows."""
    source, tensor, buffer, size = saved.source, None, None, 0
    if source is not None:
        tensor = inputs[source[1]] if source[0] == "input" else out_id
    if isinstance(saved.array, np.ndarray | np.generic):
        base = owner(saved.array)
        buffer = buffers.setdefault(id(base), f"b{len(buffers)}")
        size = base.nbytes
    return SavedInfo(op_id, saved.name, tuple(saved.shape), _dtype_name(saved.dtype),
                     saved.nbytes, tensor, saved.released, buffer, size)


def saved_bytes(output) -> int:
    """Bytes currently held by the saved tensors reachable from ``output``: each memory
    buffer once, however many ops saved it or views of it (``autograd_core.tools.buffers``).

    >>> import autograd_core as ag
    >>> x = ag.tensor([1.0, 2.0], requires_grad=True)
    >>> saved_bytes(x * x)      # mul saved x twice (as a and as b): one buffer
    16
    """
    if output.grad_fn is None:
        return 0
    return saved_buffer_bytes(reverse_topological(output.grad_fn))


def held_bytes(saved: Iterable[SavedInfo]) -> int:
    """Bytes that these captured saved tensors hold: each buffer once, released ones
    nothing. The same count as ``saved_bytes`` on the live arrays, done on data.

    >>> held_bytes(capture(loss).saved) == saved_bytes(loss)   # doctest: +SKIP
    True
    """
    return sum({s.buffer: s.buffer_nbytes for s in saved if s.buffer is not None}.values())


def topological_order(nodes, edges) -> list:
    """Kahn's algorithm on plain data: an order where every edge goes forward.

    ``nodes`` is any iterable of ids and ``edges`` (from, to) pairs. A graph the
    engine records never has a cycle (an op's inputs exist before it runs); a graph
    written by hand might, and then there is no order: ``CycleError`` names it.

    >>> topological_order(["a", "b"], [("a", "b")])
    ['a', 'b']
    """
    nodes = list(dict.fromkeys(nodes))
    successors: dict = {n: [] for n in nodes}
    indegree: dict = {n: 0 for n in nodes}
    for a, b in edges:
        for n in (a, b):
            if n not in successors:
                successors[n], indegree[n] = [], 0
                nodes.append(n)
        successors[a].append(b)
        indegree[b] += 1
    ready = [n for n in nodes if indegree[n] == 0]
    order = []
    while ready:
        n = ready.pop(0)
        order.append(n)
        for m in successors[n]:
            indegree[m] -= 1
            if indegree[m] == 0:
                ready.append(m)
    if len(order) < len(nodes):
        cycle = " -> ".join(map(str, _find_cycle(successors, indegree)))
        raise errors.graph_cycle(cycle)
    return order


def _find_cycle(successors, indegree) -> list:
    """One cycle among the nodes Kahn's algorithm could not order, from its first node (by
    name) round to it again. Every node left waits for another node left (a node fed by a
    cycle, too, which is not on it), so the walk goes backwards, along what feeds each."""
    left = {n for n, d in indegree.items() if d > 0}
    feeds: dict = {n: [] for n in left}
    for a, outs in successors.items():
        if a in left:
            for b in outs:
                if b in left:
                    feeds[b].append(a)
    start = min(left, key=str)
    path, seen = [start], {start: 0}
    while feeds[path[-1]][0] not in seen:
        seen[feeds[path[-1]][0]] = len(path)
        path.append(feeds[path[-1]][0])
    cycle = path[seen[feeds[path[-1]][0]]:][::-1]  # forwards now: each feeds the next
    first = min(range(len(cycle)), key=lambda i: str(cycle[i]))
    cycle = cycle[first:] + cycle[:first]
    return cycle + [cycle[0]]
