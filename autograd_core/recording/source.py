"""Where each op was called from: the line of the learner's code that recorded it.

When source recording is on, every recorded node gets ``node.source``: a tuple
``(filename, lineno, function)`` naming the first frame, walking outward from the
op, whose code is not the engine's (``autograd_core``), the presentation layer's
(``widgets``, which registers itself with :func:`skip_code_under`), nor a library's
(the standard library, ``site-packages``). So an op recorded inside
``nn.Linear.forward`` points at the learner's ``model(x)``, and an op inside a
module the learner wrote in a cell points at that line of the cell. If no frame
qualifies (an op run by a widget callback, say) the source is ``None``.

What the node keeps is cheap to take and holds no text: the frame's code object and
instruction offset (:func:`caller`), turned into the tuple when asked
(:func:`where`, e.g. by ``node.source``). :func:`source_line` reads the line
lazily with :mod:`linecache`, which also knows IPython's cells (ipykernel registers
each cell's code there under a name like ``/tmp/ipykernel_123/456.py``; the
terminal IPython under ``<ipython-input-5-...>``). :func:`describe_source` gives a
short place without machine paths: ``cell line 3`` or ``model.py:12``.

**Off by default in the engine**: when off, recording an op costs one flag check,
so benchmarks and plain engine use pay nothing. **Importing ``widgets`` turns it
on** (the inspector shows the line, see ``widgets/inspector.py``), as does::

    >>> import autograd_core as ag
    >>> with ag.record_source():          # on inside the block, restored after
    ...     y = ag.tensor([1.0], requires_grad=True) * 2.0
    >>> y.grad_fn.source[1] > 0
    True

The switch is process-wide (not per thread): an op recorded in any thread while it
is on records its source. ``Graph`` (``autograd_core.tools.graph.capture``) carries the
tuple as ``OpInfo.source``, left out of the graph's equality and repr, and the
graph's pictures never show it, so stored notebook outputs stay the same on every
machine.
"""

from __future__ import annotations

import linecache
import os
import re
import sys
import sysconfig
from types import CodeType

__all__ = ["record_source", "source_recording", "skip_code_under", "caller", "where",
           "source_line", "describe_source", "is_cell", "Source", "Call"]

Source = tuple[str, int, str]  # (filename, line number, function name)
Call = tuple[CodeType, int]  # (code object, frame.f_lasti): a Source not yet worked out


class _State:
    """The switch, read by ``function._record`` once per recorded op."""

    on = False


state = _State()


def _directory(path: str) -> str:
    return os.path.join(os.path.abspath(path), "")  # with a trailing separator


# The engine's own folder (autograd_core/, one up from this file's recording/): no line
# in it is the learner's.
ENGINE_DIRECTORY = _directory(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
_skipped: list[str] = [ENGINE_DIRECTORY]
for _key in ("stdlib", "platstdlib", "purelib", "platlib"):
    _path = sysconfig.get_paths().get(_key)
    if _path:
        _skipped.append(_directory(_path))
_skipped.append("<frozen ")  # importlib's own frames
_prefixes = tuple(dict.fromkeys(_skipped))


def skip_code_under(directory: str) -> None:
    """Treat code in files under ``directory`` as not the learner's, like the engine's:
    an op called from there is attributed to whoever called that code."""
    global _prefixes
    _prefixes = tuple(dict.fromkeys((*_prefixes, _directory(directory))))


class record_source:
    """Turn source recording on (or off with ``enabled=False``).

    Called, it switches for good: ``record_source()``. Used as a context manager, it
    switches for the block and then restores the previous setting::

        with record_source(False):
            ...  # these ops record no source
    """

    def __init__(self, enabled: bool = True) -> None:
        self._previous = state.on
        state.on = bool(enabled)

    def __enter__(self) -> record_source:
        return self

    def __exit__(self, *exc: object) -> None:
        state.on = self._previous


def source_recording() -> bool:
    """Whether recorded ops store the line of code that called them."""
    return state.on


def caller(skip: int = 0) -> Call | None:
    """Where the learner's code called us: the first frame, from this function's
    caller outward, whose file is not skipped (the engine, the widgets, libraries),
    as ``(code object, f_lasti)``; :func:`where` turns it into a :data:`Source`.
    ``None`` if every frame is skipped.

    The line number is left for later because working it out costs more than
    finding the frame. ``skip``: how many frames above the caller are known to be
    engine code, so are not looked at (each frame looked at costs a frame object)."""
    prefixes = _prefixes
    try:
        frame = sys._getframe(1 + skip)
    except ValueError:  # the stack is not that deep
        frame = sys._getframe(1)
    while frame is not None:
        code = frame.f_code
        if not code.co_filename.startswith(prefixes):
            return (code, frame.f_lasti)
        frame = frame.f_back
    return None


def where(call: Call | None) -> Source | None:
    """``(filename, lineno, function)`` of what :func:`caller` returned (the line
    ``frame.f_lineno`` would have given), or ``None`` for ``None``."""
    if call is None:
        return None
    code, lasti = call
    line = None
    for start, end, number in code.co_lines():
        if start <= lasti < end:
            line = number
            break
    return (code.co_filename, line or code.co_firstlineno, code.co_name)


def source_line(source: Source | None) -> str | None:
    """The text of the line ``source`` names, stripped, or ``None`` if it cannot be
    read (a file since deleted, code typed at ``python -c``)."""
    if source is None:
        return None
    text = linecache.getline(source[0], source[1]).strip()
    return text or None


# ipykernel: /tmp/ipykernel_<pid>/<hash>.py; terminal IPython: <ipython-input-5-abc>.
_CELL = re.compile(r"(?:[\\/]ipykernel_\d+[\\/]\d+\.py|^<ipython-input-\d+-[0-9a-f]+>)$")


def is_cell(filename: str) -> bool:
    """Whether ``filename`` is the name IPython gave a cell's code."""
    return _CELL.search(filename) is not None


def describe_source(source: Source | None) -> str | None:
    """Where ``source`` is, briefly and without machine paths: ``"cell line 3"`` for
    a notebook cell, ``"model.py:12"`` for a file, plus ``" in forward"`` when the
    line is inside a function. ``None`` for ``None``."""
    if source is None:
        return None
    filename, lineno, function = source
    if is_cell(filename):
        where = f"cell line {lineno}"
    elif filename.startswith("<"):
        where = f"{filename} line {lineno}"
    else:
        where = f"{os.path.basename(filename)}:{lineno}"
    if function and not function.startswith("<"):
        where += f" in {function}"
    return where
