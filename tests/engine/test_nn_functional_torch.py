"""autograd_core.nn.functional against torch.nn.functional (PyTorch 2.13.0 CPU).

The same program runs on both engines in float64 from the same values, with the
same non-uniform upstream gradient; outputs and every input gradient must agree.
batch_norm is compared in training and evaluation mode, running estimates
included, over several steps. Dropout is compared in distribution only (the two
libraries draw from different random generators).
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from test_nn_functional import SETTINGS, batch_norm_cases, class_cases, conv_cases, pool_cases

import autograd_core as ag
from autograd_core.nn import functional as F

torch = pytest.importorskip(
    "torch", reason="PyTorch is not installed: the cross-check against PyTorch 2.13.0 CPU "
    "is skipped (install it with: pip install -e '.[torch]')")
TF = torch.nn.functional

pytestmark = pytest.mark.torch


def run_both(ours, theirs, arrays, seed=0, grads=None):
    """Run ``ours`` on engine tensors and ``theirs`` on torch tensors made from the same
    float64 ``arrays`` (grads[i] says which require grad); compare the outputs and,
    after a backward with one non-uniform upstream gradient, every gradient."""
    grads = grads or [True] * len(arrays)
    a = [ag.tensor(np.array(x, dtype=np.float64), requires_grad=r)
         for x, r in zip(arrays, grads)]
    t = [torch.tensor(np.array(x, dtype=np.float64), requires_grad=r)
         for x, r in zip(arrays, grads)]
    out, expected = ours(*a), theirs(*t)
    np.testing.assert_allclose(out.numpy(), expected.detach().numpy(), rtol=1e-10, atol=1e-12)
    g = np.random.default_rng(seed).uniform(0.5, 1.5, out.shape)
    out.backward(g)
    expected.backward(torch.tensor(g))
    for mine, theirs_, needed in zip(a, t, grads):
        if needed:
            np.testing.assert_allclose(mine.grad.numpy(), theirs_.grad.numpy(), rtol=1e-9,
                                       atol=1e-12)


@SETTINGS
@given(case=conv_cases(), seed=st.integers(0, 99))
def test_conv2d(case, seed):
    _, inputs, params = case
    run_both(lambda *t: F.conv2d(*t, **params), lambda *t: TF.conv2d(*t, **params),
             [t.numpy() for t in inputs], seed)


@pytest.mark.parametrize("name", ["max_pool2d", "avg_pool2d"])
@SETTINGS
@given(case=pool_cases(values="small integers"), seed=st.integers(0, 99))
def test_pools_with_ties(name, case, seed):
    """Integer inputs tie often: the gradient goes to the same element as in PyTorch."""
    x, params = case
    run_both(lambda t: getattr(F, name)(t, **params),
             lambda t: getattr(TF, name)(t, **params), [x.numpy()], seed)


@SETTINGS
@given(case=batch_norm_cases(), momentum=st.sampled_from([0.1, 0.5]), seed=st.integers(0, 99))
def test_batch_norm_train_and_eval_with_running_statistics(case, momentum, seed):
    x, w, b, (mean, var), training = case
    ours = [ag.tensor(mean), ag.tensor(var)]
    theirs = [torch.tensor(mean), torch.tensor(var)]
    arrays = [t.numpy() for t in (x, w, b) if t is not None]

    def split(ts):  # (x, weight, bias) from the tensors that exist
        ts = list(ts)
        return ts[0], (ts[1] if w is not None else None), \
            (ts[-1] if b is not None else None)

    for step in range(3):
        run_both(lambda *t: F.batch_norm(split(t)[0], *ours, *split(t)[1:],
                                         training=training, momentum=momentum),
                 lambda *t: TF.batch_norm(split(t)[0], *theirs, *split(t)[1:],
                                          training=training, momentum=momentum),
                 [a * (1 + step) for a in arrays], seed + step)
        for r, r_torch in zip(ours, theirs):
            np.testing.assert_allclose(r.numpy(), r_torch.numpy(), rtol=1e-12, atol=1e-14)


CLASS_LOSSES = {
    "cross_entropy": (F.cross_entropy, TF.cross_entropy),
    "nll_loss": (lambda x, t, **k: F.nll_loss(F.log_softmax(x, dim=1), t, **k),
                 lambda x, t, **k: TF.nll_loss(TF.log_softmax(x, dim=1), t, **k)),
}


@pytest.mark.parametrize("name", CLASS_LOSSES)
@SETTINGS
@given(case=class_cases(), seed=st.integers(0, 99))
def test_class_losses(name, case, seed):
    logits, target, reduction = case
    ours, theirs = CLASS_LOSSES[name]
    run_both(lambda x: ours(x, target, reduction=reduction),
             lambda x: theirs(x, torch.tensor(target), reduction=reduction),
             [logits.numpy()], seed)


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("shape", [(5,), (3, 4), (2, 1, 3)])
def test_regression_losses(reduction, shape):
    rng = np.random.default_rng(sum(shape))
    x, y, p = rng.standard_normal(shape) * 3, rng.standard_normal(shape), rng.random(shape)
    run_both(lambda a, b: F.mse_loss(a, b, reduction=reduction),
             lambda a, b: TF.mse_loss(a, b, reduction=reduction), [x, y])
    run_both(lambda a, b: F.binary_cross_entropy_with_logits(a, b, reduction=reduction),
             lambda a, b: TF.binary_cross_entropy_with_logits(a, b, reduction=reduction),
             [x, p])


@pytest.mark.parametrize("lead", [(), (1,), (4,), (2, 3)])
@pytest.mark.parametrize("with_bias", [True, False])
def test_linear(lead, with_bias):
    rng = np.random.default_rng(len(lead))
    arrays = [rng.standard_normal((*lead, 3)), rng.standard_normal((2, 3))]
    if with_bias:
        arrays.append(rng.standard_normal(2))
    run_both(F.linear, TF.linear, arrays)


@pytest.mark.parametrize("ids", [[0, 2, 2, 4], [[1, 1], [1, 3]], 3])
def test_embedding(ids):
    table = np.random.default_rng(0).standard_normal((5, 3))
    run_both(lambda w: F.embedding(ids, w), lambda w: TF.embedding(torch.tensor(ids), w),
             [table])


@pytest.mark.parametrize("p", [0.1, 0.5, 0.8])
def test_dropout_same_distribution_and_scale(p):
    x = np.linspace(1.0, 2.0, 40_000)
    ours = F.dropout(ag.tensor(x), p, generator=ag.Generator(0)).numpy()
    torch.manual_seed(0)
    theirs = TF.dropout(torch.tensor(x), p).numpy()
    for y in (ours, theirs):
        kept = y != 0
        np.testing.assert_allclose(y[kept], x[kept] / (1 - p))  # kept units scaled
        assert abs(kept.mean() - (1 - p)) < 0.011  # > 4 standard deviations at 40,000 draws
    assert abs((ours != 0).mean() - (theirs != 0).mean()) < 0.015
    t = ag.tensor(x)
    assert F.dropout(t, p, training=False) is t
    np.testing.assert_array_equal(TF.dropout(torch.tensor(x), p, training=False).numpy(), x)
