"""What the ported model files needed, against PyTorch 2.13 CPU in float64 and float32:
nn.LSTM (values, states and every gradient; layers, batch_first, unbatched, given
states), adaptive_avg_pool2d, Adadelta, StepLR, the loss modules, kaiming_normal_'s
spread, log10.
"""

from __future__ import annotations

import numpy as np
import pytest

import autograd_core as ag
from autograd_core import nn, optim

torch = pytest.importorskip(
    "torch", reason="PyTorch is not installed: the cross-check of the ported surface "
    "against PyTorch 2.13.0 CPU is skipped (install it with: pip install -e '.[torch]')")
pytestmark = pytest.mark.torch

DTYPES = [(np.float64, torch.float64, 1e-12), (np.float32, torch.float32, 1e-5)]
ids = ["float64", "float32"]


def _same(ours, theirs, tol) -> None:
    theirs = theirs.detach().numpy()
    assert ours.dtype == theirs.dtype and ours.shape == theirs.shape
    np.testing.assert_allclose(ours.numpy(), theirs, rtol=tol, atol=tol)


def _pair(values, dtype, tdtype):
    return (ag.tensor(values.astype(dtype), requires_grad=True),
            torch.tensor(values, dtype=tdtype, requires_grad=True))


@pytest.mark.parametrize("layers, batch_first, batched, given", [
    (1, False, True, False), (2, False, True, True), (2, True, True, True),
    (2, False, False, True)])
@pytest.mark.parametrize("dtype, tdtype, tol", DTYPES, ids=ids)
def test_lstm_as_torch(layers, batch_first, batched, given, dtype, tdtype, tol):
    torch.manual_seed(0)
    theirs = torch.nn.LSTM(3, 4, layers, batch_first=batch_first).to(tdtype)
    ours = nn.LSTM(3, 4, layers, batch_first=batch_first, dtype=dtype)
    assert list(ours.state_dict()) == list(theirs.state_dict())
    ours.load_state_dict({k: ag.tensor(v.detach().numpy().copy())
                          for k, v in theirs.state_dict().items()})
    rng = np.random.default_rng(1)
    shape = ((2, 5, 3) if batch_first else (5, 2, 3)) if batched else (5, 3)
    x, tx = _pair(rng.standard_normal(shape), dtype, tdtype)
    state = (layers, 2, 4) if batched else (layers, 4)
    h, th = _pair(rng.standard_normal(state), dtype, tdtype)
    c, tc = _pair(rng.standard_normal(state), dtype, tdtype)
    out, (hn, cn) = ours(x, (h, c)) if given else ours(x)
    tout, (thn, tcn) = theirs(tx, (th, tc)) if given else theirs(tx)
    for a, b in ((out, tout), (hn, thn), (cn, tcn)):
        _same(a, b, tol)
    upstream = [rng.standard_normal(t.shape) for t in (tout, thn, tcn)]
    (sum(((a * ag.tensor(u.astype(dtype))).sum() for a, u in zip((out, hn, cn), upstream,
                                                                  strict=True)))).backward()
    sum((b * torch.tensor(u, dtype=tdtype)).sum()
        for b, u in zip((tout, thn, tcn), upstream, strict=True)).backward()
    pairs = list(zip(ours.parameters(), theirs.parameters(), strict=True)) + [(x, tx)]
    if given:
        pairs += [(h, th), (c, tc)]
    for p, tp in pairs:
        _same(p.grad, tp.grad, 10 * tol)


def test_lstm_init_spread_as_torch():
    weights = nn.LSTM(3, 25).weight_hh_l0.numpy()
    bound = 1 / np.sqrt(25)
    assert weights.min() >= -bound and weights.max() <= bound and weights.std() > bound / 2
    assert weights.shape == tuple(torch.nn.LSTM(3, 25).weight_hh_l0.shape)


@pytest.mark.parametrize("shape, size", [((2, 3, 8, 8), (1, 1)), ((2, 3, 7, 5), (3, 2)),
                                         ((3, 5, 6), 4), ((1, 2, 6, 5), (None, 3))])
