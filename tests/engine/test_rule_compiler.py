"""An op's rule text compiled into the backward that runs (autograd_core/recording/rule.py).

An op that writes no ``backward`` gets one compiled from its ``rule``: these tests
check what the compiled code does (each gradient only when its input needs it, each
saved array loaded once, params with their defaults, a second derivative through the
same text), that a wrong rule is caught by finite differences (a rule that is the code
can no longer be checked against the code), and that a rule that is not code is
refused with a sentence when the class is created.
"""

from __future__ import annotations

import numpy as np
import pytest

import autograd_core as ag
from autograd_core import autograd
from autograd_core.errors import GradcheckError
from autograd_core.ops import elementwise as ew
from autograd_core.recording.node import Function
from autograd_core.recording.rule import PLAIN, RECORDED
from autograd_core.tools.gradcheck import gradcheck, gradgradcheck


class Cube(Function):
    """f(a) = a**3 * scale, defined by its forward and its rule alone."""

    name = "cube"
    rule = "da = g * 3 * a**2 * scale   (a note, not run)"
    elementwise = True

    @staticmethod
    def forward(ctx, a, scale=2.0):
        ctx.save(a=a)
        return a ** 3 * scale


def _leaf(*shape, seed=0):
    return ag.tensor(np.random.default_rng(seed).standard_normal(shape), requires_grad=True)


def test_an_op_with_a_forward_and_a_rule_has_a_gradient_and_a_second_one():
    x = _leaf(5)
    a = x.numpy()
    (g,) = autograd.grad(Cube.apply(x).sum(), x, create_graph=True)
    np.testing.assert_allclose(g.numpy(), 6 * a**2, rtol=1e-14)  # scale's default, 2
    (h,) = autograd.grad(g.sum(), x)
    np.testing.assert_allclose(h.numpy(), 12 * a, rtol=1e-14)
    assert gradcheck(lambda t: Cube.apply(t, scale=0.5), (x,))
    assert gradgradcheck(lambda t: Cube.apply(t, scale=0.5), (x,))


def test_forward_mode_of_an_elementwise_rule_puts_the_tangent_in_gs_place():
    x, v = _leaf(4), np.arange(4.0)
    _, tangent = ag.func.jvp(lambda t: Cube.apply(t), (x,), (ag.tensor(v),))
    np.testing.assert_allclose(tangent.numpy(), v * 6 * x.numpy()**2, rtol=1e-14)
    assert Cube.jvp.__doc__ == "dout = ta * 3 * a**2 * scale"


def test_each_gradient_is_computed_only_when_its_input_needs_it_and_loads_once():
    a, b = _leaf(3), ag.tensor([1.0, 2.0, 4.0])  # b is a constant: db is never computed
    out = ew.Div.apply(a, b)
    node = out.grad_fn
    node.reads = []
    da, db = ew.Div.backward(node, np.ones(3))
    assert db is None and node.reads == ["b"]
    np.testing.assert_array_equal(da, [1.0, 0.5, 0.25])
    a, b = _leaf(3), _leaf(3, seed=1)  # both need one: b is read once, for both lines
    node = ew.Div.apply(a, b).grad_fn
    node.reads = []
    ew.Div.backward(node, np.ones(3))
    assert sorted(node.reads) == ["a", "b"]


def test_a_wrong_rule_is_caught_by_finite_differences():
    class WrongSqrt(Function):
        name = "wrong_sqrt"
        rule = "da = g / out"  # the factor 1/2 left out

        @staticmethod
        def forward(ctx, a):
            out = np.sqrt(a)
            ctx.save(out=out)
            return out

    x = ag.tensor([0.5, 1.0, 2.0], requires_grad=True)
    with pytest.raises(GradcheckError, match="input 0"):
        gradcheck(lambda t: WrongSqrt.apply(t), (x,))


@pytest.mark.parametrize("rule, says", [
    ("da is g times b", "cannot be compiled into its backward: invalid syntax"),
    ("da[0] = g", "does not assign one name"),
    ("t = g * b", "no line gives an input its gradient (e.g. 'da = ...')"),
])
def test_a_rule_that_is_not_code_is_refused_when_the_class_is_made(rule, says):
    with pytest.raises(SyntaxError) as caught:
        type("Prose", (Function,), {"name": "prose", "rule": rule,
                                    "forward": staticmethod(lambda ctx, a, b: a * b)})
    assert says in str(caught.value) and "Hint: " in str(caught.value)


