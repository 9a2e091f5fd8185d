"""``einsum``: one op for the contractions attention is written with.

An equation names each dim of each operand by a letter, e.g. ``"bhqd,bhkd->bhqk"``:
letters shared between operands are multiplied along, letters missing from the output
are summed over. Its backward is again an einsum, one per operand: the gradient of
operand i contracts ``g`` with the *other* operands, its subscripts and the output's
swapped. For ``out = einsum("ij,jk->ik", a, b)``: ``da = einsum("ik,jk->ij", g, b)``,
which is ``g @ b.T``.

Two kinds of subscripts need more than the swap, and both become factors of the same
einsum: a letter only operand i has (``"ij->i"``: j is summed inside it) gets a vector
of ones, which broadcasts g along it; a letter operand i repeats (``"ii->i"``, a
diagonal) gets a second letter tied to the first by an identity matrix, so that only
the diagonal receives g. Each gradient is therefore one recorded einsum too, which
makes second derivatives come for free.

The public function (``einsum`` in ``ops/api.py``) parses the equation as PyTorch does
(:func:`canonical_equation`): implicit output, ``...`` and spaces are resolved, and the
op receives an equation of letters only with an explicit output. Dims of size 1
broadcast against the same letter's size elsewhere, as in PyTorch; their gradients are
summed back by the engine.
"""

from __future__ import annotations

import math
import string
from functools import lru_cache

import numpy as np

from .. import errors
from ..recording import rule
from ..recording.node import Function
from ._util import tangent_sum

# PyTorch's subscripts, in its order (A-Z, then a-z: the order of an implicit output).
LETTERS = string.ascii_uppercase + string.ascii_lowercase
ELLIPSIS = "..."
# Below this many multiply-adds (the product of every letter's size) NumPy's plain einsum
# loop is faster than planning a contraction order and calling BLAS.
OPTIMIZE_FROM = 1 << 14


# -- reading an equation -------------------------------------------------------------------
def canonical_equation(equation: str, shapes) -> str:
    """``equation`` for operands of these shapes as letters only, with an explicit output:
    ``"...ij,...jk"`` for shapes (5, 2, 3) and (3, 4) is ``"Aij,jk->Aik"``. Raises
    PyTorch's error, with PyTorch's sentence, for what PyTorch refuses."""
    return _canonical(equation, tuple(tuple(s) for s in shapes))


@lru_cache(maxsize=1024)
def _canonical(equation: str, shapes: tuple) -> str:
    arrow = equation.find("->")
    lhs = equation if arrow < 0 else equation[:arrow]
    terms = _read_inputs(lhs, len(shapes))
    count: dict[str, int] = {}
    ell_ndim = 0
    for k, (labels, shape) in enumerate(zip(terms, shapes, strict=True)):
        named = [c for c in labels if c != ELLIPSIS]
        for c in named:
            count[c] = count.get(c, 0) + 1
        has_ellipsis = len(named) != len(labels)
        if has_ellipsis:
            ell_ndim = max(ell_ndim, len(shape) - len(named))
        if len(named) > len(shape) or (not has_ellipsis and len(named) != len(shape)):
            raise errors.einsum_subscript_count(len(named), shape, k, has_ellipsis)
    if arrow < 0:  # implicit: the broadcast dims, then the letters used once, in order
        output = [ELLIPSIS] + sorted(c for c, n in count.items() if n == 1)
    else:
        output = _read_output(equation[arrow + 2:], len(lhs) + 2, count)
    free = [c for c in LETTERS if c not in count]
    if ell_ndim > len(free):
        raise errors.einsum_letters(len(count) + ell_ndim)
    ell = free[:ell_ndim]
    subscripts = []
    for labels, shape in zip(terms, shapes, strict=True):
        covered = len(shape) - (len(labels) - (ELLIPSIS in labels))  # dims under "..."
        subscripts.append("".join("".join(ell[ell_ndim - covered:]) if c == ELLIPSIS else c
                                  for c in labels))
    out = "".join("".join(ell) if c == ELLIPSIS else c for c in output)
    _check_sizes(subscripts, shapes, ell)
    return ",".join(subscripts) + "->" + out


