"""Second derivatives: the reverse sweep recorded as ops (``create_graph=True``) and
differentiated again, against central differences of the lean engine's own gradient
and against PyTorch.

For every row of the op table: g = d<v, f(x)>/dx with ``create_graph=True``, then the
gradient of phi(x) = <g(x), w> (w random) by a second sweep, compared with central
differences of phi computed from ``backward()`` on fresh graphs (an independent path:
the lean sweep on NumPy arrays). A row whose ops have no recorded backward yet must
raise a sentence naming the op; the list of those rows is pinned below, so a new op
without a rule, or a rule added, shows up here.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from op_table import (
    CASES,
    as_outputs,
    case_ids,
    central_differences,
    draw_upstream,
    run_engine,
)
from strategies import PROPERTY_SETTINGS

import autograd_core as ag
from autograd_core import autograd
from autograd_core.autograd.functional import hessian, hvp

try:
    import torch
except ImportError:
    torch = None

EPS = 1e-5
# Rows that use an op whose backward is not recorded as ops yet (create_graph=True
# raises NotImplementedError naming it).
NOT_YET: set[str] = set()  # every row of the op table has a recorded backward


def lean_gradients(case, example, upstream, values) -> list[np.ndarray]:
    """d<v, f(x)>/dx at ``values`` by the lean sweep (NumPy, nothing recorded twice)."""
    leaves = [ag.tensor(v, requires_grad=True) for v in values]
    outs = as_outputs(case.program(ag, *leaves, **example.params))
    for i, (y, v) in enumerate(zip(outs, upstream, strict=True)):
        y.backward(v, retain_graph=i < len(outs) - 1)
    return [np.zeros_like(v) if x.grad is None else x.grad.numpy() for x, v in
            zip(leaves, values, strict=True)]


def numeric_second(case, example, upstream, weights) -> list[np.ndarray]:
    """Central differences of phi(x) = sum_i <g_i(x), w_i>, g from the lean sweep."""
    def phi(values) -> float:
        grads = lean_gradients(case, example, upstream, values)
        return sum(float(np.sum(g * w)) for g, w in zip(grads, weights, strict=True))

    return central_differences(phi, example.inputs, EPS)


@pytest.mark.parametrize("case", CASES, ids=case_ids)
@settings(PROPERTY_SETTINGS, max_examples=3)
@given(data=st.data())
def test_every_ops_second_derivative_matches_central_differences(case, data):
    example = data.draw(case.examples, label="example")
    if case.name == "pow":  # at b == 0 da is defined as 0 (PyTorch's convention, which
        assume(np.all(np.asarray(example.inputs[1]) != 0))  # is not differentiable there)
    leaves, outputs = run_engine(case, example)
    upstream = draw_upstream(data, outputs)
    seeds = [ag.tensor(v) for v in upstream]
    if case.name in NOT_YET:
        with pytest.raises(NotImplementedError, match="create_graph=True"):
            autograd.grad(outputs, leaves, seeds, create_graph=True, allow_unused=True)
        return
    firsts = autograd.grad(outputs, leaves, seeds, create_graph=True, allow_unused=True,
                           materialize_grads=True)
    weights = [np.random.default_rng(7 + i).standard_normal(x.shape)
               for i, x in enumerate(leaves)]
    phi = sum((g * ag.tensor(w)).sum() for g, w in zip(firsts, weights, strict=True))
    if phi.requires_grad:
        seconds = autograd.grad(phi, leaves, allow_unused=True, materialize_grads=True)
        got = [s.numpy() for s in seconds]
    else:  # every first derivative is a constant: the second is zero
        got = [np.zeros(x.shape) for x in leaves]
    expected = numeric_second(case, example, upstream, weights)
    for g, e in zip(got, expected, strict=True):
        np.testing.assert_allclose(g, e, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("case", CASES, ids=case_ids)
@settings(PROPERTY_SETTINGS, max_examples=3)
@given(data=st.data())
def test_every_ops_recorded_backward_gives_the_lean_backwards_values(case, data):
    """One backward, two modes: the gradients a create_graph sweep records equal those of
    the lean sweep, bit for bit up to rounding (an op whose lean backward has a faster
    path of its own, such as relu's bit mask or gelu's float32 formula, is held to its
    rule here)."""
    example = data.draw(case.examples, label="example")
    leaves, outputs = run_engine(case, example)
    upstream = draw_upstream(data, outputs)
    recorded = autograd.grad(outputs, leaves, [ag.tensor(v) for v in upstream],
                             create_graph=True, allow_unused=True, materialize_grads=True)
    lean = lean_gradients(case, example, upstream, [x.numpy() for x in leaves])
    for got, expected in zip(recorded, lean, strict=True):
        assert got.dtype == expected.dtype
        tolerance = 1e-5 if got.dtype == np.float32 else 1e-12
        np.testing.assert_allclose(got.detach().numpy(), expected, rtol=tolerance,
                                   atol=tolerance)


def test_backward_with_create_graph_leaves_a_grad_that_can_be_differentiated():
    x = ag.tensor([0.5, -1.0, 2.0], requires_grad=True)
    (x ** 3).sum().backward(create_graph=True)
    assert x.grad.requires_grad and x.grad.grad_fn is not None  # 3 x**2, with a graph
    np.testing.assert_allclose(x.grad.numpy(), 3 * x.numpy() ** 2)
    (second,) = autograd.grad(x.grad.sum(), x)
    np.testing.assert_allclose(second.numpy(), 6 * x.numpy())
    lean = ag.tensor([0.5, -1.0, 2.0], requires_grad=True)
    (lean ** 3).sum().backward()
    assert lean.grad.grad_fn is None and not lean.grad.requires_grad  # the lean sweep


def mlp_loss(lib, x, w1, b1, w2, b2, target):
    """A tanh MLP's cross-entropy, written once for both libraries."""
    h = lib.tanh(x @ w1 + b1)
    logits = h @ w2 + b2
    return lib.nn.functional.cross_entropy(logits, target)


