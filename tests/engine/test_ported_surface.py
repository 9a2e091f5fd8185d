"""What the five ported model files (tests/engine/ported/) needed that the engine lacked,
on the engine alone: derivatives of nn.LSTM, adaptive_avg_pool2d and log10 against
finite differences (gradient and second derivative, float64), the semantics of ``+=``
and ``p.data = ...``, the new Tensor methods, and a sentence for each bad input.
The same against PyTorch: test_ported_surface_torch.py.
"""

from __future__ import annotations

import numpy as np
import pytest

import autograd_core as ag
from autograd_core import nn, optim
from autograd_core.autograd import gradcheck, gradgradcheck
from autograd_core.nn import functional as F


def _leaf(*shape, seed=0):
    values = np.random.default_rng(seed).standard_normal(shape)
    return ag.tensor(values, requires_grad=True)


# -- derivatives against finite differences ------------------------------------------------
def test_lstm_gradients_and_second_derivatives():
    lstm = nn.LSTM(1, 2, num_layers=2, batch_first=True, dtype=ag.float64,
                   generator=ag.Generator(0))
    x = _leaf(2, 2, 1)  # (N, L, input_size)
    h0, c0 = _leaf(2, 2, 2, seed=1), _leaf(2, 2, 2, seed=2)

    def f(x, h0, c0, *weights):  # the weights are the module's own: perturbed in place
        out, (h, c) = lstm(x, (h0, c0))
        return out.sum() + (h * c).sum()

    assert gradcheck(f, (x, h0, c0, *lstm.parameters()))
    assert gradgradcheck(f, (x, h0, c0))


def test_lstm_parameter_gradients_by_finite_differences():
    lstm = nn.LSTM(2, 2, dtype=ag.float64, generator=ag.Generator(1))
    x = ag.tensor(np.random.default_rng(3).standard_normal((3, 1, 2)))
    weight = lstm.weight_hh_l0

    def f(w):
        lstm._parameters["weight_hh_l0"] = w
        out, _ = lstm(x)
        return (out * out).sum()

    try:
        assert gradcheck(f, (weight,))
        assert gradgradcheck(f, (weight,))
    finally:
        lstm._parameters["weight_hh_l0"] = weight


@pytest.mark.parametrize("size", [(1, 1), (2, 3), 3, (None, 2)])
def test_adaptive_avg_pool_derivatives(size):
    x = _leaf(1, 1, 5, 4)
    assert gradcheck(lambda t: F.adaptive_avg_pool2d(t, size), (x,))
    assert gradgradcheck(lambda t: F.adaptive_avg_pool2d(t, size) ** 2, (x,))


def test_log10_derivatives():
    x = ag.tensor(np.random.default_rng(4).uniform(0.5, 3.0, (3,)), requires_grad=True)
    assert gradcheck(lambda t: t.log10(), (x,))
    assert gradgradcheck(lambda t: t.log10(), (x,))
    np.testing.assert_allclose(x.log10().numpy(), np.log10(x.numpy()), rtol=1e-15)


# -- augmented assignment and .data ---------------------------------------------------------
def test_augmented_assignment_is_in_place_unless_recording():
    w = nn.Parameter(ag.ones(3))
    with ag.no_grad():
        same = w
        w *= 0.5
    assert w is same and isinstance(w, nn.Parameter) and np.all(w.numpy() == 0.5)
    x = _leaf(3)
    h = x * 2
    before = h
    h += x  # recording: a new tensor for the name, the graph through both
    assert h is not before and np.all(before.numpy() == 2 * x.numpy())
    h.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), np.full(3, 3.0))
    for other in (1, x):  # a leaf that requires grad, while recording: PyTorch's error
        with pytest.raises(RuntimeError, match="leaf"):
            w += other
    plain = ag.zeros(2)
    plain /= 2
    plain -= 1
    np.testing.assert_array_equal(plain.numpy(), [-1.0, -1.0])
    counts = ag.tensor([1, 2])
    counts += 1
    with pytest.raises(RuntimeError, match="can't be cast") as info:
        counts += 0.5  # a float into an int tensor, in place: PyTorch refuses it too
    assert "x = x + y" in str(info.value) and counts.tolist() == [2, 3]


def test_data_setter_and_update_by_hand():
    p = nn.Parameter(ag.ones(2))
    (p * 3).sum().backward()
    p.data += -0.1 * p.grad
    np.testing.assert_allclose(p.numpy(), [0.7, 0.7])
    assert p.grad is not None and p.requires_grad
    p.data = ag.zeros(2)
    assert np.all(p.numpy() == 0)
    with pytest.raises(TypeError, match="cannot set .data to a list"):
        p.data = [1.0, 2.0]


