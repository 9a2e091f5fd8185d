"""gelu, silu, softplus and leaky_relu (and their layers), and the erf they stand on.

First ``ops/special``: erf, erfc, Φ and φ written in NumPy, checked against ``math.erf``
and ``math.erfc`` on a dense grid, tiny and large arguments, the edges of Cody's three
intervals, nan, ±inf, -0.0, float32, 0-d and empty inputs. Then each activation at its
edges against PyTorch 2.13.0 CPU (values and gradients, nan for nan), its arguments
(PyTorch's error kinds and sentences), what it saves, its second and third derivatives
and forward-over-reverse, and the layers' reprs. The op table rows (``op_table.CASES``:
gelu, gelu_tanh, silu, softplus, softplus_beta_threshold, leaky_relu, leaky_relu_slope)
cover random shapes, finite differences, float32, forward mode and the invariants.

Differences from PyTorch kept on purpose (``ops/activations.py`` says why), pinned by
``test_kept_differences``: gelu's Φ keeps its tiny values far left (PyTorch rounds them
to 0), softplus does not overflow under a threshold set above ~709, tensor-like inputs
(lists, NumPy arrays) are accepted as by every function of this engine, ``inplace=True``
is refused, and nn.GELU refuses a bad ``approximate`` when it is made.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

import autograd_core as ag
from autograd_core import autograd, nn
from autograd_core.autograd.functional import hvp
from autograd_core.nn import functional as F
from autograd_core.ops import special

torch = pytest.importorskip(
    "torch", reason="PyTorch is not installed: the cross-check against PyTorch 2.13.0 CPU "
    "is skipped (install it with: pip install -e '.[torch]')")
TF = torch.nn.functional

INF, NAN = np.inf, np.nan


# -- erf, erfc, Φ, φ --------------------------------------------------------------------------
def _grid() -> np.ndarray:
    """Dense in [-30, 30], geometric from subnormal to 30 on both sides, and the edges
    of Cody's intervals (0.46875, 4) with their neighbours."""
    edges = [0.46875, 4.0, 26.5, 26.6, 27.0, 27.3, 28.0, 1e300, np.finfo(float).max]
    edges += [np.nextafter(e, 0.0) for e in edges] + [np.nextafter(e, INF) for e in edges[:2]]
    tiny = np.geomspace(5e-324, 30, 20001)
    grid = np.concatenate([np.linspace(-30, 30, 120001), tiny, edges])
    return np.concatenate([grid, -grid])


def _relative_error(got: np.ndarray, want: np.ndarray, floor: float = 1e-300) -> float:
    """The largest relative error where ``want`` is a normal number (above ``floor``);
    below it (subnormal, zero), values must agree to ``floor`` absolutely."""
    normal = np.abs(want) > floor
    assert np.all(np.abs(got[~normal] - want[~normal]) <= floor)
    return float(np.max(np.abs(got[normal] - want[normal]) / np.abs(want[normal])))


def test_erf_is_float64_accurate_against_math_erf():
    x = _grid()
    want = np.array([math.erf(v) for v in x])
    assert _relative_error(special.erf(x), want) < 1e-15


def test_erfc_keeps_its_relative_accuracy_in_the_tail():
    x = _grid()
    want = np.array([math.erfc(v) for v in x])
    assert _relative_error(special.erfc(x), want) < 2e-15
    assert special.erfc(np.array(10.0)) == pytest.approx(2.088487583762545e-45, rel=1e-15)
    assert special.erfc(np.array(26.0)) > 0 and special.erfc(np.array(-26.0)) == 2.0


def test_erf_and_erfc_at_the_special_values():
    x = np.array([NAN, INF, -INF, 0.0, -0.0, 5e-324, -5e-324])
    e, c = special.erf(x), special.erfc(x)
    np.testing.assert_array_equal(e[:5], [NAN, 1.0, -1.0, 0.0, -0.0])
    assert np.signbit(e[4]) and not np.signbit(e[3])  # erf is odd: -0.0 stays -0.0
    np.testing.assert_array_equal(c[:5], [NAN, 0.0, 2.0, 1.0, 1.0])
    assert e[5] > 0 and e[6] < 0  # the smallest subnormal: 2/√π·x rounds to it
    # erf(x) + erfc(x) == 1 and erf(-x) == -erf(x) across the grid
    grid = _grid()
    np.testing.assert_allclose(special.erf(grid) + special.erfc(grid), 1.0, rtol=0,
                               atol=4.5e-16)  # two ulps of 1: each rounds once
    np.testing.assert_array_equal(special.erf(-grid), -special.erf(grid))


