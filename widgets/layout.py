"""Where a view's picture and its panels sit: side by side, or stacked when narrow."""

from __future__ import annotations

import ipywidgets as w

__all__ = ["side_layout", "picture_beside"]


def side_layout() -> w.Layout:
    """The layout of the panels beside a view's picture (see ``picture_beside``)."""
    return w.Layout(flex="2 1 280px", min_width="0", padding="0 0 0 8px")


def picture_beside(picture: w.Widget, side: w.Widget) -> w.HBox:
    """``picture`` with ``side`` (laid out with ``side_layout()``) to its right, wrapped
    under it when the output is narrower than both together (about 760 px): the picture
    stays the main thing, at least three fifths of the width beside the panels and all
    of it above them."""
    return w.HBox([w.Box([picture], layout=w.Layout(flex="3 1 480px", min_width="0")), side],
                  layout=w.Layout(flex_flow="row wrap", align_items="flex-start"))
