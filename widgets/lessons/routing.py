"""Helpers for the routing lesson (notebooks/06_routing.ipynb): small 2-D arrays drawn
as heatmaps with every value written in its cell, and pooling windows outlined, so a
learner can see where a gradient went.

Drawing only: the arrays come from the engine (``.grad`` after a backward pass).

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

__all__ = ["show_grid", "outline_windows", "number_text"]


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
