"""Helpers for the debugging lesson (notebooks/11_debugging.ipynb).

The engine's debugging tools (``autograd_core.anomaly``, ``autograd_core.instrument``)
point at the forward line that made a NaN, as a Python stack frame. In Jupyter, a cell
runs from a temporary file named after the kernel's process id
(``/tmp/ipykernel_4242/3141592653.py``): meaningless to a learner, and different on
every run. :func:`readable` writes such a frame as ``notebook cell, line 4``; the
frame's source line, printed under it, shows which cell. (IPython's own tracebacks
say ``Cell In[7]``, but the execution count is not stable either: it depends on how
often cells were run, and nbval runs cells without counting them.)

>>> readable('File "/tmp/ipykernel_1/99.py", line 3', is_cell=lambda f: "ipykernel" in f)
'notebook cell, line 3'
"""

from __future__ import annotations

import re
import sys
from collections.abc import Callable

__all__ = ["readable", "is_notebook_cell"]

_FILE = re.compile(r'File "([^"]+)", line')


def is_notebook_cell(filename: str) -> bool:
    """True if ``filename`` holds a cell of the running IPython kernel (False outside
    IPython)."""
    ipython = sys.modules.get("IPython")
    shell = ipython.get_ipython() if ipython is not None else None
    compiler = getattr(shell, "compile", None)
    return compiler is not None and compiler.format_code_name(filename) is not None


def readable(message, is_cell: Callable[[str], bool] | None = None) -> str:
    """``str(message)`` with every ``File "<cell file>", line N`` written as
    ``notebook cell, line N``. Other files are left as they are.

    ``message`` is anything printable: an exception, an engine report, a string.
    ``is_cell`` says whether a file name is a notebook cell (default: ask the running
    IPython kernel).
    """
    is_cell = is_notebook_cell if is_cell is None else is_cell

    def rename(match: re.Match) -> str:
        return "notebook cell, line" if is_cell(match.group(1)) else match.group(0)

    return _FILE.sub(rename, str(message))