@pytest.mark.parametrize("dtype", [np.float32, np.float16])
def test_erf_keeps_a_floating_dtype_and_computes_in_float64(dtype):
    x = np.linspace(-5, 5, 101).astype(dtype)
    for f in (special.erf, special.erfc, special.normal_cdf, special.normal_pdf):
        got = f(x)
        assert got.dtype == dtype
        np.testing.assert_array_equal(got, f(x.astype(np.float64)).astype(dtype))


def test_erf_of_0d_empty_and_integer_inputs():
    assert special.erf(np.array(0.5)).shape == ()
    assert float(special.erf(0.5)) == math.erf(0.5)
    assert special.erfc(np.zeros((2, 0))).shape == (2, 0)
    ints = special.erf(np.array([0, 1, -2]))
    assert ints.dtype == np.float64
    np.testing.assert_allclose(ints, [0.0, math.erf(1), math.erf(-2)], rtol=1e-15, atol=0)
    non_contiguous = np.linspace(-3, 3, 24).reshape(4, 6)[:, ::2]
    np.testing.assert_allclose(special.erf(non_contiguous),
                               [[math.erf(v) for v in row] for row in non_contiguous],
                               rtol=1e-15, atol=0)


def test_normal_cdf_and_pdf():
    x = np.concatenate([np.linspace(-38, 38, 20001), [-40.0, 40.0, INF, -INF]])
    # the same argument -x·√½ on both sides: far left, erfc magnifies a last-bit change
    # of its argument t by 2t² (1500 at t = 27)
    want = np.array([0.5 * math.erfc(-v * math.sqrt(0.5)) for v in x])
    assert _relative_error(special.normal_cdf(x), want) < 2e-15
    assert np.isnan(special.normal_cdf(np.array([NAN]))).all()
    assert special.normal_cdf(np.array(-10.0)) == pytest.approx(7.619853024160527e-24,
                                                                rel=1e-13)
    pdf = np.array([math.exp(-v * v / 2) / math.sqrt(2 * math.pi) for v in x])
    np.testing.assert_allclose(special.normal_pdf(x), pdf, rtol=1e-15, atol=0)
    assert np.isnan(special.normal_pdf(np.array(NAN)))


# -- Φ and φ in float32 (what gelu computes float32 and float16 inputs with) -----------------------
def _float32_ulps(got: np.ndarray, want: np.ndarray) -> np.ndarray:
    """|got - want| in ulps of float32 at ``want`` (float64): 2^(e - 24) for want in
    [2^(e-1), 2^e), and the smallest subnormal, 2^-149, below float32's normal range."""
    _, exponent = np.frexp(want)
    ulp = np.ldexp(1.0, np.maximum(exponent - 24, -149))
    return np.abs(got.astype(np.float64) - want) / ulp


def _float32_grid() -> np.ndarray:
    """float32 points, dense in [-14.5, 14.5] (Φ underflows float32 near -14), random
    in [-5, 5], geometric from 1e-30 on both sides, and the float32 neighbours of 4 (where
    the tail switches to float64)."""
    rng = np.random.default_rng(5)
    four = np.float32(4.0)
    edges = [four, np.nextafter(four, np.float32(0)), np.nextafter(four, np.float32(INF)),
             np.float32(0.0)]
    x = np.concatenate([np.linspace(-14.5, 14.5, 290001), rng.uniform(-5, 5, 100000),
                        np.geomspace(1e-30, 14.5, 20001)]).astype(np.float32)
    x = np.concatenate([x, np.float32(edges)])
    return np.concatenate([x, -x])


def test_float32_normal_cdf_is_within_a_few_ulps_of_math_erfc():
    x = _float32_grid()
    want = np.array([0.5 * math.erfc(-float(v) / math.sqrt(2)) for v in x])
    got = special.normal_cdf_f32(x)
    assert got.dtype == np.float32
    ulps = _float32_ulps(got, want)
    normal = want >= 2.0 ** -126
    assert ulps[normal].max() <= 10  # measured 8.6 on a grid 20 times as dense
    assert ulps[x >= 0].max() <= 3  # 1 - (the tail): its error shrinks
    assert ulps[np.abs(x) > 4].max() <= 1  # computed in float64 there, then rounded
    assert ulps[~normal].max() <= 1  # subnormal results: to the smallest subnormal
    assert ulps.mean() < 1.5
    # the tail far left, not 1 - Φ(|x|) (which would round to 0 from x = -5.5 on)
    assert special.normal_cdf_f32(np.float32([-10.0]))[0] == np.float32(7.619853024160527e-24)


