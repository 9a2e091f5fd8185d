"""``DerivationWidget``: a box per formula, a Check button, the named mistake.

>>> DerivationWidget(lambda x, W: ag.tanh(x @ W), shapes={"x": (4, 3), "W": (3, 2)},
...                  wrt=("W",))                                      # doctest: +SKIP

Each box takes the formula as text, as on the whiteboard (``x.T @ (g * ...)``); Check,
or Enter in a box, runs :func:`widgets.feedback.derivation.check_derivation` and shows
its Result. The widget only calls that check: a cell calling ``check_derivation``
directly prints the same feedback.
"""

from __future__ import annotations

import html
from collections.abc import Callable, Mapping, Sequence

import ipywidgets as w

from .feedback.derivation import check_derivation
from .feedback.result import Result


class DerivationWidget(w.VBox):
    """One text box per input in ``wrt`` (default: every input of ``shapes``), a Check
    button, and the feedback."""

    def __init__(self, f: Callable, shapes: Mapping[str, tuple],
                 wrt: Sequence[str] | None = None, title: str = "Your derivation"):
        self.f, self.shapes = f, dict(shapes)
        names = list(wrt) if wrt is not None else list(self.shapes)
        shown = ", ".join(f"{k} {tuple(v)}" for k, v in self.shapes.items())
        header = w.HTML(f"<b>{html.escape(title)}</b><br>Inputs: {html.escape(shown)}. "
                        "Write each gradient as a formula of the inputs (and g, the "
                        "upstream gradient, when the output is not a scalar), then press "
                        "Enter or Check.")
        self.boxes = {name: w.Text(description=f"d{name} =", placeholder=f"dL/d{name}",
                                   layout=w.Layout(width="100%")) for name in names}
        self.check_button = w.Button(description="Check", button_style="primary",
                                     tooltip="Check your formulas against the engine")
        self.feedback = w.HTML()
        self.result: Result | None = None
        self.check_button.on_click(lambda _: self.check())
        for box in self.boxes.values():
            box.on_msg(self._on_box_message)
        super().__init__([header, *self.boxes.values(), self.check_button, self.feedback])

    def check(self) -> Result:
        """Check every filled-in formula and show the feedback."""
        formulas = {k: box.value for k, box in self.boxes.items() if box.value.strip()}
        if not formulas:
            self.result = Result(False, "Write a formula in at least one box, then Check.",
                                 diagnosis="none")
        else:
            self.result = check_derivation(self.f, formulas, self.shapes)
        self.feedback.value = self.result._repr_html_()
        return self.result

    def _on_box_message(self, _box, content, _buffers) -> None:
        """Enter in a formula box checks, as the button does: the front end sends the box
        ``{"event": "submit"}`` on Enter (after the value it holds), and nothing for other
        keys."""
        if content.get("event") == "submit":
            self.check()
