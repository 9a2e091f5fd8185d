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
   buffer of the node that computed it, or, in place, into ``.grad`` of a leaf (a leaf
   with hooks is summed in a buffer too, and its hooks run once, on the total);
5. the node's saved tensors are released unless ``retain_graph=True``.

``backward_steps`` yields one :class:`Step` per visit with everything above, so a
stepper can replay it. ``Tensor.backward`` runs the very same loop (``_sweep``) to the
end with ``record=False``: the visits, sums, hooks and releases are the same, only the
step records (``Step``, ``Sent`` and the names of what was read) are not built, since
nobody will look at them. tests/engine/test_lean_backward.py holds the two runs identical.

``create_graph=True`` runs the same loop too, with Tensors instead of arrays: each op's
backward runs as recorded ops, and so do the sums of step 4, so every gradient it leaves
has a graph of its own and can be differentiated again (second derivatives, H·v). The
hooks, observers (anomaly detection, ``count_ops``), step records and releases are the
ones above; tests/engine/test_one_sweep.py holds the two modes to that.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from operator import attrgetter

import numpy as np

from .. import errors
from ..ops.recorded_numpy import RecordedContext
from ..recording.accumulate import widened
from ..recording.grad_mode import state as _grad_mode
from ..recording.node import Node, observers
from ..recording.tensor import Tensor


@dataclass(slots=True, eq=False)
class Sent:
    """The gradient one step sent along one edge, and how it was accumulated.

    For a node, ``previous``/``total`` are its running sum; for a leaf, its ``.grad``
    before and after. A leaf with hooks is summed like a node until its last edge, where
    its hooks run once on the sum and ``previous``/``total`` are again its ``.grad``.
    """

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
    axes = broadcast_axes(grad.shape, shape)
    wide = widened(grad)  # float16 is added up in float32 (recording/accumulate.py)
    if shape and grad.shape[len(axes):] == shape:  # only leading axes were added
        summed = wide.sum(axis=axes)  # (a new array of the shape, not a reshaped view)
    else:
        summed = wide.sum(axis=axes, keepdims=True).reshape(shape)
    return summed if wide is grad else summed.astype(grad.dtype)


def reverse_topological(root: Node) -> list[Node]:
    """Every node reachable from ``root``, each after all of its consumers."""
    return _walk(root)[0]


def _walk(*roots: Node) -> tuple[list[Node], dict]:
    """``reverse_topological(root)`` (over several roots: every node reachable from any),
    and each leaf with hooks -> (node, input index) of the last edge the sweep reaches
    it by. A hooked leaf's contributions are summed until then, and its hooks run once,
    on the total, as PyTorch runs them (a clipping hook sees the whole gradient)."""
    seen = set(roots)
    stack = list(roots)
    nodes = []
    hooked = {}
    while stack:
        node = stack.pop()
        nodes.append(node)
        for i, edge in enumerate(node.edges):
            if edge.__class__ is Node:
                if edge not in seen:
                    seen.add(edge)
                    stack.append(edge)
            elif edge is not None and edge._hooks:
                last = hooked.get(edge)
                # the sweep visits nodes newest first and a node's edges in order
                if last is None or (node.seq, -i) < (last[0].seq, -last[1]):
                    hooked[edge] = (node, i)
    nodes.sort(key=attrgetter("seq"), reverse=True)
    return nodes, hooked


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


def _seed_tensor(output, gradient, index: int = 0):
    """The seed of a recorded sweep (``create_graph``): a Tensor ``gradient`` as given (it
    may itself require grad: double backward differentiates through it), else
    :func:`_seed`'s array as a constant Tensor."""
    if isinstance(gradient, Tensor):
        if gradient.shape != output.shape:
            raise errors.grad_output_shape(index, gradient.shape, output.shape)
        return gradient
    return _as_tensor(_seed(output, gradient))


class _SweepState(threading.local):
    """Why the ops running now run, for the observers that sort them (``count_ops``).
    ``recording`` is True while a ``create_graph`` sweep runs: the ops it records are the
    backward pass's work, not the program's forward pass. ``recomputing`` counts the
    :func:`recomputing` blocks open: a checkpoint re-running its segment."""

    recording = False
    recomputing = 0


sweep_state = _SweepState()


@contextlib.contextmanager
def recomputing() -> Iterator[None]:
    """Mark forward ops run inside this block as recomputation (used by checkpoint)."""
    sweep_state.recomputing += 1
    try:
        yield
    finally:
        sweep_state.recomputing -= 1


