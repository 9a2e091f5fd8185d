"""A captured graph as Graphviz DOT text: a pure, deterministic function.

``to_dot(graph)`` draws op nodes (ellipses) and tensor nodes (boxes) from a
:class:`autograd_core.tools.graph.Graph`. Every id in the text comes from the capture
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
* ``ops=`` draws only some ops (ranges of execution order); each run of ops left
  out becomes one note node (``gap0``, ``gap1``...) that says how many ops, of which
  kinds, are not drawn. The views use it for a neighbourhood of the current op.

Size. Graphviz's cost grows with the nodes it lays out and, far faster, with edges
that span many ranks (each is routed through a hidden node per rank: a weight
reused by every step of an unrolled loop costs it quadratic time and memory). So
a leaf or constant whose uses lie far apart (``COPY_SPAN``) in a graph whose edges
span much (``LONG_EDGES``) is drawn once per use, beside the op that uses it (the
copies have class ``copy_<id>``, so one CSS rule styles them all), and
:func:`layout_estimate` predicts the layout time before Graphviz is called; the
views (``plan_picture``) pick a smaller picture when it is over their budget.

>>> dot = to_dot(capture(loss))                  # doctest: +SKIP
>>> dot.splitlines()[0]  # doctest: +SKIP
'digraph autograd {'
"""

from __future__ import annotations

import html
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from autograd_core.tools.graph import Graph, OpInfo, SavedInfo, TensorInfo, held_bytes

from . import theme
from .graph_ids import (
    box_edge_id,
    edge_id,
    module_node_id,
    output_edge_id,
    saved_edge_id,
    saved_node_id,
)
from .summary import ValueScales, describe_tensor, format_bytes, shape_text, summarize

# Above these sizes the layout trades a little polish for time (see _layout_limits);
# measured with graphviz-pure in bench/bench_widgets.py.
LARGE_GRAPH = 400  # nodes
LONG_EDGES = 1500  # total ops skipped by edges (a proxy for dot's hidden nodes)
MANY = 12  # labels and tooltips list at most this many ops that use or save a tensor
COPY_SPAN = 60  # ... and above LONG_EDGES, a leaf whose edges skip more is drawn per use

__all__ = ["to_dot", "collapsed_ids", "layout_estimate", "LayoutEstimate", "plan_picture",
           "Plan", "copy_node_id"]


def copy_node_id(tensor_id: str, op_id: str) -> str:
    """The id of the copy of a reused leaf drawn beside ``op_id`` (see ``COPY_SPAN``)."""
    return f"{tensor_id}_at_{op_id}"


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
    ops: Iterable[tuple[int, int]] | None = None,
) -> str:
    """DOT text for ``graph`` (see the module docstring for what is drawn).

    ``input_names`` maps an op id to the names of its inputs (``("a", "b")``, as the
    op's rule calls them); edges into ops with several inputs are labelled with them.
    ``ops``: half-open ranges of op execution order to draw (None: every op).
    """
    return _DotWriter(graph, values or {}, grads or {}, show_values, input_names or {},
                      tuple(collapse), legend, rankdir, ops).write()


def collapsed_ids(graph: Graph, collapse: Iterable[str],
                  ops: Iterable[tuple[int, int]] | None = None,
                  ) -> tuple[dict[str, str], dict[str, frozenset[str]]]:
    """Where the ids that collapsed modules' boxes hide went, in the picture ``to_dot``
    draws with the same ``collapse`` and ``ops``: (id -> the id drawn instead: the box,
    the one edge into or out of it, or ``""`` for an edge inside it; box id -> the ops
    inside). The views use it to put a step's highlights on the box."""
    return _DotWriter(graph, {}, {}, False, {}, tuple(collapse), False, "TB",
                      ops).hidden_ids()


@dataclass(frozen=True)
class LayoutEstimate:
    """What Graphviz would be given, and the time it is predicted to take."""

    nodes: int  # nodes drawn (op, tensor, note, box and copy nodes)
    edges: int
    span: int  # ranks skipped by edges: about the hidden nodes dot routes them through
    clusters: int
    seconds: float


# Seconds per drawn node, per rank an edge skips, per cluster (graphviz-pure 0.2.2 on
# a 2-core machine, fitted in bench/bench_widgets.py --scale; kept on the safe side).
_COST_NODE, _COST_SPAN, _COST_CLUSTER, _COST_START = 2.5e-4, 1.0e-4, 1.0e-3, 0.02


