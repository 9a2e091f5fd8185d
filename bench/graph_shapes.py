"""Graphs of chosen shapes and sizes, for the widget benchmark and the render tests.

``mlp(layers)`` is a deep tanh MLP (eight graph nodes per layer: matmul, add, tanh,
their outputs, a weight and a bias); ``shared_weight(uses)`` uses one leaf all along
a long chain, as an unrolled loop does, the slowest shape for Graphviz to lay out
(every long edge is routed through every rank it crosses).
"""

from __future__ import annotations

import numpy as np

import autograd_core as ag


def mlp(layers: int, width: int = 32, batch: int = 16, seed: int = 0) -> ag.Tensor:
    """The summed output of a ``layers``-deep tanh MLP on a ``batch`` x ``width`` input."""
    rng = np.random.default_rng(seed)
    h = ag.tensor(rng.normal(size=(batch, width)), name="x")
    for i in range(layers):
        w = ag.tensor(rng.normal(size=(width, width)) * width ** -0.5, requires_grad=True,
                      name=f"W{i}")
        b = ag.tensor(np.zeros(width), requires_grad=True, name=f"b{i}")
        h = (h @ w + b).tanh()
    return h.sum()


def shared_weight(uses: int, size: int = 8) -> ag.Tensor:
    """One leaf ``x`` of ``size`` elements added back in ``uses`` times along a chain."""
    x = ag.tensor(np.linspace(-1, 1, size), requires_grad=True, name="x")
    h = x
    for i in range(2 * uses):
        h = (h * 0.5).tanh() if i % 2 else h + x
    return h.sum()
