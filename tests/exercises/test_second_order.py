"""Lesson 14's items (D1–D4): the engine's expected values against closed forms written
here in NumPy, the worked solutions solve, every mistake builder is named by its check,
a function with the lesson's sizes built in fails on the second case, D3 tells a whole
Hessian from a Hessian-vector product by its counted cost, and Newton's method with the
worked step beats gradient descent in the lesson's race."""

from __future__ import annotations

import numpy as np
import pytest
from solutions import words

import autograd_core as ag
from autograd_core import autograd
from widgets import exercises as ex
from widgets.exercises import reset_progress
from widgets.exercises.second_order import (
    MAX_GRADIENTS,
    cost_table,
    logistic,
    network,
    newton_run,
    tanh_points,
)
from widgets.exercises.second_order.curvature import _network_mistakes, _tanh_mistakes
from widgets.exercises.second_order.newton import _newton_mistakes
from widgets.exercises.second_order.problems import _engine_tanh_second
from widgets.exercises.second_order.products import _hvp_mistakes


@pytest.fixture(autouse=True)
def _own_progress(tmp_path, monkeypatch):
    monkeypatch.setenv("AUTOGRAD_LESSONS_PROGRESS", str(tmp_path / "progress.json"))
    reset_progress()


def solution(item: str, name: str):
    scope = {"np": np, "ag": ag, "autograd": autograd}
    exec(words(item)["solution"], scope)
    return scope[name]


def closed_form_hessian(net) -> np.ndarray:
    t = np.tanh(net.X @ net.W)
    r, n = t @ net.u - net.y, len(net.y)
    hess = np.zeros(net.W.shape * 2)
    for a in range(net.W.shape[0]):
        for j in range(net.W.shape[1]):
            for b in range(net.W.shape[0]):
                for m in range(net.W.shape[1]):
                    d1 = net.u[j] * (1 - t[:, j] ** 2) * net.X[:, a]
                    d2 = net.u[m] * (1 - t[:, m] ** 2) * net.X[:, b]
                    curve = (j == m) * r * net.u[j] * -2 * t[:, j] * (1 - t[:, j] ** 2) \
                        * net.X[:, a] * net.X[:, b]
                    hess[a, j, b, m] = 2 / n * np.sum(d1 * d2 + curve)
    return hess


def test_the_engines_expected_values_match_closed_forms():
    x = tanh_points()
    t = np.tanh(x)
    np.testing.assert_allclose(_engine_tanh_second(x), -2 * t * (1 - t ** 2), atol=1e-14)
    for net in (network(), network(seed=143, n=5, d=2, k=4)):
        np.testing.assert_allclose(net._hessian(), closed_form_hessian(net), atol=1e-12)
        v = np.arange(net.size, dtype=float).reshape(net.W.shape)
        np.testing.assert_allclose(net._hvp(v), (closed_form_hessian(net).reshape(
            net.size, net.size) @ v.ravel()).reshape(net.W.shape), atol=1e-12)


@pytest.mark.parametrize("item, name", [("D1", "d2_tanh"), ("D2", "mlp_hessian"),
                                        ("D3", "my_hvp"), ("D4", "newton_step")])
def test_the_worked_solution_solves_and_none_does_not(item, name):
    exercise = ex.registry()[item]
    assert exercise.check(solution(item, name)).ok
    result = exercise.check(lambda *args: None)
    assert not result.ok and result.diagnosis == "none"


def test_every_mistake_builder_is_named():
    x = tanh_points()
    for m in _tanh_mistakes(x):
        assert ex.D1.check(lambda a, m=m, x=x: m.candidate if a.shape == x.shape else
                          solution("D1", "d2_tanh")(a)).diagnosis == m.code
    net = network()
    right = solution("D2", "mlp_hessian")
    for m in _network_mistakes(net):
        def wrong(X, W, u, y, m=m):
            return m.candidate if X.shape == net.X.shape else right(X, W, u, y)

        assert ex.D2.check(wrong).diagnosis == m.code
    problem, w0 = logistic()
    g, H = problem.gradient_and_hessian(w0)
    for m in _newton_mistakes(w0, g, H):
        assert ex.D4.check(lambda w, g_, H_, m=m: m.candidate if w.shape == w0.shape
                          else solution("D4", "newton_step")(w, g_, H_)).diagnosis == m.code


def test_d3_names_the_gradient_and_the_product_with_v():
    net = network()
    v = np.random.default_rng(145).standard_normal(net.W.shape)
    codes = [m.code for m in _hvp_mistakes(net, v)]
    assert ex.D3.check(lambda f, W, v: autograd.grad(f(W), W)[0]).diagnosis == codes[0]
    assert ex.D3.check(lambda f, W, v: autograd.grad(f(W), W)[0] * v).diagnosis == codes[1]


