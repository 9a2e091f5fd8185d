"""Small helpers shared by the op families: axis handling and broadcasting errors."""

from __future__ import annotations

import numpy as np

from .. import errors
from ..recording import default_dtype


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


def promoted(a, b, divide: bool = False) -> tuple:
    """``a`` and ``b`` cast as PyTorch promotes them, where NumPy would pick another
    dtype: a 0-d float operand (a 0-d tensor or a NumPy scalar) of another float dtype
    does not change the dtype of a float tensor with dimensions, so ``float32 tensor *
    float64 0-d tensor`` is float32 (NumPy: float64); an integer tensor with a Python
    float, and (``divide``) an integer divided by an integer, give the default dtype
    (NumPy: float64). Everything else NumPy promotes as PyTorch does."""
    da, db = getattr(a, "dtype", None), getattr(b, "dtype", None)
    if da is not None and db is not None and da != db and da.kind == db.kind == "f":
        if np.ndim(b) == 0 and np.ndim(a) != 0:
            b = b.astype(da)
        elif np.ndim(a) == 0 and np.ndim(b) != 0:
            a = a.astype(db)
        return a, b
    default = default_dtype.get_default_dtype()
    if default is np.float64:  # NumPy's float64 is the default's dtype
        return a, b
    a_int = da.kind in "biu" if da is not None else isinstance(a, int)
    b_int = db.kind in "biu" if db is not None else isinstance(b, int)
    if divide and a_int and b_int:
        return np.asarray(a, dtype=default), np.asarray(b, dtype=default)
    if a_int and isinstance(b, float):
        return np.asarray(a, dtype=default), b
    if b_int and isinstance(a, float):
        return a, np.asarray(b, dtype=default)
    return a, b


def broadcasting(ufunc, name: str, a, b):
    """Apply a binary NumPy function, naming both shapes if they cannot broadcast;
    dtypes promote as PyTorch's do (:func:`promoted`)."""
    if getattr(a, "dtype", None) is not getattr(b, "dtype", None) or ufunc is np.true_divide:
        a, b = promoted(a, b, ufunc is np.true_divide)
    try:
        return ufunc(a, b)
    except ValueError:
        raise errors.broadcast(name, np.shape(a), np.shape(b)) from None
    except TypeError:
        bad = a if not isinstance(a, np.ndarray | int | float | np.number) else b
        raise errors.not_a_tensor(name, bad) from None
