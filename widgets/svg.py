"""DOT text -> SVG, with graphviz-pure, the one renderer used everywhere.

The renderer is run as a subprocess with the DOT text on stdin, ALWAYS with a
timeout (``LAYOUT_TIMEOUT`` seconds unless the caller gives one) and, on POSIX, a
memory cap (``LAYOUT_MEMORY``): a graph that would take Graphviz minutes or tens of
GB stops it and raises :class:`LayoutTimeout`, whose message says what to draw
instead. The views catch it and show a smaller picture.

Results are cached by DOT text (a few MB at most, oldest dropped first), so drawing
the same graph twice lays it out once. The SVG is trimmed to the ``<svg>`` element
(no XML prologue or generator comment) and each node's tooltip is moved into its
``<title>``, which every browser shows on hover. Same DOT text, same bytes:
notebook outputs stay stable under nbval.

>>> svg = to_svg("digraph { a -> b }")          # doctest: +SKIP
>>> svg.startswith("<svg")  # doctest: +SKIP
True
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sysconfig
import threading
from collections import OrderedDict

from autograd_core.errors import error

from . import messages
from .alt_text import alt_metadata, graph_alt

__all__ = ["SVG", "to_svg", "renderer", "LayoutTimeout", "LAYOUT_TIMEOUT", "LAYOUT_MEMORY"]

_RENDERER = "graphviz-pure"

# Seconds Graphviz may take for one picture before it is stopped. The views choose a
# smaller picture before they get near it (see ``widgets.render.layout_cost``); this
# is the guard for what the estimate misses. Set it higher to wait longer.
LAYOUT_TIMEOUT = 10.0

# Memory Graphviz may use (address space, POSIX only): a tangled graph can otherwise
# take tens of GB within the timeout and get the machine's out-of-memory killer
# involved. None: no cap.
LAYOUT_MEMORY: int | None = 4 * 1024 ** 3

# The cache of laid-out pictures: at most this many, of at most this many bytes
# (DOT + SVG text) in all. A picture larger than the whole budget is not kept.
CACHE_ENTRIES = 64
CACHE_BYTES = 2 * 1024 * 1024


class LayoutTimeout(RuntimeError):
    """Graphviz did not finish laying a graph out within the allowed time."""

    def __init__(self, message: str, seconds: float, nodes: int):
        super().__init__(message)
        self.seconds, self.nodes = seconds, nodes


def renderer() -> str:
    """Path of the graphviz-pure binary (this environment's first, then PATH)."""
    exe = shutil.which(_RENDERER, path=sysconfig.get_path("scripts")) or shutil.which(_RENDERER)
    if exe is None:
        raise messages.renderer_missing()
    return exe


class _Cache:
    """DOT text -> SVG, bounded by count and by bytes; safe to use from two threads."""

    def __init__(self):
        self._items: OrderedDict[str, str] = OrderedDict()
        self._bytes = 0
        self._lock = threading.Lock()

    def get(self, dot: str) -> str | None:
        with self._lock:
            svg = self._items.get(dot)
            if svg is not None:
                self._items.move_to_end(dot)
            return svg

    def put(self, dot: str, svg: str) -> None:
        size = len(dot) + len(svg)
        if size > CACHE_BYTES:
            return
        with self._lock:
            if dot in self._items:
                return
            self._items[dot] = svg
            self._bytes += size
            while len(self._items) > CACHE_ENTRIES or self._bytes > CACHE_BYTES:
                old_dot, old_svg = self._items.popitem(last=False)
                self._bytes -= len(old_dot) + len(old_svg)

    def clear(self) -> None:
        with self._lock:
            self._items.clear()
            self._bytes = 0

    def __len__(self) -> int:
        return len(self._items)


_cache = _Cache()


def to_svg(dot: str, timeout: float | None = None) -> str:
    """The SVG picture of ``dot`` (a string starting with ``<svg``).

    Graphviz is stopped after ``timeout`` seconds (default ``LAYOUT_TIMEOUT``) and
    :class:`LayoutTimeout` raised, with a message that says what to do instead.
    """
    svg = _cache.get(dot)
    if svg is not None:
        return svg
    seconds = LAYOUT_TIMEOUT if timeout is None else timeout
    command = [renderer(), "-Tsvg"]
    if LAYOUT_MEMORY is not None and os.name == "posix" and shutil.which("sh"):
        # ulimit in a shell that then becomes the renderer (preexec_fn is unsafe with
        # the layout thread the stepper uses).
        command = ["sh", "-c", f'ulimit -v {LAYOUT_MEMORY // 1024}; exec "$0" "$@"', *command]
    try:
        # run() kills the renderer when the time is up, and waits for it.
        done = subprocess.run(command, input=dot.encode(), capture_output=True,
                              timeout=seconds)
    except subprocess.TimeoutExpired:
        raise layout_timeout(seconds, dot.count(' [id="')) from None
    if done.returncode != 0 and b"memory allocation of" in done.stderr:
        raise layout_too_big(LAYOUT_MEMORY or 0, dot.count(' [id="'))
    if done.returncode != 0:
        raise messages.renderer_failed(done.returncode, done.stderr.decode(errors="replace"))
    svg = _tidy(done.stdout.decode())
    _cache.put(dot, svg)
    return svg


def _cache_clear() -> None:
    _cache.clear()


to_svg.cache_clear = _cache_clear  # as functools.lru_cache spells it


def layout_timeout(seconds: float, items: int) -> LayoutTimeout:
    """The message of a layout stopped after ``seconds`` (``items``: nodes and edges)."""
    return error(
        lambda text: LayoutTimeout(text, seconds, items),
        f"Graphviz did not finish laying out this graph ({items} nodes and edges) within "
        f"{seconds:g} s, so it was stopped: a graph this large or this tangled (a tensor "
        "reused by many ops far apart) can take it minutes.",
        "draw less of it: GraphView(loss) and draw(loss) pick a smaller picture by "
        "themselves (collapse=('block',) draws a module as one box; ops=(start, stop) "
        "draws a range of ops); BackwardStepper and ForwardTracer show the neighbourhood "
        "of the current op. To wait longer, pass timeout=120 (or set "
        "widgets.svg.LAYOUT_TIMEOUT).")


def layout_too_big(limit: int, items: int) -> LayoutTimeout:
    """The message of a layout stopped at the memory cap (``LAYOUT_MEMORY``)."""
    return error(
        lambda text: LayoutTimeout(text, 0.0, items),
        f"Graphviz ran out of the {limit / 1024 ** 3:g} GiB it may use while laying out "
        f"this graph ({items} nodes and edges), so it was stopped.",
        "draw less of it: GraphView(loss) and draw(loss) pick a smaller picture by "
        "themselves (collapse=('block',) draws a module as one box; ops=(start, stop) "
        "draws a range of ops); BackwardStepper and ForwardTracer show the neighbourhood "
        "of the current op. To allow more, set widgets.svg.LAYOUT_MEMORY.")


# Graphviz writes a tooltip as <a xlink:title="..."> around the node's shapes, which
# Chromium does not show; the standard SVG tooltip is the group's <title>.
_TOOLTIP = re.compile(
    r'(<g id="(?P<id>[^"]+)" class="(?:node|edge|cluster)[^"]*">\n<title>)[^<]*(</title>\n)'
    r'<g id="a_(?P=id)"><a xlink:title="(?P<tip>[^"]*)">\n(?P<body>.*?)</a>\n</g>\n',
    re.DOTALL,
)


def _tidy(svg: str) -> str:
    svg = svg[svg.index("<svg"):]
    return _TOOLTIP.sub(lambda m: f"{m[1]}{m['tip']}{m[3]}{m['body']}", svg)


class SVG:
    """A picture that notebooks store as plain ``image/svg+xml`` (shown on GitHub and
    nbviewer too), with its text alternative ``alt`` in the output's metadata
    (``widgets.alt_text``): JupyterLab draws the picture as an ``<img>``, which the
    project's JupyterLab extension gives that ``alt``. The SVG bytes are the renderer's,
    unchanged, so stored outputs stay the same.

    ``alt`` defaults to what the picture shows (``widgets.alt_text.graph_alt``:
    "Computational graph: 5 ops, 8 tensors").

    >>> SVG('<svg><g id="op0" class="node op"></g></svg>').alt
    'Computational graph: 1 op, 0 tensors'
    """

    def __init__(self, data: str, alt: str | None = None):
        self.data = data
        self._alt = alt

    @property
    def alt(self) -> str:
        """The picture's text alternative (given, or read from the picture)."""
        return graph_alt(self.data) if self._alt is None else self._alt

    def _repr_svg_(self) -> str:
        return self.data

    def _repr_mimebundle_(self, include=None, exclude=None) -> tuple[dict, dict]:
        """The picture and its text alternative: ``(data, metadata)`` for IPython (which
        adds ``text/plain`` from ``repr``)."""
        return {"image/svg+xml": self.data}, alt_metadata(self.alt, "image/svg+xml")

    def __repr__(self) -> str:  # stable text/plain: no memory address
        return f"<SVG picture, {len(self.data)} bytes>"
