"""Edges where the engine used to answer otherwise than PyTorch 2.13 (issue #42), each
checked against PyTorch CPU on the same values:

* float16 reductions accumulate in float32 and return float16 (var, cumsum, sum, the
  norms, softmax and its relatives): values and gradients within PyTorch's own error;
* hvp/vhp (and autograd.functional's vjp/jvp) refuse a v of another shape, never
  broadcast it;
* an operand that is a tuple or list holding tensors (``x.max(dim=1) * w``) is a
  TypeError, not a constant;
* gradcheck on float32 warns, and its failure names precision as the likely cause;
* ``func`` follows ``torch.func`` (``hessian(f)`` returns a function) and
  ``autograd.functional`` holds ``torch.autograd.functional``'s evaluate-at-inputs forms.
"""

from __future__ import annotations

import re
import warnings

import numpy as np
import pytest

import autograd_core as ag
import autograd_core.nn.functional as F
from autograd_core import func
from autograd_core.autograd import GradcheckError, functional, gradcheck

torch = pytest.importorskip(
    "torch", reason="PyTorch is not installed: the cross-check against PyTorch 2.13.0 CPU "
    "is skipped (install it with: pip install -e '.[torch]')")

pytestmark = pytest.mark.torch
TF = torch.nn.functional


# -- 1. float16 accumulates in float32 --------------------------------------------------------
def _rows(seed: int, shape, loc=10.0, scale=10.0) -> np.ndarray:
    return (loc + scale * np.random.default_rng(seed).standard_normal(shape)).astype(np.float16)


_TARGETS = np.array([3, 1000, 17, 4000])
FLOAT16 = {  # name: (program(module, functional, x), input)
    # a row of 1024 values of size ~10: the sum of squares overflows float16
    "var": (lambda m, f, x: m.var(x, 1), _rows(0, (4, 1024))),
    "layer_norm": (lambda m, f, x: f.layer_norm(x, (1024,)), _rows(1, (4, 1024))),
    "rms_norm": (lambda m, f, x: f.rms_norm(x, (1024,)), _rows(2, (4, 1024))),
    "batch_norm": (lambda m, f, x: f.batch_norm(x, None, None, training=True),
                   _rows(3, (16, 4, 8, 8))),
    # 4096 × 0.1 added up in float16 stops at 256
    "cumsum": (lambda m, f, x: m.cumsum(x, 1), np.full((2, 4096), 0.1, np.float16)),
    # ±30000 pairs: each partial sum of two overflows float16, the total is small
    "sum": (lambda m, f, x: m.sum(x, 1), np.tile(np.array([3e4, 3e4, -3e4, -3e4 + 8],
                                                          np.float16), (2, 512))),
    "mean": (lambda m, f, x: m.mean(x, 1), _rows(4, (4, 1024))),
    # a (1, 8) input broadcast over 4096 rows: its gradient is a sum of 4096 values
    "broadcast": (lambda m, f, x: x * (m.ones(4096, 8, dtype=m.float16) if m is torch
                                       else np.ones((4096, 8), np.float16)),
                  _rows(11, (1, 8), 1.0, 0.1)),
    "softmax": (lambda m, f, x: m.softmax(x, -1), _rows(5, (4, 4096), 0.0, 3.0)),
    "log_softmax": (lambda m, f, x: m.log_softmax(x, -1), _rows(6, (4, 4096), 0.0, 3.0)),
    "logsumexp": (lambda m, f, x: m.logsumexp(x, -1), _rows(7, (4, 4096), 0.0, 3.0)),
    "cross_entropy": (lambda m, f, x: f.cross_entropy(x, m.tensor(_TARGETS)),
                      _rows(8, (4, 4096), 0.0, 3.0)),
}


def _relative(a, reference) -> float:
    a = np.asarray(a, dtype=np.float64)
    assert np.isfinite(a).all(), "inf or nan where PyTorch has finite values"
    return float(np.abs(a - reference).max() / np.abs(reference).max())


@pytest.mark.parametrize("name", list(FLOAT16))
def test_float16_reductions_accumulate_in_float32_as_pytorch(name):
    """Value and gradient in float16, each no further from the float64 answer than
    PyTorch's float16 one, give or take one float16 rounding (2⁻¹¹ relative)."""
    program, x = FLOAT16[name]
    ref_x = torch.tensor(x, dtype=torch.float64, requires_grad=True)
    reference = program(torch, TF, ref_x)
    seed = np.random.default_rng(9).standard_normal(tuple(reference.shape)).astype(np.float16)
    reference.backward(torch.tensor(seed, dtype=torch.float64))
    theirs_x = torch.tensor(x, requires_grad=True)
    theirs = program(torch, TF, theirs_x)
    theirs.backward(torch.tensor(seed))
    ours_x = ag.tensor(x, requires_grad=True)
    ours = program(ag, F, ours_x)
    ours.backward(ag.tensor(seed))
    assert ours.dtype == np.float16 and ours_x.grad.dtype == np.float16
    slack = 2.0 ** -11
    for mine, torch_value, exact in ((ours.numpy(), theirs.detach().numpy(), reference),
                                     (ours_x.grad.numpy(), theirs_x.grad.numpy(), ref_x.grad)):
        exact = exact.detach().numpy()
        assert _relative(mine, exact) <= _relative(torch_value, exact) + slack


