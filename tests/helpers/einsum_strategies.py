"""Inputs for the op table's rows of einsum, amax/amin and the reductions over a tuple of
dims: each strategy draws ``(inputs, params)``, which op_table.py turns into an
``Example`` (inputs become leaves; params are the program's keyword arguments).

einsum is multilinear (linear in each operand), so any real values will do and central
differences are exact up to rounding; what is drawn with care are the equations and
shapes: one size per letter, some dims of size 1 where another operand has the full
size (PyTorch broadcasts them), ``...`` covering different numbers of dims per operand,
and whole equations drawn at random (1-3 operands, letters repeated within an operand,
implicit and explicit outputs). The reductions draw their dims as an int, a tuple or a
list, negative spellings included; an empty tuple means every dim, as in PyTorch.
"""

from __future__ import annotations

from hypothesis import strategies as st
from strategies import MAX_SIDE, arrays, shapes


def _letters(term: str) -> list[str]:
    return [c for c in term.replace("...", "") if c.isalpha()]


@st.composite
def einsum_operands(draw, equation: str, broadcast: bool = False):
    """Operands for ``equation``: a size per letter (1..3), a shape per ``...`` whose
    dims broadcast together (each operand may cover fewer of them), and with
    ``broadcast`` some dims set to 1 where a letter is not repeated in that operand."""
    terms = equation.split("->")[0].split(",")
    letters = sorted({c for t in terms for c in _letters(t)})
    size = {c: draw(st.integers(1, MAX_SIDE), label=f"size of {c}") for c in letters}
    batch = draw(shapes(0, 2), label="...") if any("..." in t for t in terms) else ()
    inputs = []
    for term in terms:
        named = _letters(term)
        dims = [size[c] for c in named]
        if broadcast:
            dims = [1 if named.count(c) == 1 and draw(st.booleans()) else n
                    for c, n in zip(named, dims, strict=True)]
        if "..." in term:
            covered = batch[len(batch) - draw(st.integers(0, len(batch))):]
            covered = tuple(1 if draw(st.booleans()) else n for n in covered)
            before = _letters(term.split("...")[0])
            dims = dims[:len(before)] + list(covered) + dims[len(before):]
        inputs.append(draw(arrays(tuple(dims))))
    return tuple(inputs), {"equation": equation}


@st.composite
def einsum_equations(draw):
    """A random equation over 1-3 operands of letters a-d (a letter may repeat within an
    operand: a diagonal), with an implicit output or an explicit one (some of the
    letters used, in any order), and operands to match."""
    pool = "abcdA"
    n = draw(st.integers(1, 3), label="operands")
    terms = ["".join(draw(st.lists(st.sampled_from(pool), max_size=3))) for _ in range(n)]
    used = sorted({c for t in terms for c in t})
    if draw(st.booleans(), label="implicit"):
        equation = ",".join(terms)
    else:
        kept = draw(st.permutations(used)) if used else []
        kept = kept[:draw(st.integers(0, len(kept)))]
        equation = ",".join(terms) + "->" + "".join(kept)
    return draw(einsum_operands(equation, broadcast=draw(st.booleans())))


@st.composite
def reduce_dims(draw, domain: str = "real", empty: bool = True, correction: bool = False):
    """An input (1-3 dims, or 0-d), the dims to reduce as an int, a tuple or a list of
    distinct dims (``empty``: ``()`` too, every dim) and keepdim; with ``correction``,
    a correction for var that leaves n - correction > 0."""
    shape = draw(shapes(0, 3))
    ndim = len(shape)
    n = max(ndim, 1)
    picked = draw(st.lists(st.integers(0, n - 1), min_size=0 if empty else 1,
                           max_size=n if ndim else 1, unique=True))
    signed = [draw(st.sampled_from([d, d - n])) for d in picked]
    dim = draw(st.sampled_from([tuple(signed), list(signed)] + ([signed[0]] if signed else [])))
    params = {"dim": dim, "keepdim": draw(st.booleans())}
    if correction:
        axes = {d % n for d in signed} if ndim else set()
        count = 1
        for i, side in enumerate(shape):
            count *= side if (i in axes or not signed) else 1
        params["correction"] = draw(st.sampled_from([0, 1] if count > 1 else [0]))
    return (draw(arrays(shape, domain)),), params
