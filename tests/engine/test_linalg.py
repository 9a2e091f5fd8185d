"""det, inv, solve, slogdet and trace at their edges, each against PyTorch 2.13 CPU on
the same values, and identities of The Matrix Cookbook (Petersen & Pedersen 2012)
checked as written there.

The op table (helpers/op_table.py) already holds every one of these ops to central
differences for the gradient and the second derivative, to forward mode and to
PyTorch on well-conditioned random matrices. Here: empty matrices, nan and inf, float32
and float16, the dims and dtypes refused, a singular matrix (where the engine refuses a
gradient PyTorch gives: the README's table of differences says so), and the third
derivative (against central differences of the Hessian).
"""

from __future__ import annotations

import numpy as np
import pytest

import autograd_core as ag
from autograd_core import func

torch = pytest.importorskip(
    "torch", reason="PyTorch is not installed: the cross-check against PyTorch 2.13.0 CPU "
    "is skipped (install it with: pip install -e '.[torch]')")

pytestmark = pytest.mark.torch
RNG = np.random.default_rng(41)

PROGRAMS = {  # name: (program(library, A, B)), B used by solve only
    "det": lambda lib, a, b: lib.linalg.det(a),
    "inv": lambda lib, a, b: lib.linalg.inv(a),
    "slogdet": lambda lib, a, b: lib.linalg.slogdet(a).logabsdet,
    "solve": lambda lib, a, b: lib.linalg.solve(a, b),
}


def _run(lib, program, a, b, upstream=True):
    """(output, gradients of A and B) of ``program`` on ``lib`` (ag or torch)."""
    make = torch.tensor if lib is torch else ag.tensor
    ta, tb = make(a, requires_grad=True), make(b, requires_grad=True)
    out = program(lib, ta, tb)
    if upstream:
        seed = np.ones(tuple(out.shape), dtype=a.dtype)
        out.backward(make(seed) if lib is torch else seed)
    grads = [None if t.grad is None else np.asarray(t.grad.numpy()) for t in (ta, tb)]
    return np.asarray(out.detach().numpy()), grads


def _same(ours, theirs, **tolerance):
    np.testing.assert_allclose(ours, theirs, equal_nan=True, **tolerance)


# -- empty, nan, inf, float32 -----------------------------------------------------------
@pytest.mark.parametrize("name", PROGRAMS)
@pytest.mark.parametrize("shape", [(0, 0), (2, 0, 0)], ids=str)
def test_empty_matrices_match_torch(name, shape):
    a, b = np.zeros(shape), np.zeros(shape[:-1] + (2,))
    ours, (da, db) = _run(ag, PROGRAMS[name], a, b)
    theirs, (ta, tb) = _run(torch, PROGRAMS[name], a, b)
    assert ours.shape == theirs.shape and da.shape == ta.shape
    _same(ours, theirs)


@pytest.mark.parametrize("name", ["det", "inv", "slogdet"])
@pytest.mark.parametrize("bad", [np.nan, np.inf], ids=["nan", "inf"])
def test_nan_and_inf_entries_give_torchs_values(name, bad):
    a = np.array([[2.0, bad], [1.0, 3.0]])
    ours, _ = _run(ag, PROGRAMS[name], a, a, upstream=False)
    theirs, _ = _run(torch, PROGRAMS[name], a, a, upstream=False)
    _same(ours, theirs)


def test_a_nan_entry_gives_nan_gradients_of_det_as_in_torch():
    a = np.array([[2.0, np.nan], [1.0, 3.0]])
    _, (ours, _) = _run(ag, PROGRAMS["det"], a, a)
    _, (theirs, _) = _run(torch, PROGRAMS["det"], a, a)
    assert np.isnan(ours).all() and np.isnan(theirs).all()


@pytest.mark.parametrize("name", PROGRAMS)
def test_float32_values_and_gradients_match_torch(name):
    a = (RNG.standard_normal((2, 3, 3)) + 4 * np.eye(3)).astype(np.float32)
    b = RNG.standard_normal((2, 3, 2)).astype(np.float32)
    ours, our_grads = _run(ag, PROGRAMS[name], a, b)
    theirs, their_grads = _run(torch, PROGRAMS[name], a, b)
    assert ours.dtype == np.float32
    _same(ours, theirs, rtol=1e-5, atol=1e-5)
    for g, t in zip(our_grads, their_grads):
        if t is not None:
            assert g.dtype == np.float32
            _same(g, t, rtol=1e-4, atol=1e-5)


def test_trace_of_rectangular_empty_and_float16_matrices_matches_torch():
    for a in (RNG.standard_normal((2, 4)), np.zeros((0, 3)),
              np.full((64, 64), 100.0, dtype=np.float16)):
        x, t = ag.tensor(a, requires_grad=True), torch.tensor(a, requires_grad=True)
        ours, theirs = ag.trace(x), torch.trace(t)
        ours.backward(), theirs.backward()
        assert ours.dtype == a.dtype
        _same(ours.numpy(), theirs.detach().numpy())
        _same(x.grad.numpy(), t.grad.numpy())