def _read_inputs(lhs: str, n: int) -> list[list[str]]:
    """The labels of each operand's term (``...`` as one label), PyTorch's checks in
    PyTorch's order."""
    terms: list[list[str]] = [[]]
    i = 0
    while i < len(lhs):
        c = lhs[i]
        if c == ".":
            if ELLIPSIS in terms[-1]:
                raise errors.einsum_ellipsis(len(terms) - 1, again=True)
            if lhs[i:i + 3] != ELLIPSIS:
                raise errors.einsum_ellipsis(len(terms) - 1, again=False)
            terms[-1].append(ELLIPSIS)
            i += 2
        elif c == ",":
            terms.append([])
            if len(terms) > n:
                raise errors.einsum_operand_count(False, lhs.count(",") + 1, n)
        elif c in LETTERS:
            terms[-1].append(c)
        elif c != " ":
            raise errors.einsum_subscript(i, c)
        i += 1
    if len(terms) != n:
        raise errors.einsum_operand_count(True, lhs.count(",") + 1, n)
    return terms


def _read_output(rhs: str, offset: int, count: dict) -> list[str]:
    """The labels of an explicit output; ``offset``: where rhs starts in the equation."""
    output: list[str] = []
    i = 0
    while i < len(rhs):
        c = rhs[i]
        if c == ".":
            if ELLIPSIS in output:
                raise errors.einsum_ellipsis(None, again=True)
            if rhs[i:i + 3] != ELLIPSIS:
                raise errors.einsum_ellipsis(None, again=False)
            output.append(ELLIPSIS)
            i += 2
        elif c in LETTERS:
            if c in output or c not in count:
                raise errors.einsum_output_subscript(c, repeated=c in output)
            output.append(c)
        elif c != " ":
            raise errors.einsum_subscript(offset + i, c)
        i += 1
    return output


def _check_sizes(subscripts: list[str], shapes: list[tuple], ell: list[str]) -> None:
    """A letter repeated in one operand spans dims of one size; across operands a letter's
    sizes agree or are 1 (PyTorch's rules and sentences)."""
    seen: dict[str, int] = {}
    for k, (subs, shape) in enumerate(zip(subscripts, shapes, strict=True)):
        first: dict[str, int] = {}
        for c, size in zip(subs, shape, strict=True):
            if c in first:
                if size != first[c]:
                    raise errors.einsum_repeated_size(c, k, size, first[c])
                continue
            first[c] = size
            previous = seen.get(c, 1)
            if size != previous and size != 1 and previous != 1:
                if c in ell:
                    raise errors.einsum_ellipsis_size(ell.index(c), k, size, previous)
                raise errors.einsum_size(c, size, k, previous)
            if previous == 1:
                seen[c] = size


# -- computing one -----------------------------------------------------------------------------
def _terms(equation: str) -> tuple[list[str], str]:
    """(each operand's subscripts, the output's) of a canonical equation."""
    inputs, out = equation.split("->")
    return inputs.split(","), out


def letter_sizes(subscripts: list[str], shapes) -> dict[str, int]:
    """Each letter's size, size-1 dims broadcast against the others."""
    sizes: dict[str, int] = {}
    for subs, shape in zip(subscripts, shapes, strict=True):
        for c, size in zip(subs, shape, strict=True):
            if sizes.get(c, 1) == 1:
                sizes[c] = size
    return sizes


def contract(equation: str, arrays) -> np.ndarray:
    """``np.einsum`` of a canonical equation, size-1 dims broadcast first (NumPy's
    einsum does not always broadcast them), always a new array (NumPy returns views of
    its input for a transpose or a diagonal)."""
    arrays = [np.asarray(a) for a in arrays]
    full, optimize = _layout(equation, tuple(a.shape for a in arrays))
    views = [a if a.shape == f else np.broadcast_to(a, f)
             for a, f in zip(arrays, full, strict=True)]
    out = np.asarray(np.einsum(equation, *views, optimize=optimize))
    return out.copy() if out.base is not None else out


@lru_cache(maxsize=1024)
def _layout(equation: str, shapes: tuple) -> tuple[tuple, bool]:
    """Each operand's shape with size-1 dims broadcast, and whether to let NumPy plan the
    contraction (BLAS for pairs that allow it, a good order for three or more operands):
    only when there are two operands or more and the work is large enough to pay for it."""
    subscripts, _ = _terms(equation)
    sizes = letter_sizes(subscripts, shapes)
    full = tuple(tuple(sizes[c] for c in subs) for subs in subscripts)
    return full, len(shapes) > 1 and math.prod(sizes.values()) >= OPTIMIZE_FROM


