"""The step controls and picture pages shared by the stepper and the tracer.

``StepControls`` is first / previous / next / last buttons and a
``widgets.step_player.StepPlayer`` (play, stop and a step slider, each named for a
screen reader), all tied to one integer trait ``value``. The picture itself is a
``widgets.canvas.GraphCanvas``; ``with_static_picture`` adds the picture a stored
notebook shows without a kernel.

``close_tree`` closes a widget and every widget inside it (children, layouts,
styles), so a closed view leaves nothing in ipywidgets' registry. ``Pages`` is the
picture of a graph for a view that moves over its ops: the whole graph, or, when it
is too large to lay out at once, the neighbourhood of the current op, one page of
consecutive ops at a time, each laid out once and the next ones laid out ahead in a
background thread. ``module_picker`` and ``recollapse`` let a view draw modules as
one box each, and ``Pages.restyle`` moves a highlight onto the box that hides it.
"""

from __future__ import annotations

import html
import re
import threading
import weakref
from collections.abc import Callable, Iterable, Mapping
from concurrent.futures import Future, ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout

import ipywidgets as w
import traitlets

from .alt_text import alt_metadata, graph_alt
from .canvas import GraphCanvas
from .graph_ids import edge_id, saved_node_id
from .highlight import css_block, onto_boxes
from .render import collapsed_ids, layout_estimate, to_dot
from .step_player import StepPlayer
from .svg import LayoutTimeout, to_svg

# A view lays its whole graph out when Graphviz is predicted to take at most this
# many seconds (see widgets.render.layout_estimate); above it, it draws less.
VIEW_BUDGET = 0.5
PAGE_BUDGET = 0.3  # ... and a page of the neighbourhood view, this many
PAGE_OPS = 120  # ops on a page at most (pages overlap by half)
WHOLE_TIMEOUT = 1.5  # seconds: a whole picture predicted cheap but not, is stopped
PAGE_WAIT = 0.01  # seconds a step waits for its page; later, the page comes when laid out
PICKER_MODULES = 600  # modules a collapse picker lists at most (the outer levels)


# Traits that hold text, numbers or flags, never a widget: close_tree skips them.
SCALAR_TRAITS = (traitlets.Unicode, traitlets.Enum, traitlets.Int, traitlets.Float,
                 traitlets.Bool, traitlets.Bytes)
# Weak: an anywidget gets a class of its own per instance (traitlets' add_traits), and
# a plain dict kept every closed one's class alive.
_WIDGET_KEYS: weakref.WeakKeyDictionary[type, tuple[str, ...]] = weakref.WeakKeyDictionary()


def _widget_keys(item: w.Widget) -> tuple[str, ...]:
    """The synced traits of ``item``'s class that may hold widgets (children, layout,
    style, ...), worked out once per class: reading all of them for every widget of a
    view made closing one take milliseconds."""
    keys = _WIDGET_KEYS.get(type(item))
    if keys is None:
        traits = item.traits()
        keys = tuple(k for k in item.keys if not isinstance(traits.get(k), SCALAR_TRAITS))
        _WIDGET_KEYS[type(item)] = keys
    return keys


def close_tree(widget: w.Widget, *others: w.Widget) -> None:
    """Close ``widget`` (and ``others``, widgets it keeps but does not show) and every
    widget they hold (children, layout, style), so none stays in ipywidgets' registry
    of live widgets."""
    stack, seen = [widget, *others], set()
    while stack:
        item = stack.pop()
        if id(item) in seen:
            continue
        seen.add(id(item))
        for name in _widget_keys(item):
            value = getattr(item, name, None)
            for v in value if isinstance(value, tuple | list) else (value,):
                if isinstance(v, w.Widget):
                    stack.append(v)
        w.Widget.close(item)


def bind_step_keys(canvas, view, on_p: Callable[[], None] | None = None) -> None:
    """Step ``view`` (a stepper or tracer) with the keys pressed on its picture
    (``widgets.canvas.GraphCanvas``): → next, ← previous, Home first, End last, and P
    calls ``on_p`` (the stepper's predict mode)."""
    moves = {"ArrowRight": view.next, "ArrowLeft": view.previous, "Home": view.first,
             "End": view.last}

    def on_key(key: str) -> None:
        if key in moves:
            moves[key]()
        elif key == "p" and on_p is not None:
            on_p()

    canvas.on_key(on_key)


