"""cross_entropy's ``ignore_index`` and ``label_smoothing``, nll_loss's ``ignore_index``,
against torch.nn.functional (PyTorch 2.13.0 CPU): values, gradients and second
derivatives for every reduction, ignored targets absent / present / all, smoothing
0 / 0.1 / 1, (N, C) and (N, C, d1, ...) inputs, float64 and float32; then the edges
(infinite scores, empty batches) and the bad arguments, with PyTorch's error types.
"""

from __future__ import annotations

import numpy as np
import pytest

import autograd_core as ag
from autograd_core import autograd
from autograd_core.nn import functional as F
from autograd_core.ops import nn_ops

torch = pytest.importorskip(
    "torch", reason="PyTorch is not installed: the cross-check against PyTorch 2.13.0 CPU "
    "is skipped (install it with: pip install -e '.[torch]')")
TF = torch.nn.functional

pytestmark = pytest.mark.torch

SHAPES = [(5, 4), (3, 4, 2), (2, 3, 2, 2)]
REDUCTIONS = ["mean", "sum", "none"]
SMOOTHINGS = [0.0, 0.1, 1.0]
IGNORED = ["absent", "present", "all"]


def targets(shape, ignored: str, ignore_index: int = -100, seed: int = 0) -> np.ndarray:
    """Class indices for scores of ``shape``: none, every other one, or all of them set
    to ``ignore_index``."""
    rng = np.random.default_rng(seed)
    target = rng.integers(0, shape[1], (shape[0], *shape[2:]))
    if ignored == "present":
        target.flat[::2] = ignore_index
    elif ignored == "all":
        target[...] = ignore_index
    return target


def both(loss: str, x: np.ndarray, target: np.ndarray, dtype=np.float64, **options):
    """Our loss and PyTorch's on the same scores (leaves that require grad)."""
    ours = ag.tensor(x.astype(dtype), requires_grad=True)
    theirs = torch.tensor(x.astype(dtype), requires_grad=True)
    return (ours, getattr(F, loss)(ours, target, **options),
            theirs, getattr(TF, loss)(theirs, torch.tensor(target), **options))


def check_against_torch(loss, x, target, dtype=np.float64, second=True, **options):
    tol = dict(rtol=1e-12, atol=1e-14) if dtype == np.float64 else dict(rtol=2e-5, atol=1e-6)
    a, out, b, expected = both(loss, x, target, dtype, **options)
    assert out.dtype == dtype and out.shape == tuple(expected.shape)
    np.testing.assert_allclose(out.numpy(), expected.detach().numpy(), **tol)
    g = np.random.default_rng(1).uniform(0.5, 1.5, out.shape).astype(dtype)
    out.backward(g)
    expected.backward(torch.tensor(g))
    np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), **tol)
    if not second:
        return
    # second derivatives: d/dx <dL/dx, w>, through the graph rules (create_graph)
    a, out, b, expected = both(loss, x, target, dtype, **options)
    w = np.random.default_rng(2).standard_normal(x.shape).astype(dtype)
    first, = autograd.grad(out, [a], ag.tensor(g), create_graph=True)
    tfirst, = torch.autograd.grad(expected, [b], torch.tensor(g), create_graph=True)
    second_theirs = np.zeros(x.shape, dtype)
    if tfirst.requires_grad:
        second_theirs, = torch.autograd.grad((tfirst * torch.tensor(w)).sum(), [b],
                                             allow_unused=True, materialize_grads=True)
    if not first.requires_grad:  # nll_loss is linear in its input: a constant gradient
        assert not second_theirs.numpy().any()
        return
    second_ours, = autograd.grad((first * ag.tensor(w)).sum(), [a])
    np.testing.assert_allclose(second_ours.numpy(), second_theirs.numpy(), **tol)


# -- values and gradients --------------------------------------------------------------------------
@pytest.mark.parametrize("shape", SHAPES, ids=str)
@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("ignored", IGNORED)
@pytest.mark.parametrize("label_smoothing", SMOOTHINGS)
def test_cross_entropy_matches_torch(shape, reduction, ignored, label_smoothing):
    x = np.random.default_rng(len(shape)).standard_normal(shape) * 2
    check_against_torch("cross_entropy", x, targets(shape, ignored), reduction=reduction,
                        label_smoothing=label_smoothing)


@pytest.mark.parametrize("shape", SHAPES, ids=str)
@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("ignored", IGNORED)
def test_nll_loss_ignore_index_matches_torch(shape, reduction, ignored):
    x = np.random.default_rng(len(shape)).standard_normal(shape)
    check_against_torch("nll_loss", x, targets(shape, ignored), reduction=reduction)


