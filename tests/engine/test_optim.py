"""Optimizers: hand-computed updates, state size, groups, saving; trajectories vs
torch.optim (marked ``torch``).
"""

from __future__ import annotations

import numpy as np
import pytest

import autograd_core as ag
from autograd_core import nn, optim


def param(values) -> nn.Parameter:
    return nn.Parameter(np.asarray(values, dtype=np.float64))


def set_grad(p, values) -> None:
    p.grad = ag.tensor(np.asarray(values, dtype=np.float64))


# -- hand-computed updates on f(p) = p^2 / 2, whose gradient is p ----------------------------
@pytest.mark.parametrize("make, expected", [
    # plain: p <- p - 0.1 p
    (lambda ps: optim.SGD(ps, lr=0.1), [0.9, 0.81, 0.729]),
    # momentum 0.9: b1 = 1, p1 = 0.9; b2 = 0.9 + 0.9 = 1.8, p2 = 0.72;
    # b3 = 1.62 + 0.72 = 2.34, p3 = 0.486
    (lambda ps: optim.SGD(ps, lr=0.1, momentum=0.9), [0.9, 0.72, 0.486]),
    # dampening 0.5: b2 = 0.9 * 1 + 0.5 * 0.9 = 1.35, p2 = 0.765
    (lambda ps: optim.SGD(ps, lr=0.1, momentum=0.9, dampening=0.5), [0.9, 0.765]),
    # nesterov: g1 = 1 + 0.9 * 1 = 1.9, p1 = 0.81
    (lambda ps: optim.SGD(ps, lr=0.1, momentum=0.9, nesterov=True), [0.81]),
    # weight decay 1: the gradient doubles, p <- p - 0.1 * 2p
    (lambda ps: optim.SGD(ps, lr=0.1, weight_decay=1.0), [0.8, 0.64]),
])
def test_sgd_updates_by_hand(make, expected):
    p = param([1.0])
    opt = make([p])
    for value in expected:
        set_grad(p, p.numpy())
        opt.step()
        assert p.item() == pytest.approx(value, rel=1e-12)


def test_adam_first_step_moves_every_element_by_lr_against_the_gradient():
    # bias correction makes m / sqrt(v) = g / |g| on the first step, whatever g's size
    p = param([1.0, -2.0, 3.0])
    opt = optim.Adam([p], lr=0.01)
    set_grad(p, [1e-3, -50.0, 7.0])
    opt.step()
    np.testing.assert_allclose(p.numpy(), [0.99, -1.99, 2.99], rtol=1e-6)


def test_adam_second_step_by_hand():
    b1, b2, lr = 0.9, 0.999, 0.1
    p = param([0.0])
    opt = optim.Adam([p], lr=lr, betas=(b1, b2), eps=0.0)
    g1, g2 = 1.0, 3.0
    set_grad(p, [g1])
    opt.step()
    set_grad(p, [g2])
    opt.step()
    m = (1 - b1) * (b1 * g1 + g2) / (1 - b1 ** 2)
    v = (1 - b2) * (b2 * g1 ** 2 + g2 ** 2) / (1 - b2 ** 2)
    assert p.item() == pytest.approx(-lr - lr * m / np.sqrt(v), rel=1e-12)


def test_step_skips_parameters_without_gradient_and_does_not_record():
    a, b = param([1.0]), param([2.0])
    opt = optim.SGD([a, b], lr=1.0)
    set_grad(a, [0.5])
    opt.step()
    assert (a.item(), b.item()) == (0.5, 2.0)
    assert a.is_leaf and a.grad_fn is None


# -- state, zero_grad, groups -----------------------------------------------------------------
@pytest.mark.parametrize("make, factor", [
    (lambda ps: optim.SGD(ps, lr=0.1), 0),
    (lambda ps: optim.SGD(ps, lr=0.1, momentum=0.9), 1),
    (lambda ps: optim.Adam(ps), 2),
])
def test_state_bytes_count_buffers_per_parameter(make, factor):
    ps = [nn.Parameter(np.zeros((10, 3), np.float32)), nn.Parameter(np.zeros(3, np.float32))]
    opt = make(ps)
    assert opt.state_bytes() == 0
    for p in ps:
        p.grad = ag.ones(*p.shape, dtype=np.float32)
    opt.step()
    assert opt.state_bytes() == factor * 4 * (30 + 3)


