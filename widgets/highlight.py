"""Highlights as a small CSS block: the picture is laid out once, a step restyles it.

The SVG of a graph is sent to the browser once. Moving the stepper only replaces
a ``<style>`` block whose selectors are scoped to the picture's container id, so a
step costs a few hundred bytes to a few KB, never a new layout, even at a
thousand nodes. Every function here is pure: (ids) -> CSS text.

How a state looks. Every state has a cue that is not a colour, so it reads in
greyscale and for colour-blind viewers (the colours, from the Okabe–Ito palette,
are in ``widgets.theme``). A node can be in several states at once (a tensor the
op reads AND sends a gradient to, which already holds one AND is released at this
step), so the states are split in three families that use different properties
and therefore combine instead of stacking into one ambiguous outline:

=============  ======  ===============================  =========================
state          on      cue without colour               colour
=============  ======  ===============================  =========================
current        op      outline 4px solid                black, vermillion tint
upstream       tensor  outline 4px long dashes          blue
sent           tensor  outline 4px round dots           bluish green
               edge    edge 3px round dots              bluish green
released       tensor  outline 1.5px dash-dot           dark grey
done           op      no outline                       grey fill
has-grad       tensor  slanted (italic) label           sky-blue tint fill
read           tensor  underlined label                 yellow fill
=============  ======  ===============================  =========================

* Outline family (current, upstream, sent, released): each rule sets the whole
  outline (colour, width, dash pattern, caps), so when two apply, one of them
  wins whole: the step's event (upstream, sent) over released.
* Fill family (done, has-grad, read, current): read wins over has-grad.
* Label family (has-grad, read: ``LABELS``): italic and underline are separate
  properties, so a read tensor that holds a gradient shows both.

``step_legend()`` draws a sample of each state with these very rules, so the
stepper's legend cannot drift from the picture.

>>> css_block("c1", {"current": ["op3"]})  # doctest: +ELLIPSIS
'#c1 :is(#op3)>:is(ellipse,polygon,path){stroke:var(--ag-000000,#000000);...}'
"""

from __future__ import annotations

import html
from collections import Counter
from collections.abc import Collection, Iterable, Mapping

from . import theme
from .graph_ids import edge_id, holder_id
from .replay import Replay

__all__ = ["css_block", "StepStyler", "step_legend"]

_SHAPES = ">:is(ellipse,polygon,path)"


def _outline(colour: str, width: float, dashes: str = "none", caps: str = "butt") -> str:
    """A whole outline: every property, so one rule never mixes with another's."""
    return (f"stroke:{theme.paint(colour)};stroke-width:{width}px;"
            f"stroke-dasharray:{dashes};stroke-linecap:{caps}")