def test_the_tails_rational_approximation_holds_in_float64():
    """R(y) = (1 - Φ(y)) / exp(-y²/2) on [0, 15], the ratio the float32 Φ is built on
    (evaluated in float64 here: its own error, without float32's rounding)."""
    y = np.linspace(0, 15, 3001)
    want = np.array([0.5 * math.erfc(v / math.sqrt(2)) * math.exp(v * v / 2) for v in y])
    assert _relative_error(special._mills(y), want) < 1.5e-8
    assert special._mills(np.zeros(1))[0] == 0.5


def test_float32_normal_pdf_is_within_a_few_ulps_and_shares_its_cdf():
    x = _float32_grid()
    cdf, pdf = special.normal_cdf_and_pdf_f32(x)
    np.testing.assert_array_equal(cdf, special.normal_cdf_f32(x))
    want = np.array([math.exp(-float(v) ** 2 / 2) / math.sqrt(2 * math.pi) for v in x])
    normal = want >= 2.0 ** -126
    ulps = _float32_ulps(pdf, want)
    assert pdf.dtype == np.float32
    assert ulps[normal].max() <= 8  # float32's exp (2.3 ulps) and x²'s rounding
    assert ulps[normal & (np.abs(x) > 4)].max() <= 2  # float64's exp, rounded, times 1/√(2π)


def test_float32_normal_cdf_at_the_special_values():
    x = np.float32([NAN, INF, -INF, 0.0, -0.0, 1e30, -1e30, 3e38, -3e38, 1e-45])
    cdf, pdf = special.normal_cdf_and_pdf_f32(x)
    np.testing.assert_array_equal(cdf, [NAN, 1.0, 0.0, 0.5, 0.5, 1.0, 0.0, 1.0, 0.0, 0.5])
    np.testing.assert_array_equal(pdf[1:9], [0.0, 0.0, np.float32(1 / math.sqrt(2 * math.pi)),
                                             np.float32(1 / math.sqrt(2 * math.pi)),
                                             0.0, 0.0, 0.0, 0.0])
    assert np.isnan(pdf[0])
    assert special.normal_cdf_f32(np.zeros((2, 0), np.float32)).shape == (2, 0)
    zero_d = special.normal_cdf_and_pdf_f32(np.float32(0.0))
    assert [v.shape for v in zero_d] == [(), ()] and zero_d[0] == 0.5
    non_contiguous = np.linspace(-6, 6, 24, dtype=np.float32).reshape(4, 6)[:, ::2]
    np.testing.assert_array_equal(special.normal_cdf_f32(non_contiguous),
                                  special.normal_cdf_f32(non_contiguous.copy()))


@pytest.mark.parametrize("dtype, ulps", [(np.float32, 11), (np.float16, 1)])
def test_gelu_of_float32_and_float16_is_x_phi_to_float32_rounding(dtype, ulps):
    """The value x·Φ(x) and the slope Φ(x) + x·φ(x) against math.erfc and math.exp in
    float64: in ulps of float32 (float16 is computed in float32 and rounded: within one
    ulp of float16). The slope is measured against |Φ| + |x·φ|: it crosses 0 near
    x = -0.75, where its relative error is unbounded in any precision."""
    x = np.linspace(-14.5, 14.5, 58001).astype(dtype)
    t = ag.tensor(x, requires_grad=True)
    y = F.gelu(t)
    y.backward(ag.ones(x.shape, dtype=dtype))
    assert y.dtype == dtype and t.grad.dtype == dtype
    x64 = x.astype(np.float64)
    cdf = np.array([0.5 * math.erfc(-v / math.sqrt(2)) for v in x64])
    x_pdf = x64 * np.exp(-x64 * x64 / 2) / math.sqrt(2 * math.pi)
    value, slope = x64 * cdf, cdf + x_pdf
    if dtype == np.float16:
        tiny = np.finfo(np.float16).tiny
        for got, want, scale in ((y, value, np.abs(value)), (t.grad, slope, cdf + np.abs(x_pdf))):
            ulp = np.spacing(np.maximum(scale, tiny).astype(np.float16)).astype(np.float64)
            assert np.all(np.abs(got.numpy().astype(np.float64) - want) <= ulps * ulp)
        return
    normal = np.abs(value) >= 2.0 ** -126
    assert _float32_ulps(y.numpy()[normal], value[normal]).max() <= ulps
    error = np.abs(t.grad.numpy().astype(np.float64) - slope)
    # where exp(-x²/2) underflows float32 (|x| > 14.4) x·φ(x) is lost: |x| times float32's
    # smallest subnormal at most
    assert np.all(error <= ulps * 2.0 ** -23 * (cdf + np.abs(x_pdf)) + 15 * 2.0 ** -149)


