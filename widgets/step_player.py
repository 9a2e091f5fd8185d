"""``StepPlayer``: play, stop and a step slider, with names a screen reader reads.

It stands in ``widgets.controls.StepControls`` where ipywidgets' ``Play`` and
``IntSlider`` stood: their play and stop buttons are icons without a name, and the
slider's handle has no name either, and neither can be named from Python. The browser
side (``widgets/static/step_player.js``, an anywidget module shipped in the package,
nothing fetched) is native HTML: a ``<button>`` "play" (it reads "pause" while
playing), a ``<button>`` "stop" and an ``<input type="range">`` labelled with what it
steps ("step", "op").

It behaves as ``Play`` did: play steps ``value`` by one every ``interval`` ms, in the
browser, and stops at ``max`` (pressed at ``max``, it starts again from 0); stop
stops and goes back to 0; setting ``playing`` from Python starts or pauses it. The
slider moves ``value`` as it is dragged.
"""

from __future__ import annotations

from pathlib import Path

import anywidget
import traitlets

__all__ = ["StepPlayer"]

_STATIC = Path(__file__).parent / "static"


class StepPlayer(anywidget.AnyWidget):
    """Play / stop and a slider over the steps ``0..max``; ``value`` is the current one.

    >>> player = StepPlayer(5, what="op")
    >>> player.value = 9; player.value
    5
    """

    # Read as text, not given as paths: anywidget watches a path for live reloading
    # and its watcher keeps every widget alive (see widgets.canvas).
    _esm = (_STATIC / "step_player.js").read_text(encoding="utf-8")
    _css = (_STATIC / "step_player.css").read_text(encoding="utf-8")

    value = traitlets.Int(0).tag(sync=True)
    max = traitlets.Int(0).tag(sync=True)
    interval = traitlets.Int(800).tag(sync=True)  # ms between two steps while playing
    playing = traitlets.Bool(False).tag(sync=True)
    what = traitlets.Unicode("step").tag(sync=True)  # the slider's name

    def __init__(self, last: int, interval: int = 800, what: str = "step"):
        super().__init__(max=max(int(last), 0), interval=interval, what=what)

    @traitlets.validate("value")
    def _clamp(self, proposal: dict) -> int:
        """Keep ``value`` inside ``0..max``, as ipywidgets' bounded sliders do."""
        return min(max(proposal["value"], 0), self.max)
