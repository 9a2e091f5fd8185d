"""A captured graph as Graphviz DOT text: a pure, deterministic function.

``to_dot(graph)`` draws op nodes (ellipses) and tensor nodes (boxes) from a
:class:`autograd_core.graph.Graph`. Every id in the text comes from the capture
(``op3``, ``t5``), never from ``id()``, so the same program always gives the same
text, and the same text always gives the same picture (``widgets.svg.to_svg``).

* Tensor kinds are told apart by fill and border (see the legend): leaves that
  require grad, frozen parameters, constants, intermediates, the output.
* Saved tensors: a tensor an op kept for its backward gets an orange border and a
  ``saved by op3 (16 B)`` line; it stays ONE node however many ops saved it. An
  array an op made for itself (relu's ``mask``) is a small separate note node
  hanging off that op, with its size.
* ``OpInfo.module`` (a dotted path such as ``"encoder.fc1"``) becomes nested
  clusters; ``collapse=("encoder",)`` draws a module as one box.
* ``values``/``grads`` (node id -> array) add summaries to tooltips and, with
  ``show_values=True``, to the labels.

>>> dot = to_dot(capture(loss))                  # doctest: +SKIP
>>> dot.splitlines()[0]  # doctest: +SKIP
'digraph autograd {'
"""

from __future__ import annotations

import html
from collections.abc import Iterable, Mapping, Sequence

from autograd_core.graph import Graph, OpInfo, SavedInfo, TensorInfo, held_bytes

from . import theme
from .graph_ids import edge_id, module_node_id, output_edge_id, saved_edge_id, saved_node_id
from .summary import describe_tensor, format_bytes, shape_text, summarize

# Above these sizes the layout trades a little polish for time (see _layout_limits);
# measured with graphviz-pure in bench/bench_widgets.py.
LARGE_GRAPH = 400  # nodes
LONG_EDGES = 1500  # total ops skipped by edges (a proxy for dot's hidden nodes)

__all__ = ["to_dot"]


def to_dot(
    graph: Graph,
    *,
    values: Mapping[str, object] | None = None,
    grads: Mapping[str, object] | None = None,
    show_values: bool = False,
    input_names: Mapping[str, Sequence[str]] | None = None,
    collapse: Iterable[str] = (),
    legend: bool = True,
    rankdir: str = "TB",
) -> str:
    """DOT text for ``graph`` (see the module docstring for what is drawn).

    ``input_names`` maps an op id to the names of its inputs (``("a", "b")``, as the
    op's rule calls them); edges into ops with several inputs are labelled with them.
    """
    return _DotWriter(graph, values or {}, grads or {}, show_values, input_names or {},
                      tuple(collapse), legend, rankdir).write()


