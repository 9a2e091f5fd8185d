"""Saved bytes, defined once: each memory buffer counts once, for all its bytes.

A NumPy view (a slice, a transpose, a reshape) has no memory of its own: it reads
its base array's buffer and keeps that whole buffer alive. So what an array costs
is the buffer that owns its memory (``owner``), and a set of arrays costs the sum
of its *distinct* buffers: two views of one array, or one array saved by three
ops, count once. This is what memory really costs, and it is the one definition
behind every "saved bytes" number of the suite:

* ``graph.saved_bytes(output)`` and ``memory.activation_bytes`` (live arrays,
  through ``saved_buffer_bytes``);
* ``Graph.saved_bytes`` and the memory widget's timeline (captured data: each
  ``SavedInfo`` names its buffer and that buffer's size, see ``graph.held_bytes``).

A NumPy scalar (what an op on a 0-d array returns) is a buffer of its own.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

import numpy as np

from ..recording.tensor import Tensor

__all__ = ["owner", "buffer_bytes", "saved_arrays", "saved_buffer_bytes"]


def owner(a: np.ndarray | Tensor) -> np.ndarray:
    """The array that owns the memory of ``a`` (an array, or a tensor's data): a view
    keeps its base alive.

    >>> a = np.zeros(10)
    >>> owner(a[2:].reshape(2, 4)) is a
    True
    """
    a = _array(a)
    while isinstance(a.base, np.ndarray):
        a = a.base
    return a


def buffer_bytes(arrays: Iterable, exclude: Iterable = ()) -> int:
    """Bytes of the distinct memory buffers behind ``arrays`` (arrays, NumPy scalars
    or tensors; anything else holds no buffer), skipping those behind ``exclude``.

    >>> a = np.zeros(100)
    >>> buffer_bytes([a, a[:10], a.reshape(10, 10)])   # one buffer, counted once
    800
    """
    skip = {id(owner(a)) for a in map(_array, exclude) if _has_buffer(a)}
    owners = {id(o): o.nbytes for o in map(owner, filter(_has_buffer, map(_array, arrays)))}
    return sum(n for key, n in owners.items() if key not in skip)


def saved_arrays(nodes) -> Iterator[np.ndarray]:
    """Every array the given nodes still hold for their backward (NumPy scalars left
    out: they cannot be watched with a weak reference)."""
    for node in nodes:
        for saved in node.saved.values():
            if isinstance(saved.array, np.ndarray):
                yield saved.array


def saved_buffer_bytes(nodes, exclude: Iterable = ()) -> int:
    """Bytes the given nodes hold for their backward: the distinct buffers of their
    saved arrays (released ones hold nothing), skipping those behind ``exclude``."""
    return buffer_bytes((s.array for node in nodes for s in node.saved.values()), exclude)


def _array(x):
    return x._data if isinstance(x, Tensor) else x


def _has_buffer(a) -> bool:
    return isinstance(a, np.ndarray | np.generic)
