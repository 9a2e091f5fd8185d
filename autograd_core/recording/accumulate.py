"""The dtype a sum accumulates in: float16 values are added up in float32, as PyTorch's
CPU kernels do (their "accumulate type"), and the result is rounded back to float16 once.

float16 has 11 significant bits and a largest value of 65504. Added up in float16, a
running sum stops growing once it is 2048 times larger than what is added (4096 × 0.1
stops at 256, not 409.5), and a sum of squares overflows to inf from a few hundred values
of size 10 (a variance, a layer norm). Every op that adds many values up (a reduction,
a running sum, a normalisation's statistics, softmax's denominator) and the rules of
their backward go through :func:`widened` or :func:`accumulated`; other dtypes pass
through unchanged.

>>> import numpy as np
>>> float(accumulated(np.cumsum, np.full(4096, 0.1, np.float16))[-1])
409.5
"""

from __future__ import annotations

import numpy as np


def widened(a):
    """``a`` in the dtype to add it up in: float16 as float32, any other as it is (an
    array, or a Tensor of a recorded backward)."""
    return a.astype(np.float32) if getattr(a, "dtype", None) == np.float16 else a


def accumulated(reduce, a, *args, **kwargs):
    """``reduce(a, ...)`` (np.sum, np.cumsum, ...) added up in float32 when ``a`` is
    float16, and returned in float16; for any other dtype, ``reduce(a, ...)`` itself."""
    if getattr(a, "dtype", None) != np.float16:
        return reduce(a, *args, **kwargs)
    return np.asarray(reduce(a.astype(np.float32), *args, **kwargs)).astype(np.float16)


def accumulating(reduce):
    """``reduce`` as a function that accumulates float16 in float32 (see
    :func:`accumulated`), under the same name: what a rule's ``sum`` calls."""
    def reduced(a, *args, **kwargs):
        return accumulated(reduce, a, *args, **kwargs)
    reduced.__name__ = reduce.__name__
    reduced.__doc__ = reduce.__doc__
    return reduced
