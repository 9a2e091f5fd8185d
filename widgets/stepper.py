"""``BackwardStepper``: walk the engine's reverse sweep one node at a time.

The stepper runs the engine's own ``backward_steps`` once, to the end, and keeps
every step (``widgets.replay``); stepping replays them. The picture is laid out
once; a step only replaces a small style block (``widgets.highlight``) and the
side panels (``widgets.panels``), so it stays immediate on large graphs.

Any size: a graph too large to lay out in about a second (``widgets.controls.Pages``)
is drawn as the neighbourhood of the current op, a page of consecutive ops laid out
once and the next ones ahead in the background; a step that stays on the page
still only restyles it. ``close()`` closes every widget inside, so nothing keeps a
closed stepper (and the sweep it recorded) alive once your variable lets it go.

What happens to your tensors: building the stepper runs the real backward
(``retain_graph=False`` by default, so the saved tensors are released, exactly as
``loss.backward()`` would). After that, every leaf's ``.grad`` FOLLOWS the
stepper: at step ``k`` it holds what the real sweep had put there after ``k``
steps (``None`` before its first gradient), stepping back restores the earlier
value exactly, and after ``last()`` it is exactly what ``loss.backward()`` leaves.
The stepper starts at step 0, so right after building it the leaves' ``.grad`` are
what they were before (usually ``None``). Non-leaf tensors with ``retain_grad()``
keep their final gradient whatever the step.

Predict mode: with ``predict=True`` a new step hides the gradients it sends until
you give them, typed in the box (a Python literal such as ``[[0.5], [-1]]``) or
from code with ``stepper.predict(array, input="a")``; ``reveal()`` shows them.
"""

from __future__ import annotations

import gc
import html

import ipywidgets as w
import traitlets

from . import messages, theme
from .canvas import GraphCanvas
from .controls import (
    Pages,
    StepControls,
    bind_step_keys,
    close_view,
    module_picker,
    note_html,
    recollapse,
    with_static_picture,
)
from .feedback.check import check_predicted_gradient
from .graph_table import replay_table
from .highlight import StepStyler, step_legend
from .inspector import inspect_node
from .layout import picture_beside, side_layout
from .live import live
from .panels import leaves_panel, step_panel, step_sentence
from .replay import record
from .summary import ValueScales, describe_tensor, summarize

__all__ = ["BackwardStepper"]

INSPECT_VALUES = 2000  # tensors at most whose values the inspector summarises
COLLECT_AT_BUILD = 2000  # nodes: above this, collect garbage once while building (below)