def mlp_problem():
    rng = np.random.default_rng(3)
    x = rng.standard_normal((5, 4))
    params = [rng.standard_normal(s) * 0.5 for s in [(4, 3), (3,), (3, 2), (2,)]]
    target = np.array([0, 1, 1, 0, 1])
    return x, params, target


def test_mlp_hessian_vector_product_matches_central_differences_of_the_gradient():
    x, params, target = mlp_problem()
    w1 = params[0]
    v = np.random.default_rng(4).standard_normal(w1.shape)

    def loss_of(w):
        rest = [ag.tensor(p) for p in params[1:]]
        return mlp_loss(ag, ag.tensor(x), w, *rest, ag.tensor(target))

    _, product = hvp(loss_of, ag.tensor(w1), ag.tensor(v))

    def lean_grad(w):
        leaf = ag.tensor(w, requires_grad=True)
        loss_of(leaf).backward()
        return leaf.grad.numpy()

    expected = (lean_grad(w1 + EPS * v) - lean_grad(w1 - EPS * v)) / (2 * EPS)
    np.testing.assert_allclose(product.numpy(), expected, rtol=1e-5, atol=1e-7)
    full = hessian(loss_of, ag.tensor(w1)).numpy().reshape(w1.size, w1.size)
    np.testing.assert_allclose(full, full.T, atol=1e-12)  # a Hessian is symmetric
    np.testing.assert_allclose(full @ v.ravel(), product.numpy().ravel(), atol=1e-12)


@pytest.mark.skipif(torch is None, reason="PyTorch is not installed: the cross-check "
                    "against torch.autograd.functional is skipped (pip install -e '.[torch]')")