@pytest.mark.parametrize("dtype, tdtype, tol", DTYPES, ids=ids)
def test_adaptive_avg_pool_as_torch(shape, size, dtype, tdtype, tol):
    rng = np.random.default_rng(2)
    x, tx = _pair(rng.standard_normal(shape), dtype, tdtype)
    out, tout = nn.AdaptiveAvgPool2d(size)(x), torch.nn.AdaptiveAvgPool2d(size)(tx)
    _same(out, tout, tol)
    upstream = rng.standard_normal(tout.shape)
    out.backward(ag.tensor(upstream.astype(dtype)))
    tout.backward(torch.tensor(upstream, dtype=tdtype))
    _same(x.grad, tx.grad, tol)


@pytest.mark.parametrize("options", [{}, {"lr": 0.5, "rho": 0.8, "weight_decay": 0.1}])
@pytest.mark.parametrize("dtype, tdtype, tol", DTYPES, ids=ids)
def test_adadelta_and_step_lr_as_torch(options, dtype, tdtype, tol):
    rng = np.random.default_rng(3)
    p, tp = _pair(rng.standard_normal((3, 2)), dtype, tdtype)
    opt, topt = optim.Adadelta([p], **options), torch.optim.Adadelta([tp], **options)
    sched = optim.lr_scheduler.StepLR(opt, step_size=2, gamma=0.3)
    tsched = torch.optim.lr_scheduler.StepLR(topt, step_size=2, gamma=0.3)
    for _ in range(5):
        grad = rng.standard_normal((3, 2))
        p.grad, tp.grad = ag.tensor(grad.astype(dtype)), torch.tensor(grad, dtype=tdtype)
        opt.step()
        topt.step()
        sched.step()
        tsched.step()
        assert sched.get_last_lr() == pytest.approx(tsched.get_last_lr(), rel=1e-15)
        _same(p, tp, tol)
    assert sched.state_dict() == {k: v for k, v in tsched.state_dict().items()
                                  if k in sched.state_dict()}


@pytest.mark.parametrize("name, kwargs", [("CrossEntropyLoss", {}),
                                          ("CrossEntropyLoss", {"label_smoothing": 0.1,
                                                                "reduction": "sum"}),
                                          ("NLLLoss", {"ignore_index": 1}),
                                          ("MSELoss", {"reduction": "none"})])
@pytest.mark.parametrize("dtype, tdtype, tol", DTYPES, ids=ids)
def test_loss_modules_as_torch(name, kwargs, dtype, tdtype, tol):
    rng = np.random.default_rng(4)
    x, tx = _pair(rng.standard_normal((5, 3)), dtype, tdtype)
    if name == "MSELoss":
        y = rng.standard_normal((5, 3))
        target, ttarget = ag.tensor(y.astype(dtype)), torch.tensor(y, dtype=tdtype)
    else:
        y = rng.integers(0, 3, 5)
        target, ttarget = ag.tensor(y), torch.tensor(y)
    loss = getattr(nn, name)(**kwargs)(x, target)
    tloss = getattr(torch.nn, name)(**kwargs)(tx, ttarget)
    _same(loss, tloss, tol)
    loss.sum().backward()
    tloss.sum().backward()
    _same(x.grad, tx.grad, tol)


@pytest.mark.parametrize("mode", ["fan_in", "fan_out"])
def test_kaiming_normal_spread_as_torch(mode):
    shape = (64, 32, 3, 3)
    ours = nn.init.kaiming_normal_(ag.zeros(*shape), mode=mode, nonlinearity="relu")
    theirs = torch.nn.init.kaiming_normal_(torch.zeros(shape), mode=mode, nonlinearity="relu")
    fan = 32 * 9 if mode == "fan_in" else 64 * 9
    expected = np.sqrt(2.0 / fan)
    for values in (ours.numpy(), theirs.numpy()):  # 18432 draws: the std within 3%
        assert abs(values.std() / expected - 1) < 0.03 and abs(values.mean()) < expected / 20


@pytest.mark.parametrize("dtype, tdtype, tol", DTYPES, ids=ids)
def test_log10_and_index_methods_as_torch(dtype, tdtype, tol):
    values = np.random.default_rng(5).uniform(0.1, 5.0, (3, 4))
    x, tx = _pair(values, dtype, tdtype)
    _same(x.log10(), tx.log10(), tol)
    x.log10().sum().backward()
    tx.log10().sum().backward()
    _same(x.grad, tx.grad, tol)
    _same(x.narrow(1, 1, 2), tx.narrow(1, 1, 2), 0)
    _same(x.t(), tx.t(), 0)
    _same(x.long(), tx.long(), 0)
    assert x.new_zeros(2, 3).dtype == tx.new_zeros(2, 3).numpy().dtype
