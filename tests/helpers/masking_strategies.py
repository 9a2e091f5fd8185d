"""Inputs for the op table's rows of masked_fill, tril/triu, cumsum, flip, pad, gather and
scatter_add: each strategy draws ``(inputs, params)``, which op_table.py turns into an
``Example`` (inputs become leaves; params are the program's keyword arguments).

Every one of these ops is linear in the values that get a gradient, so any real values
will do; what is drawn with care are the shapes and the integer arguments: masks that
broadcast either way, diagonals past the matrix, pads that crop (never more than a dim
holds), indices that repeat (so that scatter_add and gather's backward must add, not
overwrite) and index shapes smaller than the input outside ``dim``.
"""

from __future__ import annotations

import numpy as np
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp
from strategies import MAX_SIDE, arrays, broadcastable_shapes, dims, shapes


@st.composite
def masked(draw, value_tensor: bool = False):
    """An input and a bool mask whose shapes broadcast together (the mask may have more
    dims than the input: the output then has the broadcast shape); with
    ``value_tensor``, a 0-d leaf for the value too."""
    shape, mask_shape = draw(broadcastable_shapes(2))
    inputs = (draw(arrays(shape)),)
    if value_tensor:
        inputs += (draw(arrays(())),)
    return inputs, {"mask": draw(hnp.arrays(np.bool_, mask_shape))}


@st.composite
def causal_scores(draw):
    """Attention scores (..., T, T) and the causal mask of a GPT: True above the
    diagonal (the future), so that no row is masked entirely."""
    side = draw(st.integers(1, MAX_SIDE))
    batch = draw(shapes(0, 2))
    mask = np.triu(np.ones((side, side), dtype=bool), 1)
    return (draw(arrays(batch + (side, side))),), {"mask": mask}


@st.composite
def triangles(draw):
    """A (batched) matrix and a diagonal, sometimes past the matrix's corner."""
    shape = draw(shapes(min_dims=2))
    return (draw(arrays(shape)),), {"diagonal": draw(st.integers(-MAX_SIDE - 1, MAX_SIDE + 1))}


@st.composite
def flips(draw, min_size: int = 0):
    """An input and distinct dims to reverse (some negative). A 0-d input gets no dims:
    torch.func's vmap fails on flipping a 0-d tensor over dim 0 (plain PyTorch does not;
    test_masking_ops.py checks that case)."""
    shape = draw(shapes(min_dims=min_size))
    n = len(shape)
    picked = draw(st.lists(st.integers(0, n - 1), min_size=min_size, max_size=n, unique=True)
                  ) if n else []
    signed = [draw(st.sampled_from([d, d - n])) for d in picked]
    return (draw(arrays(shape)),), {"dims": signed}


@st.composite
def pads(draw):
    """An input and a pad tuple (last dim first) for some of its last dims, with negative
    pads that crop (together never more than the dim holds) and a fill value."""
    shape = draw(shapes(min_dims=1))
    pairs = draw(st.integers(0, len(shape)))
    pad = []
    for i in range(pairs):
        side = shape[len(shape) - 1 - i]
        before = draw(st.integers(-side, 2))
        after = draw(st.integers(-(side + min(before, 0)), 2))
        pad += [before, after]
    value = draw(st.sampled_from([0.0, -1.5, 2.0]))
    return (draw(arrays(shape)),), {"pad": tuple(pad), "value": value}


@st.composite
def gathers(draw, scatter: bool = False):
    """An input, a dim and an int64 index with as many dims (a 0-d input or index counts
    as 1-D), no larger than the input outside dim, with values that repeat; for
    scatter_add, also a src leaf of the index's shape."""
    shape = draw(shapes())
    ndim = max(len(shape), 1)
    dim = draw(dims(len(shape)))
    axis = dim % ndim
    sizes = shape or (1,)
    index_shape = tuple(draw(st.integers(1, MAX_SIDE + 1)) if k == axis
                        else draw(st.integers(1, sizes[k])) for k in range(ndim))
    if not shape and index_shape == (1,) and draw(st.booleans()):
        index_shape = ()  # a 0-d index into a 0-d input
    index = draw(hnp.arrays(np.int64, index_shape,
                            elements=st.integers(0, sizes[axis] - 1)))
    inputs = (draw(arrays(shape)),)
    if scatter:
        inputs += (draw(arrays(index_shape)),)
    return inputs, {"dim": dim, "index": index}