def test_zero_grad_and_parameter_groups():
    a, b = param([1.0]), param([1.0])
    opt = optim.SGD([{"params": [a]}, {"params": [b], "lr": 0.5}], lr=0.1)
    set_grad(a, [1.0])
    set_grad(b, [1.0])
    opt.step()
    assert (a.item(), b.item()) == pytest.approx((0.9, 0.5))
    opt.zero_grad()
    assert a.grad is None and b.grad is None
    assert "Parameter Group 1" in repr(opt) and "lr: 0.5" in repr(opt)


def test_optimizer_state_dict_round_trip_continues_identically():
    def run(opt, p, steps):
        for _ in range(steps):
            set_grad(p, np.sin(p.numpy()) + 1)
            opt.step()

    p = param([0.5, -1.0])
    opt = optim.Adam([p], lr=0.1)
    run(opt, p, 2)
    saved = opt.state_dict()
    q = param(p.numpy())
    resumed = optim.Adam([q], lr=0.3)
    resumed.load_state_dict(saved)
    assert resumed.param_groups[0]["lr"] == 0.1
    run(opt, p, 3)
    run(resumed, q, 3)
    np.testing.assert_array_equal(p.numpy(), q.numpy())
    saved["state"][0]["exp_avg"][:] = 99  # the saved copy is not the live state
    assert not (opt.state[p]["exp_avg"] == 99).any()


@pytest.mark.parametrize("make, error, match", [
    (lambda: optim.SGD([], lr=0.1), ValueError, "empty parameter list"),
    (lambda: optim.SGD([param([1.0])], lr=-1), ValueError, "learning rate"),
    (lambda: optim.SGD([param([1.0])], lr=0.1, nesterov=True), ValueError, "nesterov"),
    (lambda: optim.Adam([param([1.0])], betas=(0.9, 1.0)), ValueError, "betas"),
    (lambda: optim.SGD([param([1.0]) * 2], lr=0.1), ValueError, "leaf tensors"),
    (lambda: optim.SGD([[1.0]], lr=0.1), TypeError, "expects tensors"),
])
def test_optimizer_argument_errors(make, error, match):
    with pytest.raises(error, match=match):
        make()


# -- trajectories against torch.optim ----------------------------------------------------------
CASES = [
    ("sgd", dict(lr=0.1)),
    ("sgd", dict(lr=0.05, momentum=0.9)),
    ("sgd", dict(lr=0.05, momentum=0.9, dampening=0.3, weight_decay=0.01)),
    ("sgd", dict(lr=0.05, momentum=0.8, nesterov=True, weight_decay=0.1)),
    ("adam", dict(lr=0.1)),
    ("adam", dict(lr=0.05, betas=(0.8, 0.99), eps=1e-6, weight_decay=0.1)),
]


@pytest.mark.torch
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("kind, options", CASES, ids=[f"{k}-{i}" for i, (k, _) in
                                                      enumerate(CASES)])
def test_trajectory_matches_torch_optim(kind, options, dtype):
    torch = pytest.importorskip(
        "torch", reason="PyTorch is not installed: the cross-check of optimizers against "
        "PyTorch 2.13.0 CPU is skipped (install it with: pip install -e '.[torch]')")
    rng = np.random.default_rng(0)
    a = rng.normal(size=(4, 3)).astype(dtype)
    b = rng.normal(size=4).astype(dtype)
    start = rng.normal(size=3).astype(dtype)

    ours = nn.Parameter(start)
    theirs = torch.nn.Parameter(torch.tensor(start))
    opt = {"sgd": optim.SGD, "adam": optim.Adam}[kind]([ours], **options)
    topt = {"sgd": torch.optim.SGD, "adam": torch.optim.Adam}[kind]([theirs], **options)
    tol = 1e-12 if dtype == np.float64 else 1e-5
    for _ in range(6):
        # a smooth non-quadratic loss: sum(tanh(A p - b)^2) + 0.1 sum(p^3)
        opt.zero_grad()
        ((ag.tanh(ag.tensor(a) @ ours - ag.tensor(b)) ** 2).sum()
         + 0.1 * (ours ** 3).sum()).backward()
        opt.step()
        topt.zero_grad()
        ((torch.tanh(torch.tensor(a) @ theirs - torch.tensor(b)) ** 2).sum()
         + 0.1 * (theirs ** 3).sum()).backward()
        topt.step()
        np.testing.assert_allclose(ours.numpy(), theirs.detach().numpy(), rtol=tol, atol=tol)
    assert ours.dtype == dtype
