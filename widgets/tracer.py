"""``ForwardTracer``: the forward pass, op by op, and what recording it keeps.

Given a callable, the tracer runs it twice: once recording (as training does)
and once under ``no_grad`` (as inference does), and puts the two side by side:
same output, but only the recording holds saved tensors (``saved_bytes``). While
the recording run goes, an engine ``Observer`` keeps each op's output so every
value can be shown. Given an output tensor, it traces the graph already recorded
behind it, with the values the program or the graph still holds.

Each op is shown in execution order with its output (shape and a summary of the
values) and what it saved, with bytes. The ops' order is the graph's: ``capture``
numbers ops as they ran.

A graph too large to lay out in about a second is drawn as the neighbourhood of
the current op (``widgets.controls.Pages``), as the stepper does; ``close()``
closes every widget inside, so nothing keeps a closed tracer alive.
"""

from __future__ import annotations

import html
from dataclasses import dataclass

import ipywidgets as w
import numpy as np
import traitlets

from autograd_core.recording.grad_mode import no_grad
from autograd_core.recording.node import Observer, observing
from autograd_core.recording.tensor import Tensor
from autograd_core.tools.graph import saved_bytes

from . import messages, theme
from .canvas import GraphCanvas
from .controls import (
    Pages,
    StepControls,
    bind_step_keys,
    close_view,
    module_picker,
    note_html,
    recollapse,
    with_static_picture,
)
from .graph_ids import saved_targets
from .highlight import TRACE_STATES, step_legend
from .layout import picture_beside, side_layout
from .live import Live, live
from .panels import module_note
from .summary import (
    ValueScales,
    describe_tensor,
    for_later,
    format_bytes,
    later_text,
    summarize,
)
from .timeline import forward_held

__all__ = ["ForwardTracer", "TraceRow", "forward_trace", "compare_runs"]


@dataclass(frozen=True)
class TraceRow:
    """One op of the forward pass, as it ran."""

    number: int
    op: str
    name: str
    module: str | None
    inputs: tuple[str, ...]
    output: str
    kept: object  # the output's values: a small copy, or already text (see ``value``)
    saved: tuple[tuple[str, str, int], ...]  # (name, holder node, bytes)
    held_bytes: int  # bytes the graph holds for backward after this op

    @property
    def value(self) -> str:
        """The op's output values as text (formatted when first shown)."""
        return later_text(self.kept)


def forward_trace(view: Live) -> list[TraceRow]:
    """The ops of ``view.graph`` in execution order, with values and saved bytes."""
    graph = view.graph
    tensors = {t.id: t for t in graph.tensors}
    holders = saved_targets(graph)
    scales = ValueScales(graph, view.values)
    rows = []
    for op, held in zip(graph.ops, forward_held(graph)):
        names = view.input_names.get(op.id) or tuple(map(str, range(len(op.inputs))))
        value = view.values.get(op.output)
        rows.append(TraceRow(
            op.order + 1, op.id, op.op, op.module,
            tuple(f"{n} = {describe_tensor(tensors[t])}" for n, t in zip(names, op.inputs)),
            describe_tensor(tensors[op.output]),
            for_later(value, scale=scales.of_op(op.id)) if value is not None else
            "(not kept: the program dropped it and no op saved it)",
            tuple((s.name, holders[op.id, s.name], s.nbytes) for s in op.saved), held))
    return rows


class _KeepOutputs(Observer):
    """Keeps each recorded op's output array while the traced function runs, so the
    tracer can show values the program itself drops right away."""

    def __init__(self):
        self.outputs: dict[int, np.ndarray] = {}  # node seq -> output array

    def on_forward(self, op, node, arrays, out, params) -> None:
        if node is not None:
            self.outputs[node.seq] = out


