"""Gradient checkpointing (func/checkpoint.py) and its cost experiment.

* gradients with checkpointing are *identical* (bit for bit) to the plain run's,
  for functions, modules, sequential segments and with dropout inside (the
  generators are rewound for the recomputation);
* the checkpoint op saves exactly its inputs, so fewer bytes are held;
* the extra work is counted as "recompute" and equals the checkpointed segments'
  forward work;
* the lessons' checkpoint_costs matches the saved-array counts derived by hand.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

import autograd_core as ag
from autograd_core import nn
from autograd_core.func.checkpoint import checkpoint, checkpoint_sequential, sqrt_segments
from autograd_core.nn import functional as F
from autograd_core.tools import counting, graph, memory
from widgets.lessons.checkpointing import SwishBlock, checkpoint_costs

WIDTH, BATCH = 6, 4


def _model(depth: int, dropout: float = 0.0, seed: int = 0) -> nn.Sequential:
    gen = ag.Generator(seed)
    layers = []
    for i in range(depth):
        layers += [nn.Linear(WIDTH, WIDTH, dtype=ag.float64, generator=gen), nn.Tanh()]
        if dropout:
            layers.append(nn.Dropout(dropout, generator=ag.Generator(100 + i)))
    return nn.Sequential(*layers)


def _input(requires_grad: bool = False) -> ag.Tensor:
    return ag.randn(BATCH, WIDTH, generator=ag.Generator(9), requires_grad=requires_grad)


def _grads(model, x) -> list[np.ndarray]:
    tensors = [*model.parameters()] + ([x] if x.requires_grad else [])
    return [t.grad.numpy().copy() for t in tensors]


def _run(model, x, segments: int | None) -> tuple[list[np.ndarray], np.ndarray]:
    out = model(x) if segments is None else checkpoint_sequential(model, segments, x)
    (out * out).sum().backward()
    return _grads(model, x), out.numpy().copy()


@pytest.mark.parametrize("depth, segments, dropout, x_grad", [
    (4, 2, 0.0, False),
    (4, 4, 0.0, True),
    (6, 3, 0.3, False),   # dropout: the recomputation must draw the same masks
    (9, 3, 0.5, True),
    (5, 1, 0.0, True),    # one segment: nothing checkpointed
])
def test_checkpoint_sequential_gives_exactly_the_plain_gradients(depth, segments, dropout,
                                                                 x_grad):
    plain_grads, plain_out = _run(_model(depth, dropout), _input(x_grad), None)
    ckpt_grads, ckpt_out = _run(_model(depth, dropout), _input(x_grad), segments)
    np.testing.assert_array_equal(ckpt_out, plain_out)
    assert len(ckpt_grads) == len(plain_grads)
    for got, expected in zip(ckpt_grads, plain_grads):
        np.testing.assert_array_equal(got, expected)


def test_checkpoint_of_a_function_of_several_inputs_and_constants():
    a = ag.randn(3, 4, generator=ag.Generator(1), requires_grad=True)
    b = ag.randn(4, generator=ag.Generator(2), requires_grad=True)

    def segment(x, y, scale):
        return ag.tanh(x * y).exp() * scale

    (checkpoint(segment, a, b, 0.5) ** 2).sum().backward()
    got = a.grad.numpy().copy(), b.grad.numpy().copy()
    a.grad = b.grad = None
    (segment(a, b, 0.5) ** 2).sum().backward()
    np.testing.assert_array_equal(got[0], a.grad.numpy())
    np.testing.assert_array_equal(got[1], b.grad.numpy())


def test_the_checkpoint_op_saves_only_its_inputs():
    model, x = _model(3), _input(requires_grad=True)
    out = checkpoint(model, x)
    ops = graph.capture(out).ops
    assert [op.op for op in ops] == ["checkpoint"]
    (saved,) = ops[0].saved
    assert saved.name == "input0" and saved.tensor == ops[0].inputs[0]
    assert saved.nbytes == x.numpy().nbytes
    # the module's parameters are inputs of the op, so their gradients go through
    # the engine; they are not saved (they are alive anyway)
    assert len(ops[0].inputs) == 1 + len(list(model.parameters()))


@pytest.mark.parametrize("depth, segments", [(4, 2), (9, 3), (16, 4)])
def test_checkpointing_holds_fewer_bytes_and_counts_the_recomputation(depth, segments):
    x = _input()
    plain_model, ckpt_model = _model(depth), _model(depth)
    params = list(plain_model.parameters())
    with counting.count_ops() as plain_work:
        plain = plain_model(x)
    plain_bytes = memory.activation_bytes(plain, exclude=[*params, x])
    with counting.count_ops() as work:
        out = checkpoint_sequential(ckpt_model, segments, x)
        held = memory.activation_bytes(out, exclude=[*ckpt_model.parameters(), x])
        out.sum().backward()
    activation = BATCH * WIDTH * 8
    # plain: every tanh output (= the next linear's input) stays. Checkpointed: the
    # inputs of checkpoints 2..s-1 (the first one's is x), then the last segment's
    # graph: its input (saved by its first linear) and its `last` tanh outputs
    size = depth // segments
    last = depth - size * (segments - 1)
    assert plain_bytes == depth * activation
    assert held == ((segments - 2) + 1 + last) * activation
    assert held < plain_bytes
    # each checkpointed layer ran forward a second time, in backward
    per_layer = plain_work.forward.macs // depth
    assert work.forward.macs == plain_work.forward.macs + BATCH * WIDTH  # + the final sum
    assert work.recompute.macs == (depth - last) * per_layer


def test_generators_continue_as_if_nothing_was_recomputed():
    def draws(segments):
        ag.manual_seed(5)
        model = _model(4, dropout=0.5)
        x = _input()
        out = model(x) if segments is None else checkpoint_sequential(model, segments, x)
        out.sum().backward()
        dropout_gen = model[2].generator
        return ag.randn(3).numpy(), dropout_gen.numpy.random(3)

    for plain, ckpt in zip(draws(None), draws(2)):
        np.testing.assert_array_equal(plain, ckpt)


def test_a_generator_checkpoint_cannot_rewind_is_an_error():
    hidden = ag.Generator(0)  # reached only through a closure: checkpoint cannot see it
    x = _input(requires_grad=True)
    with pytest.raises(RuntimeError, match="generator.*whose state was not saved"):
        checkpoint(lambda t: F.dropout(t, 0.5, generator=hidden), x)
    out = checkpoint(lambda t: F.dropout(t, 0.5, generator=hidden), x, generators=[hidden])
    out.sum().backward()
    mask = x.grad.numpy() != 0
    np.testing.assert_array_equal(mask, out.numpy() != 0)


def test_parameter_hooks_run_once_and_gradients_accumulate_across_steps():
    model, x = _model(2), _input()
    weight = model[0].weight
    seen = []
    weight.register_hook(lambda g: seen.append(g.numpy().copy()))
    for _ in range(2):
        checkpoint_sequential(model, 2, x).sum().backward()
    assert len(seen) == 2
    np.testing.assert_allclose(weight.grad.numpy(), 2 * seen[0])


def test_tensors_a_function_closes_over_still_get_their_gradient():
    w = ag.randn(WIDTH, WIDTH, generator=ag.Generator(3), requires_grad=True)
    x = _input(requires_grad=True)
    checkpoint(lambda t: ag.tanh(t @ w), x).sum().backward()
    got = w.grad.numpy().copy()
    w.grad = None
    ag.tanh(x @ w).sum().backward()
    np.testing.assert_array_equal(got, w.grad.numpy())


def test_backward_twice_with_retain_graph_recomputes_twice():
    model, x = _model(3), _input()
    out = checkpoint(model, x).sum()
    with counting.count_ops() as work:
        out.backward(retain_graph=True)
        out.backward()
    with counting.count_ops() as once:
        model(x)
    assert work.recompute.macs == 2 * once.forward.macs
    with pytest.raises(RuntimeError, match="second time"):
        out.backward()


def test_nothing_requiring_grad_is_warned_about():
    with pytest.warns(UserWarning, match="none of the inputs requires grad"):
        checkpoint(lambda t: t * 2, ag.ones(3))


@pytest.mark.parametrize("segments", [0, 7])
def test_bad_segment_counts_are_explained(segments):
    with pytest.raises(ValueError, match="segments must be between 1 and the number of "
                                         "modules \\(6\\)"):
        checkpoint_sequential(_model(3), segments, _input())


@pytest.mark.parametrize("n, expected", [(1, 1), (4, 2), (9, 3), (10, 3), (16, 4), (50, 7)])
def test_sqrt_segments(n, expected):
    assert sqrt_segments(n) == expected


@pytest.mark.torch
def test_same_gradients_as_torch_checkpoint_sequential():
    torch = pytest.importorskip("torch", reason="PyTorch is not installed: cross-check "
                                "skipped (pip install -e '.[torch]')")
    from torch.utils.checkpoint import checkpoint_sequential as torch_checkpoint_sequential

    model, x = _model(4), _input(requires_grad=True)
    layers = []
    for m in model:
        if isinstance(m, nn.Linear):
            lin = torch.nn.Linear(WIDTH, WIDTH).double()
            lin.weight.data = torch.from_numpy(m.weight.numpy().copy())
            lin.bias.data = torch.from_numpy(m.bias.numpy().copy())
            layers.append(lin)
        else:
            layers.append(torch.nn.Tanh())
    tmodel = torch.nn.Sequential(*layers)
    tx = torch.from_numpy(x.numpy().copy()).requires_grad_()
    (torch_checkpoint_sequential(tmodel, 2, tx, use_reentrant=False) ** 2).sum().backward()
    (checkpoint_sequential(model, 2, x) ** 2).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), tx.grad.numpy(), rtol=1e-12)
    np.testing.assert_allclose(model[0].weight.grad.numpy(), tmodel[0].weight.grad.numpy(),
                               rtol=1e-12)


# -- the experiment ---------------------------------------------------------------------------
def test_checkpoint_costs_match_the_counts_derived_by_hand():
    width, batch = 8, 3
    activation = batch * width * 4  # float32
    # one SwishBlock: linear (B·W·W + B·W for the bias), sigmoid and mul (B·W each)
    block_macs = batch * width * (width + 3)
    rows = checkpoint_costs(depths=(4, 9, 16), width=width, batch=batch)
    assert [(r.depth, r.strategy) for r in rows] == [
        (d, s) for d in (4, 9, 16) for s in ("none", "sqrt", "every")]
    for r in rows:
        d = r.depth
        s = {"none": 1, "sqrt": round(math.sqrt(d)), "every": d}[r.strategy]
        size = d // s
        last = d - size * (s - 1)
        # saved arrays: a block keeps x, h and sigmoid(h); x of block 1 is the input
        expected_arrays = {"none": 3 * d - 1, "every": d + 1,
                           "sqrt": (s - 2) + 3 * last}[r.strategy]
        assert r.segments == s
        assert r.peak == expected_arrays * activation, r
        assert r.forward_macs == d * block_macs + batch * width  # + the final sum
        assert r.recompute_macs == (d - last) * block_macs
        assert r.max_grad_difference == 0.0
    by = {(r.depth, r.strategy): r for r in rows}
    assert by[16, "sqrt"].peak < by[16, "every"].peak \
        < by[16, "none"].peak


def test_swish_block_saves_three_activations():
    block = SwishBlock(4, ag.Generator(0))
    x = ag.randn(2, 4, dtype=np.float32, requires_grad=True)
    saved = graph.capture(block(x)).saved
    assert sorted(s.name for s in saved) == ["a", "b", "input", "out", "weight"]
    assert memory.activation_bytes(block(x), exclude=list(block.parameters())) \
        == 3 * 2 * 4 * 4
