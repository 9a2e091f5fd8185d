"""``MemoryView``: what the graph keeps for backward, per node and over time.

A table of the bytes each op saved and the total, and a plot of the bytes held
over the forward pass (they grow with every op that saves something) and over the
backward pass (each step releases what its op saved). The plot is a matplotlib
``Figure`` built without pyplot (safe under any backend) and shown as a PNG with
fixed size, dpi and metadata, so it is the same bytes every run. Its text
alternative (``memory_alt``) says what it plots; the widget shows the PNG in a
``widgets.described_image.DescribedImage``, with that ``alt`` (ipywidgets' ``Image``
can have none).

Given an output tensor, MemoryView runs the engine's backward on it (as
``output.backward()`` would: leaves' ``.grad`` are filled, saved tensors released)
to watch the releases. Given a ``BackwardStepper``, it reuses that stepper's sweep.

Other runs (a checkpointed one, later) are compared by passing their
``Timeline`` in ``others=``; see ``widgets.timeline``.
"""

from __future__ import annotations

import base64
import html
import io

import ipywidgets as w
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.ticker import FuncFormatter

from .controls import with_static_picture
from .described_image import DescribedImage
from .figures import DescribedFigure
from .replay import Replay, record
from .summary import format_bytes
from .timeline import Timeline, saved_per_op, timeline

__all__ = ["MemoryView", "memory_figure", "memory_alt", "figure_png", "memory_table"]


def memory_figure(timelines: list[Timeline]) -> Figure:
    """Bytes held over forward then backward, one line per timeline (a
    ``widgets.figures.DescribedFigure``: its ``alt`` is ``memory_alt(timelines)``)."""
    fig = DescribedFigure(figsize=(7, 3.2), dpi=100, alt=memory_alt(timelines))
    FigureCanvasAgg(fig)
    ax = fig.add_subplot()
    for i, tl in enumerate(timelines):
        ys = [0, *tl.forward, *tl.backward]
        ax.step(range(len(ys)), ys, where="post", label=f"{tl.label} (peak "
                f"{format_bytes(tl.peak)})", color=f"C{i}", linewidth=1.8)
    if timelines:
        boundary = len(timelines[0].forward)
        ax.axvline(boundary, color="#6c757d", linestyle="--", linewidth=1)
        top = max(tl.peak for tl in timelines) or 1
        ax.text(boundary / 2, top * 1.02, "forward: ops save", ha="center", va="bottom",
                fontsize=9)
        if timelines[0].backward:
            ax.text(boundary + len(timelines[0].backward) / 2, top * 1.02,
                    "backward: steps release", ha="center", va="bottom", fontsize=9)
        ax.set_ylim(0, top * 1.15)
    ax.set_xlabel("events: forward ops, then backward steps")
    ax.set_ylabel("held for backward")
    ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _pos: format_bytes(int(v))))
    ax.legend(loc="lower center", fontsize=8, frameon=False)
    ax.grid(alpha=0.3)
    fig.tight_layout()
    return fig


def memory_alt(timelines: list[Timeline]) -> str:
    """The text alternative of ``memory_figure(timelines)``: what it plots, and each
    run's peak and what it still holds at the end.

    >>> memory_alt([Timeline("recorded", (8, 24), (16, 0))])
    'Step plot of the bytes held for backward: 2 forward ops (each adds what it saves), \
then 2 backward steps (each releases what its op saved). recorded: peak 24 B, 0 B at the end.'
    """
    if not timelines:
        return "Step plot of the bytes held for backward: no run to show."
    first = timelines[0]
    ops, steps = len(first.forward), len(first.backward)
    runs = " ".join(
        f"{tl.label}: peak {format_bytes(tl.peak)}, "
        f"{format_bytes([0, *tl.forward, *tl.backward][-1])} at the end."
        for tl in timelines)
    return (f"Step plot of the bytes held for backward: {ops:,} forward op"
            f"{'' if ops == 1 else 's'} (each adds what it saves), then {steps:,} backward "
            f"step{'' if steps == 1 else 's'} (each releases what its op saved). {runs}")


def figure_png(fig: Figure) -> bytes:
    """The figure as PNG bytes, stable run to run (no software/date metadata)."""
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=fig.dpi, metadata={"Software": None})
    return buf.getvalue()


def memory_table(replay: Replay) -> str:
    """HTML table: bytes each op saved (what, how much) and the total held."""
    graph = replay.graph
    rows = "".join(
        f"<tr><td>{op}</td><td>{html.escape(name)}</td><td>{html.escape(', '.join(saved))}"
        f"</td><td style='text-align:right'>{format_bytes(nbytes)}</td></tr>"
        for op, name, saved, nbytes in saved_per_op(graph) if saved)
    tl = timeline(graph, replay)
    total = tl.forward[-1] if tl.forward else 0
    return ("<table><tr><th>op</th><th>name</th><th style='text-align:left'>saved</th>"
            "<th style='text-align:right'>bytes</th></tr>" + rows
            + f"<tr><td colspan=3><b>held for backward after the forward pass</b> (each "
            f"buffer counts once, however many ops or views saved it)</td>"
            f"<td style='text-align:right'><b>"
            f"{format_bytes(total)}</b></td></tr></table>")


class MemoryView(w.VBox):
    """Saved bytes per op and in total, and bytes held over forward and backward.

    >>> MemoryView(loss)                              # doctest: +SKIP
    """

    def __init__(self, output_or_stepper, gradient=None, *, others: tuple[Timeline, ...] = (),
                 label: str = "recorded"):
        replay = getattr(output_or_stepper, "replay", None)
        self.replay = replay if isinstance(replay, Replay) else record(
            output_or_stepper, gradient, what="MemoryView")
        self.timeline = timeline(self.replay.graph, self.replay, label)
        self.timelines = [self.timeline, *others]
        self.table = w.HTML(memory_table(self.replay))
        self.image = DescribedImage(format="png")
        super().__init__([self.table, self.image])
        self._draw()

    def add_timeline(self, other: Timeline) -> None:
        """Plot another run beside this one (e.g. the same model with checkpointing)."""
        self.timelines.append(other)
        self._draw()

    def _draw(self) -> None:
        self.figure = memory_figure(self.timelines)
        self.png = figure_png(self.figure)
        with self.image.hold_sync():
            self.image.value = self.png
            self.image.alt = self.figure.alt

    def _repr_mimebundle_(self, **kwargs):
        return with_static_picture(
            super()._repr_mimebundle_(**kwargs), "image/png", base64.b64encode(self.png).decode(),
            f"MemoryView: peak {format_bytes(self.timeline.peak)} held for backward",
            alt=self.figure.alt)
