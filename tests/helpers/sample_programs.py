"""Small programs that several test files draw, step and check."""

import numpy as np

import autograd_core as ag


def broadcast_mask_fanout(seed: int = 0):
    """y = sum(h * h + tanh(h) * 2),  h = relu(x @ w + b): a broadcast bias, a saved
    mask, fan-out of h and a literal — every kind of node. Returns y, x, w, b."""
    rng = np.random.default_rng(seed)
    x = ag.tensor(rng.normal(size=(4, 3)), requires_grad=True, name="x")
    w = ag.tensor(rng.normal(size=(3, 2)), requires_grad=True, name="w")
    b = ag.tensor(rng.normal(size=(2,)), requires_grad=True, name="b")
    h = (x @ w + b).relu().named("h")
    y = (h * h + h.tanh() * 2.0).sum()
    return y, x, w, b
