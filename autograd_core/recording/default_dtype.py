"""The one default floating dtype: what creation functions (``zeros``, ``ones``,
``randn``, ``rand``, ``arange`` of floats, ``tensor`` of Python floats) and layers'
parameters get when no ``dtype`` is given.

It is float64, so that gradient checks by finite differences are exact to about 1e-10
out of the box (the design's choice; PyTorch's default is float32).
``set_default_dtype(float32)`` gives PyTorch's default for a whole program, e.g. a
ported model file: every tensor and layer made afterwards is float32, so no model is
silently half float64.

>>> import autograd_core as ag
>>> ag.get_default_dtype() is ag.float64
True
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import numpy as np

from .. import errors

_FLOATS = (np.float16, np.float32, np.float64)
_default: type = np.float64


def set_default_dtype(dtype) -> None:
    """Make ``dtype`` (``float32``, ``float64`` or ``float16``) the default floating
    dtype of tensors and layers made from now on, as ``torch.set_default_dtype``.
    Anything else is refused with a TypeError, as PyTorch refuses it."""
    global _default
    try:
        kind = np.dtype(dtype).type
    except TypeError:
        raise errors.default_dtype(dtype) from None
    if kind not in _FLOATS:
        raise errors.default_dtype(dtype)
    _default = kind


def get_default_dtype() -> type:
    """The default floating dtype (``float64`` unless :func:`set_default_dtype` changed
    it)."""
    return _default


@contextmanager
def default_dtype_as(dtype) -> Iterator[None]:
    """Run a block with ``dtype`` as the default, and put the one before back after it
    (an exercise's check computes in float64 whatever default a learner set)."""
    before = _default
    set_default_dtype(dtype)
    try:
        yield
    finally:
        set_default_dtype(before)


def resolve(dtype) -> type:
    """``dtype`` itself, or the default floating dtype when it is ``None``."""
    return _default if dtype is None else dtype


def python_floats(data, array: np.ndarray) -> np.ndarray:
    """``array`` (made by NumPy from ``data``) in the default dtype when NumPy chose
    float64 only because ``data`` holds Python floats, as PyTorch's ``tensor([1.0])``
    takes the default dtype; NumPy arrays and NumPy scalars keep their own dtype."""
    if (_default is np.float64 or array.dtype != np.float64
            or isinstance(data, np.ndarray | np.generic)):
        return array
    return array.astype(_default)
