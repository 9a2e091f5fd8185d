"""Max pooling's gradient shows ``0``, never ``-0``, where a pixel was not a maximum.

Its backward builds each kernel offset's share as g·[argmax here], and g·0 is -0.0
where g < 0, which NumPy prints as ``-0.``: in lesson 06's pooling exercise that would
read as a sign the learner should explain. (PyTorch's max-pool gradient has no -0.0.)
"""

from __future__ import annotations

import numpy as np
import pytest

import autograd_core as ag
from autograd_core.nn import functional as F


def _negative_zeros(array: np.ndarray) -> int:
    return int(np.count_nonzero((array == 0) & np.signbit(array)))


@pytest.mark.parametrize("kernel, stride, padding", [
    (2, 2, 0),  # windows that tile the input: their shares are written
    (2, 3, 0),  # windows that skip pixels
    (3, 2, 1),  # overlapping, padded windows: their shares are added
    (3, 3, 1),
])
def test_max_pool_gradient_has_no_negative_zeros(kernel, stride, padding):
    x = ag.tensor(np.random.default_rng(0).standard_normal((2, 3, 7, 8)), requires_grad=True)
    out = F.max_pool2d(x, kernel, stride, padding)
    out.backward(-np.ones(out.shape))  # every share negative, so every other entry g·0
    assert (x.grad.numpy() < 0).any()
    assert _negative_zeros(x.grad.numpy()) == 0

