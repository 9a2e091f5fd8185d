"""Gather and scatter_add: reading and adding along one dim, at positions an index gives.

For dim = 1 (any dim the same way), with ``index`` as many dims as the input::

    gather(a, 1, index)[i, j]  = a[i, index[i, j]]
    scatter_add(a, 1, index, src): out = copy of a;  out[i, index[i, j]] += src[i, j]

The output of gather has the index's shape; outside ``dim`` the index may be smaller
than the input (and, for scatter_add, than src), never larger. Both ops are linear,
and each is the other's adjoint: <gather(x, index), y> = <x, scatter_add(0, index, y)>.
So gather's backward is a scatter_add of g into zeros (repeated indices add up), and
scatter_add's backward hands the input g unchanged and src ``gather(g, index)``. Each
saves only the index.

NumPy has no add-along-axis, so both go through one key, :func:`along`: the index on
``dim`` and an ``arange`` on every other axis, which ``a[key]`` reads and
``np.add.at(out, key, values)`` adds into (as GetItem's backward does for integer-array
keys in ops/indexing.py). A 0-d input or index counts as 1-D with one element, as in
PyTorch.
"""

from __future__ import annotations

import numpy as np

from .. import errors
from ..recording import rule
from ..recording.node import Function
from ..recording.tensor import Tensor
from ._util import normalize_dim, tangent_sum
from .masking import check_int, padded


def _lift(x: np.ndarray) -> np.ndarray:
    """A 0-d array as 1-D with one element (a view: writing into it writes into x)."""
    return x.reshape(1) if x.ndim == 0 else x


def along(index: np.ndarray, dim: int) -> tuple:
    """The NumPy key of the positions gather reads: ``index`` on ``dim``, and on every
    other axis the position itself, so key[k][pos] = pos[k] for k != dim."""
    index = _lift(index)
    ndim = index.ndim
    return tuple(index if k == dim else
                 np.arange(n).reshape((n,) + (1,) * (ndim - 1 - k))
                 for k, n in enumerate(index.shape))


def gathered(a, dim: int, index: np.ndarray) -> np.ndarray:
    """What gather returns: ``a`` read along ``dim`` at ``index`` (index's shape)."""
    return _lift(np.asarray(a))[along(index, dim)].reshape(index.shape)


def scatter_added(out: np.ndarray, dim: int, index: np.ndarray, src) -> None:
    """Add ``src`` (its leading block of the index's shape) into ``out`` along ``dim`` at
    ``index``, in place; repeated indices add up."""
    if index.size == 0:  # nothing to add (the index may even be wider than src then)
        return
    block = _lift(np.asarray(src))[tuple(slice(0, n) for n in _lift(index).shape)]
    np.add.at(_lift(out), along(index, dim), block)


def _scatter_added_copy(a, dim: int, index: np.ndarray, src) -> np.ndarray:
    """A copy of ``a`` with ``src`` added along ``dim`` at ``index``: the rules'
    ``scatter_add``."""
    out = np.array(a, copy=True)
    scatter_added(out, dim, index, src)
    return out


def padded_to(values, shape: tuple, pad=None):
    """``values`` as the leading block of zeros of ``shape`` (src can be larger than the
    index: its entries that were never read get 0): the rules' ``padded_to``. ``pad(x,
    pads)`` pads with zeros (default: on arrays; the pad op on a recorded sweep's)."""
    if values.shape == shape:
        return values
    if not shape:  # a 0-d src read through a one-element index
        return values.reshape(())
    missing = [s - n for s, n in zip(shape, values.shape, strict=True)]
    pads = tuple(p for m in reversed(missing) for p in (0, m))  # last dim first
    return padded(values, pads, 0.0) if pad is None else pad(values, pads)


# the rules read and add along a dim by name (ops/recorded_numpy.py names the recorded
# sweep's: these ops, and pad)
rule.PLAIN.gather = gathered
rule.PLAIN.scatter_add = _scatter_added_copy
rule.PLAIN.padded_to = padded_to


class Gather(Function):
    """f(a, index) = a read along dim at index: out[i, j] = a[i, index[i, j]] (dim 1)"""

    name = "gather"
    rule = ("da = scatter_add(zeros(a.shape, g.dtype), dim, index, g)  (g goes back where "
            "it was read; repeated indices add up)")

    @staticmethod
    def forward(ctx, a, index, dim=0):
        ctx.save(index=index)
        return gathered(a, dim, index)

    @staticmethod
    def jvp(ctx, ta, tindex):
        """dout = gather(ta, dim, index)"""
        return gathered(ta, ctx.params["dim"], ctx.load("index"))


class ScatterAdd(Function):
    """f(a, index, src) = a with src added along dim at index:
    out[i, index[i, j]] += src[i, j] (dim 1)"""

    name = "scatter_add"
    rule = ("da = g\n"
            "dsrc = padded_to(gather(g, dim, index), src.shape)  (src read where the index "
            "reaches it, 0 where it does not)")

    @staticmethod
    def forward(ctx, a, index, src, dim=0):
        if ctx.needs_input_grad[2]:
            ctx.save(index=index)
        return _scatter_added_copy(a, dim, index, src)


    @staticmethod
    def jvp(ctx, ta, tindex, tsrc):
        """dout = ta + scatter_add(zeros, dim, index, tsrc)"""
        spread = None
        if tsrc is not None:
            spread = np.zeros(ctx.output_shape, dtype=ctx.output_dtype)
            scatter_added(spread, ctx.params["dim"], ctx.load("index"), tsrc)
        return tangent_sum(ta, spread)


# -- the public functions' arguments ------------------------------------------------------
def _array(op: str, name: str, x) -> np.ndarray:
    if isinstance(x, Tensor):
        return x._data
    if isinstance(x, np.ndarray):
        return x
    raise errors.not_a_tensor_argument(op, name, x)


def check_gather(op: str, a: Tensor, dim, index, src=None) -> int:
    """Check gather's (``src`` None) or scatter_add's arguments in PyTorch's order, with
    its errors: dim, index dtype, src dtype, numbers of dims, sizes, index bounds.
    Returns dim as a non-negative axis."""
    dim = check_int(op, "dim", 2, dim)
    index = _array(op, "index", index)
    src = None if src is None else _array(op, "src", src)
    shape = a.shape
    dim = normalize_dim(dim, len(shape))
    if index.dtype not in (np.int32, np.int64):
        raise errors.index_dtype(op, index.dtype)
    if src is not None and src.dtype != a.dtype:
        raise errors.src_dtype(a.dtype, src.dtype)
    ndim = max(len(shape), 1)  # 0-d counts as 1-D, as in PyTorch
    if max(index.ndim, 1) != ndim:
        raise errors.index_rank(op, "input" if src is None else "self", index.shape, shape)
    if src is not None and max(src.ndim, 1) != ndim:
        raise errors.index_rank(op, "src", index.shape, src.shape)
    if index.size == 0:
        return dim  # nothing is read or written: no size or bounds to check
    sizes, limits = _lift(index).shape, shape or (1,)
    for d in range(ndim):
        if d != dim and sizes[d] > limits[d]:
            if src is None:
                raise errors.gather_index_size(d, index.shape, shape, dim)
            raise errors.scatter_index_size(index.shape, shape, src.shape, dim)
    if src is not None and any(n > s for n, s in zip(sizes, src.shape or (1,))):
        raise errors.scatter_index_size(index.shape, shape, src.shape, dim)
    outside = (index < 0) | (index >= limits[dim])
    if outside.any():
        raise errors.index_out_of_bounds(int(index[outside].flat[0]), dim, limits[dim])
    return dim