def test_an_op_that_writes_its_backward_keeps_it_and_its_rule_stays_text():
    class Written(Function):
        name = "written"
        rule = "the gradient, said in words"

        @staticmethod
        def forward(ctx, a):
            return a

        @staticmethod
        def backward(ctx, g):
            return (g,)

    assert not hasattr(Written, "backward_source")
    assert Written.backward(None, 1.0) == (1.0,)


def test_a_function_the_recorded_namespace_lacks_is_named():
    assert PLAIN.provides("cosh") and not RECORDED.provides("cosh")
    with pytest.raises(AttributeError, match="'cosh'"):
        RECORDED.cosh  # noqa: B018 - the lookup is the test


def test_the_readmes_op_of_your_own_runs_as_it_says():
    """The README shows an op written as a forward and a rule: it runs as the text says."""
    import re
    from pathlib import Path

    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text()
    block = re.search(r"```python\n(from autograd_core.recording.node import Function\n"
                      r"\nclass Cube.*?)```", readme, re.S).group(1)
    scope: dict = {}
    exec(block, scope)  # noqa: S102 - the README's own code
    x = ag.tensor([1.0, 2.0], requires_grad=True)
    (g,) = autograd.grad(scope["Cube"].apply(x).sum(), x, create_graph=True)
    (h,) = autograd.grad(g.sum(), x)
    _, tangent = ag.func.jvp(scope["Cube"].apply, (x,), (ag.tensor([1.0, 1.0]),))
    np.testing.assert_allclose([g.numpy(), h.numpy(), tangent.numpy()],
                               [[3.0, 12.0], [6.0, 12.0], [3.0, 12.0]])


def test_masks_combine_with_and_or_not_as_numpy_does():
    """A rule combines comparisons with ``&`` (pow's ``(a == 0) & (b >= 0)``): on the
    Tensors of a recorded sweep as on arrays."""
    values = np.array([-1.0, 0.0, 0.0, 2.0])
    exponents = np.array([1.0, 1.0, -1.0, 0.0])
    x, y = ag.tensor(values), ag.tensor(exponents)
    np.testing.assert_array_equal(((x == 0) & (y >= 0)).numpy(), [False, True, False, False])
    np.testing.assert_array_equal(((x == 0) | (y == 0)).numpy(), [False, True, True, True])
    np.testing.assert_array_equal((~(x == 0)).numpy(), [True, False, False, True])


def test_a_helper_line_of_an_elementwise_rule_reads_before_its_forward_mode():
    from autograd_core.ops.elementwise import Pow
    assert Pow.jvp.__doc__.splitlines() == [
        "flat = (a == 0) & (b >= 0)",
        "dout = ta * where(b == 0, 0, b * a**(b - 1)) + tb * where(flat, 0, out * log(where("
        "flat, 1, a)))"]


def test_pows_second_derivatives_at_its_edges_are_pytorchs():
    """Where a == 0 the rule takes log(1), not log(0): no -inf reaches the second
    derivative (0 * -inf would be nan). PyTorch's values, written out: for a**b at
    a = 0, b = 2, d²/da² = b(b-1)a^(b-2) = 2, d²/db² = a^b log(a)² -> 0, and the
    mixed one is 0; at a = 2, b = 0: d²/db² = log(2)², d²/da² = 0."""
    a = ag.tensor([0.0, 2.0], requires_grad=True)
    b = ag.tensor([2.0, 0.0], requires_grad=True)
    da, db = autograd.grad((a ** b).sum(), (a, b), create_graph=True)
    daa, dab = autograd.grad(da.sum(), (a, b))
    dba, dbb = autograd.grad(db.sum(), (a, b))
    np.testing.assert_allclose(daa.numpy(), [2.0, 0.0])
    np.testing.assert_allclose(dbb.numpy(), [0.0, np.log(2.0) ** 2])
    assert np.isfinite(dab.numpy()).all() and np.isfinite(dba.numpy()).all()


