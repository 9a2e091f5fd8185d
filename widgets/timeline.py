"""Bytes the graph holds for backward, over time: pure functions of plain data.

Forward: each op adds what it saves, in execution order. Backward: each step
releases what its op saved. Bytes are counted by the engine's one definition
(``autograd_core.graph.held_bytes``, the same count as ``graph.saved_bytes``): each
memory buffer once, from the first save of it until the last one is released, however
many ops saved it or views of it.

A :class:`Timeline` is what ``MemoryView`` plots. It is also the hook for other
runs of the same model: a checkpointed run, say, builds its own ``Timeline``
(``timeline(graph, replay, label="checkpointed")``) and is plotted beside it.
"""

from __future__ import annotations

from dataclasses import dataclass

from autograd_core.graph import Graph, SavedInfo, held_bytes

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


def saved_per_op(graph: Graph) -> list[tuple[str, str, tuple[str, ...], int]]:
    """(op id, op name, saved names, bytes its saves hold) for every op, in execution
    order (an op that saves one buffer twice, or two views of it, holds it once)."""
    return [(o.id, o.op, tuple(s.name for s in o.saved), held_bytes(o.saved))
            for o in graph.ops]


def forward_held(graph: Graph) -> list[int]:
    """Bytes held for backward after each op of the forward pass.

    >>> forward_held(capture(loss))[-1] == saved_bytes(loss)   # doctest: +SKIP
    True
    """
    held: list[SavedInfo] = []
    out = []
    for o in graph.ops:
        held += o.saved
        out.append(held_bytes(held))
    return out


def backward_held(graph: Graph, replay: Replay) -> list[int]:
    """Bytes still held after each step of the recorded sweep: each step lets go of
    what its op saved (the step's ``released``); a buffer stays held while any save
    of it does."""
    held = list(graph.saved)
    out = []
    for step in replay.steps:
        released = {(step.op, name) for name in step.released}
        held = [s for s in held if (s.op, s.name) not in released]
        out.append(held_bytes(held))
    return out


def timeline(graph: Graph, replay: Replay | None = None, label: str = "recorded") -> Timeline:
    """The forward (and, given a replay, backward) bytes of one run."""
    back = backward_held(graph, replay) if replay is not None else []
    return Timeline(label, tuple(forward_held(graph)), tuple(back))
