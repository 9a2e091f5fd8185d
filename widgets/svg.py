"""DOT text -> SVG, with graphviz-pure, the one renderer used everywhere.

The renderer is run as a subprocess with the DOT text on stdin. Results are
cached by DOT text, so drawing the same graph twice lays it out once. The SVG is
trimmed to the ``<svg>`` element (no XML prologue or generator comment) and each
node's tooltip is moved into its ``<title>``, which every browser shows on hover.
Same DOT text, same bytes: notebook outputs stay stable under nbval.

>>> svg = to_svg("digraph { a -> b }")          # doctest: +SKIP
>>> svg.startswith("<svg")  # doctest: +SKIP
True
"""

from __future__ import annotations

import functools
import re
import shutil
import subprocess
import sysconfig

from . import messages

__all__ = ["SVG", "to_svg", "renderer"]

_RENDERER = "graphviz-pure"


def renderer() -> str:
    """Path of the graphviz-pure binary (this environment's first, then PATH)."""
    exe = shutil.which(_RENDERER, path=sysconfig.get_path("scripts")) or shutil.which(_RENDERER)
    if exe is None:
        raise messages.renderer_missing()
    return exe


@functools.lru_cache(maxsize=64)
def to_svg(dot: str) -> str:
    """The SVG picture of ``dot`` (a string starting with ``<svg``)."""
    done = subprocess.run([renderer(), "-Tsvg"], input=dot.encode(), capture_output=True)
    if done.returncode != 0:
        raise messages.renderer_failed(done.returncode, done.stderr.decode(errors="replace"))
    return _tidy(done.stdout.decode())


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
    nbviewer too)."""

    def __init__(self, data: str):
        self.data = data

    def _repr_svg_(self) -> str:
        return self.data

    def __repr__(self) -> str:  # stable text/plain: no memory address
        return f"<SVG picture, {len(self.data)} bytes>"
