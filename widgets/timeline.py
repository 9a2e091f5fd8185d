"""Bytes the graph holds for backward, over time: pure functions of plain data.

Forward: each op adds what it saves, in execution order. Backward: each step
releases what its op saved. A tensor saved by several ops (one array) is counted
once, from its first saver until its last saver lets it go, the same rule
``autograd_core.graph.saved_bytes`` uses (one array counts once).

A :class:`Timeline` is what ``MemoryView`` plots. It is also the hook for other
runs of the same model: a checkpointed run, say, builds its own ``Timeline``
(``timeline(graph, replay, label="checkpointed")``) and is plotted beside it.
"""

from __future__ import annotations

from dataclasses import dataclass

from autograd_core.graph import Graph

from .render import saved_node_id
from .replay import Replay

__all__ = ["Timeline", "timeline", "forward_held", "backward_held", "saved_per_op"]


@dataclass(frozen=True)
class Timeline:
    """Bytes held after each forward op and after each backward step."""

    label: str
    forward: tuple[int, ...]
    backward: tuple[int, ...]

    @property
    def peak(self) -> int:
        return max((0, *self.forward, *self.backward))


def _holder(s) -> str:
    return s.tensor if s.tensor is not None else saved_node_id(s.op, s.name)


def _holder_bytes(graph: Graph) -> dict[str, int]:
    sizes: dict[str, int] = {}
    for s in graph.saved:
        node = _holder(s)
        sizes[node] = max(sizes.get(node, 0), s.nbytes)
    return sizes


def saved_per_op(graph: Graph) -> list[tuple[str, str, tuple[str, ...], int]]:
    """(op id, op name, saved names, bytes it saved) for every op, in execution order."""
    return [(o.id, o.op, tuple(s.name for s in o.saved), sum(s.nbytes for s in o.saved))
            for o in graph.ops]


def forward_held(graph: Graph) -> list[int]:
    """Bytes held for backward after each op of the forward pass.

    >>> forward_held(capture(loss))[-1] == saved_bytes(loss)   # doctest: +SKIP
    True
    """
    sizes = _holder_bytes(graph)
    held, total, out = set(), 0, []
    for o in graph.ops:
        for s in o.saved:
            node = _holder(s)
            if node not in held:
                held.add(node)
                total += sizes[node]
        out.append(total)
    return out


def backward_held(graph: Graph, replay: Replay) -> list[int]:
    """Bytes still held after each step of the recorded sweep (from each step's
    ``released``): a tensor is freed when the last op that saved it releases it."""
    sizes = _holder_bytes(graph)
    holders: dict[str, int] = {}
    for s in graph.saved:
        holders[_holder(s)] = holders.get(_holder(s), 0) + 1
    total = sum(sizes.values())
    out = []
    for step in replay.steps:
        for node in step.released_nodes:
            holders[node] -= 1
            if holders[node] == 0:
                total -= sizes[node]
        out.append(total)
    return out


def timeline(graph: Graph, replay: Replay | None = None, label: str = "recorded") -> Timeline:
    """The forward (and, given a replay, backward) bytes of one run."""
    back = backward_held(graph, replay) if replay is not None else []
    return Timeline(label, tuple(forward_held(graph)), tuple(back))
