"""``GraphCanvas``: the graph picture as a widget you can touch.

The kernel lays the graph out once (``widgets.svg``) and sends the SVG; the browser
(``widgets/static/canvas.js``, an anywidget module shipped in the package, nothing
fetched) pans by dragging, zooms with the wheel, a pinch or the buttons, shows an
overview of a picture larger than its box, keeps the focused node in view on both
axes, and exports the picture with its current highlights as SVG or PNG. A view
opens fitted: the whole picture if its labels stay at least ``min_font_px`` tall,
else that readable scale centred on the focused node (or, with none, the graph's
output), with a line beside the buttons saying how many nodes are in view. Pressing
"fit" does the same and says its outcome to a screen reader, even when the view does
not move. A view still as "fit" left it fits itself again when its box changes size.

Back to the kernel come only what the views act on: the node clicked or chosen with
the keyboard (``selected``), whether the table view is open (``table_open``) and the
step keys pressed while the canvas has focus (← → Home End P), delivered to the
callbacks given to :meth:`GraphCanvas.on_key`. From the kernel come, besides the
picture: ``detail``, the inspector's HTML for the selected node (shown over the
picture's right side, where the learner is looking; Escape closes it);
``announcement``, one sentence on what the picture shows now (read out by a live
region, and the picture's description for a screen reader); and ``table``, the graph
as an HTML table (the long description), which a view fills while ``table_open``.

Keys on the focused canvas: ← → step, ↑ ↓ move a cursor along the edges, Shift+← →
across a level, Enter inspects the node under the cursor, Escape closes, T toggles the
table, + - 0 zoom.

It keeps the interface of the plain picture it replaces: ``set_svg`` for a new
layout, ``restyle(css, focus)`` per step, ``container_id`` to scope the CSS.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from pathlib import Path

import anywidget
import ipywidgets
import traitlets

from . import theme

__all__ = ["GraphCanvas", "STEP_KEYS"]

_STATIC = Path(__file__).parent / "static"
STEP_KEYS = ("ArrowLeft", "ArrowRight", "Home", "End", "p")


class GraphCanvas(anywidget.AnyWidget):
    """An SVG laid out once, with pan, zoom, overview, click-to-select and keys.

    >>> canvas = GraphCanvas("<svg></svg>")
    >>> canvas.restyle("#x{}", focus="op3"); canvas.focus
    'op3'
    """

    # Read as text, not given as paths: anywidget watches a path for live reloading
    # and its watcher keeps every widget alive.
    _esm = (_STATIC / "canvas.js").read_text(encoding="utf-8")
    _css = (_STATIC / "canvas.css").read_text(encoding="utf-8") + theme.dark_theme_css()

    svg = traitlets.Unicode("").tag(sync=True)
    css = traitlets.Unicode("").tag(sync=True)
    focus = traitlets.Unicode("").tag(sync=True)
    selected = traitlets.Unicode("").tag(sync=True)
    fit = traitlets.Bool(True).tag(sync=True)
    max_height = traitlets.Unicode("640px").tag(sync=True)
    container_id = traitlets.Unicode("").tag(sync=True)
    min_font_px = traitlets.Float(9.0).tag(sync=True)
    detail = traitlets.Unicode("").tag(sync=True)
    announcement = traitlets.Unicode("").tag(sync=True)
    table = traitlets.Unicode("").tag(sync=True)
    table_open = traitlets.Bool(False).tag(sync=True)

    def __init__(self, svg: str = "", max_height: str = "640px", *, fit: bool = True,
                 min_font_px: float = 9.0):
        super().__init__(svg=svg, max_height=max_height, fit=fit, min_font_px=min_font_px,
                         container_id="ag" + uuid.uuid4().hex[:12],
                         layout=ipywidgets.Layout(width="100%", min_width="0"))
        self._key_callbacks: list[Callable[[str], None]] = []
        self.on_msg(self._message)

    def set_svg(self, svg: str, fit: bool | None = None) -> None:
        """Show a new picture (a new layout: only when the graph itself changes)."""
        if fit is not None:
            self.fit = fit
        self.svg = svg

    def restyle(self, css: str, focus: str | None = None) -> None:
        """Replace the highlight rules (the SVG is not re-sent) and keep ``focus`` (a
        node id) in view."""
        with self.hold_sync():
            self.css = css
            self.focus = focus or ""

    def on_key(self, callback: Callable[[str], None]) -> None:
        """Call ``callback(key)`` for each step key (one of ``STEP_KEYS``) pressed while
        the canvas has the keyboard focus."""
        self._key_callbacks.append(callback)

    def _message(self, _widget, content, _buffers) -> None:
        if not isinstance(content, dict) or content.get("event") != "key":
            return
        key = content.get("key")
        if key not in STEP_KEYS:
            return
        for callback in self._key_callbacks:
            callback(key)

    def close(self) -> None:
        """Close the widget and drop the picture and the callbacks it holds."""
        self._key_callbacks.clear()
        super().close()
