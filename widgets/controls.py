"""The step controls shared by the stepper and the tracer, and the graph picture
as an HTML widget with its own scoped style block.

``StepControls`` is first / previous / next / last buttons, a Play widget and an
IntSlider, all tied to one integer trait ``value``. ``Picture`` shows an SVG laid
out once, inside a container with a unique id, and a separate small HTML widget
holding the ``<style>`` block that highlights it (see ``widgets.highlight``).
``with_static_picture`` adds the picture a stored notebook shows without a kernel.
"""

from __future__ import annotations

import uuid

import ipywidgets as w
import traitlets


def with_static_picture(bundle: dict | None, mime: str, picture, text: str) -> dict:
    """A widget's display bundle plus a static picture (``mime`` is ``"image/svg+xml"``
    or ``"image/png"``) and a one-line text, so a stored notebook read without a
    kernel (GitHub, nbviewer) still shows the view."""
    data = dict(bundle or {})
    data[mime] = picture
    data["text/plain"] = text
    return data


class StepControls(w.HBox):
    """Navigation over steps 0..last; ``value`` is the current step."""

    value = traitlets.Int(0)

    def __init__(self, last: int, interval: int = 800, what: str = "step"):
        self.first_button = w.Button(description="|◀ first", tooltip=f"back to {what} 0",
                                     layout=w.Layout(width="auto"))
        self.previous_button = w.Button(description="◀ previous", layout=w.Layout(width="auto"))
        self.next_button = w.Button(description="next ▶", button_style="primary",
                                    layout=w.Layout(width="auto"))
        self.last_button = w.Button(description="last ▶|", layout=w.Layout(width="auto"))
        self.play = w.Play(min=0, max=last, step=1, interval=interval, value=0,
                           description="play", show_repeat=False)
        self.slider = w.IntSlider(min=0, max=last, value=0, description=what,
                                  continuous_update=True, layout=w.Layout(width="260px"))
        self.label = w.Label()
        self.last = last
        super().__init__([self.first_button, self.previous_button, self.next_button,
                          self.last_button, self.play, self.slider, self.label],
                         layout=w.Layout(flex_flow="row wrap", align_items="center"))
        w.link((self.play, "value"), (self.slider, "value"))
        w.link((self.slider, "value"), (self, "value"))
        self.first_button.on_click(lambda _: self.go(0))
        self.previous_button.on_click(lambda _: self.go(self.value - 1))
        self.next_button.on_click(lambda _: self.go(self.value + 1))
        self.last_button.on_click(lambda _: self.go(self.last))
        self.observe(self._refresh, "value")
        self._refresh()

    def go(self, k: int) -> None:
        self.value = min(max(k, 0), self.last)

    def _refresh(self, _change=None) -> None:
        k = self.value
        self.first_button.disabled = self.previous_button.disabled = k == 0
        self.next_button.disabled = self.last_button.disabled = k == self.last
        self.label.value = f"{k} / {self.last}"


class Picture(w.VBox):
    """An SVG in a scrollable container with a unique id, plus its style block.

    ``fit`` scales the whole picture down to the container (a CSS rule in the same
    style block, so toggling it costs no new layout); it starts on for small graphs.
    """

    fit = traitlets.Bool(True)

    def __init__(self, svg: str, max_height: str = "640px", fit: bool | None = None):
        self.container_id = "ag" + uuid.uuid4().hex[:12]
        self.max_height = max_height
        self.graph_html = w.HTML(layout=w.Layout(min_width="0", width="100%"))
        self.style_html = w.HTML("", layout=w.Layout(height="0px", overflow="hidden"))
        self.fit_toggle = w.ToggleButton(description="fit to view", icon="expand",
                                         tooltip="scale the whole graph into the box",
                                         layout=w.Layout(width="auto", align_self="flex-start"))
        self._css, self._focus = "", None
        super().__init__([self.style_html, self.fit_toggle, self.graph_html],
                         layout=w.Layout(min_width="0", width="100%"))
        w.link((self.fit_toggle, "value"), (self, "fit"))
        self.observe(lambda _: self.restyle(self._css, self._focus), "fit")
        self.set_svg(svg, fit)

    def set_svg(self, svg: str, fit: bool | None = None) -> None:
        """Show a new picture (a new layout: only when the graph itself changes)."""
        self.graph_html.value = (
            f'<div id="{self.container_id}" class="ag-graph" style="overflow:auto;'
            f"max-height:{self.max_height};width:100%;min-width:0;box-sizing:border-box;"
            f'border:1px solid #dee2e6;padding:4px">{svg}</div>')
        self.fit = svg.count('class="node') <= FIT_NODES if fit is None else fit
        self.restyle(self._css, self._focus)

    def restyle(self, css: str, focus: str | None = None) -> None:
        """Replace the highlight rules (a few hundred bytes; the SVG is not re-sent).

        ``focus``: a node id to bring into view if it is scrolled out of the box.
        """
        self._css, self._focus = css, focus
        fit = (f"#{self.container_id}>svg{{height:calc({self.max_height} - 12px);"
               "width:auto;max-width:100%}\n" if self.fit else "")
        self.style_html.value = f"<style>{fit}{css}</style>{self._scroller(focus)}"

    def _scroller(self, focus: str | None) -> str:
        # HTML widgets run no <script>, but an image that fails to load runs its onerror
        # handler: a broken 0-byte image scrolls the box (and only the box) to the node.
        # If a front end ever strips handlers, the only loss is this convenience.
        if focus is None or self.fit:
            return ""
        js = (f"var c=document.getElementById('{self.container_id}');"
              f"var g=c&&c.querySelector('#{focus}');if(g){{"
              "var r=g.getBoundingClientRect(),b=c.getBoundingClientRect();"
              "if(r.top<b.top||r.bottom>b.bottom||r.left<b.left||r.right>b.right){"
              "c.scrollTop+=r.top-b.top-(b.height-r.height)/2;"
              "c.scrollLeft+=r.left-b.left-(b.width-r.width)/2;}}")
        return f'<img src="data:," alt="" style="display:none" onerror="{js}">'


FIT_NODES = 80  # graphs up to this many nodes start scaled to fit their box
