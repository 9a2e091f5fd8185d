"""Lesson helpers for the forward graph: where a recorded graph fans out and merges.

The four graph motifs of lesson 02 are read straight off a captured graph's edges:

* a tensor read by several ops **fans out**: a *branch* when it is a value that
  splits into parallel paths, *reuse* when it is a parameter used at several
  places (the graph cannot tell the two apart: both are fan-out, and both make the
  backward pass add up gradients);
* an op with several inputs from the graph **merges** paths (add, concatenate,
  gating by a product, pooling by a max or a mean over branches);
* a *chain* has neither.

``branches()`` shows the other half of the lesson: Python control flow records a
different graph per input, and the branch that did not run gets no gradient. It gives W6's
and L3's answers, so it records W6's solution as seen; its parts stay private.

Constants (tensors that do not require grad) get one node per use in a capture, so
only leaves that require grad and computed tensors count here.

>>> import autograd_core as ag
>>> x = ag.tensor([1.0, 2.0], requires_grad=True).named("x")
>>> fan_out(capture(ag.tanh(x) * x))
{'x': ('tanh', 'mul')}
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import autograd_core as ag
from autograd_core.recording.tensor import Tensor
from autograd_core.tools.graph import Graph, capture

from .. import gate
from ..live import live
from ..render import to_dot
from ..svg import SVG, to_svg
from .report import Report

__all__ = ["consumers", "fan_out", "merges", "motif_report", "draw_sideways", "hide_rules",
           "branches", "DefineByRun"]


def _graph(output: Tensor | Graph) -> Graph:
    return output if isinstance(output, Graph) else capture(output)


def _label(graph: Graph, tensor_id: str) -> str:
    """A tensor's name if it has one, else the name of the op that computed it
    (``exp``), else its id (``t3``)."""
    tensor = graph.tensor(tensor_id)
    if tensor.name:
        return tensor.name
    return graph.op(tensor.producer).op if tensor.producer else tensor_id


def consumers(graph: Graph) -> dict[str, tuple[str, ...]]:
    """Tensor id -> ids of the ops that read it, in execution order. An op that reads
    the same tensor twice (``x * x``) is listed twice.

    >>> import autograd_core as ag
    >>> x = ag.tensor(1.0, requires_grad=True)
    >>> consumers(capture(x * x))
    {'t0': ('op0', 'op0'), 't1': ()}
    """
    readers: dict[str, list[str]] = {t.id: [] for t in graph.tensors}
    for op in graph.ops:
        for tensor_id in op.inputs:
            readers[tensor_id].append(op.id)
    return {tid: tuple(ops) for tid, ops in readers.items()}


def _in_graph(graph: Graph, tensor_id: str) -> bool:
    return graph.tensor(tensor_id).kind in ("leaf", "intermediate", "output")


def fan_out(output: Tensor | Graph) -> dict[str, tuple[str, ...]]:
    """Tensors read by more than one op input -> the names of the ops reading them
    (branch or reuse). Keys are tensor names where the program gave one, else ids."""
    graph = _graph(output)
    names = {op.id: op.op for op in graph.ops}
    return {_label(graph, tid): tuple(names[o] for o in ops)
            for tid, ops in consumers(graph).items()
            if len(ops) > 1 and _in_graph(graph, tid)}


def merges(output: Tensor | Graph) -> list[tuple[str, tuple[str, ...]]]:
    """Ops where two or more paths join, in execution order, each as ``(op name,
    labels of the joining inputs)``.

    An input is a path when an op computed it or when it fans out (a value read by
    several ops). A leaf read only here (a weight in ``x * w``) is not a path of its
    own, and constants never are.

    >>> import autograd_core as ag
    >>> a = ag.tensor([1.0], requires_grad=True).named("a")
    >>> merges(capture(ag.exp(a) + a * 2.0))
    [('add', ('exp', 'mul'))]
    """
    graph = _graph(output)
    readers = consumers(graph)
    found = []
    for op in graph.ops:
        inputs = [t for t in op.inputs if _in_graph(graph, t)
                  and (graph.tensor(t).kind != "leaf" or len(readers[t]) > 1)]
        if len(inputs) > 1:
            found.append((op.op, tuple(_label(graph, t) for t in inputs)))
    return found


def motif_report(programs: Mapping[str, Tensor | Graph]) -> Report:
    """One row per program: its ops in execution order, what fans out, what merges.

    >>> import autograd_core as ag
    >>> x = ag.tensor([1.0, 2.0], requires_grad=True).named("x")
    >>> motif_report({"chain": ag.tanh(ag.exp(x))})
    Where each graph fans out and merges
      program | ops, in execution order | read by several ops | where paths join
      chain   | exp → tanh              | -                   | -
    Fan-out (branch, reuse) means backward adds gradients; a merge op sends one to each input.
    """
    rows = []
    for name, output in programs.items():
        graph = _graph(output)
        spread = "; ".join(f"{t} → {', '.join(ops)}" for t, ops in fan_out(graph).items())
        joined = "; ".join(f"{op}({', '.join(ins)})" for op, ins in merges(graph))
        rows.append((name, " → ".join(op.op for op in graph.ops), spread or "-",
                     joined or "-"))
    return Report("Where each graph fans out and merges",
                  "Fan-out (branch, reuse) means backward adds gradients; a merge op sends "
                  "one to each input.",
                  ("program", "ops, in execution order", "read by several ops",
                   "where paths join"), rows)


def draw_sideways(output: Tensor, *, show_values: bool = False) -> SVG:
    """The recorded graph drawn left to right and without the legend: a short, wide
    picture for small graphs shown one after another (``widgets.draw`` draws top to
    bottom, with the legend).

    >>> import autograd_core as ag
    >>> x = ag.tensor([1.0], requires_grad=True)
    >>> draw_sideways(ag.exp(x)).data.startswith("<svg")     # doctest: +SKIP
    True
    """
    view = live(output, "draw_sideways")
    return SVG(to_svg(to_dot(view.graph, values=view.values, show_values=show_values,
                             input_names=view.input_names, legend=False, rankdir="LR")))


def hide_rules(picture: SVG, *ops: str, why: str = "an exercise asks for it") -> SVG:
    """``picture`` with the gradient rule left out of the tooltips of the ops named ``ops``
    (``"cat"``): a lesson that asks the learner for a rule can still show the graph, hover
    and all, without the answer one hover away. The rest of each tooltip stays.

    >>> import autograd_core as ag
    >>> a, b = (ag.tensor([1.0], requires_grad=True) for _ in range(2))
    >>> "offset(shapes" in hide_rules(draw_sideways(ag.cat([a, b])), "cat").data  # doctest: +SKIP
    False
    """
    names = "|".join(re.escape(op) for op in ops)
    pattern = re.compile(rf"(<title>op\d+: (?:{names})(?:&#160;|\s|\(|\)|\w)*?&#10;"
                         rf"gradient rule:&#10;)(.*?)(&#10;inputs:)", re.S)
    return SVG(pattern.sub(lambda m: f"{m[1]} &#160;(not shown here: {why}){m[3]}",
                           picture.data))


# -- define-by-run (W6, L3) --------------------------------------------------------------------
@dataclass(frozen=True)
class DefineByRun:
    """One run of ``_branchy``: the input, the ops recorded, and the weights' gradients
    (``None`` for the weight of the branch that did not run)."""

    x: float
    ops: tuple[str, ...]
    grad_w_pos: float | None
    grad_w_neg: float | None


def _branchy(x: Tensor, w_pos: Tensor, w_neg: Tensor) -> Tensor:
    """Ordinary Python deciding what runs: positive inputs are scaled by ``w_pos``,
    the others by ``w_neg``; then tanh is applied once per whole unit of |x| (at
    least once)."""
    y = w_pos * x if x.item() > 0 else w_neg * x
    for _ in range(max(1, int(abs(x.item())))):
        y = y.tanh()
    return y


def _branchy_program(x: float = 2.5) -> Tensor:
    """The program W6 and L3 ask about, run on ``x`` with the weights they name (the graph
    an item's watch compares a learner's run with)."""
    return _branchy(ag.tensor(float(x)), ag.tensor(1.5, requires_grad=True),
                    ag.tensor(-2.0, requires_grad=True))


def _define_by_run(xs: Sequence[float] = (2.5, -0.5)) -> list[DefineByRun]:
    """Run ``_branchy`` on each input with fresh weights, recording; return what was
    recorded and which weights got a gradient."""
    runs = []
    for value in xs:
        x = ag.tensor(float(value))
        w_pos, w_neg = ag.tensor(1.5, requires_grad=True), ag.tensor(-2.0, requires_grad=True)
        y = _branchy(x, w_pos, w_neg)
        ops = tuple(op.op for op in capture(y).ops)
        y.backward()
        runs.append(DefineByRun(float(value), ops,
                                None if w_pos.grad is None else w_pos.grad.item(),
                                None if w_neg.grad is None else w_neg.grad.item()))
    return runs


@gate.answers("W6")
@gate.answers("L3")  # its table shows the ops each input records: L3's answer too
def branches() -> Report:
    """Two inputs through Python control flow: two recorded graphs, two sets of gradients."""
    runs = _define_by_run()
    rows = [(r.x, " → ".join(r.ops), r.grad_w_pos, r.grad_w_neg) for r in runs]
    return Report("y = w_pos·x if x > 0 else w_neg·x, then tanh once per unit of |x|",
                  "Define-by-run: only the branch that ran is recorded, so the other weight is "
                  "not in the graph and its .grad stays None.",
                  ("x", "ops recorded", "w_pos.grad", "w_neg.grad"), rows, data={"runs": runs})
