"""The reverse sweep, as a sequence of steps.

Backpropagation walks the recorded graph from the output back to the leaves. Each
node is visited once, after every node that consumed its output (reverse
topological order; since a node is always recorded after its inputs, sorting by
recording order, newest first, is such an order). At each visit:

1. the gradients that arrived for the node's output are already summed (fan-out);
2. the op's backward turns that upstream gradient into one gradient per input,
   reading the tensors the op saved;
3. where an input was broadcast in the forward pass, its gradient is summed back
   to the input's shape (the un-broadcast, done here once for every op);
4. each input's gradient is added to what that input already received: into the
   buffer of the node that computed it, or into ``.grad`` of a leaf;
5. the node's saved tensors are released unless ``retain_graph=True``.

``backward_steps`` yields one :class:`Step` per visit with everything above, so a
stepper can replay it; ``Tensor.backward`` simply runs it to the end.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from operator import attrgetter

import numpy as np

from . import errors, function
from .function import Node, observers


@dataclass(slots=True, eq=False)
class Sent:
    """The gradient one step sent along one edge, and how it was accumulated."""

    input_index: int
    target: object  # the input's Node, or the leaf Tensor
    grad: np.ndarray
    unbroadcast_from: tuple | None  # the rule's shape, when the engine summed it down
    previous: np.ndarray | None  # what the target held before (None: its first gradient)
    total: np.ndarray  # what the target holds after

    @property
    def accumulated(self) -> bool:
        """True when the target had already received a gradient (fan-out)."""
        return self.previous is not None

    def __repr__(self) -> str:
        return (f"Sent(input {self.input_index} -> {self.target!r}, shape {self.grad.shape}"
                f"{', accumulated' if self.accumulated else ''})")


@dataclass(slots=True, eq=False)
class Step:
    """One visit of the reverse sweep."""

    index: int
    node: Node | None  # None when the output is itself a leaf
    grad_output: np.ndarray  # the upstream gradient g
    reads: list[str]  # names of the saved tensors the op's backward read
    sent: list[Sent]
    released: list[str]  # names of the saved tensors released after the step

    def __repr__(self) -> str:
        name = self.node.op.name if self.node is not None else "leaf"
        return (f"<Step {self.index}: {name}, reads {self.reads}, "
                f"sends {len(self.sent)}, releases {self.released}>")


def broadcast_axes(from_shape: tuple, to_shape: tuple) -> tuple[int, ...]:
    """The axes of ``from_shape`` that broadcasting ``to_shape`` up to it added or
    stretched: the axes ``sum_to`` sums over to undo it.

    >>> broadcast_axes((4, 3), (3,)), broadcast_axes((4, 3), (1, 3))
    ((0,), (0,))
    """
    lead = len(from_shape) - len(to_shape)
    return tuple(range(lead)) + tuple(
        lead + i for i, size in enumerate(to_shape) if size == 1 and from_shape[lead + i] != 1
    )


def sum_to(grad: np.ndarray, shape: tuple) -> np.ndarray:
    """Sum a broadcast gradient back down to ``shape`` (the backward of broadcasting).

    >>> sum_to(np.ones((4, 3)), (3,)).tolist()
    [4.0, 4.0, 4.0]
    """
    if grad.shape == shape:
        return grad
    return grad.sum(axis=broadcast_axes(grad.shape, shape), keepdims=True).reshape(shape)


def reverse_topological(root: Node) -> list[Node]:
    """Every node reachable from ``root``, each after all of its consumers."""
    seen = {root}
    stack = [root]
    nodes = []
    while stack:
        node = stack.pop()
        nodes.append(node)
        for edge in node.edges:
            if edge.__class__ is Node and edge not in seen:
                seen.add(edge)
                stack.append(edge)
    nodes.sort(key=attrgetter("seq"), reverse=True)
    return nodes


def _seed(output, gradient) -> np.ndarray:
    data = output._data
    if gradient is None:
        if data.size != 1:
            raise errors.implicit_grad(data.shape)
        return np.ones_like(data)
    seed = np.array(gradient._data if hasattr(gradient, "_data") else gradient,
                    dtype=data.dtype)
    if seed.shape != data.shape:
        raise errors.gradient_shape(seed.shape, data.shape)
    return seed


def _own(grad, upstream, sent) -> np.ndarray:
    """A gradient about to be stored in ``.grad``, copied if it may alias another."""
    if grad is upstream or grad.base is not None:
        return grad.copy()
    for s in sent:
        if s.grad is grad:
            return grad.copy()
    return grad


def _accumulate_leaf(leaf, grad, upstream, sent):
    if leaf._hooks:
        for hook in leaf._hooks:
            result = hook(_as_tensor(grad))
            if result is not None:
                grad = result._data
    previous = leaf.grad._data if leaf.grad is not None else None
    total = _own(grad, upstream, sent) if previous is None else previous + grad
    leaf.grad = _as_tensor(total)
    return previous, total


def _as_tensor(array):
    return function.Tensor._wrap(array)


def backward_steps(output, gradient=None, retain_graph: bool = False) -> Iterator[Step]:
    """The reverse sweep from ``output``, one :class:`Step` per node visited.

    Running it to the end is exactly ``output.backward(gradient, retain_graph)``:

    >>> for step in backward_steps(loss):          # doctest: +SKIP
    ...     print(step.node.op.name, step.reads)
    """
    if not output._requires_grad:
        raise errors.no_grad_fn()
    seed = _seed(output, gradient)
    root = output.grad_fn
    if root is None:  # the output is itself a leaf
        sent = []
        previous, total = _accumulate_leaf(output, seed, None, sent)
        yield Step(0, None, seed, [], [Sent(0, output, seed, None, previous, total)], [])
        return
    yield from _sweep(root, seed, retain_graph)


def _sweep(root: Node, seed: np.ndarray, retain_graph: bool) -> Iterator[Step]:
    buffers = {root: seed}
    for index, node in enumerate(reverse_topological(root)):
        upstream = buffers.pop(node, None)
        if upstream is None:  # every path from the output to here carried no gradient
            continue
        if node.hooks:
            for hook in node.hooks:
                result = hook(_as_tensor(upstream))
                if result is not None:
                    upstream = result._data
        if node.retains_grad:
            _retain(node, upstream)

        node.reads = reads = []
        grads = node.op.backward(node, upstream)
        node.reads = None
        if observers:
            for observer in observers:
                observer.on_backward(node, upstream, grads)

        sent = []
        shapes = node.input_shapes
        dtypes = node.input_dtypes
        for i, edge in enumerate(node.edges):
            if edge is None:
                continue
            grad = grads[i]
            if grad is None:
                continue
            if grad.__class__ is not np.ndarray:
                grad = np.asarray(grad)
            broadcast_from = None
            if grad.shape != shapes[i]:
                broadcast_from = grad.shape
                grad = sum_to(grad, shapes[i])
            if grad.dtype != dtypes[i]:
                grad = grad.astype(dtypes[i])
            if edge.__class__ is Node:
                previous = buffers.get(edge)
                total = grad if previous is None else previous + grad
                buffers[edge] = total
            else:
                previous, total = _accumulate_leaf(edge, grad, upstream, sent)
            sent.append(Sent(i, edge, grad, broadcast_from, previous, total))

        released = [] if retain_graph else node.release()
        yield Step(index, node, upstream, reads, sent, released)


def _retain(node: Node, grad: np.ndarray) -> None:
    tensor = node.output
    if tensor is not None:
        tensor.grad = _as_tensor(grad if tensor.grad is None else tensor.grad._data + grad)