class _DotWriter:
    def __init__(self, graph, values, grads, show_values, input_names, collapse, legend,
                 rankdir):
        self.g = graph
        self.values, self.grads, self.show_values = values, grads, show_values
        self.input_names = input_names
        self.legend, self.rankdir = legend, rankdir
        self.ops = {o.id: o for o in graph.ops}
        self.tensors = {t.id: t for t in graph.tensors}
        self.consumers: dict[str, list[str]] = {t: [] for t in self.tensors}
        for o in graph.ops:
            for t in o.inputs:
                if o.id not in self.consumers[t]:
                    self.consumers[t].append(o.id)
        self.saved_by: dict[str, list[SavedInfo]] = {}
        self.own_saved: dict[str, SavedInfo] = {}
        for s in graph.saved:
            if s.tensor is not None:
                self.saved_by.setdefault(s.tensor, []).append(s)
            else:
                self.own_saved[saved_node_id(s.op, s.name)] = s
        self.module = self._placement()
        self.collapsed = self._collapsed_roots(collapse)

    # -- where each node goes ------------------------------------------------------
    def _placement(self) -> dict[str, str | None]:
        """Module path of every node: an op's own; a tensor its producer's; a leaf or
        constant the module of its consumers when they all share one."""
        where: dict[str, str | None] = {o.id: o.module for o in self.g.ops}
        for t in self.g.tensors:
            if t.producer is not None:
                where[t.id] = self.ops[t.producer].module
            else:
                mods = {self.ops[c].module for c in self.consumers[t.id]}
                where[t.id] = mods.pop() if len(mods) == 1 else None
        for node, s in self.own_saved.items():
            where[node] = self.ops[s.op].module
        return where

    def _collapsed_roots(self, collapse) -> dict[str, str]:
        """Node id -> the outermost collapsed module that swallows it."""
        roots = sorted(set(collapse), key=len)
        swallowed = {}
        for node, path in self.module.items():
            for root in roots:
                if path is not None and (path == root or path.startswith(root + ".")):
                    swallowed[node] = root
                    break
        # A tensor made inside a collapsed module but used outside it (or the output)
        # stays visible, as what comes out of the box.
        for tid, root in list(swallowed.items()):
            if tid in self.tensors and (tid == self.g.output or any(
                    swallowed.get(c) != root for c in self.consumers[tid])):
                del swallowed[tid]
        return swallowed

    def _visible_module(self, node: str) -> str | None:
        """The cluster a visible node is drawn in (outside any collapsed box)."""
        path = self.module.get(node)
        for root in sorted(set(self.collapsed.values()), key=len):
            if path is not None and (path == root or path.startswith(root + ".")):
                return root.rpartition(".")[0] or None
        return path

    def _rep(self, node: str) -> str:
        root = self.collapsed.get(node)
        return module_node_id(root) if root is not None else node

    # -- the text ---------------------------------------------------------------------
    def write(self) -> str:
        members: dict[str | None, list[str]] = {}  # cluster path -> node statements
        seen: set[str] = set()
        order = [self.g.output] if not self.g.ops else []  # the output alone: a leaf
        for o in self.g.ops:
            order += [*o.inputs, o.id, *(saved_node_id(o.id, s.name)
                                         for s in o.saved if s.tensor is None), o.output]
        for node in order:
            rep = self._rep(node)
            if rep in seen:
                continue
            seen.add(rep)
            if rep != node:  # the first node met of a collapsed module: draw its box
                root = self.collapsed[node]
                members.setdefault(root.rpartition(".")[0] or None, []).append(
                    self._box(root))
            else:
                members.setdefault(self._visible_module(node), []).append(self._node(node))

        lines = [
            "digraph autograd {",
            f'  graph [rankdir={self.rankdir}, fontname="{theme.FONT}", fontsize=11, '
            f'nodesep=0.3, ranksep=0.35, newrank=true{self._layout_limits()}];',
            f'  node [fontname="{theme.FONT}", fontsize=11, margin="0.08,0.04", height=0.3];',
            f'  edge [fontname="{theme.FONT}", fontsize=9, color="#495057", arrowsize=0.7, '
            'labelfontsize=8, labelfontcolor="#6c757d", labeldistance=1.6];',
        ]
        lines += members.get(None, [])
        lines += self._clusters(members, None, "  ")
        lines += self._edges()
        if self.legend:
            lines.append(_legend())
        lines.append("}")
        return "\n".join(lines) + "\n"

    def _layout_limits(self) -> str:
        """Cheaper layout settings for graphs that would take dot minutes: many nodes,
        or tensors used far from where they were made (a shared weight in an unrolled
        loop). Every edge spanning k ranks costs dot k hidden nodes to route."""
        order = {o.id: o.order for o in self.g.ops}
        made = {o.output: o.order for o in self.g.ops}
        span = 0
        for o in self.g.ops:
            for t in set(o.inputs):
                start = made.get(t, min((order[c] for c in self.consumers[t]), default=0))
                span += max(o.order - start - 1, 0)
        extra = ""
        if len(self.g.ops) + len(self.g.tensors) > LARGE_GRAPH or span > LONG_EDGES:
            extra += ", nslimit=1, nslimit1=1"  # bound network-simplex passes
        if span > LONG_EDGES:
            extra += ", splines=line"  # curved routing of long edges is what costs most
        return extra

    def _clusters(self, members, parent: str | None, indent: str) -> list[str]:
        paths = {p for p in members if p is not None}
        for p in list(paths):  # every ancestor of a used path is a cluster too
            parts = p.split(".")
            paths.update(".".join(parts[:i]) for i in range(1, len(parts)))
        children = sorted(p for p in paths if (p.rpartition(".")[0] or None) == parent)
        out = []
        for path in children:
            out.append(f"{indent}subgraph cluster_{module_node_id(path)} {{")
            out.append(f'{indent}  id="{module_node_id(path)}"; class="module"; '
                       f'label={_q(path)}; labeljust=l; fontcolor="{theme.MODULE_BORDER}"; '
                       f'color="{theme.MODULE_BORDER}"; style="rounded,dashed";')
            out += [indent + "  " + line.strip() for line in members.get(path, [])]
            out += self._clusters(members, path, indent + "  ")
            out.append(f"{indent}}}")
        return out

    def _node(self, node: str) -> str:
        if node in self.ops:
            return self._op_node(self.ops[node])
        if node in self.tensors:
            return self._tensor_node(self.tensors[node])
        return self._saved_node(node, self.own_saved[node])

    def _op_node(self, o: OpInfo) -> str:
        label = f'<<b>{_h(o.op)}</b><br/><font point-size="8" color="#6c757d">{o.id}</font>>'
        return (f'  {o.id} [id="{o.id}", class="op", shape=ellipse, style=filled, '
                f'fillcolor="{theme.OP_FILL}", color="{theme.OP_BORDER}", label={label}, '
                f"tooltip={_q(self._op_tooltip(o))}];")

    def _tensor_node(self, t: TensorInfo) -> str:
        fill, border, style = theme.KIND_STYLE[t.kind]
        savers = self.saved_by.get(t.id, [])
        rows = [self._title(t)]
        if t.label is None:
            rows.append(_h(f"{shape_text(t.shape)} {t.dtype}"))
        if self.show_values and t.id in self.values and t.label is None:
            rows.append(_h(summarize(self.values[t.id])))
        if self.show_values and t.id in self.grads:
            rows.append(_h(f"grad {summarize(self.grads[t.id])}"))
        penwidth = 2 if t.kind == "output" else 1
        classes = ["tensor", t.kind.replace(" ", "_")]
        if savers:
            ops = ", ".join(dict.fromkeys(s.op for s in savers))
            size = ("released" if all(s.released for s in savers)
                    else format_bytes(max(s.nbytes for s in savers)))
            rows.append(f'<font color="{theme.SAVED}">saved by {ops} ({size})</font>')
            border, penwidth = theme.SAVED, 2
            classes.append("saved")
        styles = ",".join(["rounded", "filled"] + ([style] if style != "solid" else []))
        label = "<" + "<br/>".join(rows) + ">"
        return (f'  {t.id} [id="{t.id}", class="{" ".join(classes)}", shape=box, '
                f'style="{styles}", fillcolor="{fill}", color="{border}", penwidth={penwidth}, '
                f"label={label}, tooltip={_q(self._tensor_tooltip(t))}];")

    def _title(self, t: TensorInfo) -> str:
        ident = f'<font point-size="8" color="#6c757d">{t.id}</font>'
        if t.label is not None:
            return f"<b>{_h(t.label)}</b> {ident}"
        if t.name:
            return f"<b>{_h(t.name)}</b> {ident}"
        return ident

    def _saved_node(self, node: str, s: SavedInfo) -> str:
        size = "released" if s.released else format_bytes(s.nbytes)
        label = (f'<<font point-size="9"><b>{_h(s.name)}</b> {_h(shape_text(s.shape))} '
                 f"{_h(s.dtype)}<br/>saved by {s.op} ({size})</font>>")
        tip = [f"{s.name}: made and saved by {s.op} ({self.ops[s.op].op}) for its backward",
               f"shape {shape_text(s.shape)}, {s.dtype}, {_saved_size(s)}"]
        if node in self.values:
            tip.append(f"value: {summarize(self.values[node])}")
        return (f'  {node} [id="{node}", class="saved_own", shape=note, style=filled, '
                f'fillcolor="{theme.SAVED_FILL}", color="{theme.SAVED}", height=0.2, '
                f"label={label}, tooltip={_q(chr(10).join(tip))}];")

    def _box(self, root: str) -> str:
        inside = [o for o in self.g.ops if self.collapsed.get(o.id) == root]
        nbytes = held_bytes(s for o in inside for s in o.saved)
        mid = module_node_id(root)
        ops = f"{len(inside)} op" + ("s" if len(inside) != 1 else "")
        label = f"<<b>{_h(root)}</b><br/>{ops}, saves {format_bytes(nbytes)}>"
        tip = f"module {root} (collapsed): " + ", ".join(f"{o.id} {o.op}" for o in inside)
        return (f'  {mid} [id="{mid}", class="module_box", shape=box3d, style=filled, '
                f'fillcolor="#efe7fb", color="{theme.MODULE_BORDER}", label={label}, '
                f"tooltip={_q(tip)}];")

    def _edges(self) -> list[str]:
        out, seen = [], set()

        def add(a, b, eid, attrs=""):
            ra, rb = self._rep(a), self._rep(b)
            if ra == rb:
                return
            if (ra, rb) != (a, b):  # an edge into or out of a collapsed box: draw it once
                if (ra, rb) in seen:
                    return
                seen.add((ra, rb))
                eid = f"e_{ra}_{rb}"
                attrs = ""
            out.append(f'  {ra} -> {rb} [id="{eid}"{attrs}];')

        for o in self.g.ops:
            names = self.input_names.get(o.id)
            for i, t in enumerate(o.inputs):
                attrs = ""
                if len(o.inputs) > 1:
                    name = names[i] if names is not None and i < len(names) else str(i)
                    # headlabel, not label: a label is a node to dot and slows layout
                    attrs = f", headlabel={_q(name)}"
                if self.tensors[t].producer is not None:
                    attrs += ", weight=8"  # keep the main line straight; leaves hang aside
                add(t, o.id, edge_id(o.id, i), attrs)
            for s in o.saved:
                if s.tensor is None:
                    add(o.id, saved_node_id(o.id, s.name), saved_edge_id(o.id, s.name),
                        f', style=dashed, color="{theme.SAVED}", arrowhead=none')
            add(o.id, o.output, output_edge_id(o.id), ", weight=8")
        return out

    # -- tooltips (the SVG <title> of each node) -----------------------------------------
    def _op_tooltip(self, o: OpInfo) -> str:
        names = self.input_names.get(o.id) or [str(i) for i in range(len(o.inputs))]
        lines = [f"{o.id}: {o.op}" + (f"   (module {o.module})" if o.module else ""),
                 "gradient rule:"] + ["  " + r for r in o.rule.splitlines()]
        lines.append("inputs:")
        for name, t in zip(names, o.inputs):
            lines.append(f"  {name} = {describe_tensor(self.tensors[t], dtype=True)}")
        lines.append(f"output: {describe_tensor(self.tensors[o.output], dtype=True)}")
        if o.saved:
            lines.append(f"saved for backward ({format_bytes(held_bytes(o.saved))}):")
            for s in o.saved:
                what = s.tensor if s.tensor is not None else "made by this op"
                lines.append(f"  {s.name}: {what}, {shape_text(s.shape)} {s.dtype}, "
                             f"{_saved_size(s)}")
        else:
            lines.append("saves nothing for backward")
        return "\n".join(lines)

    def _tensor_tooltip(self, t: TensorInfo) -> str:
        lines = [describe_tensor(t, dtype=True), theme.KIND_TEXT[t.kind]]
        if t.producer:
            lines.append(f"made by {t.producer} ({self.ops[t.producer].op})")
        if self.consumers[t.id]:
            lines.append("used by " + ", ".join(self.consumers[t.id]))
        for s in self.saved_by.get(t.id, []):
            lines.append(f"saved by {s.op} as {s.name!r} ({_saved_size(s)})")
        if t.id in self.values:
            lines.append(f"value: {summarize(self.values[t.id])}")
        if t.id in self.grads:
            lines.append(f"grad: {summarize(self.grads[t.id])}")
        return "\n".join(lines)