# -- against PyTorch: values and gradients at the edges -------------------------------------------
def _ours(x):
    return ag.tensor(x, requires_grad=True)


def _theirs(x):
    return torch.tensor(np.array(x), requires_grad=True)


def compare(ours, theirs, x, rtol=1e-12, atol=1e-12, upstream=None):
    """Values and the gradient for the same non-uniform upstream gradient, nan for nan."""
    x = np.asarray(x)
    a, t = _ours(x), _theirs(x)
    y, ty = ours(a), theirs(t)
    assert y.dtype == x.dtype and tuple(ty.shape) == y.shape
    np.testing.assert_allclose(y.numpy(), ty.detach().numpy(), rtol=rtol, atol=atol,
                               equal_nan=True)
    g = upstream if upstream is not None else \
        np.random.default_rng(0).uniform(0.5, 1.5, y.shape).astype(x.dtype)
    y.backward(ag.tensor(g))
    ty.backward(torch.tensor(g))
    assert a.grad.dtype == x.dtype
    np.testing.assert_allclose(a.grad.numpy(), t.grad.numpy(), rtol=rtol, atol=atol,
                               equal_nan=True)
    return y, a.grad


EDGES = np.array([0.0, -0.0, 5e-324, 1e-300, -1e-300, 1e-8, -1e-8, 0.5, -0.5, 1.0, -2.5,
                  -0.7518, 6.0, -6.0, 10.0, -10.0, 19.9, 20.0, 20.1, 30.0, -30.0, 40.0, -40.0,
                  800.0, -800.0, 1e300, -1e300, INF, -INF, NAN])

ACTIVATIONS = {  # name: (ours, theirs)
    "gelu": (F.gelu, TF.gelu),
    "gelu_tanh": (lambda x: F.gelu(x, approximate="tanh"),
                  lambda x: TF.gelu(x, approximate="tanh")),
    "silu": (F.silu, TF.silu),
    "softplus": (F.softplus, TF.softplus),
    "softplus_beta_2_threshold_1": (lambda x: F.softplus(x, 2.0, 1.0),
                                    lambda x: TF.softplus(x, 2.0, 1.0)),
    "softplus_negative_beta": (lambda x: F.softplus(x, beta=-0.5, threshold=3.0),
                               lambda x: TF.softplus(x, beta=-0.5, threshold=3.0)),
    "softplus_negative_threshold": (lambda x: F.softplus(x, threshold=-1.0),
                                    lambda x: TF.softplus(x, threshold=-1.0)),
    "softplus_beta_0": (lambda x: F.softplus(x, beta=0), lambda x: TF.softplus(x, beta=0)),
    "leaky_relu": (F.leaky_relu, TF.leaky_relu),
    "leaky_relu_0.2": (lambda x: F.leaky_relu(x, 0.2), lambda x: TF.leaky_relu(x, 0.2)),
    "leaky_relu_negative_slope": (lambda x: F.leaky_relu(x, -1.5),
                                  lambda x: TF.leaky_relu(x, -1.5)),
    "leaky_relu_slope_0": (lambda x: F.leaky_relu(x, 0), lambda x: TF.leaky_relu(x, 0)),
    "leaky_relu_slope_above_1": (lambda x: F.leaky_relu(x, 3.0),
                                 lambda x: TF.leaky_relu(x, 3.0)),
}


@pytest.mark.filterwarnings("ignore::RuntimeWarning")  # PyTorch's own nan, inf
@pytest.mark.parametrize("name", ACTIVATIONS)
def test_values_and_gradients_at_the_edges_match_torch(name):
    ours, theirs = ACTIVATIONS[name]
    compare(ours, theirs, EDGES)


@pytest.mark.parametrize("name", ACTIVATIONS)
@pytest.mark.parametrize("shape", [(), (0,), (2, 0, 3), (1,), (3, 1, 2)])
def test_0d_and_empty_inputs(name, shape):
    ours, theirs = ACTIVATIONS[name]
    compare(ours, theirs, np.random.default_rng(1).normal(size=shape) * 3)


