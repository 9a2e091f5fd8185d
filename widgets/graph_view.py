"""The recorded graph as a picture: ``draw`` (static SVG) and ``GraphView`` (widget).

``draw(loss)`` returns an :class:`~widgets.svg.SVG` that notebooks store as plain
``image/svg+xml``, so a lesson read on GitHub or nbviewer still shows the graph.
``GraphView(loss)`` is the same picture on a ``widgets.canvas.GraphCanvas``: pan,
zoom, fit (never below readable text), an overview of a large picture, hover a node
to read its tooltip (op, gradient rule, saved tensors and sizes, value summaries)
or click it to keep that description beside the picture, and collapse modules to
one box. Both lay the graph out with graphviz-pure.

Any size: when Graphviz is predicted to take more than about a second for the
whole graph (``widgets.render.plan_picture``), both draw less of it, and say so:
modules collapsed to one box each at the deepest level that fits, else the first
and last ops with one note node for the ones between. ``ops=(start, stop)`` draws
a chosen range; ``picture="full"`` insists on everything (Graphviz is still stopped
after ``widgets.svg.LAYOUT_TIMEOUT`` seconds, with a message that says what to do).
``GraphView.close()`` closes every widget inside, so nothing keeps the view alive.
"""

from __future__ import annotations

import html
import re

import ipywidgets as w
import traitlets

from autograd_core.tools.graph import Graph

from .canvas import GraphCanvas
from .controls import (
    VIEW_BUDGET,
    WHOLE_TIMEOUT,
    close_tree,
    module_picker,
    note_html,
    with_static_picture,
)
from .graph_table import graph_table
from .layout import picture_beside, side_layout
from .live import Live, live
from .render import Plan, layout_estimate, plan_picture, to_dot
from .svg import SVG, LayoutTimeout, to_svg

__all__ = ["draw", "GraphView", "graph_dot", "describe_node"]

_TITLE = r'<g id="{}" class="node[^"]*">\n<title>([^<]*)</title>'


def graph_dot(output, *, show_values: bool = False, collapse=(), legend: bool = True,
              ops=None) -> str:
    """DOT text for ``output``'s graph (a Tensor, an already captured Graph, or a
    ``widgets.live.Live``), with live values and leaves' ``.grad`` in the tooltips.
    ``ops``: ranges of op order to draw (None: all)."""
    if isinstance(output, Graph):
        return to_dot(output, show_values=show_values, collapse=collapse, legend=legend,
                      ops=ops)
    view = output if isinstance(output, Live) else live(output, "draw")
    grads = {tid: leaf.grad.numpy() for tid, leaf in view.leaves.items() if leaf.grad is not None}
    return to_dot(view.graph, values=view.values, grads=grads, show_values=show_values,
                  input_names=view.input_names, collapse=collapse, legend=legend, ops=ops)


def _ranges(ops) -> tuple[tuple[int, int], ...] | None:
    """``ops=(start, stop)`` or a list of such ranges, as a tuple of ranges."""
    if ops is None:
        return None
    if len(ops) == 2 and all(isinstance(k, int) for k in ops):
        ops = [ops]
    return tuple((int(a), int(b)) for a, b in ops)


def _picture(output, graph: Graph, *, collapse, ops, picture: str, timeout,
             **options) -> tuple[str, str, Plan]:
    """(DOT, SVG, plan) of the most of ``graph`` that lays out quickly (``picture=
    "auto"``), or of exactly what was asked (``"full"``, or given ``ops``)."""
    if picture not in ("auto", "full"):
        raise ValueError(f"picture must be 'auto' or 'full', not {picture!r}")
    ops = _ranges(ops)
    if picture == "full" or ops is not None:
        plan = Plan(tuple(collapse), ops, "", layout_estimate(graph, collapse=collapse, ops=ops))
        dot = graph_dot(output, collapse=plan.collapse, ops=plan.ops, **options)
        return dot, to_svg(dot, timeout=timeout), plan
    plan = plan_picture(graph, VIEW_BUDGET, collapse=collapse)
    dot = graph_dot(output, collapse=plan.collapse, ops=plan.ops, **options)
    try:
        return dot, to_svg(dot, timeout=WHOLE_TIMEOUT if timeout is None else timeout), plan
    except LayoutTimeout as stopped:  # predicted quick, was not: the smallest picture
        n = len(graph.ops)
        small = ((0, min(12, n)), (max(n - 12, 12), n)) if n > 24 else ((0, n),)
        plan = Plan(tuple(collapse), small, f"Graphviz was stopped after "
                    f"{stopped.seconds:g} s, so only the first and last ops are drawn. "
                    "Draw a range with ops=(start, stop).",
                    layout_estimate(graph, collapse=collapse, ops=small))
        dot = graph_dot(output, collapse=plan.collapse, ops=plan.ops, **options)
        return dot, to_svg(dot, timeout=timeout), plan