# -- the new Tensor methods -----------------------------------------------------------------
def test_tensor_methods():
    x = ag.tensor(np.arange(12.0).reshape(3, 4))
    assert x.long().dtype == ag.long and x.long().numpy()[2, 3] == 11
    assert x.view_as(ag.zeros(4, 3)).shape == (4, 3)
    np.testing.assert_array_equal(x.narrow(1, 1, 2).numpy(), x.numpy()[:, 1:3])
    np.testing.assert_array_equal(x.narrow(-1, 3, 1).numpy(), x.numpy()[:, 3:])
    np.testing.assert_array_equal(x.t().numpy(), x.numpy().T)
    assert ag.ones(3).t().shape == (3,)
    assert x.eq(x).numpy().all()
    zeros = x.float().new_zeros(2, 5)
    assert zeros.shape == (2, 5) and zeros.dtype == ag.float32 and not zeros.requires_grad
    assert x.new_ones((2,), dtype=ag.long).dtype == ag.long


# -- the new modules, optimizer and schedule ------------------------------------------------
def test_lstm_shapes_and_state():
    lstm = nn.LSTM(3, 4, num_layers=2, batch_first=True)
    names = [n for n, _ in lstm.named_parameters()]
    assert names == [f"{w}_l{k}" for k in range(2)
                     for w in ("weight_ih", "weight_hh", "bias_ih", "bias_hh")]
    out, (h, c) = lstm(ag.randn(5, 7, 3, dtype=ag.float32))
    assert out.shape == (5, 7, 4) and h.shape == c.shape == (2, 5, 4)
    out, (h, c) = lstm(ag.randn(7, 3, dtype=ag.float32))  # unbatched
    assert out.shape == (7, 4) and h.shape == (2, 4)
    np.testing.assert_array_equal(out.numpy()[-1], h.numpy()[-1])
    assert repr(lstm) == "LSTM(3, 4, num_layers=2, batch_first=True)"


def test_adadelta_first_step_by_hand():
    p = nn.Parameter(ag.tensor([1.0, -2.0]))
    opt = optim.Adadelta([p], lr=1.0, rho=0.9, eps=1e-6)
    p.grad = ag.tensor([0.5, 0.25])
    opt.step()
    g = np.array([0.5, 0.25])
    delta = np.sqrt(1e-6) / np.sqrt(0.1 * g * g + 1e-6) * g
    np.testing.assert_allclose(p.numpy(), [1.0, -2.0] - delta, rtol=1e-14)


def test_step_lr_values():
    opt = optim.SGD([nn.Parameter(ag.ones(1))], lr=1.0)
    sched = optim.lr_scheduler.StepLR(opt, step_size=2, gamma=0.5)
    lrs = []
    for _ in range(5):
        lrs.append(sched.get_last_lr()[0])
        opt.step()
        sched.step()
    assert lrs == [1.0, 1.0, 0.5, 0.5, 0.25]


def test_inplace_arguments():
    x = ag.tensor([-1.0, 2.0])
    assert nn.ReLU(inplace=True)(x).tolist() == [0.0, 2.0] and x.tolist() == [-1.0, 2.0]
    assert repr(nn.ReLU(inplace=True)) == "ReLU(inplace=True)"
    assert nn.Dropout(0.5, inplace=True).eval()(x) is x
    with pytest.raises(NotImplementedError, match="inplace=True"):
        F.dropout(x, 0.5, True, True)


# -- a sentence for each bad input ----------------------------------------------------------
@pytest.mark.parametrize("make, error, words", [
    (lambda: nn.LSTM(2, 3, bidirectional=True), NotImplementedError, "bidirectional"),
    (lambda: nn.LSTM(2, 3, proj_size=2), NotImplementedError, "proj_size"),
    (lambda: nn.LSTM(2, 3)(ag.ones(4, 1, 5, dtype=ag.float32)), ValueError, "expected"),
    (lambda: nn.LSTM(2, 3)(ag.ones(4, 1, 2, dtype=ag.float32),
                           (ag.zeros(1, 2, 3), ag.zeros(1, 2, 3))), ValueError, "h_0"),
    (lambda: F.adaptive_avg_pool2d(ag.ones(4, 4), 2), ValueError, "3-D"),
    (lambda: F.adaptive_avg_pool2d(ag.ones(1, 4, 4), 0), ValueError, "output_size"),
    (lambda: nn.init.kaiming_normal_(ag.ones(2, 2), mode="fan"), ValueError, "fan_in"),
    (lambda: nn.CrossEntropyLoss(weight=ag.ones(3)), NotImplementedError, "class weights"),
    (lambda: nn.NLLLoss(reduction="avg"), ValueError, "reduction"),
    (lambda: optim.Adadelta([nn.Parameter(ag.ones(1))], rho=1.5), ValueError, "rho"),
    (lambda: optim.lr_scheduler.StepLR(optim.SGD([nn.Parameter(ag.ones(1))], lr=0.1), 0),
     ValueError, "step_size"),
    (lambda: ag.ones(2, 2, 2).t(), RuntimeError, "transpose"),
])
def test_bad_input_gets_a_sentence(make, error, words):
    with pytest.raises(error, match=words) as info:
        make()
    assert "Hint" in str(info.value) or "use" in str(info.value)