@pytest.mark.parametrize("name", ACTIVATIONS)
def test_non_contiguous_input_and_a_non_uniform_upstream(name):
    ours, theirs = ACTIVATIONS[name]
    x = np.linspace(-4, 4, 48).reshape(6, 8)[::-2, 1::3]
    compare(ours, theirs, x, upstream=np.linspace(-2, 2, x.size).reshape(x.shape))


@pytest.mark.parametrize("name", ACTIVATIONS)
def test_float32_matches_torch_and_keeps_its_dtype(name):
    """To float32 rounding of O(1) values: where tanh(x) is within an ulp of ±1, NumPy's
    float32 tanh and PyTorch's round differently (gelu_tanh's slope near x = -5)."""
    ours, theirs = ACTIVATIONS[name]
    x = np.concatenate([np.linspace(-8, 8, 97), [0.0, 25.0, -25.0]]).astype(np.float32)
    compare(ours, theirs, x, rtol=2e-6, atol=1e-5)


@pytest.mark.filterwarnings("ignore::RuntimeWarning")  # PyTorch's own nan, inf
@pytest.mark.parametrize("shape", [None, (), (0,), (2, 0, 3)])
@pytest.mark.parametrize("name", ["gelu", "gelu_tanh"])
def test_float32_gelu_at_the_edges_matches_torch(name, shape):
    """The float32 path (Φ through Mills' ratio, its tail beyond |x| = 4 in float64, the
    slope from one exp) at large |x|, ±inf, nan and subnormals (None: EDGES in float32,
    1e300 becoming inf), and 0-d and empty inputs: the values and the slope as
    PyTorch's float32 kernels give them, nan and inf where they give them, to float32
    rounding of O(1) values (atol: PyTorch's (1 + erf)/2 gives gelu(-6) = 0 where ours
    keeps -5.9e-9, and near x = -2.5 the tanh form's 1 + tanh cancels, rounded apart by
    NumPy's and PyTorch's float32 tanh)."""
    ours, theirs = ACTIVATIONS[name]
    with np.errstate(over="ignore"):
        x = (EDGES if shape is None else
             np.random.default_rng(2).normal(size=shape) * 3).astype(np.float32)
    compare(ours, theirs, x, rtol=2e-6, atol=2e-7)


@pytest.mark.parametrize("name", ACTIVATIONS)
def test_float16_matches_torch(name):
    ours, theirs = ACTIVATIONS[name]
    x = np.array([0.0, 1.5, -3.0, 0.25, -0.75, 8.0, 60000.0, -INF, INF], np.float16)
    with np.errstate(all="ignore"):
        compare(ours, theirs, x, rtol=2e-3, atol=2e-3)


def test_leaky_relu_gradient_at_zero_is_the_negative_slope_as_in_torch():
    """PyTorch's rule is "x > 0 ? g : g·negative_slope": at 0, -0.0 and nan the slope is
    negative_slope."""
    x = np.array([-1.0, -0.0, 0.0, 1.0, NAN])
    _, grad = compare(lambda t: F.leaky_relu(t, 0.2), lambda t: TF.leaky_relu(t, 0.2), x,
                      upstream=np.ones(5))
    np.testing.assert_array_equal(grad.numpy(), [0.2, 0.2, 0.2, 1.0, 0.2])
    y = F.leaky_relu(ag.tensor([-0.0, -3.0]), 0.2)
    assert np.signbit(y.numpy()[0])  # -0.0 · 0.2, as PyTorch gives


def test_softplus_switches_to_the_line_strictly_above_the_threshold():
    # beta·x == threshold: still the smooth branch, slope sigmoid(threshold), as PyTorch
    x = np.array([10.0, 10.0 + 1e-9, 9.999999, 20.0, 20.000001])
    compare(lambda t: F.softplus(t, 2.0, 20.0), lambda t: TF.softplus(t, 2.0, 20.0), x,
            upstream=np.ones(5))
    compare(F.softplus, TF.softplus, x, upstream=np.ones(5))


def test_gelu_slope_at_zero_is_one_half_and_gelu_is_x_phi():
    x = ag.tensor([0.0, 1.0, -1.0, 3.0], requires_grad=True)
    y = F.gelu(x)
    y.sum().backward()
    assert x.grad.numpy()[0] == 0.5
    phi = 0.5 * np.array([math.erfc(-v / math.sqrt(2)) for v in x.numpy()])
    np.testing.assert_allclose(y.numpy(), x.numpy() * phi, rtol=1e-15)