def close_view(view: w.Widget) -> None:
    """Close a paged view (stepper, tracer): stop laying out its pages ahead, then close
    every widget inside it. The Python object keeps working, as a closed ipywidget does,
    so it keeps its recorded graph until it is itself let go."""
    pages = view.__dict__.get("pages")
    if pages is not None:
        pages.close()
        pages.origin.close()
    close_tree(view)


def note_html(text: str) -> str:
    """A view's note above its picture (what it draws of a large graph), or ``""``."""
    return f"<div style='font-size:12px'>{html.escape(text)}</div>" if text else ""


def with_static_picture(bundle: dict | None, mime: str, picture, text: str,
                        alt: str | None = None) -> tuple[dict, dict]:
    """A widget's display bundle plus a static picture (``mime`` is ``"image/svg+xml"``
    or ``"image/png"``) and a one-line text, so a stored notebook read without a
    kernel (GitHub, nbviewer) still shows the view; returned as IPython's ``(data,
    metadata)``, the metadata giving the picture its text alternative
    (``widgets.alt_text``): ``alt``, else the one-line text and, for a graph, what the
    graph shows."""
    data = dict(bundle or {})
    data[mime] = picture
    data["text/plain"] = text
    if alt is None:
        alt = f"{text}. {graph_alt(picture)}" if mime == "image/svg+xml" else text
    return data, alt_metadata(alt, mime)


class StepControls(w.HBox):
    """Navigation over steps 0..last; ``value`` is the current step.

    ``first_button``, ``previous_button``, ``next_button`` and ``last_button`` step;
    ``player`` (also reachable as ``play`` and ``slider``) plays, stops and slides;
    ``label`` reads ``k / last``.
    """

    value = traitlets.Int(0)

    def __init__(self, last: int, interval: int = 800, what: str = "step"):
        self.first_button = w.Button(description="|◀ first", tooltip=f"back to {what} 0",
                                     layout=w.Layout(width="auto"))
        self.previous_button = w.Button(description="◀ previous", layout=w.Layout(width="auto"))
        self.next_button = w.Button(description="next ▶", button_style="primary",
                                    layout=w.Layout(width="auto"))
        self.last_button = w.Button(description="last ▶|", layout=w.Layout(width="auto"))
        self.player = StepPlayer(last, interval=interval, what=what)
        # One widget is both the play button and the slider that ipywidgets' Play and
        # IntSlider were: the old names stay, for code that reads them.
        self.play = self.slider = self.player
        self.label = w.Label()
        self.last = last
        super().__init__([self.first_button, self.previous_button, self.next_button,
                          self.last_button, self.player, self.label],
                         layout=w.Layout(flex_flow="row wrap", align_items="center"))
        self.add_class("ag-step-controls")  # its buttons' focus ring: step_player.css
        w.link((self.player, "value"), (self, "value"))
        self.first_button.on_click(lambda _: self.go(0))
        self.previous_button.on_click(lambda _: self.go(self.value - 1))
        self.next_button.on_click(lambda _: self.go(self.value + 1))
        self.last_button.on_click(lambda _: self.go(self.last))
        self.observe(self._refresh, "value")
        self._refresh()

    def go(self, k: int) -> None:
        """Move to step ``k``, kept inside ``0..last``."""
        self.value = min(max(k, 0), self.last)

    def _refresh(self, _change=None) -> None:
        k = self.value
        self.first_button.disabled = self.previous_button.disabled = k == 0
        self.next_button.disabled = self.last_button.disabled = k == self.last
        self.label.value = f"{k} / {self.last}"