def test_the_issues_float16_examples():
    """The numbers issue #42 reports: cumsum of 4096 × 0.1 reaches 409.5, the variance
    of 1024 values around 10 is finite, layer_norm is off by about 1e-3, not 3.96."""
    assert ag.tensor(np.full(4096, 0.1, np.float16)).cumsum(0)[-1].item() == 409.5
    x = _rows(10, (4, 1024))
    assert np.isfinite(ag.tensor(x).var(1).numpy()).all()
    exact = TF.layer_norm(torch.tensor(x, dtype=torch.float64), (1024,)).numpy()
    assert np.abs(F.layer_norm(ag.tensor(x), (1024,)).numpy() - exact).max() < 4e-3


# -- 2. v of another shape ------------------------------------------------------------------
def _cube(t):
    return (t ** 3).sum()


@pytest.mark.parametrize("v_shape", [(1,), (), (3,)], ids=["one", "scalar", "too-long"])
@pytest.mark.parametrize("name", ["hvp", "vhp", "jvp"])
def test_a_v_of_another_shape_is_refused_naming_both_shapes(name, v_shape):
    """PyTorch: "v has invalid size"; the engine's sentence names v's shape and the
    input's, (2,). (func.hvp and func.vhp broadcast a (1,) or () v before.)"""
    with pytest.raises(RuntimeError, match="v has invalid size"):
        getattr(torch.autograd.functional, name)(_cube, torch.ones(2), torch.ones(v_shape))
    shape_text = "(" + ", ".join(map(str, v_shape)) + ("," if len(v_shape) == 1 else "") + ")"
    with pytest.raises(RuntimeError, match=rf"should have the shape of inputs\[0\], \(2,\), "
                                           rf"but got {re.escape(shape_text)}"):
        getattr(functional, name)(_cube, ag.ones(2), ag.ones(v_shape))


def test_vjp_refuses_a_v_of_another_shape_than_the_output():
    with pytest.raises(RuntimeError, match="v has invalid size"):
        torch.autograd.functional.vjp(lambda t: t * 2, torch.ones(2), torch.ones(1))
    with pytest.raises(RuntimeError, match=r"outputs\[0\], \(2,\), but got \(1,\)"):
        functional.vjp(lambda t: t * 2, ag.ones(2), ag.ones(1))


# -- 3. a tuple of tensors as an operand -----------------------------------------------------
@pytest.mark.parametrize("program", [
    lambda m, x, w: x.max(dim=1) * w,
    lambda m, x, w: w + x.min(dim=1),
    lambda m, x, w: w - (w, w),
], ids=["max-times", "plus-min", "minus-pair"])
def test_an_operand_that_is_a_tuple_of_tensors_is_a_type_error(program):
    x = np.arange(6.0).reshape(2, 3)
    with pytest.raises(TypeError):
        program(torch, torch.tensor(x), torch.ones(2, requires_grad=True))
    with pytest.raises(TypeError, match=r"\.values"):
        program(ag, ag.tensor(x), ag.tensor(np.ones(2), requires_grad=True))


def test_values_of_max_keep_the_gradient_and_number_lists_still_work():
    """``.values`` is the way through (the same gradient as PyTorch's); a list of plain
    numbers stays an operand (PyTorch refuses it: in the README's table)."""
    x = np.array([[1.0, 5.0, 2.0], [7.0, 0.0, 3.0]])
    ours = ag.tensor(x, requires_grad=True)
    (ours.max(dim=1).values * ag.tensor([2.0, 3.0])).sum().backward()
    theirs = torch.tensor(x, requires_grad=True)
    (theirs.max(dim=1).values * torch.tensor([2.0, 3.0])).sum().backward()
    np.testing.assert_array_equal(ours.grad.numpy(), theirs.grad.numpy())
    assert (ag.tensor([1.0, 2.0]) * [2, 3]).tolist() == [2.0, 6.0]


# -- 4. gradcheck in float32 ------------------------------------------------------------------
def test_gradcheck_in_float32_warns_and_names_precision_when_it_fails():
    x32 = np.array([1.0, 2.0], np.float32)
    with pytest.warns(UserWarning, match="not a double precision"):
        with pytest.raises(RuntimeError, match="Jacobian mismatch"):
            torch.autograd.gradcheck(lambda t: (t.exp() * 1000).sum(),
                                     (torch.tensor(x32, requires_grad=True),))
    with pytest.warns(UserWarning, match="not a double precision"):
        with pytest.raises(GradcheckError, match="likely cause is precision") as failure:
            gradcheck(lambda t: (t.exp() * 1000).sum(), (ag.tensor(x32, requires_grad=True),))
    assert "input 0 is float32" in str(failure.value)
    assert "backward rule is wrong" not in str(failure.value)