def test_mlp_hvp_and_hessian_match_pytorch():
    from torch.autograd.functional import hessian as torch_hessian
    from torch.autograd.functional import hvp as torch_hvp

    x, params, target = mlp_problem()
    v = np.random.default_rng(5).standard_normal(params[0].shape)

    def ours(w):
        return mlp_loss(ag, ag.tensor(x), w, *map(ag.tensor, params[1:]), ag.tensor(target))

    def theirs(w):
        return mlp_loss(torch, torch.tensor(x), w, *map(torch.tensor, params[1:]),
                        torch.tensor(target))

    out, product = hvp(ours, ag.tensor(params[0]), ag.tensor(v))
    t_out, t_product = torch_hvp(theirs, torch.tensor(params[0]), torch.tensor(v))
    np.testing.assert_allclose(out.numpy(), t_out.numpy(), rtol=1e-12)
    np.testing.assert_allclose(product.numpy(), t_product.numpy(), rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(hessian(ours, ag.tensor(params[0])).numpy(),
                               torch_hessian(theirs, torch.tensor(params[0])).numpy(),
                               rtol=1e-10, atol=1e-12)


@pytest.mark.skipif(torch is None, reason="PyTorch is not installed: the cross-check "
                    "against torch.autograd.functional is skipped (pip install -e '.[torch]')")
def test_a_linear_relu_softmax_networks_hvp_matches_pytorch():
    """Through the Linear op (input @ weightᵀ + bias), relu's mask and log_softmax."""
    from torch.autograd.functional import hvp as torch_hvp

    rng = np.random.default_rng(8)
    x, target = rng.standard_normal((6, 4)), np.array([0, 2, 1, 1, 0, 2])
    w1, b1, w2, b2 = (rng.standard_normal(s) * 0.7 for s in [(5, 4), (5,), (3, 5), (3,)])
    v = rng.standard_normal(w1.shape)

    def loss(lib, w, tensor):
        f = lib.nn.functional
        hidden = f.relu(f.linear(tensor(x), w, tensor(b1)))
        return f.cross_entropy(f.linear(hidden, tensor(w2), tensor(b2)), tensor(target))

    _, ours = hvp(lambda w: loss(ag, w, ag.tensor), ag.tensor(w1), ag.tensor(v))
    _, theirs = torch_hvp(lambda w: loss(torch, w, torch.tensor), torch.tensor(w1),
                          torch.tensor(v))
    np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-10, atol=1e-12)
    assert np.abs(ours.numpy()).max() > 1e-3  # not the zero a lost graph would give


def test_gradgradcheck_passes_right_rules_and_catches_a_wrong_one(monkeypatch):
    from autograd_core.errors import GradcheckError
    from autograd_core.ops import elementwise as ew

    rng = np.random.default_rng(9)
    w = ag.tensor(rng.standard_normal((3, 2)), requires_grad=True)
    x = ag.tensor(rng.standard_normal((4, 3)), requires_grad=True)
    assert autograd.gradgradcheck(lambda a, b: ag.tanh(a @ b).sum(), (x, w))
    # tanh's slope with the square left out under create_graph only: first derivatives
    # stay right (the lean sweep computes them), second ones go wrong, and
    # gradgradcheck must say so
    right = ew.Tanh.backward

    def wrong_when_recorded(ctx, g):
        return (g * (1 - ctx.load("out")),) if ctx.recorded else right(ctx, g)

    monkeypatch.setattr(ew.Tanh, "backward", staticmethod(wrong_when_recorded))
    with pytest.raises(GradcheckError, match="with respect to input"):
        autograd.gradgradcheck(lambda a, b: ag.tanh(a @ b).sum(), (x, w))


@pytest.mark.parametrize("n", [8, 32, 128])
def test_an_hvp_costs_a_few_gradients_and_the_hessian_n_of_them(n):
    """Counted multiply-adds (autograd_core.tools.counting), not time: one Hessian-vector
    product is a small constant times one gradient, whatever n; the full Hessian is n
    of them."""
    from autograd_core.tools.counting import count_ops

    rng = np.random.default_rng(n)
    x = ag.tensor(rng.standard_normal((16, n)))
    w0 = rng.standard_normal(n)

    def loss(w):
        return (ag.tanh(x @ w) ** 2).sum()

    with count_ops() as one_gradient:
        w = ag.tensor(w0, requires_grad=True)
        loss(w).backward()
    with count_ops() as one_hvp:
        hvp(loss, ag.tensor(w0), ag.tensor(rng.standard_normal(n)))
    with count_ops() as full:
        hessian(loss, ag.tensor(w0))
    ratio = one_hvp.total_macs / one_gradient.total_macs
    assert 1.5 < ratio < 6, ratio  # two sweeps and the recorded one's ops, not n
    assert full.total_macs == n * one_hvp.total_macs


def test_hooks_see_and_replace_the_recorded_gradient():
    x = ag.tensor([1.0, 2.0], requires_grad=True)
    x.register_hook(lambda g: g * 2)  # a Tensor back: it replaces the gradient
    (g,) = autograd.grad((x * x * x).sum(), x, create_graph=True)
    np.testing.assert_allclose(g.numpy(), 2 * 3 * x.numpy() ** 2)
    (second,) = autograd.grad(g.sum(), x)  # the doubling is on the graph, and the hook
    np.testing.assert_allclose(second.numpy(), 2 * 2 * 6 * x.numpy())  # runs again (torch)