def module_picker(graph, collapse=()) -> w.SelectMultiple:
    """A list of the module paths of ``graph``'s ops to pick the ones drawn as one box
    (``collapse`` picked at first), with every module around them (a ``Sequential`` that
    runs no op of its own, such as a block's ``mlp``, can be folded too); hidden when the
    graph has no modules. A huge model lists its outer levels only (at most
    ``PICKER_MODULES`` paths)."""
    modules = sorted({".".join(parts[:depth]) for op in graph.ops if op.module
                      for parts in [op.module.split(".")] for depth in range(1, len(parts) + 1)})
    if len(modules) > PICKER_MODULES:
        depth = 1
        while len({".".join(m.split(".")[:depth + 1]) for m in modules}) <= PICKER_MODULES:
            depth += 1
        modules = sorted({".".join(m.split(".")[:depth]) for m in modules})
    return w.SelectMultiple(
        options=[(module_label(graph, m), m) for m in modules],
        value=tuple(c for c in collapse if c in modules),
        description="collapse", rows=min(len(modules), 8) or 1,
        tooltip="modules drawn as one box (ctrl- or shift-click to pick several)",
        layout=w.Layout(width="auto", display="" if modules else "none"))


def module_label(graph, path: str) -> str:
    """How the picker lists a module: its path, its type and how many ops it ran, e.g.
    ``4 · ResidualBlock (7 ops)`` (the type is left out if the graph does not know it)."""
    kinds = {p: kind for op in graph.ops for p, kind in op.module_kinds}
    inside = sum(1 for op in graph.ops
                 if op.module and (op.module == path or op.module.startswith(path + ".")))
    kind = f" · {kinds[path]}" if path in kinds else ""
    return f"{path}{kind} ({inside} op{'' if inside == 1 else 's'})"


def recollapse(view, collapse) -> None:
    """Draw ``view``'s picture (a stepper or tracer: its ``pages``, ``picture``,
    ``note``, ``page()`` and ``_show()``) with the modules ``collapse`` as one box
    each, at the same step. A new layout, made now (or the first one, kept); the steps
    after it only restyle again."""
    old = view.pages
    new = old.recollapse(collapse)
    if new is old:
        return
    if old is old.origin:
        old.leave()  # kept, to come back to
    else:
        old.close()
    view.pages = new
    view.note.value = note_html(new.note)
    if new.shown is None:
        new.first(view.page())
    view.picture.set_svg(new.current_svg)
    view._show()


_layouts = ThreadPoolExecutor(max_workers=1, thread_name_prefix="autograd-layout")