# -- second and third derivatives, forward over reverse --------------------------------------------
SMOOTH = ["gelu", "gelu_tanh", "silu", "softplus", "softplus_beta_2_threshold_1",
          "softplus_negative_beta", "leaky_relu_0.2"]


def _derivatives(f, x, lib, order: int):
    """d^k/dx^k of sum(f(x)), k = 1..order, each by differentiating the one before."""
    grad = autograd.grad if lib is ag else torch.autograd.grad
    out, results = f(x).sum(), []
    for _ in range(order):
        if not out.requires_grad:  # a constant: every further derivative is 0
            results.append(np.zeros(tuple(x.shape)))
            continue
        (d,) = grad(out, x, create_graph=True)
        results.append(d.detach().numpy())
        out = (d * (lib.arange(x.shape[0], dtype=lib.float64) + 1)).sum()
    return results


@pytest.mark.parametrize("name", SMOOTH)
def test_second_and_third_derivatives_match_torch(name):
    ours, theirs = ACTIVATIONS[name]
    values = np.array([-7.0, -2.5, -1.0, -0.3, 0.0, 0.4, 0.5, 1.0, 2.0, 6.0, 25.0])
    mine = _derivatives(ours, ag.tensor(values, requires_grad=True), ag, 3)
    torch_values = torch.tensor(values, requires_grad=True)
    expected = _derivatives(theirs, torch_values, torch, 3)
    for k, (a, b) in enumerate(zip(mine, expected), start=1):
        # atol: 1 - tanh² cancels where tanh is near ±1 (gelu_tanh at x = 6), in both
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-10, err_msg=f"order {k}")


def test_softplus_second_derivative_at_the_threshold_is_torchs():
    """PyTorch differentiates the slope sigmoid(βx) only where βx < threshold: at βx ==
    threshold exactly the second derivative is 0 there too, on both engines."""
    values = np.array([0.5, 0.25, 1.0])  # βx = 1.0 (the threshold), 0.5, 2.0
    mine = _derivatives(lambda t: F.softplus(t, 2.0, 1.0),
                        ag.tensor(values, requires_grad=True), ag, 2)
    theirs = _derivatives(lambda t: TF.softplus(t, 2.0, 1.0),
                          torch.tensor(values, requires_grad=True), torch, 2)
    np.testing.assert_allclose(mine[1], theirs[1], rtol=1e-12, atol=0)
    assert mine[1][0] == 0.0 and mine[1][2] == 0.0 and mine[1][1] > 0


@pytest.mark.parametrize("name", SMOOTH)
def test_hessian_vector_product_matches_torch(name):
    ours, theirs = ACTIVATIONS[name]
    rng = np.random.default_rng(3)
    x, v = rng.normal(size=(3, 4)) * 2, rng.normal(size=(3, 4))
    _, mine = hvp(lambda t: (ours(t) * ours(t)).sum(), ag.tensor(x), ag.tensor(v))
    _, expected = torch.autograd.functional.hvp(lambda t: (theirs(t) * theirs(t)).sum(),
                                                torch.tensor(x), torch.tensor(v))
    np.testing.assert_allclose(mine.numpy(), expected.numpy(), rtol=1e-10, atol=1e-12)


def test_gelus_recorded_backward_holds_a_normal_cdf_node():
    x = ag.tensor([0.3, -1.2], requires_grad=True)
    (g,) = autograd.grad(F.gelu(x).sum(), x, create_graph=True)
    names, stack, seen = set(), [g.grad_fn], set()
    while stack:
        node = stack.pop()
        if node is None or not hasattr(node, "edges") or id(node) in seen:
            continue
        seen.add(id(node))
        names.add(node.name)
        stack.extend(node.edges)
    assert "normal_cdf" in names


# -- what each op saves ---------------------------------------------------------------------------
@pytest.mark.parametrize("program, saved, itemsize", [
    (F.gelu, "a", 8), (lambda x: F.gelu(x, approximate="tanh"), "a", 8), (F.silu, "a", 8),
    (F.softplus, "a", 8), (F.leaky_relu, "mask", 1),
])
def test_each_op_saves_the_least_its_slope_needs(program, saved, itemsize):
    x = ag.tensor(np.linspace(-2, 2, 10), requires_grad=True)
    y = program(x)
    assert list(y.grad_fn.saved) == [saved]
    assert y.grad_fn.saved[saved].nbytes == 10 * itemsize
    y.sum().backward()
    assert y.grad_fn.saved[saved].released


