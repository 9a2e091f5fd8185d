"""A derivative measured is not a derivative derived (the audit after issue #39).

Each route below passed an item that asks for the derivation written out: a complex step
on the learner's own NumPy forward (machine precision, so agreement alone cannot tell it),
a library that measures derivatives, finite differences inside a written backward, and
finite differences handed to a ``Gradients`` item. Each is now refused with one sentence
and solves nothing; the items' right closed forms still pass (controls).
"""

from __future__ import annotations

import numpy as np
import pytest
from test_layer_backwards import RIGHT, BatchNorm, Conv, SoftmaxCE

from autograd_core.recording.node import Function
from widgets import exercises as ex
from widgets.exercises import reset_progress
from widgets.exercises.tracking import status

H = 1e-20  # a complex step: f(x + iH).imag / H is f'(x) to machine precision


@pytest.fixture(autouse=True)
def _own_progress(tmp_path, monkeypatch):
    monkeypatch.setenv("AUTOGRAD_LESSONS_PROGRESS", str(tmp_path / "progress.json"))
    reset_progress()
    ex.forget_results()


def run(item: str, check: str, answer):
    return ex.registry()[item].run(check, answer)


# -- a complex step -------------------------------------------------------------------------


def _first(x):  # the learner's own forward of D1: tanh' (real NumPy)
    return 1 - np.tanh(x) ** 2


def d2_tanh_by_complex_step(x):
    return _first(x + H * 1j).imag / H


def d2_tanh_by_a_disguised_complex_step(x):
    step = np.array(H).astype("complex128") * np.sqrt(np.array(-1.0 + 0j))
    return getattr(_first(x + step), "im" + "ag") / H


def ce_backward_by_complex_step(logits, y):
    def loss(z):  # the learner's own forward: mean cross-entropy, safe for complex z
        return (np.log(np.exp(z).sum(axis=1)) - z[np.arange(len(y)), y]).mean()

    out = np.zeros(logits.shape)
    for i in np.ndindex(*logits.shape):
        z = logits.astype(complex)
        z[i] += H * 1j
        out[i] = loss(z).imag / H
    return out


def my_g6_by_complex_step(p):
    def loss(a, b):
        return (p.G * (a @ b)).sum()

    grads = {"dA": np.zeros(p.A.shape), "dB": np.zeros(p.B.shape)}
    for name, x in (("dA", p.A), ("dB", p.B)):
        for i in np.ndindex(*x.shape):
            moved = x.astype(complex)
            moved[i] += H * 1j
            args = (moved, p.B) if name == "dA" else (p.A, moved)
            grads[name][i] = loss(*args).imag / H
    return grads


@pytest.mark.parametrize("item, fn", [
    ("D1", d2_tanh_by_complex_step), ("D1", d2_tanh_by_a_disguised_complex_step),
    ("H3", ce_backward_by_complex_step)])
def test_a_complex_step_is_refused_in_a_derivation(item, fn):
    result = run(item, "closed_form", fn)
    assert not result.ok and result.diagnosis == "complex", repr(result)
    assert "complex numbers" in result.message and result.message.count(". ") == 0
    assert status(item) != "solved"


def test_a_complex_step_is_refused_in_a_gradients_item():
    result = run("G6", "gradients", my_g6_by_complex_step)
    assert not result.ok and result.diagnosis == "complex", repr(result)
    assert status("G6") != "solved"


def test_numpy_emath_is_complex_arithmetic_too():
    result = run("D1", "closed_form", lambda x: -2 * np.tanh(x) * np.emath.sqrt(_first(x) ** 2))
    assert not result.ok and result.diagnosis == "complex", repr(result)


# -- a library that measures derivatives -----------------------------------------------------


def test_b1_refuses_scipy_differentiate():
    differentiate = pytest.importorskip("scipy.differentiate")  # SciPy 1.15 and later

    def my_gradcheck(f, x):
        def along(i):
            def g(t):
                out = np.empty(np.shape(t))
                for k in np.ndindex(*np.shape(t)):
                    y = x.copy()
                    y.flat[i] = t[k]
                    out[k] = float(f(y))
                return out
            return g

        flat = [differentiate.derivative(along(i), x.flat[i]).df for i in range(x.size)]
        return np.array(flat, dtype=float).reshape(x.shape)

    result = run("B1", "fn", my_gradcheck)
    assert not result.ok and {p.diagnosis for p in result.parts} == {"library"}, repr(result)
    assert all("scipy.differentiate" in p.message for p in result.parts)
    assert status("B1") != "solved"