def layout_estimate(graph: Graph, *, collapse: Iterable[str] = (),
                    ops: Iterable[tuple[int, int]] | None = None) -> LayoutEstimate:
    """Predict Graphviz's layout time for ``to_dot(graph, collapse=..., ops=...)``
    from the counts that drive it, without calling Graphviz (milliseconds even at
    10,000 nodes)."""
    return _DotWriter(graph, {}, {}, False, {}, tuple(collapse), False, "TB", ops).estimate()


@dataclass(frozen=True)
class Plan:
    """What a view draws of a graph: ``collapse`` (modules drawn as one box), ``ops``
    (ranges of op order, None = all), why (``note``, empty when everything is drawn)
    and the estimate of that picture."""

    collapse: tuple[str, ...]
    ops: tuple[tuple[int, int], ...] | None
    note: str
    estimate: LayoutEstimate


def plan_picture(graph: Graph, budget: float, *, collapse: Iterable[str] = (),
                 keep: int = 120, most_nodes: int = 1500) -> Plan:
    """The most of ``graph`` that lays out within ``budget`` seconds (predicted).

    In order: everything (with the caller's ``collapse``); then modules collapsed
    to one box each, at the deepest nesting level that fits and draws at most
    ``most_nodes`` nodes (a model of repeated blocks becomes a column of blocks);
    then only the first and last ops (``keep`` in all), the ones between shown as
    one note node.
    """
    collapse = tuple(collapse)
    full = layout_estimate(graph, collapse=collapse)
    if full.seconds <= budget:
        return Plan(collapse, None, "", full)
    n = len(graph.ops)
    paths = {o.module for o in graph.ops if o.module}
    depth = max((p.count(".") + 1 for p in paths), default=0)
    for level in range(depth, 0, -1):
        roots = _outermost_only({".".join(p.split(".")[:level]) for p in paths}
                                | set(collapse))
        est = layout_estimate(graph, collapse=roots)
        if est.seconds <= budget and est.nodes <= most_nodes:
            boxes = len(roots)
            return Plan(roots, None, (
                f"{n:,} ops is too many to lay out quickly (about {full.seconds:.0f} s), so "
                f"modules are drawn as one box each ({boxes:,} boxes, nesting level "
                f"{level}); pick the ones to open below, or draw a range of ops with "
                "ops=(start, stop)."), est)
    head = keep // 2
    ranges = ((0, head), (max(n - (keep - head), head), n)) if n > keep else ((0, n),)
    est = layout_estimate(graph, collapse=collapse, ops=ranges)
    while est.seconds > budget and head > 4:
        head //= 2
        ranges = ((0, head), (max(n - head, head), n))
        est = layout_estimate(graph, collapse=collapse, ops=ranges)
    shown = sum(b - a for a, b in ranges)
    return Plan(collapse, ranges, (
        f"{n:,} ops is too many to lay out quickly (about {full.seconds:.0f} s), so only "
        f"the first and last {shown:,} are drawn; the {n - shown:,} between are one note "
        "node. Draw another range with ops=(start, stop), or step through all of them "
        "with BackwardStepper / ForwardTracer, which show the neighbourhood of each op."),
        est)


def _outermost_only(paths: set[str]) -> tuple[str, ...]:
    """The paths none of whose ancestors is in ``paths`` (collapsing one collapses
    everything inside it), sorted."""
    def inside(p: str) -> bool:
        parts = p.split(".")
        return any(".".join(parts[:i]) in paths for i in range(1, len(parts)))
    return tuple(sorted(p for p in paths if not inside(p)))