@pytest.mark.parametrize("loss", ["cross_entropy", "nll_loss"])
@pytest.mark.parametrize("ignore_index", [0, 2, -1])
def test_an_ignore_index_that_is_a_class_or_negative(loss, ignore_index):
    # a class index as ignore_index: that class never counts; -1 is a valid "no class"
    shape = (6, 3)
    x = np.random.default_rng(5).standard_normal(shape)
    target = np.array([0, 1, 2, 2, 0, 1])
    if ignore_index == -1:
        target[[1, 4]] = -1
    for reduction in REDUCTIONS:
        check_against_torch(loss, x, target, reduction=reduction, ignore_index=ignore_index)


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("ignored", IGNORED)
@pytest.mark.parametrize("label_smoothing", SMOOTHINGS)
def test_cross_entropy_float32(reduction, ignored, label_smoothing):
    x = np.random.default_rng(3).standard_normal((6, 5, 3))
    check_against_torch("cross_entropy", x, targets((6, 5, 3), ignored), np.float32,
                        second=False, reduction=reduction, label_smoothing=label_smoothing)


def test_label_smoothing_is_torchs_formula():
    """(1 - ε) · nll + ε / C · Σ_c -log p_c per sample; 'mean' over the counted samples."""
    x = np.random.default_rng(4).standard_normal((4, 3))
    target = np.array([2, -100, 0, 1])
    eps, counted = 0.3, target != -100
    logp = x - np.log(np.exp(x).sum(axis=1, keepdims=True))
    per_sample = np.where(counted, (1 - eps) * -logp[np.arange(4), np.where(counted, target, 0)]
                          + eps / 3 * -logp.sum(axis=1), 0.0)
    out = F.cross_entropy(ag.tensor(x), target, reduction="none", label_smoothing=eps)
    np.testing.assert_allclose(out.numpy(), per_sample, rtol=1e-13)
    mean = F.cross_entropy(ag.tensor(x), target, label_smoothing=eps)
    assert mean.item() == pytest.approx(per_sample.sum() / counted.sum(), rel=1e-13)


def test_all_targets_ignored_mean_is_nan_with_zero_gradient_like_torch():
    a, out, b, expected = both("cross_entropy", np.ones((3, 4)), np.full(3, -100),
                               label_smoothing=0.1)
    assert np.isnan(out.item()) and np.isnan(expected.item())
    out.backward()
    expected.backward()
    assert not a.grad.numpy().any() and not b.grad.numpy().any()


# -- what the graph shows --------------------------------------------------------------------------
def test_the_plain_case_keeps_the_plain_nll_loss_op_and_rule():
    out = F.cross_entropy(ag.tensor(np.zeros((2, 3)), requires_grad=True), [0, 2])
    assert out.grad_fn.op is nn_ops.NLLLoss
    assert "dlog_probs = 0.0 - one_hot(target, log_probs.shape) * share" in out.grad_fn.op.rule
    assert "ignore_index" not in out.grad_fn.op.rule


@pytest.mark.parametrize("options, target", [
    (dict(label_smoothing=0.1), [0, 2]),
    ({}, [0, -100]),
    (dict(ignore_index=2), [0, 2]),
])
def test_ignored_targets_or_smoothing_use_the_op_with_the_smoothed_rule(options, target):
    out = F.cross_entropy(ag.tensor(np.zeros((2, 3)), requires_grad=True), target, **options)
    op = out.grad_fn.op
    assert op is nn_ops.SmoothedNLLLoss and op.name == "nll_loss"
    assert "label_smoothing" in op.rule and "ignore_index" in op.rule
    assert [s for s in out.grad_fn.saved] == ["target"]  # still only the target is saved


def test_an_ignore_index_that_no_target_has_changes_nothing():
    x = ag.tensor(np.random.default_rng(0).standard_normal((3, 4)), requires_grad=True)
    plain = F.cross_entropy(x, [0, 1, 3])
    other = F.cross_entropy(x, [0, 1, 3], ignore_index=2)
    assert plain.item() == other.item() and other.grad_fn.op is nn_ops.NLLLoss


# -- edges -----------------------------------------------------------------------------------------
INF = float("inf")