class Pages:
    """The picture of a graph for a view that moves over its ops (stepper, tracer).

    ``picture="auto"``: if the whole graph lays out within ``VIEW_BUDGET`` (predicted,
    and stopped after ``WHOLE_TIMEOUT`` if the prediction was wrong), there is one
    page, the whole graph, laid out once. Otherwise pages of consecutive ops (in
    execution order) overlapping by half; ``page_of(order)`` is the page on which
    that op is at least a quarter page from either edge; the ops off the page are
    note nodes. Each page is laid out once, and the pages beside the one shown are
    laid out ahead in a background thread, so a step rarely waits for Graphviz.
    ``"full"`` always draws the whole graph (Graphviz may then take long, up to
    ``widgets.svg.LAYOUT_TIMEOUT``); ``"neighbourhood"`` always pages.

    Pages' tooltips carry no value summaries (the whole picture's do): keeping every
    array alive to describe later pages would keep what the sweep releases. Nor do
    those of pages made later by ``recollapse``; ``origin`` is the pages made first.
    """

    def __init__(self, graph, *, picture: str = "auto", collapse=(), values=None,
                 origin: Pages | None = None, **dot_options):
        if picture not in ("auto", "full", "neighbourhood"):
            raise ValueError(f"picture must be 'auto', 'full' or 'neighbourhood', "
                             f"not {picture!r}")
        self.graph, self.collapse, self.options = graph, tuple(collapse), dot_options
        self.mode, self.origin = picture, origin or self
        self._svgs: dict[int, Future] = {}
        self._visible: dict[int, set[str]] = {}
        self._boxes: dict[int, tuple[dict[str, str], dict[str, frozenset[str]]]] = {}
        self.whole_dot: str | None = None
        self.copied: frozenset[str] = frozenset()  # leaves drawn once per use
        n = len(graph.ops)
        whole = picture == "full" or n <= 8 or (
            picture == "auto" and layout_estimate(graph, collapse=self.collapse).seconds
            <= VIEW_BUDGET)
        self.whole_svg = None
        if whole:
            self.whole_dot = to_dot(graph, values=values, collapse=self.collapse,
                                    **dot_options)
            self.copied = frozenset(re.findall(r'class="tensor [^"]*copy_(\w+)"',
                                               self.whole_dot))
            try:
                self.whole_svg = to_svg(self.whole_dot,
                                        timeout=None if picture == "full" else WHOLE_TIMEOUT)
            except LayoutTimeout:
                if picture == "full":
                    raise
        self.size = n if self.whole_svg is not None else self._page_size()
        self.half = max(self.size // 2, 1)
        self.count = 1 if self.whole_svg is not None else -(-max(n - self.size, 0)
                                                             // self.half) + 1
        self.shown: int | None = None  # the page in the picture
        self.wanted: int | None = None  # the page the view is on (shown when laid out)
        self.current_svg = self.whole_svg
        self.arrived = threading.Event()  # set when no page is awaited
        self.arrived.set()
        self._lock = threading.RLock()
        self._closed = False
        self.note = "" if not self.paged else (
            f"This graph has {n:,} ops, too many to lay out at once, so the picture shows "
            f"the neighbourhood of the current op ({self.size} ops around it; the others "
            "are note nodes) and follows the step. To draw it all, pass picture='full' "
            "(Graphviz may take minutes).")

    def recollapse(self, collapse) -> Pages:
        """These pages with the modules ``collapse`` drawn as one box each: ``origin``
        when that is its collapse, else new pages (laid out when first shown)."""
        collapse = tuple(collapse)
        for pages in (self, self.origin):
            if set(pages.collapse) == set(collapse):
                return pages
        return Pages(self.graph, picture=self.mode, collapse=collapse, origin=self.origin,
                     **self.options)

    def _page_size(self) -> int:
        size = PAGE_OPS
        while size > 8 and layout_estimate(self.graph, collapse=self.collapse,
                                           ops=[(0, size)]).seconds > PAGE_BUDGET:
            size //= 2
        return size

    @property
    def paged(self) -> bool:
        return self.whole_svg is None

    def page_of(self, order: int | None) -> int:
        """The page to show for the op of execution order ``order`` (None: the output's)."""
        if not self.paged:
            return 0
        if order is None:
            return self.count - 1
        return max(0, min(self.count - 1, (order - self.half // 2) // self.half))

    def span(self, page: int) -> tuple[int, int]:
        start = page * self.half
        return start, min(start + self.size, len(self.graph.ops))

    def dot(self, page: int) -> str:
        if not self.paged:
            return self.whole_dot
        return to_dot(self.graph, collapse=self.collapse, ops=[self.span(page)],
                      **self.options)

    def svg(self, page: int) -> str:
        """The laid-out page (waits for it)."""
        if not self.paged:
            return self.whole_svg
        future = self._request(page)
        try:
            return future.result()
        except Exception:
            self._svgs.pop(page, None)
            raise

    def first(self, page: int) -> str:
        """Lay ``page`` out now (the view's first picture) and make it the one shown."""
        svg = self.svg(page)
        self.shown = self.wanted = page
        self.current_svg = svg
        return svg

    def show(self, page: int, picture: GraphCanvas, restyle: Callable[[], None]) -> bool:
        """Put ``page`` in ``picture`` and call ``restyle``. If the page is not laid out
        within ``PAGE_WAIT``, the picture keeps the page it has (``restyle`` still
        runs) and gets the new one from the layout thread when it is ready, so a step
        never waits for Graphviz. Returns whether the page is shown now."""
        with self._lock:
            self.wanted = page
            if page == self.shown or self._closed:  # closed: no new layouts
                restyle()
                return True
            future = self._request(page)
            try:
                svg = future.result(timeout=PAGE_WAIT)
            except FutureTimeout:
                self.arrived.clear()
                future.add_done_callback(lambda f: self._arrive(page, f, picture, restyle))
                restyle()
                return False
            self._put(page, svg, picture)
            restyle()
            return True

    def _arrive(self, page: int, future: Future, picture: GraphCanvas, restyle) -> None:
        with self._lock:
            try:
                if self._closed or self.wanted != page or future.cancelled():
                    return
                self._put(page, future.result(), picture)
                restyle()
            finally:
                if self.wanted == page or self._closed:
                    self.arrived.set()

    def _put(self, page: int, svg: str, picture: GraphCanvas) -> None:
        self.shown, self.current_svg = page, svg
        picture.set_svg(svg)

    def _request(self, page: int) -> Future:
        """The layout of ``page``, first in the queue; then the pages beside it."""
        with self._lock:
            future = self._svgs.get(page)
            if future is None or (not future.done() and not future.running()):
                for p, f in list(self._svgs.items()):  # queued ones go after this page
                    if f.cancel():
                        del self._svgs[p]
                future = self._svgs[page] = _layouts.submit(_lay_out, self, page)
            for near in (page + 1, page - 1):  # the pages a step or two away: lay out ahead
                if 0 <= near < self.count and near not in self._svgs:
                    self._svgs[near] = _layouts.submit(_lay_out, self, near)
            if len(self._svgs) > 6:  # keep only the pages near this one
                for old in sorted(self._svgs, key=lambda p: abs(p - page))[6:]:
                    self._svgs.pop(old).cancel()
            return future

    def visible(self, page: int) -> set[str] | None:
        """Ids drawn on ``page`` (None: the whole graph is drawn)."""
        if not self.paged:
            return None
        if page not in self._visible:
            start, stop = self.span(page)
            ids: set[str] = set()
            for o in self.graph.ops[start:stop]:
                ids.add(o.id)
                ids.update(o.inputs)
                ids.add(o.output)
                ids.update(edge_id(o.id, i) for i in range(len(o.inputs)))
                ids.update(saved_node_id(o.id, s.name) for s in o.saved if s.tensor is None)
            ids.update(v for v in self.boxes(page)[0].values() if v)
            self._visible = {page: ids}  # one page's ids at a time
        return self._visible[page]

    def boxes(self, page: int) -> tuple[dict[str, str], dict[str, frozenset[str]]]:
        """Where the ids hidden in a collapsed module's box on ``page`` went: (id ->
        the id drawn instead: the box, the edge into or out of it, or ``""`` for an
        edge inside it; box id -> the ops inside). Empty when nothing is collapsed."""
        if not self.collapse:
            return {}, {}
        page = page if self.paged else 0
        if page not in self._boxes:
            # The renderer decides what a box swallows (a tensor used outside its module
            # stays drawn); ask it rather than decide again here.
            self._boxes = {page: collapsed_ids(self.graph, self.collapse,
                                               [self.span(page)] if self.paged else None)}
        return self._boxes[page]

    def restyle(self, picture: GraphCanvas, groups: Mapping[str, Iterable[str]],
                focus: str | None = None) -> None:
        """Highlight ``groups`` (category -> ids, see ``widgets.highlight``) on the page
        shown in ``picture`` and keep ``focus`` in view; what a collapsed module hides
        is highlighted on its box (``widgets.highlight.onto_boxes``)."""
        page = self.shown if self.shown is not None else 0
        moved, inside = self.boxes(page)
        if moved:
            groups = onto_boxes(groups, moved, inside)
            focus = moved.get(focus, focus) or None
        picture.restyle(css_block(picture.container_id, groups, visible=self.visible(page),
                                  copied=self.copied), focus)

    def leave(self) -> None:
        """Stop putting pages in the picture: the view shows other pages now."""
        with self._lock:
            self.wanted = None
            self.arrived.set()

    def close(self) -> None:
        """Stop laying out pages (ahead or asked for) and drop those laid out."""
        with self._lock:
            self._closed = True
            for future in self._svgs.values():
                future.cancel()
            self._svgs.clear()
            self._visible.clear()
            self._boxes.clear()
            self.arrived.set()


def _lay_out(pages: Pages, page: int) -> str:
    if pages._closed:
        return ""
    return to_svg(pages.dot(page))
