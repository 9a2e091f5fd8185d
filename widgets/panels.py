"""The text beside the picture, as HTML strings: pure functions of a replay.

``step_panel(replay, k)`` says what step ``k`` of the sweep did, in the order the
engine did it: the upstream gradient arriving, the op's rule (from the op's own
definition), the saved tensors it read, the gradient sent to each input (with the
un-broadcast and the accumulation where they happened), what was released.
``leaves_panel(replay, k)`` shows every leaf's ``.grad`` after ``k`` steps (on a
graph with many leaves: the ones this step changed first, then the others up to
``LEAF_ROWS``).

Both stay small whatever the graph's size: an accumulation lists its last
``CONTRIBUTIONS`` contributions and says how many came before.
"""

from __future__ import annotations

import html

from autograd_core.sweep.engine import broadcast_axes

from . import theme
from .replay import Replay, SentRecord, StepRecord
from .summary import describe_tensor, format_bytes, full, shape_text

__all__ = ["step_panel", "leaves_panel", "step_sentence"]

LEAF_ROWS = 40  # leaves listed at most (those the step changed come first)
CONTRIBUTIONS = 8  # earlier contributions listed at most in an accumulation


# Values wrap between numbers and words, never inside one: JupyterLab gives output
# <pre> 'word-break: break-all', which split "-0.12" and "summed" across lines.
WRAP = "white-space:pre-wrap;word-break:normal;overflow-wrap:break-word"


def _pre(text: str) -> str:
    # JupyterLab's theme colours (light fallbacks elsewhere): in the dark theme a fixed
    # light box under the theme's white text left the numbers unreadable.
    return ('<pre style="margin:2px 0 6px 12px;padding:2px 4px;'
            "background:var(--jp-layout-color2,#f8f9fa);"
            f"color:var(--jp-content-font-color1,#212529);{WRAP};"
            f'font-size:12px;line-height:1.25">{html.escape(text)}</pre>')


def step_sentence(replay: Replay, k: int, revealed: bool = True) -> str:
    """Step ``k`` in one sentence, for a screen reader's live region and as the
    picture's description: the op visited, what it reads and where it sends.

    >>> step_sentence(replay, 0)                     # doctest: +SKIP
    'Before the sweep: 3 steps to go, from the output t4.'
    """
    n = len(replay)
    if k == 0:
        return f"Before the sweep: {n} steps to go, from the output {replay.graph.output}."
    step = replay.step(k)
    if step.op is None:
        return f"Step {k} of {n}: the output is a leaf; the seed goes into its .grad."
    op = replay.ops[step.op]
    reads = (f"reads the saved {', '.join(dict.fromkeys(step.reads))}" if step.reads
             else "reads no saved tensors")
    targets = [s.tensor for s in step.sent]
    sends = (f"sends gradients to {', '.join(targets)}" if targets else "sends no gradient")
    hidden = "" if revealed else " (predict them)"
    return (f"Step {k} of {n}: {op.op} ({step.op}) receives the gradient of "
            f"{step.receiver}, {reads} and {sends}{hidden}.")


def module_note(path: str | None) -> str:
    """`` in 3.body.conv1`` after an op's name (nothing for an op outside any module), in
    the theme's secondary text colour, which reads in JupyterLab's light and dark themes.

    >>> module_note("fc1")
    " <span style='color:var(--jp-content-font-color2,#495057)'>in fc1</span>"
    """
    if not path:
        return ""
    return f" <span style='color:var(--jp-content-font-color2,#495057)'>in {_h(path)}</span>"


def _arr(array, scale: float = 0.0) -> str:
    """``array`` in full (``scale``: what it was computed at, see ``summary.summarize``)."""
    return _pre(full(array, scale=scale))


def _h(text: str) -> str:
    return html.escape(text)


def step_panel(replay: Replay, k: int, revealed: bool = True) -> str:
    """What step ``k`` did (k = 0: the state before the sweep). With ``revealed=False``
    the gradients the step sends are hidden (predict mode)."""
    graph = replay.graph
    n = len(replay)
    if k == 0:
        first = replay.step(1) if n else None
        nxt = (f"Press <b>next</b> to visit the first node, <b>{first.op} "
               f"{_h(replay.ops[first.op].op)}</b>." if first and first.op else "")
        seed = replay.steps[0].grad_output if n else None
        return (f"<b>Before the sweep</b> (step 0 of {n})<br/>The seed gradient "
                f"dL/dL at the output <b>{_h(describe_tensor(replay.tensors[graph.output]))}</b>:"
                f"{_arr(seed) if seed is not None else ''}{nxt}")
    step = replay.step(k)
    if step.op is None:  # the output is itself a leaf: the seed goes to its .grad
        return (f"<b>Step {k} of {n}</b>: the output is a leaf, so the seed gradient goes "
                f"straight into its .grad:{_arr(step.sent[0].total, step.sent[0].total_scale)}")
    op = replay.ops[step.op]
    parts = [f"<b>Step {k} of {n}: {step.op} {_h(op.op)}</b>{module_note(op.module)}"]
    parts.append(f"<div><span style='color:{theme.UPSTREAM}'>■</span> upstream gradient "
                 f"<b>g</b> = dL/d{_h(describe_tensor(replay.tensors[step.receiver]))}"
                 f"{_arr(step.grad_output, step.grad_output_scale)}</div>")
    parts.append(f"<div>rule of <b>{_h(op.op)}</b> (from its definition):"
                 f"{_pre(op.rule)}</div>")
    parts.append(_reads(replay, step, op))
    parts.append(_sends(replay, step, revealed))
    parts.append(_released(replay, step, op))
    return "".join(parts)