@pytest.mark.parametrize("target", [[0, 1], [0, -100], [1, 2]], ids=str)
@pytest.mark.parametrize("label_smoothing", SMOOTHINGS)
@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_a_minus_inf_score(target, label_smoothing, reduction):
    """Row 0 has a -inf score: with smoothing its loss is inf unless the row is ignored
    (then 0, not 0 · inf = nan); ε = 1 takes 0 · nll, as PyTorch does."""
    x = np.array([[0.5, -INF, 0.1], [1.0, 2.0, -0.5]])
    a, out, b, expected = both("cross_entropy", x, np.array(target), reduction=reduction,
                               label_smoothing=label_smoothing)
    np.testing.assert_allclose(out.numpy(), expected.detach().numpy(), rtol=1e-12)
    if np.isfinite(expected.detach().numpy()).all():
        g = np.ones(out.shape)
        out.backward(g)
        expected.backward(torch.tensor(g))
        np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), rtol=1e-12, atol=1e-15)


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("label_smoothing", [0.0, 0.2])
def test_an_empty_batch(reduction, label_smoothing):
    a, out, b, expected = both("cross_entropy", np.zeros((0, 3)), np.zeros(0, np.int64),
                               reduction=reduction, label_smoothing=label_smoothing)
    np.testing.assert_array_equal(out.numpy(), expected.detach().numpy())
    out.sum().backward()
    expected.sum().backward()
    assert a.grad.shape == (0, 3)


def test_gradient_off_the_target_is_plus_zero():
    # the zeros of nll_loss's gradient are +0 (as PyTorch's), also under a negative g
    x = ag.tensor(np.zeros((2, 3)), requires_grad=True)
    F.nll_loss(x, [0, -100], reduction="none").backward(np.array([-1.0, -2.0]))
    grad = x.grad.numpy()
    assert not np.signbit(grad[grad == 0]).any()


# -- bad arguments, with PyTorch's error types -----------------------------------------------------
X, T = np.zeros((3, 4)), np.array([1, -100, 2])


@pytest.mark.parametrize("loss, options, target, kind, ours", [
    ("cross_entropy", dict(label_smoothing=1.5), T, RuntimeError,
     r"label_smoothing must be between 0\.0 and 1\.0\. Got: 1\.5"),
    ("cross_entropy", dict(ignore_index=1.5), T, TypeError,
     r"cross_entropy\(\): argument 'ignore_index' must be int, not float"),
    ("cross_entropy", dict(ignore_index=True), T, TypeError, r"must be int, not bool"),
    ("cross_entropy", dict(ignore_index=None), T, TypeError, r"must be int, not NoneType"),
    ("nll_loss", dict(ignore_index=1.5), T, TypeError,
     r"nll_loss\(\): argument 'ignore_index' must be int, not float"),
    ("cross_entropy", dict(label_smoothing="a"), T, TypeError,
     r"argument 'label_smoothing' must be float, not str"),
    ("cross_entropy", dict(label_smoothing=0.1), np.array([1, 5, 2]), IndexError,
     r"Target 5 is out of bounds\. cross_entropy: the input has 4 classes"),
    ("cross_entropy", dict(ignore_index=-1), np.array([1, -3, 2]), IndexError,
     r"Target -3 is out of bounds"),
    ("nll_loss", {}, np.array([4, -100, 0]), IndexError, r"Target 4 is out of bounds"),
    ("cross_entropy", dict(ignore_index=7), np.array([1, 7, 2]), None, None),  # fine
])
def test_bad_arguments_raise_like_torch(loss, options, target, kind, ours):
    if kind is None:
        getattr(F, loss)(ag.tensor(X), target, **options)
        getattr(TF, loss)(torch.tensor(X), torch.tensor(target), **options)
        return
    with pytest.raises(kind) as theirs:
        getattr(TF, loss)(torch.tensor(X), torch.tensor(target), **options)
    with pytest.raises(kind, match=ours) as mine:
        getattr(F, loss)(ag.tensor(X), target, **options)
    assert "\nHint: " in str(mine.value)
    if kind is IndexError:  # PyTorch's sentence starts ours
        assert str(mine.value).startswith(str(theirs.value).strip("'"))


@pytest.mark.parametrize("value", [-0.1, float("nan")])
def test_label_smoothing_below_zero_or_nan_is_refused(value):
    """PyTorch refuses only label_smoothing > 1 and computes with a negative or nan ε
    (a target distribution with negative weights); this engine refuses both, with the
    error type PyTorch uses above 1."""
    TF.cross_entropy(torch.tensor(X), torch.tensor(T), label_smoothing=value)  # no error
    with pytest.raises(RuntimeError, match="label_smoothing must be between 0.0 and 1.0"):
        F.cross_entropy(ag.tensor(X), T, label_smoothing=value)


def test_nll_loss_has_no_label_smoothing_like_torch():
    with pytest.raises(TypeError):
        TF.nll_loss(torch.tensor(X), torch.tensor(T), label_smoothing=0.1)
    with pytest.raises(TypeError):
        F.nll_loss(ag.tensor(X), T, label_smoothing=0.1)