def _saved_size(s: SavedInfo) -> str:
    """A saved tensor's size for a tooltip; a view names the larger buffer it keeps
    alive (what saving it costs, see ``autograd_core.buffers``)."""
    if s.released:
        return "released by backward"
    if s.buffer_nbytes > s.nbytes:
        return f"{format_bytes(s.nbytes)}, a view keeping its {format_bytes(s.buffer_nbytes)} " \
               "buffer alive"
    return format_bytes(s.nbytes)


def _legend() -> str:
    rows = []
    for kind, (fill, border, _style) in theme.KIND_STYLE.items():
        rows.append(f'<tr><td bgcolor="{fill}" color="{border}">{_h(theme.KIND_TEXT[kind])}'
                    "</td></tr>")
    rows.append(f'<tr><td bgcolor="{theme.OP_FILL}" color="{theme.OP_BORDER}">op (ellipse)'
                "</td></tr>")
    rows.append(f'<tr><td color="{theme.SAVED}"><font color="{theme.SAVED}">saved for '
                "backward by opN (bytes)</font></td></tr>")
    rows.append(f'<tr><td bgcolor="{theme.SAVED_FILL}" color="{theme.SAVED}">made and saved '
                "by an op (e.g. a mask)</td></tr>")
    rows.append(f'<tr><td color="{theme.MODULE_BORDER}"><font color="{theme.MODULE_BORDER}">'
                "module (dashed cluster)</font></td></tr>")
    table = ('<table border="0" cellborder="1" cellspacing="2" cellpadding="3">'
             '<tr><td border="0"><b>legend</b></td></tr>' + "".join(rows) + "</table>")
    return (f'  legend [id="legend", class="legend", shape=plaintext, fontsize=9, '
            f'label=<{table}>, tooltip="what the shapes and colours mean"];')


def _h(text: str) -> str:
    """Text for an HTML-like DOT label."""
    return html.escape(str(text), quote=False)


def _q(text: str) -> str:
    """A quoted DOT string; newlines become DOT's \\n."""
    return '"' + str(text).replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'
