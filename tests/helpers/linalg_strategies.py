"""Inputs for the op table's rows of det, inv, slogdet, solve and trace: each strategy
draws ``(inputs, params)``, which op_table.py turns into an ``Example``.

det, inv, slogdet and solve are smooth wherever A is invertible, and blow up near a
singular A, where central differences (and the rules' A⁻¹) lose every digit. So their
matrices are kept well away from singular: X + (2n + 1)·I for an n by n X with entries
in [-2, 2] is diagonally dominant (each |diagonal| is at least 2n - 1, more than 2n - 2,
the largest sum the other |entries| of its row can have), and each row's sign is then
flipped at random, so that det takes both signs. Batches are 0 to 2 dims, sides 1 to 3.
"""

from __future__ import annotations

import numpy as np
from hypothesis import strategies as st
from strategies import MAX_SIDE, arrays, shapes


@st.composite
def invertible(draw, batch: tuple, side: int) -> np.ndarray:
    """A batch of well-conditioned ``side`` by ``side`` matrices (see the module)."""
    x = draw(arrays(batch + (side, side)))
    flips = np.where(draw(arrays(batch + (side, 1))) < 0, -1.0, 1.0)
    return flips * (x + (2 * side + 1) * np.eye(side))


@st.composite
def square_matrices(draw):
    """One input: invertible matrices (n, n) or (..., n, n)."""
    side, batch = draw(st.integers(1, MAX_SIDE)), draw(shapes(0, 2))
    return (draw(invertible(batch, side)),), {}


@st.composite
def solve_operands(draw):
    """A (..., n, n) and a right-hand side B in each of the forms solve reads: a vector
    (n,), a batch of vectors (A's batch, n), or matrices (n, k) with a batch that
    broadcasts against A's (either may have more dims, or a size 1)."""
    side, batch = draw(st.integers(1, MAX_SIDE)), draw(shapes(0, 2))
    a = draw(invertible(batch, side))
    form = draw(st.sampled_from(["vector", "vectors", "matrices"]))
    if form == "vector":
        b_shape = (side,)
    elif form == "vectors" and batch:
        b_shape = batch + (side,)
    else:
        b_batch = tuple(draw(st.sampled_from([1, s])) for s in batch)[
            draw(st.integers(0, len(batch))):]
        b_shape = b_batch + (side, draw(st.integers(1, MAX_SIDE)))
    return (a, draw(arrays(b_shape))), {}


@st.composite
def matrices(draw):
    """One input: a matrix (m, n), any sides from 1 to 3 (trace takes rectangular ones)."""
    return (draw(arrays((draw(st.integers(1, MAX_SIDE)), draw(st.integers(1, MAX_SIDE))))),), {}