def _reads(replay: Replay, step: StepRecord, op) -> str:
    if not step.reads:
        return "<div>reads <b>no saved tensors</b>.</div>"
    sizes = {s.name: s for s in op.saved}
    rows = []
    for name in dict.fromkeys(step.reads):
        s = sizes[name]
        where = s.tensor if s.tensor is not None else "made by the op"
        rows.append(f"<span style='background:{theme.READ};color:{theme.ON_FILL}'>&nbsp;"
                    f"{_h(name)}&nbsp;</span> "
                    f"({where}, {format_bytes(s.nbytes)}){_pre(replay.saved_text[op.id, name])}")
    return "<div>reads saved tensors:<br/>" + "".join(rows) + "</div>"


def _sends(replay: Replay, step: StepRecord, revealed: bool) -> str:
    if not step.sent:
        return "<div>sends no gradient (no input requires grad).</div>"
    rows = []
    for s in step.sent:
        target = describe_tensor(replay.tensors[s.tensor])
        where = f".grad of leaf {target}" if s.to_leaf else target
        head = (f"<span style='color:{theme.SENT}'>■</span> to input <b>{_h(s.input_name)}</b>"
                f" → {_h(where)}")
        if not revealed:
            rows.append(f"<div>{head}: <b>?</b> <i>(predict it, then check)</i></div>")
            continue
        rows.append(f"<div>{head}:{_arr(s.grad, s.scale)}{_unbroadcast(s)}"
                    f"{_accumulation(replay, step, s)}</div>")
    return "<div>sends:" + "".join(rows) + "</div>"


def _unbroadcast(s: SentRecord) -> str:
    if s.unbroadcast_from is None:
        return ""
    axes = broadcast_axes(s.unbroadcast_from, s.grad.shape)
    return (f"<div style='margin-left:12px'>un-broadcast: the rule gave shape "
            f"{shape_text(s.unbroadcast_from)}; the input was broadcast in the forward pass, "
            f"so the engine summed over axis {', '.join(map(str, axes))} to the input's shape "
            f"{shape_text(s.grad.shape)}.</div>")


def _accumulation(replay: Replay, step: StepRecord, s: SentRecord) -> str:
    if not s.accumulated:
        return ""
    items = []
    earlier = []
    for number, op, c in replay.contributions(s.tensor, step.number):
        if c is s:
            break
        earlier.append((number, op, c))
    if len(earlier) > CONTRIBUTIONS:
        items.append(f"<i>{len(earlier) - CONTRIBUTIONS:,} earlier contributions, then:</i>"
                     "<br/>")
    for number, op, c in earlier[-CONTRIBUTIONS:]:
        items.append(f"step {number} from {op} ({_h(c.input_name)}):{_arr(c.grad, c.scale)}")
    items.append(f"this step ({_h(s.input_name)}):{_arr(s.grad, s.scale)}")
    return (f"<div style='margin-left:12px'>accumulated: {s.tensor} feeds several inputs, "
            "so its gradient is the <b>sum</b> of every contribution:<br/>"
            + "".join(items) + f"running sum:{_arr(s.total, s.total_scale)}</div>")


def _released(replay: Replay, step: StepRecord, op) -> str:
    if step.released:
        sizes = {s.name: s.nbytes for s in op.saved}
        names = ", ".join(f"{_h(n)} ({format_bytes(sizes[n])})" for n in step.released)
        return (f"<div>released: {names}. Backward through {step.op} a second time would "
                "now fail (retain_graph=False).</div>")
    if op.saved:
        return "<div>released nothing (retain_graph=True keeps the saved tensors).</div>"
    return "<div>released nothing (this op saved nothing).</div>"


def leaves_panel(replay: Replay, k: int, revealed: bool = True) -> str:
    """A table of every leaf's ``.grad`` after ``k`` steps; the ones this step changed
    are highlighted. With ``revealed=False`` those show ``?``."""
    step = replay.step(k)
    changed = {s.tensor for s in step.sent if s.to_leaf} if step else set()
    rows = []
    shown = list(replay.leaves)
    if len(shown) > LEAF_ROWS:
        shown = [t for t in shown if t in changed] + [t for t in shown if t not in changed]
        shown = shown[:LEAF_ROWS]
    for tid in shown:
        text = replay.grad_text(tid, k)
        hidden = tid in changed and not revealed
        value = "<b>?</b>" if hidden else ("None" if text == "None" else _pre(text))
        style = (f" style='background:{theme.HAS_GRAD_FILL};color:{theme.ON_FILL}'"
                 if tid in changed else "")
        rows.append(f"<tr{style}><td style='text-align:left;vertical-align:top'>"
                    f"{_h(describe_tensor(replay.tensors[tid]))}</td>"
                    f"<td style='text-align:left'>{value}</td></tr>")
    if not rows:
        return "<div>No leaf requires grad.</div>"
    if len(shown) < len(replay.leaves):
        return (f"<div><b>.grad of the leaves after step {k}</b> ({len(shown)} of "
                f"{len(replay.leaves):,}: the ones this step changed first; "
                "<code>stepper.replay.leaf_grads(k)</code> has them all)<table>"
                + "".join(rows) + "</table></div>")
    return (f"<div><b>.grad of every leaf after step {k}</b><table>" + "".join(rows)
            + "</table></div>")
