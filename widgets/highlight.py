"""Highlights as a small CSS block: the picture is laid out once, a step restyles it.

The SVG of a graph is sent to the browser once. Moving the stepper only replaces
a ``<style>`` block whose selectors are scoped to the picture's container id, so a
step costs a few hundred bytes to a few KB, never a new layout, even at a
thousand nodes. Every function here is pure: (ids) -> CSS text.

>>> css_block("c1", {"current": ["op3"]})
'#c1 :is(#op3)>:is(ellipse,polygon,path){stroke:#d63384;stroke-width:4px;fill:#f7d6e6}'
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Collection, Iterable, Mapping

from . import theme
from .graph_ids import edge_id, holder_id
from .replay import Replay

__all__ = ["css_block", "StepStyler"]

_SHAPES = ">:is(ellipse,polygon,path)"

# Category -> (what to select inside each highlighted group, declarations). Later
# categories win over earlier ones, so the current op always shows on top.
STYLES: dict[str, tuple[str, str]] = {
    "done": (_SHAPES, f"fill:{theme.DONE_FILL}"),
    "has-grad": (_SHAPES, f"fill:{theme.HAS_GRAD_FILL}"),
    "released": (_SHAPES, "stroke:#adb5bd;stroke-dasharray:4 3"),
    "released-own": ("", "opacity:0.3"),
    "read": (_SHAPES, f"fill:{theme.READ}"),
    "sent-edge": (">:is(path,polygon)", f"stroke:{theme.SENT};stroke-width:3px"),
    "sent-head": (">polygon", f"fill:{theme.SENT}"),
    "sent": (_SHAPES, f"stroke:{theme.SENT};stroke-width:3px"),
    "upstream": (_SHAPES, f"stroke:{theme.UPSTREAM};stroke-width:4px"),
    "current": (_SHAPES, f"stroke:{theme.CURRENT};stroke-width:4px;fill:#f7d6e6"),
}


def css_block(container: str, groups: Mapping[str, Iterable[str]], *,
              visible: Collection[str] | None = None, copied: Collection[str] = ()) -> str:
    """One CSS rule per non-empty category in ``groups`` (category -> graph ids), in
    the fixed order of ``STYLES``, every selector under ``#container``.

    ``visible``: the ids the picture draws (None: all), so a picture of part of a
    huge graph gets a small block; ``copied``: tensors drawn once per use (see
    ``widgets.render``), selected by their ``copy_<id>`` class too.
    """
    rules = []
    for category, (inner, declarations) in STYLES.items():
        ids = list(dict.fromkeys(groups.get(category, ())))
        if visible is not None:
            ids = [i for i in ids if i in visible]
        if ids:
            targets = ",".join(f"#{i},.copy_{i}" if i in copied else "#" + i for i in ids)
            rules.append(f"#{container} :is({targets}){inner}{{{declarations}}}")
    return "\n".join(rules)


class StepStyler:
    """Precomputes, once per replay, when each node changes, so the style of any step
    is a few list filters (well under a millisecond at 1000 nodes)."""

    def __init__(self, replay: Replay):
        self.replay = replay
        graph = replay.graph
        own = {holder_id(s) for s in graph.saved if s.tensor is None}
        self.first_grad: dict[str, int] = {
            tid: 0 for tid, g in replay.initial.items() if g is not None}
        holders: dict[str, list[int]] = {}  # node -> step at which each holder released
        for step in replay.steps:
            for s in step.sent:
                self.first_grad.setdefault(s.tensor, step.number)
            for node in step.released_nodes:
                holders.setdefault(node, []).append(step.number)
        held_by = Counter(holder_id(s) for s in graph.saved)
        # A node shows as released once every op that saved it has let it go.
        self.released_at = {n: max(steps) for n, steps in holders.items()
                            if len(steps) >= held_by.get(n, 0)}
        self.own = own
        self.ops = [step.op for step in replay.steps]
        self.visited = {op: i + 1 for i, op in enumerate(self.ops) if op is not None}

    def groups(self, k: int, visible: Collection[str] | None = None) -> dict[str, list[str]]:
        """Category -> ids highlighted after ``k`` steps (only those in ``visible``, if
        given: a page of a huge graph costs the page, not the graph)."""
        step = self.replay.step(k)
        if visible is None:
            groups: dict[str, list[str]] = {
                "done": [op for op in self.ops[: max(k - 1, 0)] if op is not None],
                "has-grad": [t for t, n in self.first_grad.items() if n <= k],
            }
            released = [n for n, at in self.released_at.items() if at <= k]
        else:
            never = len(self.ops) + 1
            groups = {"done": [i for i in visible if self.visited.get(i, never) < k],
                      "has-grad": [i for i in visible if self.first_grad.get(i, never) <= k]}
            released = [i for i in visible if self.released_at.get(i, never) <= k]
        groups["released"] = [n for n in released if n not in self.own]
        groups["released-own"] = [n for n in released if n in self.own]
        if step is None:
            groups["upstream"] = [self.replay.graph.output]
            return groups
        groups["read"] = list(step.read_nodes)
        groups["sent"] = [s.tensor for s in step.sent]
        if step.op is not None:
            groups["sent-edge"] = groups["sent-head"] = [
                edge_id(step.op, s.input_index) for s in step.sent]
            groups["current"] = [step.op]
        groups["upstream"] = [step.receiver]
        return groups

    def css(self, container: str, k: int, *, visible: Collection[str] | None = None,
            copied: Collection[str] = ()) -> str:
        return css_block(container, self.groups(k, visible), visible=visible, copied=copied)

