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


def _is_int(d) -> bool:
    return isinstance(d, int | np.integer) and not isinstance(d, bool | np.bool_)


def normalize_axes(dim, ndim: int, op: str = "sum"):
    """``None`` (all axes) or a sorted tuple of non-negative axes, from an int, a tuple
    or list of ints, or ``None``. As in PyTorch, an empty tuple or list means all axes,
    a dim named twice (``(0, -2)`` of a 2-D input) is refused, and so is a dim that is
    not an int (PyTorch's TypeError, naming ``op``). A 0-D input has no axis to reduce;
    like PyTorch it accepts dim 0 or -1, reducing nothing: ``()``."""
    if dim is None:
        return None
    if _is_int(dim):
        dim = (dim,)
    elif not isinstance(dim, tuple | list) or not all(_is_int(d) for d in dim):
        raise errors.int_tuple_argument(op, "dim", 2, dim)
    if not dim:
        return None
    axes: list[int] = []
    for d in dim:
        axis = normalize_dim(int(d), ndim)
        if axis in axes:
            raise errors.repeated_dim(axis)
        axes.append(axis)
    return tuple(sorted(axes)) if ndim else ()


def keepdims_shape(shape: tuple, axes) -> tuple:
    """The shape a reduction over ``axes`` has with ``keepdims=True``."""
    if axes is None:
        return (1,) * len(shape)
    return tuple(1 if i in axes else s for i, s in enumerate(shape))


def constant(x) -> np.ndarray:
    """The values of ``x`` as an array, cut from any graph: what a backward uses as a
    constant (a sign, a mask, a comparison), whose derivative is 0 where it exists. On
    a NumPy array (``backward()``) it is the array itself; on a Tensor of a recorded
    backward (``create_graph=True``, see ``recorded_numpy``) its values."""
    return x if x.__class__ is np.ndarray else np.asarray(getattr(x, "_data", x))


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
