"""Graphs of chosen shapes and sizes, for the widget benchmark and the render tests.

``mlp(layers)`` is a deep tanh MLP (eight graph nodes per layer: matmul, add, tanh,
their outputs, a weight and a bias); ``shared_weight(uses)`` uses one leaf all along
a long chain, as an unrolled loop does, the slowest shape for Graphviz to lay out
(every long edge is routed through every rank it crosses).

``SHAPES`` are the three shapes of the scale benchmark (``bench_widgets.py --scale``),
each built to about a given node count: ``chain``, ``reused_leaf_loop`` (``acc = acc
* x + c`` repeated, an unrolled RNN's shape) and ``cnn`` (residual blocks, every op
inside a module).
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


# -- the three shapes of the scale benchmark (bench_widgets.py --scale) -------------------
# Each takes a target node count (ops + tensors of the captured graph) and lands near it.

def chain(nodes: int) -> ag.Tensor:
    """A chain of tanh ops: one leaf, then op, tensor, op, tensor... (about 2 nodes an
    op), the plainest graph there is."""
    x = ag.tensor(np.linspace(-1, 1, 4), requires_grad=True, name="x")
    h = x
    for _ in range(max((nodes - 3) // 2, 1)):
        h = h.tanh()
    return h.sum()


def reused_leaf_loop(nodes: int) -> ag.Tensor:
    """``acc = acc * x + c`` repeated (4 nodes a step): the two leaves ``x`` and ``c``
    feed every step, as the weights of an unrolled RNN do."""
    x = ag.tensor(np.linspace(0.5, 0.9, 4), requires_grad=True, name="x")
    c = ag.tensor(np.full(4, 0.1), requires_grad=True, name="c")
    acc = ag.tensor(np.ones(4), name="acc0")
    for _ in range(max((nodes - 5) // 4, 1)):
        acc = acc * x + c
    return acc.sum()


def cnn(nodes: int) -> ag.Tensor:
    """A module-heavy CNN: a stem conv, then residual blocks (each conv -> batch norm ->
    ReLU -> conv -> batch norm, plus the skip), global average pool and a linear head,
    on a tiny 1x3x4x4 input (18 nodes a block, every op inside a module)."""
    from autograd_core import nn

    gen = np.random.default_rng(0)
    blocks = max((nodes - 18) // 18, 1)
    model = nn.Sequential(
        nn.Conv2d(3, 4, 3, padding=1, dtype=np.float32),
        nn.Sequential(*[nn.ResidualBlock(4, dtype=np.float32) for _ in range(blocks)]),
        nn.AvgPool2d(4), nn.Flatten(), nn.Linear(4, 2, dtype=np.float32))
    x = ag.tensor(gen.normal(size=(1, 3, 4, 4)).astype(np.float32), name="image")
    return model(x).sum()


SHAPES = {"chain": chain, "reused leaf": reused_leaf_loop, "cnn": cnn}
