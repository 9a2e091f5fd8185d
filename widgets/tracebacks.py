"""Errors in a lesson read the way a learner should read them: the message, and the
line of *your* code that failed, without the library's insides or this machine's paths.

Every lesson's setup cell calls :func:`short_tracebacks`. From then on an exception
raised in a cell shows only the frames of code written in the notebook (its cells,
and code it ``exec``-s), ending with the error message, as IPython prints it
(``Cell In[5], line 1 ... RuntimeError: ...``). Frames inside the engine, the
widgets, NumPy, the standard library or IPython are left out, so a stored output
names no absolute path and does not change when the engine's code moves.

>>> from widgets.tracebacks import short_tracebacks
>>> short_tracebacks()          # doctest: +SKIP
>>> short_tracebacks(False)     # doctest: +SKIP  (back to IPython's full tracebacks)

Outside IPython (plain Python, pytest) it does nothing.
"""

from __future__ import annotations

import sys
from pathlib import Path
from types import TracebackType

import autograd_core
import widgets


def _library_roots() -> tuple[Path, ...]:
    """Folders whose frames a learner does not need: this project's packages and Python's."""
    roots = {Path(autograd_core.__file__).parent, Path(widgets.__file__).parent}
    roots |= {Path(p) for p in (sys.prefix, sys.base_prefix, sys.exec_prefix)}
    return tuple(sorted({r.resolve() for r in roots}))


def is_learner_frame(filename: str, roots: tuple[Path, ...] | None = None) -> bool:
    """True for code written in the notebook: a cell or an exec'd string, not a library file.

    >>> is_learner_frame(widgets.__file__)
    False
    >>> is_learner_frame("<string>")
    True
    """
    if filename.startswith("<"):
        return True
    path = Path(filename).resolve()
    return not any(path.is_relative_to(root) for root in roots or _library_roots())


def learner_frames(tb: TracebackType | None) -> TracebackType | None:
    """The same traceback with only the learner's frames, outermost first."""
    roots = _library_roots()
    kept = []
    while tb is not None:
        if is_learner_frame(tb.tb_frame.f_code.co_filename, roots):
            kept.append(tb)
        tb = tb.tb_next
    short = None
    for entry in reversed(kept):
        short = TracebackType(short, entry.tb_frame, entry.tb_lasti, entry.tb_lineno)
    return short


def _show_short(shell, etype, value, tb, tb_offset=None):
    """IPython's custom exception handler: IPython's own format, learner frames only.

    IPython ignores what this returns when user code raised, so it shows the traceback
    itself, the way IPython's ``showtraceback`` does (ipykernel sends it as the cell's
    error output)."""
    seen, chained = set(), value
    while chained is not None and id(chained) not in seen:  # causes and contexts too
        seen.add(id(chained))
        if chained is not value:
            chained.__traceback__ = learner_frames(chained.__traceback__)
        chained = chained.__cause__ or chained.__context__
    stb = shell.InteractiveTB.structured_traceback(etype, value, learner_frames(tb), tb_offset=0)
    shell._showtraceback(etype, value, stb)


def short_tracebacks(on: bool = True) -> None:
    """Show exceptions in this notebook with the learner's frames only (``on=False``: all).

    Returns nothing (so a setup cell shows no output); outside IPython it does nothing.
    """
    try:
        from IPython import get_ipython
    except ImportError:  # pragma: no cover - IPython is part of every lesson environment
        return
    shell = get_ipython()
    if shell is None:
        return
    if on:
        shell.set_custom_exc((Exception,), _show_short)
    else:
        shell.set_custom_exc((), None)
