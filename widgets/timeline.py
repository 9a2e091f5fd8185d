"""Bytes the graph holds for backward, over time: pure functions of plain data.

Forward: each op adds what it saves, in execution order. Backward: each step
releases what its op saved. Bytes are counted by the engine's one definition
(``autograd_core.tools.graph.held_bytes``, the same count as ``graph.saved_bytes``): each
memory buffer once, from the first save of it until the last one is released, however
many ops saved it or views of it.

A :class:`Timeline` is what ``MemoryView`` plots. It is also the hook for other
runs of the same model: a checkpointed run, say, builds its own ``Timeline``
(``timeline(graph, replay, label="checkpointed")``) and is plotted beside it.
"""

from __future__ import annotations

from dataclasses import dataclass

from autograd_core.tools.graph import Graph, SavedInfo, held_bytes

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
    held = _Held()
    out = []
    for o in graph.ops:
        for s in o.saved:
            held.add(s)
        out.append(held.total)
    return out


def backward_held(graph: Graph, replay: Replay) -> list[int]:
    """Bytes still held after each step of the recorded sweep: each step lets go of
    what its op saved (the step's ``released``); a buffer stays held while any save
    of it does."""
    held = _Held()
    saves: dict[tuple[str, str], SavedInfo] = {}
    for s in graph.saved:
        held.add(s)
        saves[s.op, s.name] = s
    out = []
    for step in replay.steps:
        for name in dict.fromkeys(step.released):
            s = saves.pop((step.op, name), None)
            if s is not None:
                held.remove(s)
        out.append(held.total)
    return out


class _Held:
    """A running ``held_bytes``: each buffer counted once while any save of it is
    held (linear in the number of saves, where recounting at every op is quadratic)."""

    def __init__(self):
        self.saves: dict[str, int] = {}  # buffer -> saves of it held
        self.sizes: dict[str, int] = {}
        self.total = 0

    def add(self, s: SavedInfo) -> None:
        if s.buffer is None:
            return
        self.total += s.buffer_nbytes - self.sizes.get(s.buffer, 0)
        self.sizes[s.buffer] = s.buffer_nbytes
        self.saves[s.buffer] = self.saves.get(s.buffer, 0) + 1

    def remove(self, s: SavedInfo) -> None:
        if s.buffer is None or s.buffer not in self.saves:
            return
        self.saves[s.buffer] -= 1
        if not self.saves[s.buffer]:
            del self.saves[s.buffer]
            self.total -= self.sizes.pop(s.buffer)


def timeline(graph: Graph, replay: Replay | None = None, label: str = "recorded") -> Timeline:
    """The forward (and, given a replay, backward) bytes of one run."""
    back = backward_held(graph, replay) if replay is not None else []
    return Timeline(label, tuple(forward_held(graph)), tuple(back))
