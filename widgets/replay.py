"""The engine's reverse sweep, recorded once so it can be replayed back and forth.

``record(output)`` runs ``autograd_core.tools.graph.backward_steps`` to the end and keeps
each :class:`~autograd_core.sweep.engine.Step` as plain data tied to the graph's ids.
Nothing is recomputed: every gradient shown is an array the engine produced.

Leaves' ``.grad`` after any number of steps comes from the engine's own
``Sent.previous``/``Sent.total``, so ``replay.leaf_grads(k)`` is exactly what the
real sweep had left in ``.grad`` after its k-th step, and
``replay.leaf_grads(len(replay))`` is what ``output.backward()`` leaves.
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass

import numpy as np

from autograd_core.recording.tensor import Tensor
from autograd_core.sweep.engine import replace_grad_values
from autograd_core.tools.graph import Graph, backward_steps

from .graph_ids import saved_targets
from .live import Live, live
from .summary import Texts, for_later, full, magnitude, sent_scale

__all__ = ["SentRecord", "StepRecord", "Replay", "record"]


@dataclass(frozen=True)
class SentRecord:
    """The gradient one step sent to one input (see ``autograd_core.sweep.engine.Sent``).

    ``tensor`` is the graph id of the tensor that receives it; ``previous`` is what
    that tensor had received before (``None`` for its first gradient) and ``total``
    the running sum after.
    """

    input_index: int
    input_name: str
    tensor: str
    to_leaf: bool
    grad: np.ndarray
    unbroadcast_from: tuple | None
    previous: np.ndarray | None
    total: np.ndarray
    # The scales ``grad`` and ``total`` were computed at (``widgets.summary.sent_scale``):
    # what is rounding noise below them shows as 0.
    scale: float = 0.0
    total_scale: float = 0.0

    @property
    def accumulated(self) -> bool:
        return self.previous is not None


@dataclass(frozen=True)
class StepRecord:
    """One visit of the sweep: ``op`` (None when the output is itself a leaf) received
    ``grad_output``, read the saved tensors ``reads`` (held by the graph nodes
    ``read_nodes``), sent ``sent`` and released ``released``."""

    number: int
    op: str | None
    grad_output: np.ndarray
    receiver: str  # the tensor whose gradient grad_output is (the op's output)
    reads: tuple[str, ...]
    read_nodes: tuple[str, ...]
    sent: tuple[SentRecord, ...]
    released: tuple[str, ...]
    released_nodes: tuple[str, ...]
    grad_output_scale: float = 0.0  # the scale grad_output was computed at


class Replay:
    """A recorded sweep. ``steps[k - 1]`` is the k-th step (k = 1..len)."""

    def __init__(self, graph: Graph, leaves: dict[str, Tensor], steps: list[StepRecord],
                 initial: dict[str, np.ndarray | None], saved_text: dict[tuple[str, str], str]):
        self.graph = graph
        self.ops = {o.id: o for o in graph.ops}
        self.tensors = {t.id: t for t in graph.tensors}
        self.leaves = leaves
        self.steps = steps
        self.initial = initial
        self.saved_text = saved_text
        # leaf id -> ([step numbers that changed it], [the record that changed it])
        self._history: dict[str, tuple[list[int], list[SentRecord]]] = {
            tid: ([], []) for tid in leaves}
        # tensor id -> ([step numbers that sent to it], [(step, from op, record)])
        self._received: dict[str, tuple[list[int], list]] = {}
        for step in steps:
            for s in step.sent:
                numbers, items = self._received.setdefault(s.tensor, ([], []))
                numbers.append(step.number)
                items.append((step.number, step.op, s))
                if s.to_leaf:
                    numbers, records = self._history[s.tensor]
                    numbers.append(step.number)
                    records.append(s)
        self._applied: int | None = None  # the step apply_to_leaves last set
        self._grad_tensors: dict[str, Tensor] = {}  # the Tensor each leaf's .grad reuses
        self._grad_text: dict[tuple[str, int], str] = {}

    def __len__(self) -> int:
        return len(self.steps)

    def step(self, k: int) -> StepRecord | None:
        """The k-th step (1-based), or None for k = 0 (before the sweep)."""
        return self.steps[k - 1] if k > 0 else None

    def leaf_grad(self, tid: str, k: int) -> np.ndarray | None:
        """What leaf ``tid`` held in ``.grad`` after ``k`` steps."""
        numbers, records = self._history[tid]
        i = bisect.bisect_right(numbers, k)
        return records[i - 1].total if i else self.initial[tid]

    def leaf_grads(self, k: int) -> dict[str, np.ndarray | None]:
        """Every leaf's ``.grad`` after ``k`` steps."""
        return {tid: self.leaf_grad(tid, k) for tid in self._history}

    def contributions(self, tid: str, k: int) -> list[tuple[int, str | None, SentRecord]]:
        """Every gradient sent to tensor ``tid`` in steps 1..k: (step, from op, record)."""
        numbers, items = self._received.get(tid, ((), ()))
        return list(items[:bisect.bisect_right(numbers, k)])

    def apply_to_leaves(self, k: int) -> None:
        """Set each live leaf's ``.grad`` to what it held after k steps (a copy), the way
        the engine changes a ``.grad``: a new array inside the Tensor already there, so a
        reference taken earlier (``g = w.grad``) follows the stepper as it follows the
        sweep. A leaf keeps one Tensor for its ``.grad`` (set back after a step that had
        none), so jumping back and forth over thousands of leaves makes no new objects
        for Python's collector to examine: its full passes would land on steps.

        The first call sets every leaf; later ones set only the leaves whose gradient
        changed between the last step applied and ``k``, so a step on a graph with
        thousands of leaves touches the few the sweep changed."""
        if self._applied is None:
            changed = list(self.leaves)
        elif abs(k - self._applied) < len(self.leaves) // 4:  # a few steps: read them
            low, high = sorted((self._applied, k))
            changed = list({s.tensor for step in self.steps[low:high] for s in step.sent
                            if s.to_leaf})
        else:  # a long jump: ask each leaf's history
            a = self._applied
            changed = [tid for tid, (numbers, _) in self._history.items()
                       if bisect.bisect_right(numbers, a) != bisect.bisect_right(numbers, k)]
        for tid in changed:
            grad, leaf = self.leaf_grad(tid, k), self.leaves[tid]
            if grad is None:
                leaf.grad = None
                continue
            held = leaf.grad if leaf.grad is not None else self._grad_tensors.get(tid)
            if held is None:
                held = Tensor(np.array(grad))
            else:  # as the engine accumulates: a new array inside the same Tensor
                replace_grad_values(held, np.array(grad))
            leaf.grad = self._grad_tensors[tid] = held
        self._applied = k

    def grad_text(self, tid: str, k: int) -> str:
        """``full`` text of leaf ``tid``'s ``.grad`` after ``k`` steps (formatted once)."""
        numbers, records = self._history[tid]
        i = bisect.bisect_right(numbers, k)
        key = (tid, i)
        if key not in self._grad_text:
            grad, scale = ((records[i - 1].total, records[i - 1].total_scale) if i
                           else (self.initial[tid], 0.0))
            self._grad_text[key] = "None" if grad is None else full(grad, scale=scale)
        return self._grad_text[key]


