"""Small helpers shared by the op families: axis handling and broadcasting errors."""

from __future__ import annotations

import numpy as np

from .. import errors


def normalize_dim(dim: int, ndim: int) -> int:
    """A possibly negative dimension as a non-negative one, or a clear IndexError."""
    if not -max(ndim, 1) <= dim < max(ndim, 1):
        raise errors.dim_out_of_range(dim, ndim)
    return dim % max(ndim, 1)


def normalize_new_dim(dim: int, ndim: int) -> int:
    """Where an op that inserts an axis (unsqueeze, stack) puts it: one of the
    ``ndim + 1`` positions of the result, with a clear IndexError when out of range."""
    if not -ndim - 1 <= dim <= ndim:
        raise errors.new_dim_out_of_range(dim, ndim)
    return dim % (ndim + 1)


def normalize_axes(dim, ndim: int):
    """``None`` (all axes) or a sorted tuple of non-negative axes. A 0-D input has
    no axis to reduce; like PyTorch it accepts dim 0 or -1, reducing nothing: ``()``."""
    if dim is None:
        return None
    if isinstance(dim, int | np.integer):
        dim = (dim,)
    axes = tuple(sorted(normalize_dim(int(d), ndim) for d in dim))
    if len(set(axes)) != len(axes):
        raise errors.repeated_dim(tuple(dim))
    return axes if ndim else ()


def keepdims_shape(shape: tuple, axes) -> tuple:
    """The shape a reduction over ``axes`` has with ``keepdims=True``."""
    if axes is None:
        return (1,) * len(shape)
    return tuple(1 if i in axes else s for i, s in enumerate(shape))


def tangent_sum(*terms):
    """The sum of the forward-mode terms that exist (``None`` = an input with no
    tangent, e.g. a constant), or ``None`` when none does. Used by ``jvp`` rules:
    ``tangent_sum(ta * b if ta is not None else None, ...)``."""
    total = None
    for t in terms:
        if t is not None:
            total = t if total is None else total + t
    return total


def broadcasting(ufunc, name: str, a, b):
    """Apply a binary NumPy function, naming both shapes if they cannot broadcast."""
    try:
        return ufunc(a, b)
    except ValueError:
        raise errors.broadcast(name, np.shape(a), np.shape(b)) from None
    except TypeError:
        bad = a if not isinstance(a, np.ndarray | int | float | np.number) else b
        raise errors.not_a_tensor(name, bad) from None
