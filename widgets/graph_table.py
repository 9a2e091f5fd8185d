"""The graph as two HTML tables: what a learner who does not see the picture reads.

``graph_table(graph)`` lists every op (in the order it ran: what it read, what it made,
what it saved and how many bytes) and every tensor (kind, shape and dtype, who saved
it). Given a replay and a step, ``replay_table(replay, k)`` adds the gradient each
tensor has received after ``k`` steps, so the table follows the stepper. Both are the
canvas's table view (``GraphCanvas.table``, T on the picture), its long description.
"""

from __future__ import annotations

import html
from collections.abc import Callable

from autograd_core.tools.graph import Graph

from .replay import Replay
from .summary import format_bytes, shape_text, summarize

__all__ = ["graph_table", "replay_table"]

TABLE_ROWS = 2000  # rows of each table at most; a note says how many were left out

_KIND = {"leaf": "leaf (requires grad)", "frozen parameter": "frozen parameter (no grad)"}


def _cells(values: list[str], header: bool = False) -> str:
    tag = "th scope='col'" if header else "td"
    close = "th" if header else "td"
    return "<tr>" + "".join(f"<{tag}>{v}</{close}>" for v in values) + "</tr>"


def _rows(items: list, row: Callable[[object], list[str]], what: str) -> str:
    shown = "".join(_cells(row(item)) for item in items[:TABLE_ROWS])
    if len(items) > TABLE_ROWS:
        shown += (f"<tr><td colspan='9'>… and {len(items) - TABLE_ROWS:,} more {what} "
                  "(the picture's inspector shows any of them)</td></tr>")
    return shown


def graph_table(graph: Graph, gradient: Callable[[str], str] | None = None,
                caption: str = "") -> str:
    """HTML tables of ``graph``'s ops and tensors; ``gradient(tensor_id)``, if given,
    fills a last column of the tensor table (HTML)."""
    h = html.escape
    saved_by: dict[str, list[str]] = {}
    for s in graph.saved:
        if s.tensor is not None:
            saved_by.setdefault(s.tensor, []).append(
                f"{s.op} as '{s.name}' ({format_bytes(s.buffer_nbytes)})")

    def op_row(op) -> list[str]:
        saved = "; ".join(f"'{s.name}' ({format_bytes(s.buffer_nbytes)})" for s in op.saved)
        return [h(op.id), h(op.op), h(", ".join(op.inputs) or "none"), h(op.output),
                h(saved or "nothing"), h(op.module or "")]

    def tensor_row(t) -> list[str]:
        cells = [h(t.id), h(t.name or ""), h(_KIND.get(t.kind, t.kind)),
                 h(f"{shape_text(t.shape)} {t.dtype}"),
                 h("; ".join(saved_by.get(t.id, [])) or "no")]
        return cells + ([gradient(t.id)] if gradient is not None else [])

    ops = sorted(graph.ops, key=lambda o: o.order)
    tensors = list(graph.tensors)
    tensor_heads = ["tensor", "name", "kind", "shape, dtype", "saved by"]
    if gradient is not None:
        tensor_heads.append("gradient so far")
    lead = f"<p>{h(caption)}</p>" if caption else ""
    return (f"<div class='ag-graph-table'>{lead}"
            f"<table><caption>{len(ops):,} ops, in the order they ran</caption>"
            + _cells(["op", "does", "reads", "makes", "saved for backward", "module"], True)
            + _rows(ops, op_row, "ops") + "</table>"
            f"<table><caption>{len(tensors):,} tensors</caption>"
            + _cells(tensor_heads, True) + _rows(tensors, tensor_row, "tensors")
            + "</table></div>")


def replay_table(replay: Replay, k: int, revealed: bool = True) -> str:
    """``graph_table`` of the replayed graph with each tensor's gradient after ``k``
    steps; with ``revealed=False`` a gradient sent at step ``k`` shows as ``?``."""

    def gradient(tid: str) -> str:
        tensor = replay.tensors[tid]
        if tensor.kind in ("constant", "frozen parameter"):
            return "does not require grad"
        received = replay.contributions(tid, k)
        if received and received[-1][0] == k and not revealed:
            return "<b>?</b> (sent at this step: predict it)"
        if tid in replay.leaves:
            grad = replay.leaf_grad(tid, k)
        elif received:
            grad = received[-1][2].total
        elif tid == replay.graph.output and replay.steps:
            grad = replay.steps[0].grad_output  # the seed, there before the first step
        else:
            grad = None
        if grad is None:
            return "nothing yet"
        scale = received[-1][2].total_scale if received else 0.0  # rounding noise shows as 0
        return f"<pre>{html.escape(summarize(grad, scale=scale))}</pre>"

    caption = (f"After step {k} of {len(replay)} of the backward sweep." if k
               else f"Before the backward sweep ({len(replay)} steps).")
    return graph_table(replay.graph, gradient, caption)