def _run_hooks(hooks: list, grad):
    """Call each hook on the gradient in turn; a returned Tensor replaces it. Like
    PyTorch, a hook may change the values, never the shape or the dtype. A hook sees a
    Tensor: the array wrapped in the lean sweep, the recorded gradient itself under
    ``create_graph`` (what it returns then stays on the recorded graph)."""
    recorded = isinstance(grad, Tensor)
    for hook in tuple(hooks):  # a hook may remove itself
        result = hook(grad if recorded else _as_tensor(grad))
        if result is None:
            continue
        if not isinstance(result, Tensor):
            raise errors.hook_returned(hook, result)
        if result.shape != grad.shape:
            raise errors.hook_changed(hook, "size", grad.shape, result.shape)
        if result.dtype != grad.dtype:
            raise errors.hook_changed(hook, "type", grad.dtype, result.dtype)
        grad = result if recorded else result._data
    return grad


def _accumulate_leaf(leaf, grad, upstream, grads=(), i=0) -> tuple:
    """Add ``grad`` into ``leaf.grad``: the first gradient is stored, a later one is added
    into the *same* Tensor, so a reference taken earlier (``g = x.grad``) sees the sum and
    its version moves on, as with PyTorch's in-place accumulation. The sum is a new array
    inside that Tensor: the arrays of earlier step records never change (so the stepper
    replays true values), and neither does a NumPy view of the old ``.grad`` (PyTorch's
    would). ``grads[:i]``: what the step's backward returned for its earlier inputs.
    A recorded gradient (``create_graph``) is added out of place, as a recorded op, so
    ``.grad`` keeps the graph of the whole sum. Returns (previous, total) for the step
    record."""
    held = leaf.grad
    if isinstance(grad, Tensor):  # a recorded gradient
        leaf.grad = grad if held is None else held + grad
        return (None if held is None else held._data), leaf.grad._data
    if held is None:
        total = _own(grad, upstream, grads[:i])
        leaf.grad = _as_tensor(total)
        return None, total
    previous = held._data
    total = np.asarray(previous + grad)  # a 0-d sum is a NumPy scalar
    replace_grad_values(held, total)
    return previous, total


def replace_grad_values(grad: Tensor, values: np.ndarray) -> None:
    """Give an existing ``.grad`` Tensor new values the way accumulation does: a new array
    inside the same Tensor (earlier arrays and NumPy views of them never change), with its
    version moved on. The stepper calls it to show ``.grad`` as it was after a step."""
    grad._data = values
    grad._version[0] += 1


def _own(grad: np.ndarray, upstream, others) -> np.ndarray:
    """A gradient about to be stored in ``.grad``, copied if it may alias another array
    (a view, the step's upstream gradient, or the array sent along another edge). The
    copy keeps the array's memory layout: the sums later ops take over it then run in the
    same order as over the original, so a checkpoint, which reads its inputs' gradients
    from ``.grad``, passes on the very bits a plain run would."""
    if grad is upstream or grad.base is not None:
        return grad.copy(order="K")
    for other in others:
        if other is grad:
            return grad.copy(order="K")
    return grad


def _as_tensor(array):
    return Tensor._wrap(array)


def _array(grad):
    """The values of a gradient: the array itself, or a recorded gradient's array."""
    return grad._data if isinstance(grad, Tensor) else grad


def backward_steps(output, gradient=None, retain_graph: bool = False,
                   create_graph: bool = False) -> Iterator[Step]:
    """The reverse sweep from ``output``, one :class:`Step` per node visited.

    Running it to the end does exactly what ``output.backward(gradient, retain_graph,
    create_graph)`` does (which runs the same sweep without building the records):

    >>> for step in backward_steps(loss):          # doctest: +SKIP
    ...     print(step.node.op.name, step.reads)
    """
    return _start(output, gradient, retain_graph, record=True, graph=create_graph)


def backward(output, gradient=None, retain_graph: bool = False,
             create_graph: bool = False) -> None:
    """The reverse sweep from ``output`` run to the end, keeping no step records: what
    ``Tensor.backward`` does."""
    for _ in _start(output, gradient, retain_graph, record=False, graph=create_graph):
        pass  # with record=False the sweep yields nothing: it all runs in this one call


def _start(output, gradient, retain_graph: bool, record: bool,
           graph: bool = False) -> Iterator[Step]:
    if not output._requires_grad:
        raise errors.no_grad_fn()
    seed = _seed_tensor(output, gradient) if graph else _seed(output, gradient)
    root = output.grad_fn
    if root is None:  # the output is itself a leaf
        previous, total = _leaf_arrives(output, seed, None)
        if record:
            yield Step(0, None, _array(seed), [],
                       [Sent(0, output, _array(seed), None, previous, total)], [])
        return
    yield from _sweep({root: seed}, retain_graph, record, graph=graph)


