"""What the stepper shows about one node you clicked: a pure function of the replay.

``inspect_node(replay, node_id, k)`` describes an op, a tensor, an array an op made
and saved, or a module box, as an HTML string, at step ``k`` of the sweep:

* a tensor: its id, name, kind, shape and dtype, its values when the program ran
  (``values``: summaries taken before the sweep released anything), the op that
  made it and the ops that read it, which ops saved it and how many bytes (and when
  that was released), and its gradient so far (hidden in predict mode until the
  step that sent it is revealed);
* an op: the line of the learner's code that recorded it, its rule (from the op's
  own definition), inputs and output, the module that ran it, what it saved and the
  step that visits it; a tensor an op made shows that op's line too. Lines come from
  ``OpInfo.source`` (recorded since ``widgets`` was imported, see
  ``autograd_core.recording.source``); an op recorded without one shows no line;
* a saved array an op made (relu's mask): who saved it, its shape and bytes.
"""

from __future__ import annotations

import html
from collections.abc import Mapping

from autograd_core.recording.source import describe_source, source_line
from autograd_core.tools.graph import OpInfo, SavedInfo, TensorInfo

from .graph_ids import module_node_id, saved_node_id
from .replay import Replay
from .summary import describe_tensor, format_bytes, full, shape_text

__all__ = ["inspect_node"]

_KIND = {"leaf": "leaf (requires grad)", "frozen parameter": "frozen parameter (no grad)",
         "constant": "constant", "intermediate": "intermediate", "output": "output"}


def _pre(text: str) -> str:
    return f'<pre class="ag-inspector-values">{html.escape(text)}</pre>'


def _row(label: str, value_html: str) -> str:
    return f"<tr><th>{html.escape(label)}</th><td>{value_html}</td></tr>"


def _table(title: str, rows: list[str]) -> str:
    return (f'<div class="ag-inspector"><div class="ag-inspector-title">{title}</div>'
            f"<table>{''.join(rows)}</table></div>")


def inspect_node(replay: Replay, node_id: str, k: int, *, values: Mapping[str, str] = {},
                 revealed: bool = True) -> str:
    """HTML describing node ``node_id`` of the replayed graph after ``k`` steps.

    ``values``: tensor id -> a summary of its values, taken when the stepper was made;
    ``revealed=False``: step ``k``'s gradients are still to be predicted, so a gradient
    it sent is not shown.
    """
    graph = replay.graph
    if node_id in replay.tensors:
        return _tensor(replay, replay.tensors[node_id], k, values, revealed)
    if node_id in replay.ops:
        return _op(replay, replay.ops[node_id], k)
    for saved in graph.saved:
        if saved.tensor is None and saved_node_id(saved.op, saved.name) == node_id:
            return _made_and_saved(replay, saved, values.get(node_id))
    modules = {op.module for op in graph.ops if op.module}
    for path in modules:
        if module_node_id(path) == node_id:
            ops = [op.id for op in graph.ops if op.module == path
                   or (op.module or "").startswith(path + ".")]
            return _table(f"module <code>{html.escape(path)}</code>", [
                _row("ops inside", html.escape(_list(ops)))])
    return ('<div class="ag-inspector">Click a node of the picture (an op, a tensor or a '
            "saved array) to see it here.</div>")


def _line(op: OpInfo | None) -> str | None:
    """HTML of the line of code that recorded ``op``: its text and a short place
    (``cell line 3``, ``model.py:12``), or ``None`` if no line was recorded."""
    where = describe_source(op.source) if op is not None else None
    if where is None:
        return None
    text = source_line(op.source)
    place = f'<span class="ag-inspector-where">{html.escape(where)}</span>'
    return f"<code>{html.escape(text)}</code> ({place})" if text else place


def _list(ids: list[str], most: int = 12) -> str:
    if not ids:
        return "none"
    shown = ", ".join(ids[:most])
    return shown + (f" and {len(ids) - most} more" if len(ids) > most else "")


def _released_at(replay: Replay, saved: SavedInfo) -> int | None:
    for step in replay.steps:
        if step.op == saved.op and saved.name in step.released:
            return step.number
    return None


