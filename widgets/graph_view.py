"""The recorded graph as a picture: ``draw`` (static SVG) and ``GraphView`` (widget).

``draw(loss)`` returns an :class:`~widgets.svg.SVG` that notebooks store as plain
``image/svg+xml``, so a lesson read on GitHub or nbviewer still shows the graph.
``GraphView(loss)`` is the same picture in a widget: hover a node to read its
tooltip (op, gradient rule, saved tensors and sizes, value summaries), and
collapse modules to one box. Both lay the graph out with graphviz-pure.
"""

from __future__ import annotations

import ipywidgets as w
import traitlets

from autograd_core.graph import Graph

from .controls import Picture, with_static_picture
from .live import live
from .render import to_dot
from .svg import SVG, to_svg

__all__ = ["draw", "GraphView", "graph_dot"]


def graph_dot(output, *, show_values: bool = False, collapse=(), legend: bool = True) -> str:
    """DOT text for ``output``'s graph (a Tensor, or an already captured Graph), with
    live values and leaves' ``.grad`` in the tooltips."""
    if isinstance(output, Graph):
        return to_dot(output, show_values=show_values, collapse=collapse, legend=legend)
    view = live(output, "draw")
    grads = {tid: leaf.grad._data for tid, leaf in view.leaves.items() if leaf.grad is not None}
    return to_dot(view.graph, values=view.values, grads=grads, show_values=show_values,
                  input_names=view.input_names, collapse=collapse, legend=legend)


def draw(output, *, show_values: bool = False, collapse=(), legend: bool = True) -> SVG:
    """The graph behind ``output`` as a static SVG picture.

    >>> draw(loss)                                   # doctest: +SKIP
    <SVG picture, 8123 bytes>
    """
    return SVG(to_svg(graph_dot(output, show_values=show_values, collapse=collapse,
                                legend=legend)))


class GraphView(w.VBox):
    """The recorded graph with hover tooltips; ``collapsed`` lists modules drawn as
    one box. Stored notebooks also keep the plain SVG of the picture."""

    collapsed = traitlets.Tuple()

    def __init__(self, output, *, show_values: bool = False, collapse=(), legend: bool = True,
                 max_height: str = "640px"):
        self.graph = output if isinstance(output, Graph) else live(output, "GraphView").graph
        self._output, self._options = output, dict(show_values=show_values, legend=legend)
        modules = sorted({op.module for op in self.graph.ops if op.module})
        self.module_picker = w.SelectMultiple(
            options=modules, value=tuple(c for c in collapse if c in modules),
            description="collapse", rows=min(len(modules), 5) or 1)
        self.picture = Picture("", max_height)
        children = [self.picture] + ([self.module_picker] if modules else [])
        super().__init__(children)
        w.link((self.module_picker, "value"), (self, "collapsed"))
        self.observe(self._draw, "collapsed")
        self.collapsed = tuple(collapse)
        self._draw()

    def _draw(self, _change=None) -> None:
        self.dot = graph_dot(self._output, collapse=self.collapsed, **self._options)
        self.svg = to_svg(self.dot)
        self.picture.set_svg(self.svg)

    def _repr_mimebundle_(self, **kwargs):
        return with_static_picture(
            super()._repr_mimebundle_(**kwargs), "image/svg+xml", self.svg,
            f"GraphView: {len(self.graph.ops)} ops, {len(self.graph.tensors)} tensors")