def _sweep(seeds: dict, retain_graph: bool, record: bool,
           capture: dict | None = None, graph: bool = False) -> Iterator[Step]:
    """The sweep itself, from the nodes of ``seeds`` (node -> its seed gradient), in the
    numbered steps of the module docstring. With ``record`` it yields a :class:`Step`
    after each visit; without, it yields nothing and builds no records
    (``Tensor.backward``). With ``capture`` (node or leaf -> None) no ``.grad`` is
    touched: each target's total gradient is stored in ``capture`` instead
    (``autograd.grad``).

    With ``graph`` (``create_graph=True``) the seeds are Tensors and every gradient is
    computed by recorded ops (:func:`_recorded_backward`), the sums of step 4 included,
    so the gradients it leaves have a graph of their own and can be differentiated
    again. Recording is on while it runs, even inside ``no_grad()``, as in PyTorch; the
    hooks, observers, step records and releases are the same."""
    nodes, hooked = _walk(*seeds)
    if capture is not None:  # captured leaves are summed like hooked ones, never stored
        hooked = {t: None for t in capture if t.__class__ is not Node}
    buffers = dict(seeds)  # gradients summed so far: per node, and per leaf with hooks
    if graph:  # record the sweep's ops (outside the pauses at each yield)
        caller_mode = _grad_mode.enabled
        _grad_mode.enabled = sweep_state.recording = True
    try:
        for index, node in enumerate(nodes):
            # 1. the node's gradient, summed over its consumers, arrives (hooks, retain_grad)
            upstream = buffers.pop(node, None)
            if upstream is None:  # every path from the output to here carried no gradient
                continue
            if node.hooks or node.retains_grad or capture is not None:
                upstream = _node_arrives(node, upstream, capture)

            # 2. the op's backward: one gradient per input, from what the op saved
            if record:
                node.reads = reads = []  # Node.load notes each saved tensor read here
            grads = (_recorded_backward(node, upstream) if graph
                     else node.op.backward(node, upstream))
            if record:
                node.reads = None
            if observers:
                seen = (upstream, grads) if not graph else (
                    upstream._data, [_array(grad) for grad in grads])
                for observer in observers:
                    observer.on_backward(node, *seen)

            sent = [] if record else None
            shapes, dtypes = node.input_shapes, node.input_dtypes
            for i, edge in enumerate(node.edges):
                if edge is None:
                    continue
                grad = grads[i]
                if grad is None:
                    continue
                # 3. un-broadcast (and cast) to the input's shape and dtype
                broadcast_from = None
                if (grad.__class__ is not np.ndarray or grad.shape != shapes[i]
                        or grad.dtype is not dtypes[i]):  # (the usual case needs nothing)
                    grad, broadcast_from = _fit_input(grad, shapes[i], dtypes[i])
                # 4. add it to what that input has received so far
                if edge.__class__ is Node:  # the buffer of the node that made the input
                    previous = buffers.get(edge)
                    total = buffers[edge] = grad if previous is None else previous + grad
                elif edge in hooked:  # a leaf with hooks (or to capture): summed, then arrives
                    previous, total = _hooked_leaf_receives(edge, grad, buffers, hooked,
                                                            capture, node, i, upstream, grads)
                elif capture is None:  # a plain leaf: into its .grad (a capture gives none)
                    previous, total = _accumulate_leaf(edge, grad, upstream, grads, i)
                if record:
                    sent.append(Sent(i, edge, _array(grad), broadcast_from, _array(previous),
                                     _array(total)))

            # 5. release what the op saved, unless the graph is retained
            released = [] if retain_graph else node.release()
            if record:
                if graph:
                    _grad_mode.enabled, sweep_state.recording = caller_mode, False
                yield Step(index, node, _array(upstream), reads, sent, released)
                if graph:
                    _grad_mode.enabled = sweep_state.recording = True
        for leaf in [t for t in buffers if t.__class__ is not Node]:  # a last edge sent None
            _leaf_arrives(leaf, buffers.pop(leaf), capture)  # (or a captured leaf's sum)
    finally:
        if graph:
            _grad_mode.enabled, sweep_state.recording = caller_mode, False


def _recorded_backward(node: Node, upstream) -> tuple:
    """The op's backward under ``create_graph``: one Tensor gradient per input (or None),
    each computed by recorded ops from the Tensor ``upstream``: the op's own
    ``backward``, given a context whose arrays are Tensors (``recorded_numpy``)."""
    grads = node.op.backward(RecordedContext(node), upstream)
    grads = tuple(grads) + (None,) * (len(node.edges) - len(grads))
    return tuple(grad if grad is None or isinstance(grad, Tensor)
                 else _as_tensor(np.asarray(grad)) for grad in grads)


