"""A derivation as it is written on a whiteboard, or in a Markdown cell's LaTeX, read
into a NumPy function of the named arrays.

For example ``r"\\frac{\\partial L}{\\partial W} = x^\\top (g \\odot (1 - \\tanh^2(x W)))"``,
or the same in plain text with Unicode: ``"xᵀ (g ⊙ (1 - tanh(x W)²))"``.

The text is parsed by a grammar (:data:`GRAMMAR`, read by Lark), never run: the parse tree
is turned into a small expression tree of known operations, and evaluation walks that
tree on the learner's arrays. What the notation means:

* **Matrix notation.** Juxtaposition (``x W``, ``W x``, ``2x``) is a matrix product
  between arrays and a multiplication by a number; ``⊙`` (``\\odot``, ``\\circ``) and
  ``*`` multiply elementwise; ``^\\top`` (``^T``, ``ᵀ``) transposes; ``X^{-1}`` is the
  inverse of a square matrix (of a number: 1/x); ``\\frac{a}{b}``, ``\\sqrt{}``, ``|x|``,
  ``\\max(0, x)``, ``\\sigma``, ``\\tanh``, ``\\exp``, ``\\log``, ``\\operatorname{diag}``,
  ``\\operatorname{tr}``, ``\\det``, ``\\mathbb{1}[x > 0]`` (1 where true, else 0),
  ``\\pi``, ``e^{x}``, and ``I`` (the identity of the size its neighbour needs).
  In a matrix product a 1-D array is a column, so ``xᵀ y`` is a number and ``x yᵀ`` a
  matrix; entry by entry it lines up with the last axis, as in NumPy (``x W + b``).
* **Index notation.** ``x_{ni} g_{nj}`` with ``\\sum_n`` is an einsum: each index names
  an axis, ``\\sum_n`` adds up over n, and the left side (``\\partial L / \\partial
  W_{ij}``) gives the order of what is left.
* **Ambiguous notation is asked about, never guessed:** ``\\cdot`` between two arrays,
  ``X^2`` of a matrix, ``x y`` of two column vectors, an index summed without a ``\\sum``.
  Each gets one sentence saying which spellings are meant.

A size cap (:data:`MAX_ELEMENTS`) stops a formula from making an array of gigabytes.

The parts: ``notation.py`` (the grammar and the spellings it takes), ``tree.py`` (the
parse as known operations), ``values.py`` (their values on the learner's arrays).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

import numpy as np

from ..formula_text import MAX_ELEMENTS, FormulaError, Unparsed
from .notation import (
    GRAMMAR,
    MAX_DEPTH,
    Ask,
    bracket_depth,
    equations,
    left_side,
    normalise,
    parser,
    refuse_unclear_fractions,
)
from .tree import Reading
from .values import Evaluation, Identity, as_answer

__all__ = ["GRAMMAR", "MAX_ELEMENTS", "Ask", "equations", "left_side", "normalise",
           "read_whiteboard"]


def read_whiteboard(text: str, names: Iterable[str], *, part: str | None = None,
                    sizes: Iterable[str] = ()) -> Callable:
    """A function of the named arrays (keyword arguments, ``g`` and the named ``sizes``)
    computing the formula ``text`` in whiteboard notation (see the module); raises
    :class:`FormulaError` (or :class:`Ask`) with a sentence when it cannot be read.
    ``part`` is the input the formula is the gradient of: a left side naming another one
    is refused."""
    from lark.exceptions import LarkError, UnexpectedInput
    inputs = set(names) | {"g"}
    clean = normalise(text, inputs | set(sizes))
    left = None
    if "=" in clean:  # the left side says which gradient this is (and its indices' order)
        said, clean = clean.split("=", 1)
        left = left_side(said)
        if left is None:
            raise FormulaError(f"the left side `{said.strip()}` is not one this reader knows: "
                               "write ∂L/∂W = ... (or dW = ...)")
        if part is not None and left[0] != part:
            raise FormulaError(f"the left side is the gradient of {left[0]}, but this formula "
                               f"is for d{part}")
    if not clean.strip():
        raise FormulaError("the formula is empty")
    refuse_unclear_fractions(clean)
    if bracket_depth(clean) > MAX_DEPTH:
        raise FormulaError(f"the formula nests brackets more than {MAX_DEPTH} deep")
    try:
        tree = parser().parse(clean)
    except UnexpectedInput as error:
        column = getattr(error, "column", None)
        near = clean[max(column - 1, 0):column + 11].strip() if isinstance(column, int) and \
            column > 0 else ""
        raise Unparsed(f"{text.strip()!r} is not notation this reader knows"
                       + (f", from `{near}` on" if near else "")
                       + ": the spellings it reads are listed in help(check_derivation)"
                       ) from None
    except LarkError:
        raise Unparsed(f"{text.strip()!r} is not notation this reader knows") from None
    except RecursionError:
        raise FormulaError("the formula is too long or nested too deeply to read") from None
    reading = Reading(clean, inputs, sizes, plain="\\" not in text)
    try:
        node = reading.node(tree)
    except RecursionError:
        raise FormulaError("the formula is too long or nested too deeply to read") from None

    def formula(**arrays):
        with np.errstate(all="ignore"):  # nan and inf pass through, as in NumPy
            try:
                value = Evaluation(arrays).value(node)
            except RecursionError:
                raise FormulaError("the formula is too long or nested too deeply to "
                                   "compute") from None
        name = left[0] if left else part or ""
        if isinstance(value, Identity) and np.ndim(arrays.get(name)) == 2:
            shape = np.shape(arrays[name])
            if shape[0] == shape[1]:
                return value.sized(shape[0])
        return as_answer(value, left[1] if left else "", name, np.shape(arrays.get(name)))

    formula.uses_g = any(n[:2] in (("name", "g"), ("indexed", "g")) for n in _nodes(node))
    formula.text = text
    return formula


def _nodes(node):
    """Every node of the tree under ``node`` (a stack, not recursion: a long formula is a
    deep tree)."""
    stack = [node]
    while stack:
        current = stack.pop()
        yield current
        stack.extend(child for child in current[1:] if isinstance(child, tuple))