class BackwardStepper(w.VBox):
    """Step the reverse sweep from ``output`` node by node.

    ``gradient`` and ``retain_graph`` are passed to the engine's sweep as in
    ``output.backward(gradient, retain_graph)``; ``predict=True`` starts in predict
    mode; ``collapse`` and ``show_values`` go to the picture (``widgets.render``).
    ``collapsed`` (and the module picker beside the picture, shown when the graph
    has modules) is the modules drawn as one box each: changing it lays the picture
    out again at the same step, and while the sweep is inside a collapsed module its
    box shows the step's highlights. A picture laid out again has no value summaries
    in its tooltips (the sweep has released the arrays; clicking a node still shows
    them), except the first one, with ``collapse``, which is kept to come back to.
    ``picture`` is ``"auto"`` (the whole graph if it lays out quickly, else the
    neighbourhood of the current op), ``"full"`` or ``"neighbourhood"``.
    ``step`` (0..len(stepper.replay)) is how many steps have run; ``replay`` holds
    every recorded step.

    >>> stepper = BackwardStepper(loss)              # doctest: +SKIP
    >>> stepper.next(); stepper.step                 # doctest: +SKIP
    1
    """

    step = traitlets.Int(0)
    predict_mode = traitlets.Bool(False)
    revealed = traitlets.Bool(True)
    collapsed = traitlets.Tuple()

    def __init__(self, output, gradient=None, *, retain_graph: bool = False,
                 predict: bool = False, collapse=(), show_values: bool = False,
                 max_height: str = "640px", interval: int = 900, picture: str = "auto"):
        view = live(output, "BackwardStepper")
        # Lay the picture out before the sweep releases the saved tensors it describes.
        self.pages = Pages(view.graph, picture=picture, collapse=collapse, values=view.values,
                           show_values=show_values, input_names=view.input_names,
                           legend=False)
        self.svg = self.pages.first(self.pages.page_of(None))
        # What the inspector shows of each tensor's values: summarised now, before the
        # sweep releases them (skipped on huge graphs, where it would cost seconds).
        self._values = (_value_texts(view) if len(view.values) <= INSPECT_VALUES else {})
        self.replay = record(output, gradient, retain_graph, view=view)
        del view  # drop the references to values the sweep has released
        self.graph = self.replay.graph
        self._order = {o.id: o.order for o in self.graph.ops}
        self.styler = StepStyler(self.replay)
        self._revealed_steps: set[int] = set()
        self._right: dict[int, set[int]] = {}  # step -> indexes of sent predicted right

        n = len(self.replay)
        self.controls = StepControls(n, interval)
        self.picture = GraphCanvas(self.svg, max_height)
        self.step_html = w.HTML()
        self.leaves_html = w.HTML()
        self.predict_toggle = w.ToggleButton(description="predict mode", value=predict,
                                             tooltip="hide each step's gradients until "
                                                     "you predict them")
        labels = {"description_width": "initial"}  # the whole label, never "your answ…"
        self.input_picker = w.Dropdown(description="input", style=labels,
                                       layout=w.Layout(width="auto", min_width="200px"))
        self.answer = w.Text(placeholder="e.g. [[0.5], [-1.0]]", description="your answer",
                             style=labels, continuous_update=False,
                             layout=w.Layout(width="auto"))
        self.check_button = w.Button(description="check", button_style="primary",
                                     layout=w.Layout(width="auto", min_width="64px"))
        self.reveal_button = w.Button(description="reveal",
                                      layout=w.Layout(width="auto", min_width="64px"))
        self.feedback = w.HTML()
        self.module_picker = module_picker(self.graph, collapse)
        self.predict_box = w.VBox([
            w.HBox([self.input_picker, self.check_button, self.reveal_button],
                   layout=w.Layout(flex_flow="row wrap")),
            self.answer, self.feedback])
        side = w.VBox([self.step_html, self.predict_toggle, self.predict_box,
                       self.module_picker, self.leaves_html], layout=side_layout())
        body = picture_beside(self.picture, side)
        legend = w.HTML(_LEGEND)
        self.note = w.HTML(note_html(self.pages.note))
        super().__init__([self.controls, legend, self.note, body])
        self.add_class("ag-view")  # the focus ring of its controls: canvas.css

        traitlets.link((self.controls, "value"), (self, "step"))
        traitlets.link((self.predict_toggle, "value"), (self, "predict_mode"))
        traitlets.link((self.module_picker, "value"), (self, "collapsed"))
        self.check_button.on_click(lambda _: self._check_typed())
        self.answer.observe(lambda _: self._check_typed(), "value")
        self.reveal_button.on_click(lambda _: self.reveal())
        self.observe(self._on_step, "step")
        self.observe(self._on_mode, "predict_mode")
        self.observe(lambda change: recollapse(self, change["new"]), "collapsed")
        self.picture.observe(lambda _: self._inspect(), "selected")
        self.picture.observe(lambda _: self._tabulate(), "table_open")
        bind_step_keys(self.picture, self, on_p=self._toggle_predict)
        self.predict_mode = predict
        self._show()
        if len(self.graph.ops) + len(self.graph.tensors) > COLLECT_AT_BUILD:
            # Building a large stepper makes hundreds of thousands of long-lived objects;
            # Python's collector would examine them all in its next full pass, a pause of
            # 0.1-0.2 s that lands on some later step. Paying it here, once, keeps steps
            # short.
            gc.collect()

    # -- navigation (the buttons call these too) ------------------------------------------
    def first(self) -> None:
        """Back to step 0, before the sweep."""
        self.step = 0

    def previous(self) -> None:
        self.step = max(self.step - 1, 0)

    def next(self) -> None:
        self.step = min(self.step + 1, len(self.replay))

    def last(self) -> None:
        """To the end of the sweep: the leaves hold what ``backward()`` leaves."""
        self.step = len(self.replay)

    @property
    def dot(self) -> str:
        """The DOT text of the picture shown."""
        return self.pages.dot(self.pages.shown)

    def page(self) -> int:
        """The page of the picture that shows the current step's op."""
        record_ = self.replay.step(self.step)
        return self.pages.page_of(self._order.get(record_.op) if record_ else None)

    def _toggle_predict(self) -> None:
        self.predict_mode = not self.predict_mode

    def _inspect(self) -> None:
        """Describe the node clicked in the picture, at the current step, in the
        inspector over the picture (``picture.detail``; empty when none is selected)."""
        selected = self.picture.selected
        self.picture.detail = inspect_node(self.replay, selected, self.step,
                                           values=self._values,
                                           revealed=self.revealed) if selected else ""

    def _tabulate(self) -> None:
        """Fill the table view (only while it is open: a large graph's table is long)."""
        if self.picture.table_open:
            self.picture.table = replay_table(self.replay, self.step, self.revealed)

    @traitlets.validate("step")
    def _valid_step(self, proposal):
        k = proposal["value"]
        if not 0 <= k <= len(self.replay):
            raise messages.step_out_of_range(k, len(self.replay))
        return k

    # -- predict mode ---------------------------------------------------------------------
    def predict(self, answer, input: str | int | None = None) -> tuple[bool, str]:  # noqa: A002
        """Check a predicted gradient for one input of the current step.

        ``answer`` is a number, nested lists, an array or the text of a Python
        literal; ``input`` names the input (``"a"``, an index, or None for the one
        picked in the box). Returns ``(ok, message)`` and shows the message.
        """
        record_ = self.replay.step(self.step)
        if record_ is None or not record_.sent:
            ok, message = False, "This step sends no gradient: move to a step with next."
            self._say(ok, message)
            return ok, message
        i = self._input_index(record_, input)
        result = check_predicted_gradient(answer, record_.sent[i].grad)
        ok, message = result.ok, result.message
        if ok:
            self._right.setdefault(self.step, set()).add(i)
            if self._right[self.step] >= set(range(len(record_.sent))):
                self.reveal()
        self._say(ok, message)
        return ok, message

    def reveal(self) -> None:
        """Show the current step's gradients."""
        self._revealed_steps.add(self.step)
        self.revealed = True
        self._show()

    def _input_index(self, record_, input) -> int:
        if input is None:
            return self.input_picker.value if self.input_picker.value is not None else 0
        if isinstance(input, int):
            return input
        names = [s.input_name for s in record_.sent]
        if input not in names:
            raise messages.step_input(names, input)
        return names.index(input)

    def _check_typed(self) -> None:
        if self.answer.value.strip():
            self.predict(self.answer.value)

    def _say(self, ok: bool, message: str) -> None:
        # The mark's shape says right or wrong; the colour is only on the border, so the
        # text keeps the theme's own contrast.
        color = theme.SENT if ok else theme.VERMILLION
        mark = "✔" if ok else "✘"
        self.feedback.value = (f"<div style='border-left:4px solid {color};padding-left:6px'>"
                               f"<b>{mark}</b> {html.escape(message)}</div>")

    # -- showing a step -----------------------------------------------------------------
    def _on_mode(self, _change=None) -> None:
        self.revealed = not self.predict_mode or self.step in self._revealed_steps
        self._show()

    def _on_step(self, _change=None) -> None:
        self.revealed = (not self.predict_mode or self.step == 0
                         or self.step in self._revealed_steps)
        self.feedback.value = ""
        self.answer.value = ""
        self._show()

    def _show(self) -> None:
        k = self.step
        record_ = self.replay.step(k)
        focus = record_.op if record_ is not None else self.graph.output
        pages = self.pages

        def restyle():  # the page shown may still be the last one while the next is laid out
            self.svg = pages.current_svg
            pages.restyle(self.picture, self.styler.groups(k, pages.visible(pages.shown)),
                          focus)

        pages.show(self.page(), self.picture, restyle)
        self.step_html.value = step_panel(self.replay, k, self.revealed)
        self.picture.announcement = step_sentence(self.replay, k, self.revealed)
        if self.picture.selected:
            self._inspect()
        self._tabulate()
        self.leaves_html.value = leaves_panel(self.replay, k, self.revealed)
        self.replay.apply_to_leaves(k)
        options = [(f"{s.input_name} → {describe_tensor(self.replay.tensors[s.tensor])}", i)
                   for i, s in enumerate(record_.sent)] if record_ else []
        self.input_picker.options = options
        # a Dropdown given new options selects none and shows blank: pick the first input
        self.input_picker.index = 0 if options else None
        self.predict_box.layout.display = "" if self.predict_mode and options else "none"

    def _repr_mimebundle_(self, **kwargs):
        return with_static_picture(
            super()._repr_mimebundle_(**kwargs), "image/svg+xml", self.svg,
            f"BackwardStepper: {len(self.replay)} steps over {len(self.graph.ops)} ops")

    def close(self) -> None:
        """Close every widget of the stepper (none stays in ipywidgets' registry) and
        stop laying out pages ahead (``widgets.controls.close_view``)."""
        close_view(self)


# The one legend: the picture is drawn without its own (legend=False above).
_LEGEND = step_legend()


def _value_texts(view) -> dict[str, str]:
    """Tensor id -> the one-line summary of its values the inspector shows."""
    scales = ValueScales(view.graph, view.values)
    return {tid: summarize(a, scale=scales.of_tensor(tid)) for tid, a in view.values.items()}