def test_gradcheck_in_float64_still_blames_the_rule_without_a_warning():
    x = ag.tensor([1.0, 2.0], requires_grad=True)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(GradcheckError, match="a backward rule is wrong"):
            gradcheck(lambda t: t.exp().detach() * t.sum() + t.sum(), (x,))


# -- 5. func is torch.func, autograd.functional is torch.autograd.functional ------------------
def test_func_and_autograd_functional_offer_only_their_pytorch_namesakes():
    assert set(func.__all__) <= set(dir(torch.func))
    assert set(functional.__all__) <= set(dir(torch.autograd.functional))


def _mixed(m, a, b):
    return (a * a * b).sum() + (a * b).sin().sum()


def test_func_hessian_returns_a_function_as_torch_func():
    a, b = np.array([0.5, -1.0]), np.array([2.0, 0.3])
    hessian_fn = func.hessian(lambda t: _mixed(ag, t, ag.tensor(b)))
    assert callable(hessian_fn)
    np.testing.assert_allclose(
        hessian_fn(ag.tensor(a)).numpy(),
        torch.func.hessian(lambda t: _mixed(torch, t, torch.tensor(b)))(torch.tensor(a)).numpy(),
        rtol=1e-12)
    mine = func.hessian(lambda x, y: _mixed(ag, x, y), argnums=(0, 1))(ag.tensor(a), ag.tensor(b))
    theirs = torch.func.hessian(lambda x, y: _mixed(torch, x, y), argnums=(0, 1))(
        torch.tensor(a), torch.tensor(b))
    for i in range(2):
        for j in range(2):
            np.testing.assert_allclose(mine[i][j].numpy(), theirs[i][j].numpy(), rtol=1e-12)
    # a vector output: S + T + T, as torch.func
    vector = func.hessian(lambda t: t ** 3)(ag.tensor(a)).numpy()
    np.testing.assert_allclose(vector, torch.func.hessian(lambda t: t ** 3)(
        torch.tensor(a)).numpy(), rtol=1e-12)


def test_autograd_functional_evaluates_at_inputs_as_torch_autograd_functional():
    a, b, v = np.array([0.5, -1.0]), np.array([2.0, 0.3]), np.array([1.0, -2.0])
    ours = lambda x, y: _mixed(ag, x, y)  # noqa: E731
    theirs = lambda x, y: _mixed(torch, x, y)  # noqa: E731
    taf = torch.autograd.functional
    mine = functional.hessian(ours, (ag.tensor(a), ag.tensor(b)))
    ref = taf.hessian(theirs, (torch.tensor(a), torch.tensor(b)))
    for i in range(2):
        for j in range(2):
            np.testing.assert_allclose(mine[i][j].numpy(), ref[i][j].numpy(), rtol=1e-12)
    single = lambda m, x: _mixed(m, x, m.tensor(b))  # noqa: E731
    np.testing.assert_allclose(
        functional.hessian(lambda x: single(ag, x), ag.tensor(a)).numpy(),
        taf.hessian(lambda x: single(torch, x), torch.tensor(a)).numpy(), rtol=1e-12)
    scalar = {ag: lambda x: single(ag, x), torch: lambda x: single(torch, x)}
    vector = {ag: lambda x: ag.sin(x) * 3, torch: lambda x: torch.sin(x) * 3}
    for name, f in (("vjp", vector), ("jvp", vector), ("hvp", scalar), ("vhp", scalar)):
        _, product = getattr(functional, name)(f[ag], ag.tensor(a), ag.tensor(v))
        _, t_product = getattr(taf, name)(f[torch], torch.tensor(a), torch.tensor(v))
        np.testing.assert_allclose(product.numpy(), t_product.numpy(), rtol=1e-12)
    jac = functional.jacobian(ag.sin, ag.tensor(a), strategy="forward-mode").numpy()
    np.testing.assert_allclose(jac, taf.jacobian(torch.sin, torch.tensor(a),
                                                 vectorize=True, strategy="forward-mode").numpy())


def test_the_old_calls_still_work_with_a_deprecation_warning():
    """func.hessian(f, x) and func.hvp/vhp/jacobian, the paths before torch.func's
    conventions: the same numbers, and a DeprecationWarning that names the new path."""
    x = ag.tensor([1.0, 2.0])
    with pytest.warns(DeprecationWarning, match=r"func.hessian\(f\)\(x\)"):
        old = func.hessian(_cube, x)
    np.testing.assert_array_equal(old.numpy(), func.hessian(_cube)(x).numpy())
    with pytest.warns(DeprecationWarning, match="autograd_core.autograd.functional.hvp"):
        assert func.hvp is functional.hvp