def _node_arrives(node: Node, upstream, capture: dict | None):
    """A node's summed gradient meets the node's hooks (each may replace it), then is
    kept where it was asked for: in ``capture`` (``autograd.grad``) or in its output's
    ``.grad`` (``retain_grad``). Returns the gradient the op's backward receives."""
    if node.hooks:
        upstream = _run_hooks(node.hooks, upstream)
    if capture is not None:
        if node in capture:
            capture[node] = upstream
    elif node.retains_grad:
        _retain(node, upstream)
    return upstream


def _fit_input(grad, shape: tuple, dtype) -> tuple:
    """A backward's gradient for one input, summed down to the input's ``shape`` where
    the forward pass broadcast it, in its ``dtype``; and the shape it was summed from.
    (A recorded gradient is summed and cast by recorded ops: the same calls.)"""
    if grad.__class__ is not np.ndarray and not isinstance(grad, Tensor):
        grad = np.asarray(grad)
    broadcast_from = None
    if grad.shape != shape:
        broadcast_from = grad.shape
        grad = sum_to(grad, shape)
    if grad.dtype is not dtype and grad.dtype != dtype:  # `is`: the usual case
        grad = grad.astype(dtype)
    return grad, broadcast_from


def _hooked_leaf_receives(leaf, grad, buffers: dict, hooked: dict,
                          capture: dict | None, node: Node, i: int, upstream,
                          grads) -> tuple:
    """Add ``grad`` (input ``i`` of ``node``) into the buffer of a leaf with hooks (or one
    to capture); at its last edge the total arrives (``_leaf_arrives``: its hooks run
    once, on the sum). Returns (previous, total) for the step record."""
    previous = buffers.get(leaf)
    total = buffers[leaf] = grad if previous is None else previous + grad
    if hooked[leaf] != (node, i):
        return previous, total
    return _leaf_arrives(leaf, buffers.pop(leaf), capture, upstream, grads, i)


def _leaf_arrives(leaf, total, capture: dict | None, upstream=None,
                  grads=(), i: int = 0) -> tuple:
    """A leaf's whole gradient meets its hooks (which run once, on the total), then goes
    into ``capture`` or is added into ``leaf.grad``. Returns (previous, total)."""
    if leaf._hooks:
        total = _run_hooks(leaf._hooks, total)
    if capture is not None:
        capture[leaf] = total
        return None, _array(total)
    return _accumulate_leaf(leaf, total, upstream, grads, i)


def gradients(outputs, grad_outputs, inputs, retain_graph: bool,
              create_graph: bool = False) -> list:
    """The gradient of ``sum(output * grad_output)`` with respect to each of ``inputs``
    (None where no path leads to it), from one sweep over every output's graph, leaving
    every ``.grad`` as it was: what ``autograd.grad`` computes. A grad_output may be None
    for a scalar output. Arrays, or with ``create_graph`` Tensors with a graph."""
    capture = {x.grad_fn or x: None for x in inputs}
    roots = {}
    leaf_outputs = []
    for index, (out, given) in enumerate(zip(outputs, grad_outputs, strict=True)):
        if not out._requires_grad:
            raise errors.no_grad_fn()
        given_shape = np.shape(getattr(given, "_data", given))
        if given is not None and given_shape != out.shape:
            raise errors.grad_output_shape(index, given_shape, out.shape)
        seed = _seed_tensor(out, given, index) if create_graph else _seed(out, given)
        if out.grad_fn is None:  # the output is itself a leaf: its gradient is the seed
            leaf_outputs.append((out, seed))
        else:
            previous = roots.get(out.grad_fn)
            roots[out.grad_fn] = seed if previous is None else previous + seed
    if roots:
        for _ in _sweep(roots, retain_graph, record=False, capture=capture,
                        graph=create_graph):
            pass
    for out, seed in leaf_outputs:
        held = capture.get(out)
        capture[out] = seed if held is None else held + seed
    found = [capture[x.grad_fn or x] for x in inputs]
    if create_graph:
        return found
    return [None if g is None else np.array(g) for g in found]  # copies: nothing aliased


def _retain(node: Node, grad) -> None:
    tensor = node.output
    if tensor is None:
        return
    if isinstance(grad, Tensor):  # recorded: the sum stays on the graph
        tensor.grad = grad if tensor.grad is None else tensor.grad + grad
    else:
        tensor.grad = _as_tensor(grad if tensor.grad is None else tensor.grad._data + grad)