def record(output, gradient=None, retain_graph: bool = False, view: Live | None = None,
           what: str = "record") -> Replay:
    """Run the engine's sweep from ``output`` to the end and keep every step.

    Afterwards the leaves' ``.grad`` are what ``output.backward(gradient,
    retain_graph)`` leaves; with ``retain_graph=False`` the saved tensors are released.

    >>> replay = record(loss)                       # doctest: +SKIP
    >>> [s.op for s in replay.steps]  # doctest: +SKIP
    ['op3', 'op2', 'op1', 'op0']
    """
    view = view or live(output, what)
    graph = view.graph
    holders = saved_targets(graph)
    initial = {tid: None if leaf.grad is None else np.array(leaf.grad.numpy())
               for tid, leaf in view.leaves.items()}
    # The sweep releases saved arrays as it goes; keep a description of each, not the
    # array itself, so that released memory really is released.
    saved_text = Texts({key: for_later(view.values[node]) if node in view.values
                        else "(not kept)" for key, node in holders.items()})
    out_of = {op.id: op.output for op in graph.ops}
    received: dict[str, float] = {}  # tensor id -> the scale its gradient so far was made at
    steps = []
    for number, step in enumerate(backward_steps(output, gradient, retain_graph), start=1):
        op = graph.id_of(step.node) if step.node is not None else None
        sent = []
        receiver = out_of.get(op, graph.output)
        for s in step.sent:
            target = graph.id_of(s.target)
            to_leaf = target not in out_of
            tensor = target if to_leaf else out_of[target]
            names = view.input_names.get(op, ())
            scale = sent_scale(step.grad_output, s.grad)
            # A running sum adds this gradient to what came before: its terms are both.
            added = (magnitude(s.previous), magnitude(s.grad)) if s.previous is not None else ()
            received[tensor] = max(received.get(tensor, 0.0), scale, *added)
            sent.append(SentRecord(
                s.input_index,
                names[s.input_index] if s.input_index < len(names) else str(s.input_index),
                tensor, to_leaf, s.grad, s.unbroadcast_from, s.previous, s.total,
                scale, received[tensor]))
        steps.append(StepRecord(
            number, op, step.grad_output, receiver, tuple(step.reads),
            tuple(dict.fromkeys(holders[op, r] for r in step.reads)), tuple(sent),
            tuple(step.released), tuple(holders[op, r] for r in step.released),
            received.get(receiver, 0.0)))
    return Replay(graph, dict(view.leaves), steps, initial, saved_text)