@pytest.mark.parametrize("measure", ["approx_fprime", "gradient"])
def test_a_derivation_may_not_call_a_numerical_derivative(measure):
    def d2_tanh(x):
        if measure == "gradient":  # np.gradient on a fine grid around each point
            grid = x[:, None] + np.linspace(-1e-5, 1e-5, 3)
            return np.gradient(_first(grid), 1e-5, axis=1)[:, 1]
        from scipy.optimize import approx_fprime

        return np.array([approx_fprime(np.array([v]), lambda z: _first(z[0]))[0] for v in x])

    result = run("D1", "closed_form", d2_tanh)
    assert not result.ok and result.diagnosis == "uses_engine", repr(result)
    assert "measures the derivative" in result.message


# -- finite differences inside a written backward -------------------------------------------


def _central(f, arrays: list, h: float) -> tuple:
    """Central differences of the scalar ``f(*arrays)`` in every entry of every array."""
    grads = []
    for k, a in enumerate(arrays):
        d = np.zeros(a.shape)
        for i in np.ndindex(*a.shape):
            up, down = [x.copy() for x in arrays], [x.copy() for x in arrays]
            up[k][i] += h
            down[k][i] -= h
            d[i] = (f(*up) - f(*down)) / (2 * h)
        grads.append(d)
    return tuple(grads)


class _Scratch:  # a ctx for the forward runs backward makes
    def save(self, **kw):
        pass


def _by_differences(op, h: float):
    """``op`` whose backward perturbs its own forward: central differences of g · forward."""
    class Measured(Function):
        @staticmethod
        def forward(ctx, *arrays, **params):
            ctx.save(**{f"in{k}": a for k, a in enumerate(arrays)})
            return op.forward(_Scratch(), *arrays, **params)

        @staticmethod
        def backward(ctx, g):
            arrays = [np.array(ctx.load(name)) for name in sorted(ctx.saved)]
            params = dict(ctx.params)
            return _central(lambda *xs: float((np.asarray(g) * op.forward(
                _Scratch(), *xs, **params)).sum()), arrays, h)

    Measured.__name__ = op.__name__
    return Measured


class SoftmaxCEInline(Function):
    """B6 by central differences of the loss written again inside backward."""

    @staticmethod
    def forward(ctx, logits, target):
        ctx.save(logits=logits)
        return SoftmaxCE.forward(_Scratch(), logits, target)

    @staticmethod
    def backward(ctx, g):
        logits, target = np.array(ctx.load("logits")), ctx.params["target"]
        rows = np.arange(len(target))
        return _central(lambda z: float(g) * -np.mean(
            (z - np.log(np.exp(z).sum(axis=1, keepdims=True)))[rows, target]), [logits], 1e-5)


@pytest.mark.parametrize("item, op, h", [
    ("B2", Conv, 1e-5), ("B2", Conv, 1.0),  # exact for a linear op: only the reruns tell
    ("B4", BatchNorm, 1e-5), ("B6", SoftmaxCE, 1e-5)])
def test_finite_differences_of_its_own_forward_in_a_backward_are_refused(item, op, h):
    result = run(item, "op", _by_differences(op, h))
    assert not result.ok and result.diagnosis == "numerical", repr(result)
    assert "finite differences" in result.message
    assert status(item) != "solved"


def test_finite_differences_of_the_loss_written_again_are_refused_by_their_accuracy():
    result = run("B6", "op", SoftmaxCEInline)
    assert not result.ok, repr(result)
    dlogits = next(p for p in result.parts if p.name == "dlogits")
    assert dlogits.diagnosis == "not_closed_form", repr(result)
    assert status("B6") != "solved"


@pytest.mark.parametrize("item, spec", [("B2", "conv2d"), ("B4", "batch_norm"),
                                        ("B6", "softmax_cross_entropy")])
def test_the_right_backwards_still_pass(item, spec):
    assert run(item, "op", RIGHT[spec]).ok


# -- finite-difference accuracy in a Gradients item ------------------------------------------


def my_g6(p):
    return {"dA": p.G @ p.B.T, "dB": p.A.T @ p.G}


def test_a_gradients_part_at_finite_difference_accuracy_looks_measured():
    """Each part off by one part in 10⁸ (what central differences reach) gets the
    sentence; the closed form itself is right."""
    def measured(p):
        return {k: v * (1 + 1e-8) for k, v in my_g6(p).items()}

    result = run("G6", "gradients", measured)
    assert not result.ok
    assert {p.diagnosis for p in result.parts} == {"not_closed_form"}, repr(result)
    assert all("finite differences" in p.message for p in result.parts)
    assert run("G6", "gradients", my_g6).ok


def test_the_refusals_cost_the_engine_nothing():
    """The watch is installed only around the learner's function: an engine op outside it
    runs without a profile hook."""
    import sys

    import autograd_core as ag

    before = sys.getprofile()
    run("G6", "gradients", my_g6)
    assert sys.getprofile() is before
    (ag.tensor(np.ones(3), requires_grad=True) * 2).sum().backward()