def draw(output, *, show_values: bool = False, collapse=(), legend: bool = True, ops=None,
         picture: str = "auto", timeout: float | None = None) -> SVG:
    """The graph behind ``output`` as a static SVG picture.

    ``ops=(start, stop)`` draws only those ops (by execution order); ``picture="auto"``
    draws less of a graph too large to lay out in about a second, ``"full"`` all of it
    (stopped after ``timeout`` seconds, default ``widgets.svg.LAYOUT_TIMEOUT``).

    >>> draw(loss)                                   # doctest: +SKIP
    <SVG picture, 8123 bytes>
    """
    if not isinstance(output, Graph):
        output = live(output, "draw")
    graph = output if isinstance(output, Graph) else output.graph
    _dot, svg, _plan = _picture(output, graph, collapse=collapse, ops=ops, picture=picture,
                                timeout=timeout, show_values=show_values, legend=legend)
    return SVG(svg)


def describe_node(svg: str, node_id: str) -> str:
    """HTML describing node ``node_id`` of a picture: its tooltip (what the picture
    says of an op, a tensor, a saved array or a collapsed module; see
    ``widgets.render``), or how to pick one.

    >>> describe_node(svg, "op0")                    # doctest: +SKIP
    '<div class="ag-inspector"><div class="ag-inspector-title"><code>op0</code></div>...'
    """
    found = re.search(_TITLE.format(re.escape(node_id)), svg) if node_id else None
    if found is None:
        return ('<div class="ag-inspector">Click a node of the picture (an op, a tensor, '
                "a saved array or a module) to see it here.</div>")
    return (f'<div class="ag-inspector"><div class="ag-inspector-title">'
            f"<code>{html.escape(node_id)}</code></div>"
            f'<pre class="ag-inspector-values">{found.group(1)}</pre></div>')


class GraphView(w.VBox):
    """The recorded graph on a canvas you can pan and zoom; ``collapsed`` lists
    modules drawn as one box, ``picture.selected`` the node clicked (described in
    ``inspector``). Stored notebooks also keep the plain SVG of the picture.

    On a graph too large to lay out quickly it draws less (see the module docstring)
    and says what above the picture; the module picker shows what is collapsed.
    """

    collapsed = traitlets.Tuple()

    def __init__(self, output, *, show_values: bool = False, collapse=(), legend: bool = True,
                 max_height: str = "640px", ops=None, picture: str = "auto",
                 timeout: float | None = None):
        if not isinstance(output, Graph):
            output = live(output, "GraphView")  # captured once; drawn with its values
        self.graph = output if isinstance(output, Graph) else output.graph
        self._output, self._options = output, dict(show_values=show_values, legend=legend)
        self._ops, self._picture, self._timeout = ops, picture, timeout
        self._drawing = False
        self.module_picker = module_picker(self.graph, collapse)
        self.note = w.HTML()
        self.picture = GraphCanvas("", max_height)
        side = w.VBox([self.module_picker], layout=side_layout())
        body = picture_beside(self.picture, side)
        super().__init__([self.note, body])
        self.add_class("ag-view")  # the focus ring of its controls: canvas.css
        w.link((self.module_picker, "value"), (self, "collapsed"))
        self.observe(self._draw, "collapsed")
        self.picture.observe(lambda _: self._inspect(), "selected")
        self.picture.observe(lambda _: self._tabulate(), "table_open")
        self._drawing = True  # draw once, below, not on each trait set here
        self.collapsed = tuple(collapse)
        self._drawing = False
        self._draw()

    def _draw(self, _change=None) -> None:
        if self._drawing:
            return
        self._drawing = True
        try:
            self.dot, self.svg, self.plan = _picture(
                self._output, self.graph, collapse=self.collapsed, ops=self._ops,
                picture=self._picture, timeout=self._timeout, **self._options)
            listed = {path for _, path in self.module_picker.options}
            picked = tuple(c for c in self.plan.collapse if c in listed)
            if set(picked) != set(self.collapsed):  # modules collapsed to fit: show which
                self.collapsed = picked
        finally:
            self._drawing = False
        self.note.value = note_html(self.plan.note)
        self.picture.set_svg(self.svg)
        self.picture.announcement = (f"The recorded graph: {len(self.graph.ops)} ops, "
                                     f"{len(self.graph.tensors)} tensors, output "
                                     f"{self.graph.output}.")
        self._inspect()

    def _inspect(self) -> None:
        """Describe the node clicked (after a new layout: if it is still drawn) in the
        inspector over the picture (``picture.detail``; empty when none is selected)."""
        selected = self.picture.selected
        self.picture.detail = describe_node(self.svg, selected) if selected else ""

    def _tabulate(self) -> None:
        """Fill the table view while it is open."""
        if self.picture.table_open:
            self.picture.table = graph_table(self.graph)

    def _repr_mimebundle_(self, **kwargs):
        return with_static_picture(
            super()._repr_mimebundle_(**kwargs), "image/svg+xml", self.svg,
            f"GraphView: {len(self.graph.ops)} ops, {len(self.graph.tensors)} tensors")

    def close(self) -> None:
        """Close every widget of the view (none stays in ipywidgets' registry)."""
        close_tree(self)