def gradient_plan(equation: str, i: int, shapes) -> tuple[str, tuple[tuple[str, int], ...]]:
    """The einsum that gives operand i's gradient: its equation, over g, the other
    operands in order, then the constants listed, each ``("eye", n)`` (a repeated letter
    tied to a new one) or ``("ones", n)`` (a letter only operand i has). The result has
    each letter's full size; the engine sums broadcast dims back to operand i's shape.

    >>> gradient_plan("ij,jk->ik", 0, [(2, 3), (3, 4)])
    ('ik,jk->ij', ())
    >>> gradient_plan("ii->", 0, [(3, 3)])
    (',iA->iA', (('eye', 3),))
    """
    return _plan(equation, i, tuple(tuple(s) for s in shapes))


@lru_cache(maxsize=1024)
def _plan(equation: str, i: int, shapes: tuple) -> tuple[str, tuple[tuple[str, int], ...]]:
    subscripts, out = _terms(equation)
    sizes = letter_sizes(subscripts, shapes)
    used = set(equation)
    fresh = [c for c in LETTERS if c not in used]
    target, extra, constants = "", [], []
    for c in subscripts[i]:
        if c in target:  # a diagonal: a new letter, equal to c through an identity
            if not fresh:
                raise errors.einsum_letters(len(used) + 1)
            new = fresh.pop(0)
            sizes[new] = sizes[c]
            target += new
            extra.append(c + new)
            constants.append(("eye", sizes[c]))
        else:
            target += c
    others = [s for k, s in enumerate(subscripts) if k != i]
    # What each letter's size is without operand i: only 1 where the others have it at
    # size 1 (broadcast), and missing where they do not have it at all.
    reached = letter_sizes(others, [shape for k, shape in enumerate(shapes) if k != i])
    reached.update({c: sizes[c] for c in out + "".join(extra)})
    for c in dict.fromkeys(target):
        if reached.get(c) != sizes[c]:
            # summed away inside operand i, or broadcast from size 1 by the others:
            # g is broadcast along it
            extra.append(c)
            constants.append(("ones", sizes[c]))
    return ",".join([out, *others, *extra]) + "->" + target, tuple(constants)


def constant_arrays(constants, dtype) -> list[np.ndarray]:
    """The identity matrices and vectors of ones a gradient plan names."""
    return [np.eye(n, dtype=dtype) if kind == "eye" else np.ones(n, dtype=dtype)
            for kind, n in constants]


def _contract_operands(equation: str, *arrays) -> np.ndarray:
    """:func:`contract` with the operands as arguments: the rules' ``einsum``."""
    return contract(equation, arrays)


# einsum's rule names einsum, its gradient plan and the plan's constants
# (ops/recorded_numpy.py names a recorded sweep's einsum: the op)
rule.PLAIN.einsum = _contract_operands
rule.PLAIN.gradient_plan = gradient_plan
rule.PLAIN.constant_arrays = constant_arrays


class Einsum(Function):
    """f(a_0, ..., a_n) = einsum(equation, a_0, ..., a_n)"""

    name = "einsum"
    rule = ("plan = gradient_plan(equation, i, shapes)  (out's subscripts and the others' "
            "-> a_i's: for 'ij,jk->ik', 'ik,jk->ij' for a_0; where only a_i has an index, g "
            "is broadcast along it (a vector of ones); where a_i repeats one, only the "
            "diagonal gets g (an identity))\n"
            "da_i = einsum(plan[0], g, *others, *constant_arrays(plan[1], g.dtype))")

    @staticmethod
    def forward(ctx, *operands, equation=""):
        needs = ctx.needs_input_grad
        wanted = [k for k in range(len(operands)) if needs[k]]
        for k, a in enumerate(operands):  # operand k: read by the other operands' gradients
            if any(j != k for j in wanted):
                ctx.save(**{f"a_{k}": a})
        return contract(equation, operands)

    @staticmethod
    def jvp(ctx, *tangents):
        """dout = the sum over i of einsum(equation, a_0, ..., ta_i, ..., a_n)"""
        equation = ctx.params["equation"]
        terms = []
        for i, t in enumerate(tangents):
            if t is not None:
                arrays = [t if k == i else ctx.load(f"a_{k}") for k in range(len(tangents))]
                terms.append(contract(equation, arrays))
        return tangent_sum(*terms)