def test_no_grad_saves_nothing():
    with ag.no_grad():
        y = F.gelu(ag.tensor([1.0, 2.0], requires_grad=True))
    assert y.grad_fn is None and not y.requires_grad


# -- arguments -------------------------------------------------------------------------------------
def raises_like(ours, theirs):
    """Both raise, the same kind of error; our message."""
    with pytest.raises(Exception) as expected:
        theirs()
    with pytest.raises(Exception) as got:
        ours()
    assert got.type is expected.type, (got.value, expected.value)
    return str(got.value)


X, TX = ag.tensor([1.0, -1.0]), torch.tensor([1.0, -1.0])


@pytest.mark.parametrize("value", [None, 1, 0.5, ["tanh"]])
def test_gelu_approximate_that_is_not_a_string(value):
    message = raises_like(lambda: F.gelu(X, approximate=value),
                          lambda: TF.gelu(TX, approximate=value))
    assert f"argument 'approximate' must be str, not {type(value).__name__}" in message
    assert "Hint:" in message


@pytest.mark.parametrize("value", ["bogus", "Tanh", "NONE", "", "erf"])
def test_gelu_approximate_that_is_neither_none_nor_tanh(value):
    message = raises_like(lambda: F.gelu(X, approximate=value),
                          lambda: TF.gelu(TX, approximate=value))
    assert message.startswith("approximate argument must be either none or tanh.")
    assert repr(value) in message


@pytest.mark.parametrize("kwargs", [dict(beta="a"), dict(beta=None), dict(threshold="a"),
                                    dict(threshold=None), dict(beta=[1.0])])
def test_softplus_numbers(kwargs):
    name, value = next(iter(kwargs.items()))
    message = raises_like(lambda: F.softplus(X, **kwargs), lambda: TF.softplus(TX, **kwargs))
    assert f"softplus(): argument '{name}' must be Number, not {type(value).__name__}" in message


@pytest.mark.parametrize("value", ["a", None, [0.1]])
def test_leaky_relu_negative_slope_must_be_a_number(value):
    message = raises_like(lambda: F.leaky_relu(X, value), lambda: TF.leaky_relu(TX, value))
    assert "argument 'negative_slope' must be Number" in message


@pytest.mark.parametrize("value", [True, 2, np.float32(0.5), np.int64(3)])
def test_numbers_of_any_kind_and_0d_tensors_are_taken(value):
    compare(lambda t: F.leaky_relu(t, value), lambda t: TF.leaky_relu(t, value), EDGES[:8])
    compare(lambda t: F.softplus(t, value, value), lambda t: TF.softplus(t, value, value),
            EDGES[:8])
    compare(lambda t: F.leaky_relu(t, ag.tensor(0.3)),
            lambda t: TF.leaky_relu(t, torch.tensor(0.3, dtype=torch.float64)), EDGES[:8])


@pytest.mark.parametrize("op", ["gelu", "silu", "softplus", "leaky_relu"])
@pytest.mark.parametrize("data", [[1, 2], [True, False]])
def test_integer_and_boolean_inputs_are_refused(op, data):
    message = raises_like(lambda: getattr(F, op)(ag.tensor(data)),
                          lambda: getattr(TF, op)(torch.tensor(data)))
    assert op in message and "floating point" in message and "Hint:" in message


@pytest.mark.parametrize("trigger", [
    lambda: F.gelu(X, approximate=None), lambda: F.gelu(X, approximate="bogus"),
    lambda: F.softplus(X, beta="a"), lambda: F.leaky_relu(X, None),
    lambda: F.silu(ag.tensor([1, 2])), lambda: F.silu(X, inplace=True),
], ids=["approximate-type", "approximate-value", "number", "slope", "integer", "inplace"])
def test_messages_are_a_sentence_and_a_hint(trigger):
    """The engine's convention (tests/engine/test_errors.py): a first line that is a
    sentence, then one 'Hint: ...' sentence."""
    with pytest.raises(Exception) as raised:
        trigger()
    lines = str(raised.value).split("\n")
    assert len(lines) == 2 and lines[0].endswith(".") and len(lines[0].split()) >= 5
    assert lines[1].startswith("Hint: ") and lines[1].endswith(".")


@pytest.mark.parametrize("op", ["gelu", "silu", "softplus", "leaky_relu"])
@pytest.mark.parametrize("value", [None, "x", {"a": 1}])
def test_an_input_that_is_not_tensor_like_is_a_type_error(op, value):
    message = raises_like(lambda: getattr(F, op)(value), lambda: getattr(TF, op)(value))
    assert op in message