# -- what is refused, and how -----------------------------------------------------------
@pytest.mark.parametrize("name", ["det", "inv", "slogdet"])
@pytest.mark.parametrize(("value", "words"), [
    (np.float64(2.0), "at least 2 dimensions"),
    (np.ones(3), "at least 2 dimensions"),
    (np.ones((3, 4)), "square matrices, but they are 3 by 4"),
    (np.eye(2, dtype=np.float16), "float16 is not supported"),
    (np.eye(2, dtype=np.int64), "Expected a floating point or complex tensor as input. Got "
                                "Long"),
], ids=["0-d", "1-d", "3x4", "float16", "int64"])
def test_what_torch_refuses_gets_a_sentence_with_a_hint(name, value, words):
    with pytest.raises((RuntimeError, NotImplementedError)) as ours:
        PROGRAMS[name](ag, ag.tensor(value), None)
    with pytest.raises((RuntimeError, NotImplementedError)):
        PROGRAMS[name](torch, torch.tensor(value), None)
    assert words in str(ours.value) and "\nHint: " in str(ours.value)
    assert f"linalg.{name}" in str(ours.value)


@pytest.mark.parametrize(("a", "b", "words"), [
    (np.eye(3), np.ones((4, 2)), "Incompatible shapes of A and B for the equation AX = B "
                                 "(3x3 and 4x2)"),
    (np.eye(3), np.ones(4), "(3x3 and 4x1)"),
    (np.stack([np.eye(3)] * 2), np.ones((3, 3, 1)), "Incompatible shapes"),
    (np.eye(3), np.ones((3, 2), dtype=np.float32), "same dtype"),
], ids=["rows", "vector", "batches", "dtype"])
def test_solve_of_what_does_not_fit_says_so_as_torch_does(a, b, words):
    with pytest.raises(RuntimeError) as ours:
        ag.linalg.solve(ag.tensor(a), ag.tensor(b))
    with pytest.raises(RuntimeError):
        torch.linalg.solve(torch.tensor(a), torch.tensor(b))
    assert words in str(ours.value)


def test_trace_takes_one_matrix_as_torch_does():
    for value in (np.ones(3), np.ones((2, 3, 3)), np.float64(1.0)):
        with pytest.raises(RuntimeError, match="trace: expected a matrix"):
            ag.trace(ag.tensor(value))
        with pytest.raises(RuntimeError):
            torch.trace(torch.tensor(value))


SINGULAR = np.array([[1.0, 2.0], [2.0, 4.0]])  # rank 1: the second row is twice the first


@pytest.mark.parametrize("name", ["inv", "solve"])
def test_inv_and_solve_of_a_singular_matrix_are_refused_as_in_torch(name):
    with pytest.raises(RuntimeError, match="singular") as ours:
        PROGRAMS[name](ag, ag.tensor(SINGULAR), ag.ones(2, 1))
    with pytest.raises(RuntimeError, match="singular"):
        PROGRAMS[name](torch, torch.tensor(SINGULAR), torch.ones(2, 1, dtype=torch.float64))
    assert "\nHint: " in str(ours.value)


def test_det_and_slogdet_of_a_singular_matrix_are_torchs_values():
    a, t = ag.tensor(SINGULAR), torch.tensor(SINGULAR)
    assert ag.linalg.det(a).item() == torch.linalg.det(t).item() == 0.0
    ours, theirs = ag.linalg.slogdet(a), torch.linalg.slogdet(t)
    assert ours.sign.item() == theirs.sign.item() == 0.0
    assert ours.logabsdet.item() == theirs.logabsdet.item() == -np.inf


@pytest.mark.parametrize("name", ["det", "slogdet"])
def test_the_gradient_at_a_singular_matrix_is_refused_not_made_up(name):
    """A deliberate difference (README): PyTorch answers here, the engine says A⁻¹, which
    the gradient needs, does not exist."""
    x = ag.tensor(SINGULAR, requires_grad=True)
    with pytest.raises(RuntimeError, match="singular") as refused:
        PROGRAMS[name](ag, x, None).backward()
    assert "det(A) A⁻ᵀ" in str(refused.value) and x.grad is None


def test_torchs_det_gradient_at_a_singular_matrix_is_not_its_derivative():
    """Why the engine refuses there: det is a polynomial, so its derivative exists at a
    singular A too (the cofactors: [[4, -2], [-2, 1]] here, by central differences), but
    PyTorch 2.13 returns zeros."""
    step, measured = 1e-6, np.zeros((2, 2))
    for i, j in np.ndindex(2, 2):
        nudge = np.zeros((2, 2))
        nudge[i, j] = step
        measured[i, j] = (np.linalg.det(SINGULAR + nudge)
                          - np.linalg.det(SINGULAR - nudge)) / (2 * step)
    np.testing.assert_allclose(measured, [[4.0, -2.0], [-2.0, 1.0]], atol=1e-6)
    t = torch.tensor(SINGULAR, requires_grad=True)
    torch.linalg.det(t).backward()
    assert np.array_equal(t.grad.numpy(), np.zeros((2, 2)))