class _DotWriter:
    def __init__(self, graph, values, grads, show_values, input_names, collapse, legend,
                 rankdir, ops=None):
        self.full = graph
        self.kept = None if ops is None else {k for a, b in ops for k in range(a, b)}
        if self.kept is not None and len(self.kept) >= len(graph.ops):
            self.kept = None
        graph = graph if self.kept is None else _part(graph, self.kept)
        self.g = graph
        self.values, self.grads, self.show_values = values, grads, show_values
        self.scales = ValueScales(self.full, values)
        self.input_names = input_names
        self.legend, self.rankdir = legend, rankdir
        self.ops = {o.id: o for o in graph.ops}
        self.full_ops = {o.id: o for o in self.full.ops} if self.kept is not None else self.ops
        self.full_consumers: dict[str, list[str]] = {}
        if self.kept is not None:
            for o in self.full.ops:
                for t in o.inputs:
                    self.full_consumers.setdefault(t, []).append(o.id)
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
        self.gaps = self._gaps()
        self.span, self.copies = self._spans()

    # -- where each node goes ------------------------------------------------------
    def _placement(self) -> dict[str, str | None]:
        """Module path of every node: an op's own; a tensor its producer's; a leaf or
        constant the module of its consumers when they all share one."""
        where: dict[str, str | None] = {o.id: o.module for o in self.g.ops}
        for t in self.g.tensors:
            if t.producer in self.ops:
                where[t.id] = self.ops[t.producer].module
            else:
                mods = {self.ops[c].module for c in self.consumers[t.id]}
                where[t.id] = mods.pop() if len(mods) == 1 else None
        for node, s in self.own_saved.items():
            where[node] = self.ops[s.op].module
        return where

    @staticmethod
    def _outermost(path: str | None, roots: set[str], memo: dict) -> str | None:
        """The shortest of ``roots`` that is ``path`` or one of its ancestors."""
        if path is None or not roots:
            return None
        if path not in memo:
            parts = path.split(".")
            memo[path] = next((p for p in (".".join(parts[:i]) for i in range(1, len(parts) + 1))
                               if p in roots), None)
        return memo[path]

    def _collapsed_roots(self, collapse) -> dict[str, str]:
        """Node id -> the outermost collapsed module that swallows it."""
        roots, memo = set(collapse), {}
        swallowed = {}
        for node, path in self.module.items():
            root = self._outermost(path, roots, memo)
            if root is not None:
                swallowed[node] = root
        # A tensor made inside a collapsed module but used outside it (or the output)
        # stays visible, as what comes out of the box.
        for tid, root in list(swallowed.items()):
            if tid in self.tensors and (tid == self.g.output or any(
                    swallowed.get(c) != root for c in self.consumers[tid])):
                del swallowed[tid]
        self._used_roots, self._memo = set(swallowed.values()), {}
        self._inside: dict[str, list[OpInfo]] = {}
        for o in self.g.ops:
            if o.id in swallowed:
                self._inside.setdefault(swallowed[o.id], []).append(o)
        return swallowed

    def _visible_module(self, node: str) -> str | None:
        """The cluster a visible node is drawn in (outside any collapsed box)."""
        path = self.module.get(node)
        root = self._outermost(path, self._used_roots, self._memo)
        return path if root is None else (root.rpartition(".")[0] or None)

    def _gaps(self) -> list[tuple[int, int]]:
        """The runs of op order left out (``ops=``), each drawn as one note node."""
        if self.kept is None:
            return []
        n, gaps, start = len(self.full.ops), [], None
        for k in range(n + 1):
            if k < n and k not in self.kept:
                start = k if start is None else start
            elif start is not None:
                gaps.append((start, k))
                start = None
        return gaps

    def _gap_of(self, order: int) -> str:
        for i, (a, b) in enumerate(self.gaps):
            if a <= order < b:
                return f"gap{i}"
        raise AssertionError(order)

    def _spans(self) -> tuple[int, set[str]]:
        """Ranks skipped by all edges (a proxy for dot's hidden nodes), and the
        leaves drawn once per use because theirs skip too many."""
        rank = {o.id: i for i, o in enumerate(self.g.ops)}  # drawn ops, in order
        made = {o.output: rank[o.id] for o in self.g.ops}
        per: dict[str, int] = {}
        for o in self.g.ops:
            for t in set(o.inputs):
                start = made.get(t, min((rank[c] for c in self.consumers[t]), default=0))
                per[t] = per.get(t, 0) + max(rank[o.id] - start - 1, 0)
        total = sum(per.values())
        copies: set[str] = set()
        if total > LONG_EDGES:
            copies = {t for t, k in per.items() if k > COPY_SPAN and t not in made
                      and len(self.consumers[t]) > 1 and t not in self.collapsed}
            total -= sum(per[t] for t in copies)
        return total, copies

    def estimate(self) -> LayoutEstimate:
        boxes = set(self.collapsed.values())
        visible = [n for n in self.module if n not in self.collapsed]
        nodes = len(visible) + len(boxes) + len(self.gaps) + sum(
            len(self.consumers[t]) - 1 for t in self.copies)
        edges = sum(len(o.inputs) + 1 for o in self.g.ops) + len(self.own_saved)
        clusters = {p for n in visible if (p := self._visible_module(n)) is not None}
        for p in list(clusters):
            parts = p.split(".")
            clusters.update(".".join(parts[:i]) for i in range(1, len(parts)))
        span = self.span
        if boxes:  # edges into a box are drawn once: count the drawn ops' spans only
            span = min(span, sum(len(o.inputs) for o in self.g.ops
                                 if o.id not in self.collapsed) * 4)
        seconds = (_COST_START + _COST_NODE * nodes + _COST_SPAN * span
                   + _COST_CLUSTER * len(clusters))
        return LayoutEstimate(nodes, edges, span, len(clusters), seconds)

    def _rep(self, node: str) -> str:
        root = self.collapsed.get(node)
        return module_node_id(root) if root is not None else node

    def hidden_ids(self) -> tuple[dict[str, str], dict[str, frozenset[str]]]:
        """See :func:`collapsed_ids`: the same rules ``_edges`` draws by."""
        moved = {node: self._rep(node) for node in self.collapsed}
        for o in self.g.ops:
            for i, t in enumerate(o.inputs):
                a = self._source(t, o.id)
                ra, rb = self._rep(a), self._rep(o.id)
                if (ra, rb) != (a, o.id):
                    moved[edge_id(o.id, i)] = "" if ra == rb else box_edge_id(ra, rb)
        inside: dict[str, set[str]] = {}
        for o in self.g.ops:
            if o.id in moved:
                inside.setdefault(moved[o.id], set()).add(o.id)
        return moved, {box: frozenset(ids) for box, ids in inside.items()}

    # -- the text ---------------------------------------------------------------------
    def write(self) -> str:
        members: dict[str | None, list[str]] = {}  # cluster path -> node statements
        seen: set[str] = set()
        order = [self.g.output] if not self.g.ops else []  # the output alone: a leaf
        for o in self.g.ops:
            order += [*(self._source(t, o.id) for t in o.inputs), o.id,
                      *(saved_node_id(o.id, s.name) for s in o.saved if s.tensor is None),
                      o.output]
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
        members.setdefault(None, []).extend(self._gap_node(i) for i in range(len(self.gaps)))

        lines = [
            "digraph autograd {",
            f'  graph [rankdir={self.rankdir}, fontname="{theme.FONT}", fontsize=11, '
            f'nodesep=0.3, ranksep=0.35, newrank=true{self._layout_limits()}];',
            f'  node [fontname="{theme.FONT}", fontsize=11, fontcolor="{theme.ON_FILL}", '
            'margin="0.08,0.04", height=0.3];',
            f'  edge [fontname="{theme.FONT}", fontsize=9, color="{theme.EDGE}", arrowsize=0.7, '
            f'labelfontsize=8, labelfontcolor="{theme.MUTED}", labeldistance=1.6];',
        ]
        lines += members.get(None, [])
        children: dict[str | None, list[str]] = {}
        paths = {p for p in members if p is not None}
        for p in list(paths):  # every ancestor of a used path is a cluster too
            parts = p.split(".")
            paths.update(".".join(parts[:i]) for i in range(1, len(parts)))
        for p in sorted(paths):
            children.setdefault(p.rpartition(".")[0] or None, []).append(p)
        lines += self._clusters(members, children, None, "  ")
        lines += self._edges()
        if self.legend:
            lines.append(_legend())
        lines.append("}")
        return "\n".join(lines) + "\n"

    def _source(self, tensor: str, op: str) -> str:
        """The node an input edge starts from: the tensor, or its copy beside ``op``."""
        if tensor in self.copies and self.consumers[tensor][0] != op:
            return copy_node_id(tensor, op)
        return tensor

    def _layout_limits(self) -> str:
        """Cheaper layout settings for graphs that would take dot minutes: many nodes,
        or tensors used far from where they were made (a shared weight in an unrolled
        loop). Every edge spanning k ranks costs dot k hidden nodes to route."""
        span = self.span
        extra = ""
        if len(self.g.ops) + len(self.g.tensors) > LARGE_GRAPH or span > LONG_EDGES:
            extra += ", nslimit=1, nslimit1=1"  # bound network-simplex passes
        if span > LONG_EDGES:
            extra += ", splines=line"  # curved routing of long edges is what costs most
        return extra

    def _clusters(self, members, children, parent: str | None, indent: str) -> list[str]:
        out = []
        for path in children.get(parent, []):
            out.append(f"{indent}subgraph cluster_{module_node_id(path)} {{")
            out.append(f'{indent}  id="{module_node_id(path)}"; class="module"; '
                       f'label={_q(path)}; labeljust=l; fontcolor="{theme.MODULE_BORDER}"; '
                       f'color="{theme.MODULE_BORDER}"; style="rounded,dashed";')
            out += [indent + "  " + line.strip() for line in members.get(path, [])]
            out += self._clusters(members, children, path, indent + "  ")
            out.append(f"{indent}}}")
        return out

    def _node(self, node: str) -> str:
        if node in self.ops:
            return self._op_node(self.ops[node])
        if node in self.tensors:
            return self._tensor_node(self.tensors[node])
        if node in self.own_saved:
            return self._saved_node(node, self.own_saved[node])
        tensor, _, op = node.partition("_at_")  # a copy of a reused leaf (copy_node_id)
        return self._tensor_node(self.tensors[tensor], node, op)

    def _gap_node(self, i: int) -> str:
        a, b = self.gaps[i]
        kinds = Counter(o.op for o in self.full.ops[a:b])
        what = ", ".join(f"{k:,} {name}" for name, k in kinds.most_common(4))
        if len(kinds) > 4:
            what += ", ..."
        ops = f"{b - a:,} op" + ("s" if b - a != 1 else "")
        label = (f'<<i>{ops} not drawn</i><br/><font point-size="9">'
                 f"{_h(self.full.ops[a].id)} to {_h(self.full.ops[b - 1].id)}: {_h(what)}"
                 "</font>>")
        return (f'  gap{i} [id="gap{i}", class="gap", shape=note, style="dashed", '
                f'color="{theme.GAP_BORDER}", fontcolor="{theme.MUTED}", label={label}, '
                f'tooltip="these ops are left out of the picture: draw them with '
                f'ops=({a}, {b})"];')

    def _op_node(self, o: OpInfo) -> str:
        label = (f'<<b>{_h(o.op)}</b><br/><font point-size="8" color="{theme.MUTED}">'
                 f'{o.id}</font>>')
        return (f'  {o.id} [id="{o.id}", class="op", shape=ellipse, style=filled, '
                f'fillcolor="{theme.OP_FILL}", color="{theme.OP_BORDER}", label={label}, '
                f"tooltip={_q(self._op_tooltip(o))}];")

    def _tensor_node(self, t: TensorInfo, node: str | None = None, at: str | None = None) -> str:
        fill, border, style = theme.KIND_STYLE[t.kind]
        savers = self.saved_by.get(t.id, [])
        rows = [self._title(t)]
        if t.label is None:
            rows.append(_h(f"{shape_text(t.shape)} {t.dtype}"))
        if self.show_values and t.id in self.values and t.label is None:
            rows.append(_h(self._value_text(t.id)))
        if self.show_values and t.id in self.grads:
            rows.append(_h(f"grad {summarize(self.grads[t.id])}"))
        penwidth = 2 if t.kind == "output" else 1
        classes = ["tensor", t.kind.replace(" ", "_")]
        if t.id in self.copies:
            classes.append(f"copy_{t.id}")
        if savers:
            names = list(dict.fromkeys(s.op for s in savers))
            ops = ", ".join(names) if len(names) <= MANY else (
                f"{', '.join(names[:3])} and {len(names) - 3:,} more ops")
            size = ("released" if all(s.released for s in savers)
                    else format_bytes(max(s.nbytes for s in savers)))
            rows.append(f'<font color="{theme.SAVED_TEXT}">saved by {ops} ({size})</font>')
            border, penwidth = theme.SAVED, 2
            classes.append("saved")
        styles = ",".join(["rounded", "filled"] + ([style] if style != "solid" else []))
        label = "<" + "<br/>".join(rows) + ">"
        tip = self._tensor_tooltip(t)
        if t.id in self.copies:
            tip = "\n".join(tip.splitlines()[:2]) + (
                f"\nused by {len(self.full_consumers.get(t.id) or self.consumers[t.id]):,} "
                "ops, drawn beside each"
                + (f"; this copy feeds {at}" if at else "; this is its first use"))
        node = node or t.id
        return (f'  {node} [id="{node}", class="{" ".join(classes)}", shape=box, '
                f'style="{styles}", fillcolor="{fill}", color="{border}", penwidth={penwidth}, '
                f"label={label}, tooltip={_q(tip)}];")

    def _value_text(self, tensor_id: str) -> str:
        """A tensor's values in one line, rounding noise at its op's scale shown as 0."""
        return summarize(self.values[tensor_id], scale=self.scales.of_tensor(tensor_id))

    def _title(self, t: TensorInfo) -> str:
        ident = f'<font point-size="8" color="{theme.MUTED}">{t.id}</font>'
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
        inside = self._inside.get(root, [])
        nbytes = held_bytes(s for o in inside for s in o.saved)
        mid = module_node_id(root)
        ops = f"{len(inside)} op" + ("s" if len(inside) != 1 else "")
        label = f"<<b>{_h(root)}</b><br/>{ops}, saves {format_bytes(nbytes)}>"
        tip = f"module {root} (collapsed): " + ", ".join(f"{o.id} {o.op}" for o in inside)
        return (f'  {mid} [id="{mid}", class="module_box", shape=box3d, style=filled, '
                f'fillcolor="{theme.MODULE_FILL}", color="{theme.MODULE_BORDER}", label={label}, '
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
                eid = box_edge_id(ra, rb)
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
                add(self._source(t, o.id), o.id, edge_id(o.id, i), attrs)
            for s in o.saved:
                if s.tensor is None:
                    add(o.id, saved_node_id(o.id, s.name), saved_edge_id(o.id, s.name),
                        f', style=dashed, color="{theme.SAVED}", arrowhead=none')
            add(o.id, o.output, output_edge_id(o.id), ", weight=8")
        if self.gaps:  # what comes from, and goes to, the ops left out
            into: set[tuple[str, str]] = set()
            for t in self.g.tensors:
                producer = self.full_ops.get(t.producer)
                if producer is not None and t.producer not in self.ops:
                    into.add((self._gap_of(producer.order), self._rep(t.id)))
                for c in self.full_consumers.get(t.id, ()):
                    if c not in self.ops:
                        into.add((self._rep(t.id), self._gap_of(self.full_ops[c].order)))
            for a, b in sorted(into):
                out.append(f'  {a} -> {b} [id="e_{a}_{b}", class="gap_edge", style=dashed, '
                           f'color="{theme.GAP_EDGE}"];')
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
        if t.producer in self.ops:
            lines.append(f"made by {t.producer} ({self.ops[t.producer].op})")
        elif t.producer:
            lines.append(f"made by {t.producer} (not drawn)")
        users = self.consumers[t.id]
        if users:
            lines.append("used by " + (", ".join(users) if len(users) <= MANY else
                                       f"{', '.join(users[:3])} and {len(users) - 3:,} more"))
        savers = self.saved_by.get(t.id, [])
        for s in savers[:MANY]:
            lines.append(f"saved by {s.op} as {s.name!r} ({_saved_size(s)})")
        if len(savers) > MANY:
            lines.append(f"... and saved by {len(savers) - MANY:,} more ops")
        if t.id in self.values:
            lines.append(f"value: {self._value_text(t.id)}")
        if t.id in self.grads:
            lines.append(f"grad: {summarize(self.grads[t.id])}")
        return "\n".join(lines)


def _part(graph: Graph, kept: set[int]) -> Graph:
    """The ops of ``graph`` whose order is in ``kept``, with the tensors they touch."""
    ops = tuple(o for o in graph.ops if o.order in kept)
    touched = {t for o in ops for t in (*o.inputs, o.output)}
    tensors = tuple(t for t in graph.tensors if t.id in touched)
    ids = {o.id for o in ops} | touched
    edges = tuple((a, b) for a, b in graph.edges if a in ids and b in ids)
    return Graph(ops, tensors, edges, graph.output)


def _saved_size(s: SavedInfo) -> str:
    """A saved tensor's size for a tooltip; a view names the larger buffer it keeps
    alive (what saving it costs, see ``autograd_core.tools.buffers``)."""
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
    rows.append(f'<tr><td color="{theme.SAVED}"><font color="{theme.SAVED_TEXT}">saved for '
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