def test_the_lessons_sizes_built_in_fail_on_the_second_case():
    lesson_x = tanh_points()
    right = solution("D1", "d2_tanh")
    result = ex.D1.check(lambda x: right(lesson_x))
    assert not result.ok and "but not on 50 other points" in result.message


def test_d3_tells_the_whole_hessian_from_a_product_by_its_cost():
    def whole_hessian_first(loss_fn, W, v):
        (g,) = autograd.grad(loss_fn(W), W, create_graph=True)
        rows = [autograd.grad(g.reshape(-1)[i], W, retain_graph=True)[0].numpy().ravel()
                for i in range(W.numel())]
        return (np.array(rows) @ v.numpy().ravel()).reshape(W.shape)

    result = ex.D3.check(whole_hessian_first)
    assert not result.ok and result.diagnosis == "too_costly"

    from autograd_core.autograd.functional import hvp

    assert ex.D3.check(lambda f, W, v: hvp(f, W, v)[1]).diagnosis == "library"


def test_the_cost_table_grows_with_n_for_the_hessian_only():
    rows = cost_table((2, 8))
    for row in rows:
        assert row.hvp < MAX_GRADIENTS * row.gradient / 2
        assert row.hessian >= row.weights * row.hvp * 0.9
    assert rows[1].hessian / rows[1].gradient > 2 * rows[0].hessian / rows[0].gradient


def test_newton_with_the_worked_step_beats_gradient_descent():
    run = newton_run(solution("D4", "newton_step"))
    assert run.newton[-1] < run.descent[-1]
    assert run.newton[-1] <= run.newton[-2] + 1e-15
    unwritten = newton_run(lambda w, g, H: None)
    assert unwritten.newton is None and "returns None" in unwritten.note
    assert "Newton" in str(unwritten) and unwritten.plot().alt


def test_a_function_that_asks_the_engine_is_told_to_derive_it():
    from widgets.exercises.second_order.problems import _engine_tanh_second

    result = ex.D1.check(_engine_tanh_second)
    assert not result.ok and result.diagnosis == "uses_engine"

    def engine_hessian(X, W, u, y):
        from widgets.exercises.second_order.problems import Network

        return Network(X, W, u, y)._hessian()

    assert ex.D2.check(engine_hessian).diagnosis == "uses_engine"
    assert ex.D3.check(solution("D3", "my_hvp")).ok  # D3 is written with the engine


def test_finite_differences_do_not_pass_for_the_closed_form():
    """Issue #39: D1 asks for tanh'' written out. Central differences of tanh' at the best
    step agree with the engine to about 1e-10 (they passed before); they are now told apart
    from a closed form, with a sentence that says why, and nothing is solved."""
    def by_differences(x, h=1e-5):
        first = lambda z: 1 - np.tanh(z) ** 2  # noqa: E731
        return (first(x + h) - first(x - h)) / (2 * h)

    result = ex.D1.check(by_differences)
    assert not result.ok and result.diagnosis == "not_closed_form", repr(result)
    assert "finite differences" in result.message
    assert ex.D1.check(solution("D1", "d2_tanh")).ok


def test_d3_refuses_the_library_hvp_however_it_is_reached():
    """Reading the function's own names missed ``getattr(func, "h" + "vp")``; the call
    itself is what is watched now."""
    import autograd_core.func as func

    library = getattr(func, "h" + "vp")

    def my_hvp(loss_fn, W, v):
        return library(loss_fn, W, v)[1]

    result = ex.D3(my_hvp)
    assert not result.ok and result.diagnosis == "library", repr(result)


def test_d3_a_difference_of_two_gradients_is_a_measurement_not_h_times_v():
    """The fifth audit: (grad(W + h·v) − grad(W − h·v)) / 2h, two plain sweeps, passed D3.
    Two sweeps through the first's graph are exact; the nudge agrees only to ~1e-8."""
    import autograd_core as ag

    def nudged_hvp(loss_fn, W, v, h=1e-5):
        grads = []
        for sign in (1, -1):
            w = ag.tensor(W.numpy() + sign * h * v.numpy(), requires_grad=True)
            (g,) = ag.autograd.grad(loss_fn(w), w)
            grads.append(g.numpy())
        return ag.tensor((grads[0] - grads[1]) / (2 * h))

    result = ex.D3(nudged_hvp)
    assert not result.ok and result.diagnosis == "not_closed_form", result.message
