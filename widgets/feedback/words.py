"""Numbers, shapes and factors written the way a learner reads them (and stably,
so that notebook outputs do not change between runs or machines)."""

from __future__ import annotations

import numpy as np


def number(x: float) -> str:
    """A value with 4 significant digits: ``number(0.123456) == '0.1235'``."""
    x = float(x)
    if x == 0:
        return "0"
    return f"{x:.4g}"


def factor(c: float) -> str:
    """A scale factor as a learner would write it: 64, 1/64, -1, 0.37.

    >>> factor(64.0000001), factor(1 / 64), factor(-0.5)
    ('64', '1/64', '-1/2')
    """
    sign = "-" if c < 0 else ""
    a = abs(c)
    if a >= 1 and abs(a - round(a)) < 1e-6 * a:
        return f"{sign}{round(a)}"
    if 0 < a < 1 and abs(1 / a - round(1 / a)) < 1e-6 / a:
        return f"{sign}1/{round(1 / a)}"
    return f"{c:.3g}"


def shape(s) -> str:
    """``(3,)`` and ``(2, 3)`` written like Python writes tuples."""
    s = tuple(int(v) for v in s)
    return "()" if not s else "(" + ", ".join(map(str, s)) + ("," if len(s) == 1 else "") + ")"


def index(i) -> str:
    """An array index as a tuple, or ``[k]`` for 1-D."""
    i = tuple(int(v) for v in np.atleast_1d(i))
    return f"[{i[0]}]" if len(i) == 1 else str(i)


def listing(items) -> str:
    """``a, b and c``."""
    items = [str(i) for i in items]
    if len(items) <= 1:
        return "".join(items)
    return ", ".join(items[:-1]) + " and " + items[-1]


def a(noun: str) -> str:
    """``noun`` with its indefinite article: ``a('str') == 'a str'``, ``a('int') == 'an int'``."""
    return f"{'an' if noun[:1].lower() in tuple('aeio') else 'a'} {noun}"


def a_type(value) -> str:
    """What ``value`` is, with its article: ``a_type(5) == 'an int'``."""
    return a(type(value).__name__)


def short(value, limit: int = 60) -> str:
    """``repr(value)`` cut to ``limit`` characters, and without a memory address (a
    function is named by its qualified name), so stored outputs stay stable."""
    if callable(value) and hasattr(value, "__qualname__"):
        text = f"{type(value).__name__} {value.__qualname__}"
    else:
        text = repr(value)
        if " at 0x" in text or " object at " in text:
            text = f"{a_type(value)} object"
    return text if len(text) <= limit else text[:limit - 3] + "..."
