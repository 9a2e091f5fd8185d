"""Hypothesis strategies for the op property tests: shapes, axes, values and layouts.

Values are drawn *inside* each op's valid domain and *off* its kinks on purpose,
so that central finite differences are a trustworthy reference everywhere:

* ``"real"``: any value in [-2, 2] (smooth ops: exp, tanh, softmax, +, *, ...);
* ``"positive"``: [0.5, 2] (log, sqrt, the base of ``**``);
* ``"nonzero"``: |x| >= 0.25 (abs and relu, whose kink is at 0; divisors);
* ``"off_clip"``: at least 0.1 away from :data:`CLIP_BOUNDS` (clip);
* ``"distinct"``: every value different, 0.01 apart at least (max, min, maximum,
  minimum: no ties, so each output has exactly one winner).

Layouts make the same values sit in memory in different ways (a transposed view,
every other element of a bigger array) so that ops see non-contiguous inputs.

>>> from hypothesis import given
>>> @given(arrays((2, 3), "positive"))          # doctest: +SKIP
... def test_log(x): ...
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

MAX_DIMS = 4
MAX_SIDE = 3
CLIP_BOUNDS = (-1.0, 1.0)
KINK_GAP = 0.1  # distance kept from clip bounds; |x| >= 0.25 for the kink at 0

# Property tests are seeded (derandomize) so CI sees the same examples on every run.
PROPERTY_SETTINGS = settings(deadline=None, max_examples=25, derandomize=True,
                             database=None)


def _floats(low: float, high: float) -> st.SearchStrategy[float]:
    return st.floats(low, high, allow_nan=False, allow_infinity=False, allow_subnormal=False)


DOMAINS: dict[str, st.SearchStrategy[float]] = {
    "real": _floats(-2.0, 2.0),
    "positive": _floats(0.5, 2.0),
    "nonzero": _floats(-2.0, -0.25) | _floats(0.25, 2.0),
    "off_clip": (_floats(-2.0, CLIP_BOUNDS[0] - KINK_GAP)
                 | _floats(CLIP_BOUNDS[0] + KINK_GAP, CLIP_BOUNDS[1] - KINK_GAP)
                 | _floats(CLIP_BOUNDS[1] + KINK_GAP, 2.0)),
}
_DISTINCT = st.integers(-300, 300).map(lambda k: k / 100)  # values on a 0.01 grid


def shapes(min_dims: int = 0, max_dims: int = MAX_DIMS, min_side: int = 1,
           max_side: int = MAX_SIDE) -> st.SearchStrategy[tuple]:
    """Shapes from 0-D up to 4-D; size-1 axes come up often (sides 1..3).

    >>> shapes(min_dims=2).example()              # doctest: +SKIP
    (3, 1, 2)
    """
    return hnp.array_shapes(min_dims=min_dims, max_dims=max_dims, min_side=min_side,
                            max_side=max_side)


def broadcastable_shapes(num_shapes: int = 2, min_dims: int = 0,
                         max_dims: int = MAX_DIMS) -> st.SearchStrategy[tuple]:
    """``num_shapes`` shapes that broadcast together, e.g. ((3, 1), (2, 1, 4))."""
    return hnp.mutually_broadcastable_shapes(
        num_shapes=num_shapes, min_dims=min_dims, max_dims=max_dims, max_side=MAX_SIDE,
    ).map(lambda shapes: shapes.input_shapes)


def dims(ndim: int) -> st.SearchStrategy[int]:
    """One dimension of an ``ndim``-D array, negative spellings included (0-D: 0 or -1)."""
    n = max(ndim, 1)
    return st.integers(-n, n - 1)


def axes(ndim: int) -> st.SearchStrategy:
    """What a reduction takes: ``None`` (all axes), one int, or a tuple of distinct ints."""
    if ndim == 0:
        return st.sampled_from([None, 0, -1])
    several = st.lists(st.integers(0, ndim - 1), min_size=1, max_size=ndim, unique=True)
    signed = several.flatmap(lambda ds: st.tuples(*(st.sampled_from([d, d - ndim])
                                                      for d in ds)))
    return st.none() | dims(ndim) | signed


def arrays(shape: tuple, domain: str = "real") -> st.SearchStrategy[np.ndarray]:
    """float64 arrays of ``shape`` with values from one of the :data:`DOMAINS`
    (or ``"distinct"``: no two values equal)."""
    if domain == "distinct":
        return hnp.arrays(np.float64, shape, elements=_DISTINCT, unique=True)
    # fill=nothing(): draw every element (by default most would share one fill value)
    return hnp.arrays(np.float64, shape, elements=DOMAINS[domain], fill=st.nothing())


@st.composite
def distinct_arrays(draw, *array_shapes: tuple) -> tuple:
    """Arrays of the given shapes whose values are all different, across all of them
    too, so that ``maximum(a, b)`` never meets a tie even after broadcasting."""
    sizes = [int(np.prod(s)) for s in array_shapes]
    pool = draw(hnp.arrays(np.float64, sum(sizes), elements=_DISTINCT, unique=True))
    parts = np.split(pool, np.cumsum(sizes)[:-1])
    return tuple(p.reshape(s) for p, s in zip(parts, array_shapes, strict=True))


@dataclass(frozen=True)
class Layout:
    """How an array's values sit in memory.

    * ``"contiguous"``: a plain C-ordered array;
    * ``"transposed"``: the ``.T`` view of a C-ordered array of the reversed shape;
    * ``"strided"``: every other element (offset by one) of a bigger array.

    ``storage(values)`` is the array that owns the memory and ``view(storage)`` the
    view that holds ``values``; ``view`` works on NumPy arrays and engine tensors alike.

    >>> Layout("strided").apply(np.ones((2, 3))).flags.c_contiguous
    False
    """

    kind: str

    def storage(self, values: np.ndarray) -> np.ndarray:
        if self.kind == "transposed" and values.ndim >= 2:
            return np.ascontiguousarray(values.T)
        if self.kind == "strided" and values.ndim >= 1:
            big = np.zeros(tuple(2 * s + 1 for s in values.shape), dtype=values.dtype)
            big[self._every_other(values.ndim)] = values
            return big
        return np.array(values)

    def view(self, storage):
        if self.kind == "transposed" and storage.ndim >= 2:
            return storage.T
        if self.kind == "strided" and storage.ndim >= 1:
            return storage[self._every_other(storage.ndim)]
        return storage

    def apply(self, values: np.ndarray) -> np.ndarray:
        """``values`` laid out this way (the same numbers, other strides)."""
        return self.view(self.storage(values))

    @staticmethod
    def _every_other(ndim: int) -> tuple:
        return (slice(1, None, 2),) * ndim


def layouts() -> st.SearchStrategy[Layout]:
    """Contiguous, transposed or strided storage (see :class:`Layout`)."""
    return st.sampled_from([Layout("contiguous"), Layout("transposed"), Layout("strided")])


def upstream_gradients(shape: tuple) -> st.SearchStrategy[np.ndarray]:
    """A non-uniform upstream gradient ``v`` for ``y.backward(gradient=v)``: a gradient
    of all ones would hide rules that mix up elements (a missing transpose, a wrong
    axis), so each element gets its own weight."""
    return st.integers(0, 2**32 - 1).map(
        lambda seed: np.random.default_rng(seed).uniform(-2.0, 2.0, size=shape))


# -- shapes for particular ops ---------------------------------------------------------
@st.composite
def matmul_shapes(draw) -> tuple:
    """Operand shapes for ``a @ b``: each side 1-D, 2-D or batched, with batch dims
    that broadcast against each other, e.g. ((2, 1, 3, 4), (5, 4, 2)) or ((4,), (4,))."""
    m, n, k = draw(st.tuples(*[st.integers(1, MAX_SIDE)] * 3))
    batch_a, batch_b = draw(broadcastable_shapes(2, max_dims=2))
    a = (n,) if draw(st.booleans()) else batch_a + (m, n)
    b = (n,) if draw(st.booleans()) else batch_b + (n, k)
    return a, b


@st.composite
def reshape_targets(draw, shape: tuple) -> tuple:
    """A shape with as many elements as ``shape`` (sometimes spelled with -1)."""
    size = int(np.prod(shape))
    options = [(size,), (-1,), shape[::-1], (1,) + shape, shape + (1,)]
    options += [(size // d, d) for d in range(1, size + 1) if size % d == 0]
    options += [(-1, d) for d in range(1, size + 1) if size % d == 0]
    if size == 1:
        options.append(())
    return draw(st.sampled_from(options))


@st.composite
def expand_targets(draw, shape: tuple) -> tuple:
    """A shape ``shape`` broadcasts to: size-1 axes grow, new leading axes appear,
    and kept sizes are sometimes spelled -1 (as ``Tensor.expand`` allows)."""
    lead = draw(st.lists(st.integers(1, MAX_SIDE), max_size=2))
    body = [draw(st.integers(1, MAX_SIDE)) if s == 1 else draw(st.sampled_from([s, -1]))
            for s in shape]
    return tuple(lead) + tuple(body)


def _forward_steps_only(key):
    """PyTorch has no negative slice steps: turn ``a:b:-s`` into ``::s``."""
    parts = key if isinstance(key, tuple) else (key,)
    return tuple(slice(None, None, -p.step) if isinstance(p, slice) and p.step and p.step < 0
                 else p for p in parts)


def basic_index_keys(shape: tuple, negative_steps: bool = False) -> st.SearchStrategy:
    """Keys of ints, slices, None and Ellipsis (NumPy's "basic" indexing)."""
    keys = hnp.basic_indices(shape, allow_newaxis=True, allow_ellipsis=True)
    return keys if negative_steps else keys.map(_forward_steps_only)


@st.composite
def mask_keys(draw, shape: tuple) -> np.ndarray:
    """A boolean mask over the first one or more axes of ``shape``."""
    k = draw(st.integers(1, len(shape)))
    return draw(hnp.arrays(np.bool_, shape[:k]))


@st.composite
def integer_array_keys(draw, shape: tuple):
    """Integer-array keys that repeat indices often (so the backward must add, not
    overwrite): ``idx``, ``(idx0, idx1)``, or ``(slice(None), idx)``."""

    def idx(side, index_shape):
        return hnp.arrays(np.int64, index_shape, elements=st.integers(-side, side - 1))

    index_shape = draw(hnp.array_shapes(min_dims=1, max_dims=2, max_side=4))
    kinds = ["one"] + (["two", "after_slice"] if len(shape) >= 2 else [])
    kind = draw(st.sampled_from(kinds))
    if kind == "one":
        return draw(idx(shape[0], index_shape))
    if kind == "two":
        return draw(idx(shape[0], index_shape)), draw(idx(shape[1], index_shape))
    return slice(None), draw(idx(shape[1], index_shape))