def test_slogdet_sign_has_no_gradient_and_its_values_give_det():
    a = RNG.standard_normal((4, 3, 3))
    sign, logabsdet = ag.linalg.slogdet(ag.tensor(a, requires_grad=True))
    assert not sign.requires_grad and logabsdet.requires_grad
    np.testing.assert_allclose(sign.numpy() * np.exp(logabsdet.numpy()), np.linalg.det(a),
                               rtol=1e-12)


# -- The Matrix Cookbook's identities, as written there ---------------------------------
def _gradient(f, *arrays):
    leaves = [ag.tensor(x, requires_grad=True) for x in arrays]
    f(*leaves).backward()
    return [x.grad.numpy() for x in leaves]


def test_cookbook_identities_of_det_inverse_and_trace():
    """(49) ∂det(X)/∂X = det(X) X⁻ᵀ; (57) ∂ln|det(X)|/∂X = X⁻ᵀ; (100) ∂tr(XA)/∂X = Aᵀ;
    (63) ∂tr(AX⁻¹B)/∂X = -(X⁻¹BAX⁻¹)ᵀ; (61) ∂aᵀX⁻¹b/∂X = -X⁻ᵀabᵀX⁻ᵀ: the right-hand sides in
    NumPy, the left by the engine."""
    x = RNG.standard_normal((4, 4)) + 4 * np.eye(4)
    a, b = RNG.standard_normal((4, 4)), RNG.standard_normal((4, 4))
    u, v = RNG.standard_normal(4), RNG.standard_normal(4)
    inv_t = np.linalg.inv(x).T
    cases = [
        (lambda X: ag.linalg.det(X), np.linalg.det(x) * inv_t),
        (lambda X: ag.linalg.slogdet(X).logabsdet, inv_t),
        (lambda X: ag.trace(X @ ag.tensor(a)), a.T),
        (lambda X: ag.trace(ag.tensor(a) @ ag.linalg.inv(X) @ ag.tensor(b)),
         -(np.linalg.inv(x) @ b @ a @ np.linalg.inv(x)).T),
        (lambda X: ag.tensor(u) @ ag.linalg.inv(X) @ ag.tensor(v),
         -inv_t @ np.outer(u, v) @ inv_t),
        (lambda X: (ag.linalg.solve(X, ag.tensor(v)) * ag.tensor(u)).sum(),
         -inv_t @ np.outer(u, v) @ inv_t),
    ]
    for f, expected in cases:
        np.testing.assert_allclose(_gradient(f, x)[0], expected, rtol=1e-10, atol=1e-12)


def test_hessian_of_log_det_matches_torch_and_the_identity():
    """The Hessian of ln det(X) along X is -X⁻ᵀ ⊗ X⁻¹ as a 4-index array:
    ∂²/∂X_ij∂X_kl = -(X⁻¹)_jk (X⁻¹)_li."""
    x = RNG.standard_normal((3, 3)) + 3 * np.eye(3)
    ours = func.hessian(lambda X: ag.linalg.slogdet(X).logabsdet)(ag.tensor(x)).numpy()
    theirs = torch.func.hessian(lambda X: torch.linalg.slogdet(X).logabsdet)(torch.tensor(x))
    inv = np.linalg.inv(x)
    np.testing.assert_allclose(ours, -np.einsum("jk,li->ijkl", inv, inv), rtol=1e-10,
                               atol=1e-12)
    np.testing.assert_allclose(ours, theirs.numpy(), rtol=1e-10, atol=1e-12)


def test_third_derivative_of_det_matches_central_differences_of_its_hessian():
    """Three rules deep (det's rule records inv, whose rule records matmuls): the
    Jacobian of the Hessian against central differences of the Hessian."""
    x = RNG.standard_normal((3, 3)) + 3 * np.eye(3)

    def hessian_at(values):
        return func.hessian(ag.linalg.det)(ag.tensor(values)).numpy()

    third = func.jacrev(func.hessian(ag.linalg.det))(ag.tensor(x)).numpy()
    step, measured = 1e-5, np.zeros_like(third)
    for i, j in np.ndindex(3, 3):
        nudge = np.zeros((3, 3))
        nudge[i, j] = step
        measured[..., i, j] = (hessian_at(x + nudge) - hessian_at(x - nudge)) / (2 * step)
    np.testing.assert_allclose(third, measured, rtol=1e-7, atol=1e-8)
