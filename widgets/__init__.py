"""widgets: see the recorded graph, step the reverse sweep, watch memory.

The presentation layer over ``autograd_core``. It shows what the engine recorded
and replays the engine's own backward steps; it never computes a gradient.

>>> from widgets import GraphView, BackwardStepper, ForwardTracer, MemoryView  # doctest: +SKIP
>>> BackwardStepper(loss)                                                   # doctest: +SKIP

* ``draw(output)``: the graph as a static SVG picture (stored in notebooks as
  ``image/svg+xml``, so lessons read on GitHub show it).
* ``GraphView(output)``: the same picture as a widget, with hover tooltips.
* ``BackwardStepper(output)``: step the sweep node by node, predict gradients.
* ``ForwardTracer(fn_or_output)``: the forward pass op by op, and what it saves.
* ``MemoryView(output)``: bytes saved per node, held over forward and backward.
* ``DerivationWidget(f, shapes)``: a box per gradient formula of your own, checked
  against the engine (``check_derivation``).

Names are imported on first use, so ``widgets.render`` (pure, no Jupyter) loads
without ipywidgets, and the ``widgets.exercises`` subpackage loads only when asked.

Importing ``widgets`` turns on the engine's source recording
(``autograd_core.record_source``): from then on every recorded op remembers the line
of the learner's code that called it, which the stepper's inspector shows. Code in
``widgets`` itself is skipped, like the engine's, so an op a lesson helper runs is
attributed to the cell that called the helper. ``record_source(False)`` turns it off.
"""

from __future__ import annotations

import importlib
import os as _os

from autograd_core.recording import source as _source

_source.skip_code_under(_os.path.dirname(__file__))
_source.record_source(True)

_EXPORTS = {
    "GraphView": "widgets.graph_view",
    "draw": "widgets.graph_view",
    "BackwardStepper": "widgets.stepper",
    "ForwardTracer": "widgets.tracer",
    "MemoryView": "widgets.memory_view",
    "DerivationWidget": "widgets.derivation_widget",
}

__all__ = list(_EXPORTS)


def __getattr__(name: str):
    if name in _EXPORTS:
        value = getattr(importlib.import_module(_EXPORTS[name]), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'widgets' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(list(globals()) + __all__)
