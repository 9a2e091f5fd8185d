"""Helpers for the routing lesson (notebooks/06_routing.ipynb): small 2-D arrays drawn
as heatmaps with every value written in its cell, and pooling windows outlined, so a
learner can see where a gradient went; and the error of one-sided and central
differences against the engine's derivative, step by step (``step_size_errors``), which
the lesson shows once the learner has written a gradient check of their own (B1). It
lives here, not in a lesson cell, because its code would be that exercise's answer.

The heatmaps only draw: the arrays come from the engine (``.grad`` after a backward pass).

>>> import numpy as np
>>> from matplotlib.figure import Figure
>>> ax = Figure().add_subplot()
>>> show_grid(ax, np.eye(2), "identity")
>>> [t.get_text() for t in ax.texts]
['1', '0', '0', '1']
"""

from __future__ import annotations

import numpy as np
from matplotlib.axes import Axes
from matplotlib.patches import Rectangle

__all__ = ["show_grid", "outline_windows", "number_text", "step_size_errors"]


def number_text(value: float, digits: int = 3) -> str:
    """A cell label: up to ``digits`` significant digits, no trailing zeros, and
    ``0`` rather than ``-0``.

    >>> number_text(0.25), number_text(-0.0), number_text(1 / 9), number_text(4.0)
    ('0.25', '0', '0.111', '4')
    """
    value = float(value) + 0.0  # turns -0.0 into 0.0
    return f"{value:.{digits}g}"


def show_grid(ax: Axes, values, title: str = "", *, cmap: str = "Blues", digits: int = 3,
              vmin: float | None = None, vmax: float | None = None) -> None:
    """Draw a 2-D array (or one with leading axes of size 1, like an image batch of one
    channel) as a heatmap, with each value written in its cell."""
    grid = np.asarray(values, dtype=np.float64)
    grid = grid.reshape(grid.shape[-2:]) if grid.ndim > 2 else np.atleast_2d(grid)
    low = float(grid.min()) if vmin is None else vmin
    high = float(grid.max()) if vmax is None else vmax
    ax.imshow(grid, cmap=cmap, vmin=low, vmax=high if high > low else low + 1)
    middle = (low + high) / 2
    for (i, j), v in np.ndenumerate(grid):
        ax.text(j, i, number_text(v, digits), ha="center", va="center", fontsize=9,
                color="white" if high > low and v > middle else "black")
    ax.set_xticks([])
    ax.set_yticks([])
    if title:
        ax.set_title(title, fontsize=10)


def outline_windows(ax: Axes, shape: tuple[int, int], kernel: int, stride: int,
                    colors=("C1", "C2", "C3", "C4")) -> None:
    """Outline every ``kernel`` x ``kernel`` pooling window of a grid of ``shape``,
    one colour per window (cycling), slightly inset so overlapping windows stay visible."""
    rows = range(0, shape[0] - kernel + 1, stride)
    cols = range(0, shape[1] - kernel + 1, stride)
    for k, (r, c) in enumerate((r, c) for r in rows for c in cols):
        inset = 0.06 * (k % 4)
        ax.add_patch(Rectangle((c - 0.5 + inset, r - 0.5 + inset), kernel - 2 * inset,
                               kernel - 2 * inset, fill=False, linewidth=2,
                               edgecolor=colors[k % len(colors)]))


def _x2_sin(v: float) -> float:
    """f(v) = v² sin v evaluated with the engine (a plain tensor: nothing is recorded)."""
    import autograd_core as ag

    t = ag.tensor(v)
    return (t * t * ag.sin(t)).item()


def step_size_errors(point: float = 0.7, shown=(1e-2, 1e-4, 1e-6, 1e-8, 1e-10)):
    """For f(x) = x² sin x at ``point``: how far a one-sided and a central difference are
    from the engine's derivative, for steps h from 1e-13 to 1e-1. Prints the errors at the
    steps ``shown`` and returns a log-log figure of both curves (built without pyplot).

    >>> fig = step_size_errors()                     # doctest: +SKIP
    """
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    import autograd_core as ag

    x0 = ag.tensor(point, requires_grad=True)
    (x0 * x0 * ag.sin(x0)).backward()
    slope = x0.grad.item()  # the engine's derivative at the point
    f = _x2_sin

    def one_sided(h):
        return abs((f(point + h) - f(point)) / h - slope)

    def central(h):
        return abs((f(point + h) - f(point - h)) / (2 * h) - slope)

    steps = np.logspace(-13, -1, 49)
    fig = Figure(figsize=(6.5, 3.2))
    FigureCanvasAgg(fig)
    ax = fig.add_subplot()
    ax.loglog(steps, [one_sided(h) for h in steps], ".-", label="one-sided difference")
    ax.loglog(steps, [central(h) for h in steps], ".-", label="central difference")
    ax.set_xlabel("step h")
    ax.set_ylabel("|error| against the engine")
    ax.legend(fontsize=8)
    fig.tight_layout()
    print("step h   one-sided error   central error")
    for h in shown:
        print(f"{h:.0e}   {one_sided(h):15.0e}   {central(h):13.0e}")
    return fig