def compare_runs(fn, *args, **kwargs) -> tuple[Tensor, dict, dict[int, np.ndarray]]:
    """Run ``fn(*args, **kwargs)`` recording, then again under ``no_grad``.

    Returns the recorded output, what each run holds for backward
    (``{"recording_bytes", "no_grad_bytes", "max_difference"}``) and the recorded
    run's op outputs (node seq -> array).
    """
    with observing(_KeepOutputs()) as keeper:
        recorded = fn(*args, **kwargs)
    with no_grad():
        plain = fn(*args, **kwargs)
    for out in (recorded, plain):
        if not isinstance(out, Tensor):
            raise messages.view_needs_tensor("ForwardTracer's function", out,
                                      "ForwardTracer(lambda: model(x)), returning the output")
    diff = (float(np.max(np.abs(recorded.numpy() - plain.numpy()), initial=0.0))
            if recorded.shape == plain.shape else float("nan"))
    comparison = {"recording_bytes": saved_bytes(recorded),
                  "no_grad_bytes": saved_bytes(plain), "max_difference": diff}
    return recorded, comparison, keeper.outputs


class ForwardTracer(w.VBox):
    """Step through the forward pass op by op.

    >>> ForwardTracer(lambda: model(x))   # runs it recording and under no_grad  # doctest: +SKIP
    >>> ForwardTracer(loss)               # the graph already recorded           # doctest: +SKIP

    ``picture``: ``"auto"`` (the whole graph if it lays out quickly, else the
    neighbourhood of the current op), ``"full"`` or ``"neighbourhood"``.
    ``collapsed`` (and the module picker, shown when the graph has modules; start
    with ``collapse=``) is the modules drawn as one box each, as in the stepper.
    """

    collapsed = traitlets.Tuple()

    def __init__(self, fn_or_output, *args, max_height: str = "640px", interval: int = 700,
                 picture: str = "auto", collapse=(), **kwargs):
        kept: dict[int, np.ndarray] = {}
        if isinstance(fn_or_output, Tensor):
            output, self.comparison = fn_or_output, None
        elif callable(fn_or_output):
            output, self.comparison, kept = compare_runs(fn_or_output, *args, **kwargs)
        else:
            raise messages.view_needs_tensor("ForwardTracer", fn_or_output, "ForwardTracer(loss)")
        view = live(output, "ForwardTracer")
        if not view.graph.ops:
            raise messages.view_needs_graph("ForwardTracer", output.requires_grad)
        outputs = {o.id: o.output for o in view.graph.ops}
        for seq, op_id in view.graph.node_ids.items():
            if seq in kept:
                view.values.setdefault(outputs[op_id], kept[seq])
        self.graph = view.graph
        self.rows = forward_trace(view)
        self._holders = saved_targets(self.graph)
        self.pages = Pages(view.graph, picture=picture, collapse=collapse, values=view.values,
                           input_names=view.input_names, legend=False)
        del view, kept
        self.svg = self.pages.first(self.pages.page_of(0))
        self.controls = StepControls(len(self.rows), interval, what="op")
        self.picture = GraphCanvas(self.svg, max_height)
        self.panel = w.HTML()
        self.module_picker = module_picker(self.graph, collapse)
        side = [self.module_picker, self.panel]
        if self.comparison is not None:
            side.append(w.HTML(_comparison_html(self.comparison)))
        body = picture_beside(self.picture, w.VBox(side, layout=side_layout()))
        self.note = w.HTML(note_html(self.pages.note))
        legend = w.HTML(step_legend(TRACE_STATES, "op"))
        super().__init__([self.controls, legend, self.note, body])
        self.add_class("ag-view")  # the focus ring of its controls: canvas.css
        self.controls.observe(lambda _: self._show(), "value")
        traitlets.link((self.module_picker, "value"), (self, "collapsed"))
        self.observe(lambda change: recollapse(self, change["new"]), "collapsed")
        bind_step_keys(self.picture, self)
        self._show()

    @property
    def step(self) -> int:
        """How many ops have run (0 = none yet)."""
        return self.controls.value

    @step.setter
    def step(self, k: int) -> None:
        """Go to op ``k``; outside 0..len(rows) it raises, as the stepper's ``step`` does
        (``next``/``previous`` stop at the ends instead)."""
        if not 0 <= k <= len(self.rows):
            raise messages.step_out_of_range(k, len(self.rows))
        self.controls.value = k

    def first(self) -> None:
        self.controls.go(0)

    def previous(self) -> None:
        self.controls.go(self.step - 1)

    def next(self) -> None:
        self.controls.go(self.step + 1)

    def last(self) -> None:
        self.controls.go(len(self.rows))

    def page(self) -> int:
        """The page of the picture that shows the current op."""
        return self.pages.page_of(self.step - 1 if self.step else 0)

    def _show(self) -> None:
        k = self.step
        groups = {"done": [r.op for r in self.rows[:max(k - 1, 0)]]}
        if k:
            row = self.rows[k - 1]
            groups.update(current=[row.op], upstream=[self.graph.ops[k - 1].output],
                          read=[holder for _, holder, _ in row.saved])
        pages = self.pages

        def restyle():  # the page shown may still be the last one while the next is laid out
            self.svg = pages.current_svg
            pages.restyle(self.picture, groups, self.rows[k - 1].op if k else None)

        pages.show(self.page(), self.picture, restyle)
        self.panel.value = _row_html(self.rows[k - 1], len(self.rows)) if k else (
            f"<b>Before the forward pass</b> (op 0 of {len(self.rows)}). Press <b>next</b> "
            "to run the first op.")

    def _repr_mimebundle_(self, **kwargs):
        return with_static_picture(super()._repr_mimebundle_(**kwargs), "image/svg+xml",
                                   self.svg, f"ForwardTracer: {len(self.rows)} ops")

    def close(self) -> None:
        """Close every widget of the tracer (none stays in ipywidgets' registry) and
        stop laying out pages ahead (``widgets.controls.close_view``)."""
        close_view(self)


