"""A NumPy array used as an operand is read as it was when the op ran.

A NumPy array has no version counter the engine could check, so the engine keeps its
own copy of such an operand while recording: changing the caller's array between the
forward and the backward pass must not change the gradient (PyTorch copies NumPy
data into a tensor too).
"""

from __future__ import annotations

import numpy as np
import pytest

import autograd_core as ag

CHANGES = {
    "assign an element": lambda w: w.__setitem__(0, 100.0),
    "scale in place": lambda w: w.__imul__(3.0),
    "fill": lambda w: w.fill(-1.0),
}


@pytest.mark.parametrize("change", CHANGES.values(), ids=CHANGES.keys())
@pytest.mark.parametrize("numpy_on_the_left", [False, True])
def test_changing_a_numpy_operand_after_forward_does_not_change_the_gradient(
        change, numpy_on_the_left):
    w = np.array([1.0, 2.0, 3.0])
    seen = w.copy()
    x = ag.tensor([1.0, 1.0, 1.0], requires_grad=True)
    loss = ((w * x) if numpy_on_the_left else (x * w)).sum()
    change(w)
    loss.backward()
    np.testing.assert_array_equal(x.grad.numpy(), seen)


def test_a_numpy_operand_through_matmul_is_read_as_it_was():
    w = np.arange(6.0).reshape(2, 3)
    seen = w.copy()
    x = ag.tensor(np.ones((3, 2)), requires_grad=True)
    loss = ag.matmul(ag.tensor(w), x).sum() + (x.T * w).sum()
    w[:] = 0.0
    loss.backward()
    expected = seen.sum(axis=0)[:, None] * np.ones((3, 2)) + seen.T
    np.testing.assert_allclose(x.grad.numpy(), expected)


def test_the_caller_keeps_their_array():
    w = np.array([1.0, 2.0])
    x = ag.tensor([3.0, 4.0], requires_grad=True)
    y = x * w
    w[0] = 5.0  # the caller's array is theirs to change
    assert w[0] == 5.0 and y.numpy()[0] == 3.0
