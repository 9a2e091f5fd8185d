"""The graph a create_graph backward records is a graph like any other: the views draw
it and the stepper steps its own reverse sweep (the sweep of the sweep)."""

from __future__ import annotations

import numpy as np

import autograd_core as ag
from autograd_core import autograd
from widgets import BackwardStepper, draw
from widgets.live import live


def test_the_recorded_backward_is_drawn_and_stepped():
    x = ag.tensor([0.5, -1.0, 2.0], requires_grad=True).named("x")
    y = ag.tanh(x).sum()
    (g,) = autograd.grad(y, x, create_graph=True)  # 1 - tanh(x)**2, as recorded ops
    graph = live(g.sum(), "draw").graph
    ops = [op.op for op in graph.ops]
    assert "tanh" in ops and "mul" in ops and "pow" in ops  # forward op, then its rule
    picture = draw(g.sum())
    assert picture.alt.startswith(f"Computational graph: {len(graph.ops)} ops")
    stepper = BackwardStepper(g.sum())
    stepper.last()
    t = np.tanh(x.numpy())
    np.testing.assert_allclose(x.grad.numpy(), -2 * t * (1 - t ** 2))  # tanh''
    stepper.close()