# Category -> (what to select inside each highlighted group, declarations). Later
# categories win over earlier ones, so the current op always shows on top.
STYLES: dict[str, tuple[str, str]] = {
    "done": (_SHAPES, f"fill:{theme.paint(theme.DONE_FILL)};stroke:none"),
    "has-grad": (_SHAPES, f"fill:{theme.paint(theme.HAS_GRAD_FILL)}"),
    "released": (_SHAPES, _outline(theme.RELEASED, 1.5, "8 3 2 3")),
    "read": (_SHAPES, f"fill:{theme.paint(theme.READ)}"),
    "sent-edge": (">path", _outline(theme.SENT, 3, "0.5 6", "round")),
    "sent-head": (">polygon", f"fill:{theme.paint(theme.SENT)};{_outline(theme.SENT, 1)}"),
    "sent": (_SHAPES, _outline(theme.SENT, 4, "0.5 7", "round")),
    "upstream": (_SHAPES, _outline(theme.UPSTREAM, 4, "10 5")),
    "current": (_SHAPES, f"{_outline(theme.CURRENT, 4)};fill:{theme.paint(theme.CURRENT_FILL)}"),
}
# Category -> declarations for the labels (``<text>``) of its nodes.
LABELS: dict[str, str] = {
    "has-grad": "font-style:italic",
    "read": "text-decoration:underline",
}
# What the stepper's legend shows: state -> (its words, the node it is drawn on,
# its categories).
STATES: dict[str, tuple[str, str, tuple[str, ...]]] = {
    "current": ("op visited now", "op", ("current",)),
    "upstream": ("its output (upstream g)", "tensor", ("upstream",)),
    "read": ("saved tensors it reads", "tensor", ("read",)),
    "sent": ("gradient sent", "tensor", ("sent", "sent-edge", "sent-head")),
    "has-grad": ("has a gradient", "tensor", ("has-grad",)),
    "released": ("released", "tensor", ("released",)),
    "done": ("visited", "op", ("done",)),
}
# The forward tracer uses four of the same styles, in its own words.
TRACE_STATES: dict[str, tuple[str, str, tuple[str, ...]]] = {
    "current": ("op running now", "op", ("current",)),
    "upstream": ("its output", "tensor", ("upstream",)),
    "read": ("what it saves for backward", "tensor", ("read",)),
    "done": ("ran already", "op", ("done",)),
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
            if category in LABELS:
                rules.append(f"#{container} :is({targets})>text{{{LABELS[category]}}}")
    return "\n".join(rules)


_CARD = f"background:{theme.paint(theme.WHITE)};border-radius:2px;vertical-align:middle;flex:none"
# Graphviz's own dash patterns for its border styles, for the legend's samples.
_DASHES = {"solid": "", "dashed": "stroke-dasharray:5 2", "dotted": "stroke-dasharray:1 5"}


def _sample(node: str, shape_style: str = "", label_style: str = "", *, fill: str | None = None,
            border: str | None = None, extra: str = "") -> str:
    """A small picture of one node as the graph draws it (``node``: ``"op"``,
    ``"tensor"`` or ``"note"``), on the card the graph sits on, restyled
    with ``shape_style`` and ``label_style``; ``extra`` is more SVG after it."""
    width = 70 if extra else 44
    if node == "op":
        shape = (f'<ellipse cx="22" cy="12" rx="17" ry="9" fill="{fill or theme.OP_FILL}" '
                 f'stroke="{border or theme.OP_BORDER}" style="{shape_style}"/>')
    elif node == "note":
        shape = (f'<polygon points="4,3 34,3 40,9 40,21 4,21" fill="{fill}" stroke="{border}" '
                 f'style="{shape_style}"/>')
    else:  # a rounded box; unstyled, an intermediate tensor
        plain_fill, plain_border, _ = theme.KIND_STYLE["intermediate"]
        shape = (f'<path d="M7,3 H37 Q40,3 40,6 V18 Q40,21 37,21 H7 Q4,21 4,18 V6 Q4,3 7,3 Z" '
                 f'fill="{fill or plain_fill}" stroke="{border or plain_border}" '
                 f'style="{shape_style}"/>')
    label = (f'<text x="22" y="16" font-size="10" font-family="{theme.FONT},sans-serif" '
             f'text-anchor="middle" fill="{theme.ON_FILL}" style="{label_style}">x</text>')
    return (f'<svg width="{width}" height="24" viewBox="0 0 {width} 24" style="{_CARD}" '
            f'aria-hidden="true">{shape}{label}{extra}</svg>')


def _edge_sample(path_style: str, head_style: str) -> str:
    return (f'<path d="M44,12 H60" fill="none" stroke="{theme.EDGE}" style="{path_style}"/>'
            f'<polygon points="60,8 68,12 60,16" fill="{theme.EDGE}" stroke="{theme.EDGE}" '
            f'style="{head_style}"/>')


def _item(sample: str, words: str) -> str:
    return (f"<span style='display:inline-flex;align-items:center;gap:4px'>{sample}"
            f"{html.escape(words)}</span>")


def step_legend(states_shown: Mapping[str, tuple[str, str, tuple[str, ...]]] = STATES,
                title: str = "step") -> str:
    """A view's legend (HTML): a sample of every state of ``states_shown`` (the
    stepper's ``STATES`` or the tracer's ``TRACE_STATES``) drawn with the very rules of
    ``STYLES`` and ``LABELS``, then the tensor kinds of ``widgets.theme``; the views'
    pictures have no legend of their own."""
    states = []
    for words, node, categories in states_shown.values():
        by_inner = {STYLES[c][0]: STYLES[c][1] for c in categories}
        labels = ";".join(LABELS[c] for c in categories if c in LABELS)
        extra = (_edge_sample(by_inner[">path"], by_inner[">polygon"])
                 if ">path" in by_inner else "")
        states.append(_item(_sample(node, by_inner.get(_SHAPES, ""), labels, extra=extra),
                            words))
    kinds = [_item(_sample("tensor", fill=fill, border=border, shape_style=_DASHES[style]),
                   theme.KIND_TEXT[kind])
             for kind, (fill, border, style) in theme.KIND_STYLE.items()]
    kinds.append(_item(_sample("op"), "op"))
    kinds.append(_item(_sample("tensor", "stroke-width:2px", border=theme.SAVED),
                       "saved for backward (saved by opN)"))
    kinds.append(_item(_sample("note", fill=theme.SAVED_FILL, border=theme.SAVED),
                       "made and saved by an op"))
    kinds.append(_item(_sample("tensor", _DASHES["dashed"], border=theme.MODULE_BORDER),
                       "module (dashed box)"))
    row = "display:flex;flex-wrap:wrap;align-items:center;gap:2px 12px"
    return (f"<div class='ag-legend' style='font-size:12px'>"
            f"<div style='{row}'><b>{title}</b>{''.join(states)}</div>"
            f"<div style='{row};margin-top:2px'><b>nodes</b>{''.join(kinds)}</div></div>")


class StepStyler:
    """Precomputes, once per replay, when each node changes, so the style of any step
    is a few list filters (well under a millisecond at 1000 nodes)."""

    def __init__(self, replay: Replay):
        self.replay = replay
        graph = replay.graph
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
        groups["released"] = released
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



# Categories that say where the sweep is: on a collapsed module they go to its box.
# The others describe a node's own state and are not drawn for what a box hides.
_ONTO_BOX = frozenset({"read", "sent-edge", "sent-head", "sent", "upstream", "current"})


def onto_boxes(groups: Mapping[str, Iterable[str]], moved: Mapping[str, str],
               inside: Mapping[str, Collection[str]]) -> dict[str, list[str]]:
    """``groups`` for a picture with collapsed modules: an id hidden in a box
    (``moved``: id -> the id drawn instead, ``""`` when nothing is) lends the box its
    highlight when that says where the sweep is (current op, upstream, read, sent);
    a box is ``done`` once every op ``inside`` it is.

    >>> onto_boxes({"current": ["op3"], "done": ["op1", "op2"]},
    ...            {"op2": "m_a", "op3": "m_a"}, {"m_a": {"op2", "op3"}})
    {'current': ['m_a'], 'done': ['op1']}
    """
    out = {category: [moved.get(i, i) for i in ids] if category in _ONTO_BOX
           else [i for i in ids if i not in moved] for category, ids in groups.items()}
    done = set(groups.get("done", ()))
    boxes_done = [box for box, ops in inside.items() if ops and set(ops) <= done]
    if boxes_done:
        out["done"] = out.get("done", []) + boxes_done
    return {category: [i for i in ids if i] for category, ids in out.items()}