@pytest.mark.parametrize("shape, dim, correction", [
    ((2, 0), 1, 1), ((1,), 0, 1), ((1,), None, 1), ((3,), 0, 3), ((3,), None, 3),
    ((2,), 0, 3), ((3,), None, 5), ((), None, 1), ((2, 3), (0, 1), 6), ((4, 3), 1, 1),
])
def test_vars_recorded_rule_keeps_the_edges_of_its_fast_path(shape, dim, correction):
    """var's rule, recorded from the centred input standing in for a, gives the values
    backward() computes from the saved array, nan and inf where n <= correction."""
    values = np.random.default_rng(1).standard_normal(shape)
    upstream = np.random.default_rng(2).standard_normal(np.sum(values, axis=dim).shape)
    grads = []
    for create_graph in (False, True):
        x = ag.tensor(values, requires_grad=True)
        y = (x * 1.0).var(dim=dim, correction=correction)  # computed: a stand-in is used
        (grad,) = autograd.grad(y, x, ag.tensor(upstream), create_graph=create_graph)
        grads.append(grad.detach().numpy())
    np.testing.assert_allclose(grads[1], grads[0], rtol=1e-12, atol=1e-12)  # nan for nan


@pytest.mark.parametrize("a_shape, b_shape", [
    ((3,), (3,)), ((3,), (3, 2)), ((2, 3), (3,)), ((4, 2, 3), (3,)), ((3,), (4, 3, 2)),
    ((4, 2, 3), (3, 5)), ((2, 3), (4, 3, 5)), ((1, 2, 3), (4, 3, 5)),
])
def test_matmuls_rule_reads_a_1d_operand_as_numpy_does(a_shape, b_shape):
    """matmul's rule promotes a 1-D a to a row and a 1-D b to a column, and gives each
    its gradient back in its own shape (the engine sums the broadcast batch axes).
    Expected: the same gradients from einsum, written out per case."""
    rng = np.random.default_rng(4)
    a_values, b_values = rng.standard_normal(a_shape), rng.standard_normal(b_shape)
    g = rng.standard_normal(np.matmul(a_values, b_values).shape)
    a, b = ag.tensor(a_values, requires_grad=True), ag.tensor(b_values, requires_grad=True)
    (a @ b).backward(ag.tensor(g))
    A = a_values if len(a_shape) > 1 else a_values[None, :]
    B = b_values if len(b_shape) > 1 else b_values[:, None]
    G = g.reshape(np.matmul(A, B).shape)
    da = np.einsum("...mn,...kn->...mk", G, np.broadcast_to(B, G.shape[:-2] + B.shape[-2:]))
    db = np.einsum("...mk,...mn->...kn", np.broadcast_to(A, G.shape[:-2] + A.shape[-2:]), G)
    np.testing.assert_allclose(a.grad.numpy(), _summed_to(da, A.shape).reshape(a_shape),
                               rtol=1e-12)
    np.testing.assert_allclose(b.grad.numpy(), _summed_to(db, B.shape).reshape(b_shape),
                               rtol=1e-12)
    assert a.grad.shape == a_shape and b.grad.shape == b_shape


def _summed_to(x, shape):
    """x summed over the batch axes that ``shape`` lacks or has as 1."""
    while x.ndim > len(shape):
        x = x.sum(0)
    for axis, size in enumerate(shape):
        if size == 1 and x.shape[axis] != 1:
            x = x.sum(axis, keepdims=True)
    return x


def test_a_rule_over_any_number_of_inputs_runs_once_for_each_that_needs_a_gradient():
    """stack's rule is written for input i (da_i): the leaves that need a gradient get
    their slice of g, the constant between them none."""
    x, y = _leaf(2, 3, seed=1), _leaf(2, 3, seed=2)
    constant = ag.tensor(np.ones((2, 3)))
    upstream = np.random.default_rng(3).standard_normal((2, 3, 3))
    ag.stack([x, constant, y], dim=1).backward(ag.tensor(upstream))
    np.testing.assert_array_equal(x.grad.numpy(), upstream[:, 0])
    np.testing.assert_array_equal(y.grad.numpy(), upstream[:, 2])
    assert constant.grad is None


def test_a_rule_over_any_number_of_inputs_may_not_read_an_input_nothing_saved():
    with pytest.raises(SyntaxError, match="reads a_i's layout only"):
        type("Scaled", (Function,), {
            "name": "scaled", "rule": "da_i = g * a_i",
            "forward": staticmethod(lambda ctx, *arrays: sum(arrays))})
