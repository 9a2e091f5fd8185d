"""Pictures for the convolution lesson: small 2-D arrays drawn side by side.

``array_panels({"x": x, "w": w, "y": y})`` draws each array as a heat map with its
values written in the cells, on a colour scale centred at zero (blue negative, red
positive, white zero), so a learner can compare an input, a kernel and a gradient
at a glance and see exactly where the zeros are. A panel can outline a window
(``boxes={"x": (row, col, height, width)}``), e.g. the part of the input that one
output pixel reads.

The figure is built without pyplot (safe under any backend, no figure left open);
a notebook shows it by ending a cell with it.

>>> fig = array_panels({"x": np.eye(3), "w": -np.ones((2, 2))})   # doctest: +SKIP
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.patches import Rectangle

from ..figures import DescribedFigure

__all__ = ["array_panels"]

_ANNOTATE_UP_TO = 12  # write the values into the cells of arrays up to this side length


def _as_2d(name: str, array) -> np.ndarray:
    """A 2-D float array; (1, 1, H, W) tensors and arrays are squeezed to (H, W)."""
    a = np.asarray(getattr(array, "_data", array), dtype=np.float64)
    while a.ndim > 2 and a.shape[0] == 1:
        a = a[0]
    if a.ndim != 2:
        raise ValueError(f"array_panels: panel {name!r} must be a 2-D array (or (1, 1, H, W)), "
                         f"got shape {a.shape}. Hint: pass one channel, e.g. x[0, 0].")
    return a


def array_panels(panels: Mapping[str, object], *, boxes: Mapping[str, tuple] | None = None,
                 decimals: int = 1, cell_inches: float = 0.42,
                 cmap: str = "RdBu_r") -> Figure:
    """One heat map per named 2-D array, in a row, values written in the cells.

    ``boxes`` maps a panel name to ``(row, col, height, width)`` (or a list of them)
    outlined in that panel. Each panel has its own colour scale, symmetric about 0.
    The figure's text alternative gives each panel's name, shape and boxes (the cell
    that draws it prints the values).

    >>> fig = array_panels({"G": np.ones((2, 2))}, boxes={"G": (0, 0, 1, 1)})
    >>> [ax.get_title() for ax in fig.axes]
    ['G']
    >>> fig.alt
    'Heat map of G (2×2), with a box around row 0, column 0.'
    """
    if not panels:
        raise ValueError("array_panels: nothing to draw; pass a dict of name -> 2-D array.")
    arrays = {name: _as_2d(name, a) for name, a in panels.items()}
    boxes = dict(boxes or {})
    unknown = sorted(set(boxes) - set(arrays))
    if unknown:
        raise ValueError(f"array_panels: boxes for panels that do not exist: {unknown}; "
                         f"the panels are {list(arrays)}.")
    widths = [a.shape[1] for a in arrays.values()]
    height = max(a.shape[0] for a in arrays.values())
    fig = DescribedFigure(figsize=(cell_inches * (sum(widths) + 1.2 * len(widths)) + 0.4,
                                   cell_inches * height + 0.9), dpi=100,
                          alt=_panels_alt(arrays, boxes))
    FigureCanvasAgg(fig)
    axes = fig.subplots(1, len(arrays), gridspec_kw={"width_ratios": widths}, squeeze=False)[0]
    for ax, (name, a) in zip(axes, arrays.items()):
        _panel(ax, name, a, boxes.get(name, ()), decimals, cmap)
    fig.tight_layout()
    return fig


def _box_list(box) -> list:
    """``boxes``' value for one panel as a list of ``(row, col, height, width)``."""
    return [box] if box and not isinstance(box[0], tuple | list) else list(box)


def _span(what: str, start: int, size: int) -> str:
    """``"row 2"`` or ``"rows 0 to 2"``: ``size`` rows (or columns) from ``start``."""
    return f"{what} {start}" if size == 1 else f"{what}s {start} to {start + size - 1}"


def _panels_alt(arrays: Mapping[str, np.ndarray], boxes: Mapping[str, object]) -> str:
    """The text alternative of ``array_panels``' figure: each panel's name, shape and
    boxes, e.g. "Heat maps of x (5×5) and w (3×3), with a box around rows 0 to 2, ..."."""
    parts = []
    for name, a in arrays.items():
        part = f"{name} ({a.shape[0]}×{a.shape[1]})"
        around = [f"{_span('row', r, h)}, {_span('column', c, w)}"
                  for r, c, h, w in _box_list(boxes.get(name, ()))]
        if around:
            part += ", with a box around " + " and around ".join(around)
        parts.append(part)
    listed = parts[0] if len(parts) == 1 else "; ".join(parts[:-1]) + "; and " + parts[-1]
    return f"Heat map{'s' if len(parts) > 1 else ''} of {listed}."


def _panel(ax, name: str, a: np.ndarray, box, decimals: int, cmap: str) -> None:
    scale = float(np.max(np.abs(a), initial=0.0)) or 1.0
    ax.imshow(a, cmap=cmap, vmin=-scale, vmax=scale)
    ax.set_title(name, fontsize=10)
    ax.set_xticks([])
    ax.set_yticks([])
    if max(a.shape) <= _ANNOTATE_UP_TO:
        for (i, j), v in np.ndenumerate(a):
            text = "0" if v == 0 else f"{v:.{decimals}f}"
            ax.text(j, i, text, ha="center", va="center", fontsize=7,
                    color="white" if abs(v) > 0.6 * scale else "black")
    for row, col, h, w in _box_list(box):
        ax.add_patch(Rectangle((col - 0.5, row - 0.5), w, h, fill=False, edgecolor="#198754",
                               linewidth=2.5))
