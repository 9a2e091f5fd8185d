"""The pieces every message is built from: how shapes are written, and the hint line."""

from __future__ import annotations

from typing import TypeVar

E = TypeVar("E", bound=BaseException)


def shape_text(shape) -> str:
    """A shape as NumPy prints it: ``shape_text((3,)) == "(3,)"``."""
    return "(" + ", ".join(str(s) for s in shape) + ("," if len(shape) == 1 else "") + ")"


def size_text(shape) -> str:
    """A shape as PyTorch's layer messages print it: ``size_text((2, 3)) == "[2, 3]"``."""
    return "[" + ", ".join(str(s) for s in shape) + "]"


def error(kind: type[E], message: str, hint: str | None = None) -> E:
    """``kind(message)``, with ``hint`` as a last line that says how to fix it.

    >>> str(error(ValueError, "p must be in [0, 1].", "use 0.5."))
    'p must be in [0, 1].\\nHint: use 0.5.'
    """
    return kind(message if hint is None else f"{message}\nHint: {hint}")