def _saves_of(replay: Replay, tid: str, k: int) -> str:
    lines = []
    for saved in replay.graph.saved:
        if saved.tensor != tid:
            continue
        released = _released_at(replay, saved)
        when = (f", released at step {released}" if released is not None and released <= k
                else "")
        lines.append(f"{saved.op} as '{saved.name}' ({format_bytes(saved.buffer_nbytes)}"
                     f"{when})")
    return html.escape("; ".join(lines)) if lines else "no op saved it"


def _gradient(replay: Replay, tensor: TensorInfo, k: int, revealed: bool) -> str:
    tid = tensor.id
    if tensor.kind in ("constant", "frozen parameter"):
        return "none: it does not require grad"
    received = replay.contributions(tid, k)
    scale = received[-1][2].total_scale if received else 0.0
    if tid in replay.leaves:
        grad = replay.leaf_grad(tid, k)
    else:
        grad = received[-1][2].total if received else None
    if received and received[-1][0] == k and not revealed:
        return "sent at this step: predict it first"
    if grad is None:
        return "nothing yet (no step has sent it a gradient)"
    parts = f" (the sum of {len(received)} contributions)" if len(received) > 1 else ""
    return f"after step {k}{parts}:" + _pre(full(grad, scale=scale))


def _tensor(replay: Replay, tensor: TensorInfo, k: int, values: Mapping[str, str],
            revealed: bool) -> str:
    users = [op.id for op in replay.graph.ops if tensor.id in op.inputs]
    rows = [
        _row("kind", html.escape(_KIND.get(tensor.kind, tensor.kind))),
        _row("shape, dtype", html.escape(f"{shape_text(tensor.shape)} {tensor.dtype}")),
    ]
    if tensor.id in values:
        rows.append(_row("values", _pre(values[tensor.id])))
    made_by = replay.ops.get(tensor.producer) if tensor.producer else None
    rows.append(_row("made by", html.escape(f"{made_by.id} ({made_by.op})") if made_by
                     else "the program (not computed by a recorded op)"))
    line = _line(made_by)
    if line is not None:
        rows.append(_row("made at", line))
    rows += [
        _row("read by", html.escape(_list(users))),
        _row("saved by", _saves_of(replay, tensor.id, k)),
        _row("gradient", _gradient(replay, tensor, k, revealed)),
    ]
    return _table(f"tensor <code>{html.escape(describe_tensor(tensor))}</code>", rows)


def _op(replay: Replay, op: OpInfo, k: int) -> str:
    visit = next((s.number for s in replay.steps if s.op == op.id), None)
    if visit is None:
        status = "never visited (no gradient flows through it)"
    elif visit <= k:
        status = f"visited at step {visit} (done)"
    else:
        status = f"visited at step {visit} (still to come)"
    inputs = [describe_tensor(replay.tensors[t]) for t in op.inputs]
    saved = [f"'{s.name}' {shape_text(s.shape)} ({format_bytes(s.buffer_nbytes)})"
             for s in op.saved]
    line = _line(op)
    rows = [_row("recorded at", line)] if line is not None else []
    rows += [
        _row("rule", _pre(op.rule)),
        _row("inputs", html.escape("; ".join(inputs) or "none")),
        _row("output", html.escape(describe_tensor(replay.tensors[op.output]))),
        _row("module", html.escape(op.module or "none (called directly)")),
        _row("saved for backward", html.escape("; ".join(saved) or "nothing")),
        _row("backward", html.escape(status)),
    ]
    return _table(f"op <code>{html.escape(op.id)}</code>: {html.escape(op.op)}", rows)


def _made_and_saved(replay: Replay, saved: SavedInfo, value: str | None) -> str:
    released = _released_at(replay, saved)
    rows = [
        _row("saved by", html.escape(f"{saved.op} ({replay.ops[saved.op].op}) as "
                                     f"'{saved.name}'")),
        _row("shape, dtype", html.escape(f"{shape_text(saved.shape)} {saved.dtype}")),
        _row("bytes", html.escape(format_bytes(saved.buffer_nbytes))),
        _row("released", html.escape(f"at step {released}" if released else
                                     "not during this sweep (retain_graph=True)")),
    ]
    if value is not None:
        rows.insert(2, _row("values", _pre(value)))
    return _table(f"saved array <code>{html.escape(saved_node_id(saved.op, saved.name))}"
                  "</code>, made by its op", rows)