# -- the layers ------------------------------------------------------------------------------------
@pytest.mark.parametrize("ours, theirs", [
    (lambda: nn.GELU(), lambda: torch.nn.GELU()),
    (lambda: nn.GELU("tanh"), lambda: torch.nn.GELU("tanh")),
    (lambda: nn.GELU(approximate="none"), lambda: torch.nn.GELU(approximate="none")),
    (lambda: nn.SiLU(), lambda: torch.nn.SiLU()),
    (lambda: nn.Softplus(), lambda: torch.nn.Softplus()),
    (lambda: nn.Softplus(2, 10), lambda: torch.nn.Softplus(2, 10)),
    (lambda: nn.Softplus(beta=0.5), lambda: torch.nn.Softplus(beta=0.5)),
    (lambda: nn.LeakyReLU(), lambda: torch.nn.LeakyReLU()),
    (lambda: nn.LeakyReLU(0.2), lambda: torch.nn.LeakyReLU(0.2)),
])
def test_layer_reprs_are_torchs(ours, theirs):
    assert repr(ours()) == repr(theirs())
    assert ours().extra_repr() == theirs().extra_repr()


def test_layers_have_no_parameters_and_nest_in_sequential():
    model = nn.Sequential(nn.Linear(3, 4, dtype=ag.float64), nn.GELU(), nn.SiLU(),
                          nn.Softplus(), nn.LeakyReLU(0.1))
    assert len(list(model.parameters())) == 2
    assert "(1): GELU(approximate='none')" in repr(model)
    assert model(ag.ones(2, 3, dtype=ag.float64)).shape == (2, 4)


def test_gelu_layer_refuses_a_bad_approximate_when_made():
    with pytest.raises(RuntimeError, match="approximate argument must be either none or tanh"):
        nn.GELU("bogus")
    with pytest.raises(TypeError, match="must be str"):
        nn.GELU(None)
    torch.nn.GELU("bogus")  # PyTorch refuses it only when called:
    with pytest.raises(RuntimeError, match="approximate argument must be either none or tanh"):
        torch.nn.GELU("bogus")(TX)


def test_layer_number_arguments_are_checked_when_made():
    with pytest.raises(TypeError, match="argument 'beta' must be Number"):
        nn.Softplus(beta="a")
    with pytest.raises(TypeError, match="argument 'negative_slope' must be Number"):
        nn.LeakyReLU(None)


# -- kept on purpose -------------------------------------------------------------------------------
def test_kept_differences():
    # gelu far left: Φ(-10) = 7.6e-24 kept; PyTorch's (1 + erf(x/√2))/2 rounds it to 0
    ours = F.gelu(ag.tensor([-10.0])).item()
    assert ours == pytest.approx(-10 * 7.619853024160527e-24, rel=1e-12)
    assert TF.gelu(torch.tensor([-10.0], dtype=torch.float64)).item() == 0.0
    # softplus under a threshold above ~709: no overflow (PyTorch: inf, and a nan slope)
    x = ag.tensor([800.0], requires_grad=True)
    y = F.softplus(x, threshold=1000.0)
    y.backward(ag.ones(1))
    assert y.item() == 800.0 and x.grad.item() == 1.0
    tx = torch.tensor([800.0], dtype=torch.float64, requires_grad=True)
    ty = TF.softplus(tx, threshold=1000.0)
    ty.backward(torch.ones(1, dtype=torch.float64))
    assert math.isinf(ty.item()) and math.isnan(tx.grad.item())
    # tensor-like inputs are taken, as by every function of this engine (PyTorch: TypeError)
    assert F.gelu([0.0, 1.0]).tolist() == F.gelu(ag.tensor([0.0, 1.0])).tolist()
    assert F.silu(np.array([1.0])).shape == (1,)
    with pytest.raises(TypeError):
        TF.gelu([0.0, 1.0])
    # inplace=True: refused here (nothing in-place is recorded), done by PyTorch
    for refuse in (lambda: F.silu(X, inplace=True), lambda: F.leaky_relu(X, 0.1, True),
                   lambda: nn.SiLU(inplace=True), lambda: nn.LeakyReLU(inplace=True)):
        with pytest.raises(NotImplementedError, match="inplace=True is not supported"):
            refuse()
    TF.silu(TX.clone(), inplace=True)
