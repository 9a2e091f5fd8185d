"""Inputs for the op table's rows of cross_entropy and nll_loss with their options: each
strategy draws ``(inputs, params)``, which op_table.py turns into an ``Example``.

Scores are (N, C) or (N, C, d1, ...); targets are class indices, some of them replaced
by ``ignore_index`` (PyTorch's -100, or a class index itself, which then never counts),
but never all of them: 'mean' over no target is nan, a case of its own
(test_cross_entropy_options.py).
"""

from __future__ import annotations

import numpy as np
from hypothesis import strategies as st
from strategies import MAX_SIDE, arrays

SMOOTHINGS = (0.0, 0.1, 0.5, 1.0)


@st.composite
def class_targets(draw, smoothing: bool = True):
    """Scores (N, C, *spatial), int64 targets (N, *spatial) with some ignored, a
    reduction, an ignore_index and (with ``smoothing``) a label_smoothing."""
    n = draw(st.integers(1, MAX_SIDE + 1))
    classes = draw(st.integers(1, MAX_SIDE + 1))
    spatial = tuple(draw(st.lists(st.integers(1, MAX_SIDE), max_size=2)))
    ignore_index = draw(st.sampled_from([-100, 0, classes - 1]))
    shape = (n, *spatial)
    target = np.asarray(draw(st.lists(st.integers(0, classes - 1), min_size=int(np.prod(shape)),
                                      max_size=int(np.prod(shape)))), np.int64).reshape(shape)
    ignored = np.asarray(draw(st.lists(st.booleans(), min_size=target.size,
                                       max_size=target.size)), bool).reshape(shape)
    target = np.where(ignored, ignore_index, target)
    if (target == ignore_index).all():  # keep one target that counts
        if classes == 1 and ignore_index == 0:
            ignore_index = -100
        target.flat[0] = next(c for c in range(classes) if c != ignore_index)
    params = {"target": target, "reduction": draw(st.sampled_from(["mean", "sum", "none"])),
              "ignore_index": ignore_index}
    if smoothing:
        params["label_smoothing"] = draw(st.sampled_from(SMOOTHINGS))
    return (draw(arrays((n, classes, *spatial))),), params
