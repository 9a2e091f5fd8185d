"""Indexing: ``a[key]`` with ints, slices, None, Ellipsis, boolean masks and
integer arrays.

Forward gathers; backward scatters the gradient back into a zero array of the
input's shape. With integer-array indices the same element can be picked more
than once, so the scatter *adds* (``np.add.at``): repeated indices accumulate.
"""

from __future__ import annotations

import numpy as np

from ..recording import rule
from ..recording.node import Function
from ._util import constant


def is_advanced(key) -> bool:
    """Whether a key uses integer-array or boolean-mask (NumPy "advanced") indexing."""
    parts = key if isinstance(key, tuple) else (key,)
    return any(isinstance(p, np.ndarray | list) for p in parts)


def _is_int(part) -> bool:
    return isinstance(part, int | np.integer) and not isinstance(part, bool | np.bool_)


def _dims_consumed(part) -> int:
    """How many input dims one part of a key indexes (a mask: as many as it has)."""
    if part is None or isinstance(part, bool | np.bool_):
        return 0
    if isinstance(part, np.ndarray) and part.dtype == bool:
        return part.ndim
    return 1


def torch_order(key, ndim: int):
    """PyTorch's rule for a key that mixes ints with index arrays, as two NumPy keys.

    NumPy counts an int as an index array, so in ``x[1, :, idx]`` the two are not
    adjacent and the indexed dims go first: shape ``(len(idx), ...)``. PyTorch first
    selects with the ints (basic indexing), then indexes with the arrays, which are
    then adjacent: the indexed dims stay in place, ``(x.shape[1], len(idx), ...)``.
    Returns ``(select, rest)`` with ``a[key]`` (PyTorch) == ``a[select][rest]``, where
    ``a[select]`` is a view; or None when the key has no such mix (NumPy agrees).
    """
    if not (isinstance(key, tuple) and any(_is_int(p) for p in key) and is_advanced(key)):
        return None
    named = sum(_dims_consumed(p) for p in key if p is not Ellipsis)
    select = []
    for part in key:
        if _is_int(part):
            select.append(part)
        elif part is Ellipsis:
            select.extend([slice(None)] * (ndim - named))
        else:
            select.extend([slice(None)] * _dims_consumed(part))
    return tuple(select), tuple(p for p in key if not _is_int(p))


def _take(a, key):
    """a[key] by PyTorch's rule (see ``torch_order``)."""
    split = torch_order(key, np.ndim(a))
    return a[key] if split is None else a[split[0]][split[1]]


def _scatter(values, key, shape: tuple) -> np.ndarray:
    """Zeros of ``shape`` with ``values`` added at ``key`` (by PyTorch's order; an index
    picked twice adds twice): the backward of picking entries (getitem, embedding)."""
    out = np.zeros(shape, dtype=values.dtype)
    if is_advanced(key):
        split = torch_order(key, out.ndim)
        target, at = (out, key) if split is None else (out[split[0]], split[1])
        np.add.at(target, at, values)  # target is out or a view of it
    else:
        out[key] = values
    return out


# a rule picks entries, and scatters them back, by name (ops/recorded_numpy.py names the
# recorded sweep's: the getitem op and its backward op)
rule.PLAIN.pick = _take
rule.PLAIN.scatter = _scatter


def _index_arrays(key) -> dict:
    """The index arrays of an advanced key, named ``index_0``, ``index_1``, ..."""
    parts = key if isinstance(key, tuple) else (key,)
    arrays = [p for p in parts if isinstance(p, np.ndarray)]
    return {f"index_{i}": p for i, p in enumerate(arrays)}


def _saved_key(ctx, key):
    """The key with its index arrays read back from what the forward saved (after a
    backward without retain_graph they are released: a second one raises, as in
    PyTorch, whose index backward saves its indices too)."""
    loaded = iter([constant(ctx.load(name)) for name in _index_arrays(key)])
    if not isinstance(key, tuple):
        return next(loaded)
    return tuple(next(loaded) if isinstance(p, np.ndarray) else p for p in key)


def _key(node):
    """getitem's key, its index arrays read back from what the forward saved (after a
    backward without retain_graph they are released: a second one raises, as in
    PyTorch, whose index backward saves its indices too)."""
    key = node.params["key"]
    return _saved_key(node, key) if is_advanced(key) else key


class GetItem(Function):
    """f(a) = a[key]; an int beside index arrays selects first, as in PyTorch."""

    name = "getitem"
    rule = ("da = scatter(g, key, a.shape)  (zeros of a's shape, g added at key: an index "
            "picked twice adds twice)")
    stand_ins = {"key": _key}

    @staticmethod
    def forward(ctx, a, key=None):
        if is_advanced(key):
            ctx.save(**_index_arrays(key))
            return _take(a, key)
        return a[key]

    @staticmethod
    def jvp(ctx, ta):
        """dout = ta[key]"""
        return _take(ta, ctx.params["key"])


class Narrow(GetItem):
    """f(a) = one piece of ``split``: a[key], key = (:, ..., start:start+length) along
    dim. A getitem named for what the learner wrote; a slice picks no element twice."""

    name = "split"


class IndexBackward(Function):
    """getitem's backward as an op: zeros in the input's shape with ``values`` added at
    ``key`` (repeated indices add up). A backward recorded under ``create_graph`` runs it
    (see :func:`scatter`); its own backward picks the entries at ``key`` again."""

    name = "getitem_backward"
    rule = "dvalues = pick(g, key)  (g[key], an int beside index arrays first, as in PyTorch)"

    @staticmethod
    def forward(ctx, values, key=None, shape=()):
        return _scatter(values, key, shape)

    @staticmethod
    def jvp(ctx, tvalues):
        """dout = tvalues scattered the same way (the op is linear in its values)"""
        return _scatter(tvalues, ctx.params["key"], ctx.params["shape"])
