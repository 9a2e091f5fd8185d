"""Selective recomputation (``SelfAttention(checkpoint_core=True)``): the attention core
runs inside one checkpoint, which keeps q, k and v only; the scores and weights are
rebuilt in backward. Gradients equal a plain run's bit for bit (the engine's copies of
gradients keep their memory layout, so sums over them run in the same order), the
bytes kept after the forward pass drop by exactly the softmax's (b, heads, T, T)
weights, and only the core's two matmuls are recomputed."""

from __future__ import annotations

import numpy as np
import pytest

import autograd_core as ag
from autograd_core import nn
from autograd_core.tools.counting import count_ops
from autograd_core.tools.memory import activation_bytes


def _step(checkpoint_core: bool, dropout: float = 0.0, b=3, t=10, d=16, heads=4):
    block = nn.TransformerBlock(d, heads, dropout=dropout, dtype=ag.float32,
                                generator=ag.Generator(0))
    block.attn.checkpoint_core = checkpoint_core
    x = ag.randn(b, t, d, generator=ag.Generator(1), dtype=ag.float32, requires_grad=True)
    with count_ops() as work:
        out = block(x)
        kept = activation_bytes(out, exclude=[*block.parameters(), x])
        (out * out).sum().backward()
    grads = [x.grad.numpy().copy()] + [p.grad.numpy().copy() for p in block.parameters()]
    return kept, work, grads


@pytest.mark.parametrize("dropout", [0.0, 0.25])
def test_gradients_are_identical_bit_for_bit(dropout):
    _, _, plain = _step(False, dropout)
    _, _, selective = _step(True, dropout)
    assert all(np.array_equal(a, b) for a, b in zip(plain, selective))


def test_the_weights_are_not_kept_and_only_the_core_is_recomputed():
    b, t, d, heads = 3, 10, 16, 4
    kept_plain, work_plain, _ = _step(False)
    kept_selective, work, _ = _step(True)
    assert kept_plain - kept_selective == b * heads * t * t * 4  # float32 weights
    assert work_plain.recompute.macs == 0
    # the core's two matmuls: scores q kᵀ and weights @ v, each b·heads·t·t·(d/heads),
    # plus the scale, the mask and the softmax, elementwise on (b, heads, t, t)
    matmuls = 2 * b * heads * t * t * (d // heads)
    assert matmuls <= work.recompute.macs <= matmuls + 8 * b * heads * t * t


def test_a_copied_gradient_keeps_the_layout_of_the_view_it_copies():
    x = ag.tensor(np.arange(6.0).reshape(3, 2), requires_grad=True)
    z = ag.transpose(x, 0, 1)           # its backward hands x a transposed view
    (z * ag.tensor(np.arange(6.0).reshape(2, 3))).sum().backward()
    grad = x.grad.numpy()
    assert grad.flags.f_contiguous and not grad.flags.c_contiguous
    np.testing.assert_array_equal(grad, np.arange(6.0).reshape(2, 3).T)


def test_the_option_shows_in_the_repr():
    assert "checkpoint_core=True" in repr(nn.SelfAttention(8, 2, checkpoint_core=True))
    assert "checkpoint_core" not in repr(nn.SelfAttention(8, 2))