def _row_html(row: TraceRow, n: int) -> str:
    e = html.escape
    parts = [f"<b>Op {row.number} of {n}: {row.op} {e(row.name)}</b>{module_note(row.module)}",
             "<div>inputs:<br/>" + "<br/>".join("&nbsp;&nbsp;" + e(i) for i in row.inputs)
             + "</div>",
             f"<div><span style='color:{theme.UPSTREAM}'>■</span> output {e(row.output)}:"
             f"<pre style='margin:2px 0 6px 12px'>{e(row.value)}</pre></div>"]
    if row.saved:
        items = "".join(f"<li><span style='background:{theme.READ};color:{theme.ON_FILL}'>"
                        f"&nbsp;{e(name)}&nbsp;</span>"
                        f" ({e(holder)}, {format_bytes(nbytes)})</li>"
                        for name, holder, nbytes in row.saved)
        parts.append(f"<div>saved for backward:<ul style='margin:2px'>{items}</ul></div>")
    else:
        parts.append("<div>saved nothing for backward.</div>")
    parts.append(f"<div>the graph now holds <b>{format_bytes(row.held_bytes)}</b> for "
                 "backward.</div>")
    return "".join(parts)


def _comparison_html(c: dict) -> str:
    same = ("identical outputs" if c["max_difference"] == 0 else
            f"outputs differ by at most {summarize(c['max_difference'])}")
    return ("<div style='margin-top:8px'><b>Recording vs no_grad</b> (the same function run "
            "twice)<table><tr><th style='text-align:left'>run</th>"
            "<th style='text-align:left'>saved for backward</th></tr>"
            f"<tr><td>recording</td><td>{format_bytes(c['recording_bytes'])}</td></tr>"
            f"<tr><td>no_grad</td><td>{format_bytes(c['no_grad_bytes'])}</td></tr></table>"
            f"{same}.</div>")
