"""Every core op's gradient, checked against central finite differences.

One table, :data:`CASES`, lists the ops. Each row has a name, a *program* that
builds the output from its inputs and an *input domain* (a strategy drawing
shapes, values and parameters inside the op's valid domain and off its kinks).
Programs are written against a library namespace ``lib``: here ``lib`` is
``autograd_core``; test_torch_crosscheck.py runs the very same programs with
``lib`` standing for PyTorch.

The main property: for random shapes (0-D to 4-D, size-1 axes, broadcasting),
values and memory layouts, the engine's vector-Jacobian product
``y.backward(gradient=v)`` with a random, non-uniform ``v`` equals the central
difference of ``sum(v * f(x))`` with respect to every input, in float64.
"""

from __future__ import annotations

import re

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from op_table import (
    CASES,
    Layout,
    backward_all,
    case_ids,
    draw_upstream,
    leaf,
    numeric_vjp,
    run_engine,
    values,
)
from strategies import PROPERTY_SETTINGS, layouts

import autograd_core as ag
from autograd_core.autograd import GradcheckError, gradcheck
from autograd_core.ops import api as F
from autograd_core.ops.elementwise import Mul
from autograd_core.tools.graph import capture


# -- the property ---------------------------------------------------------------------------
@pytest.mark.parametrize("kind, contiguous", [("contiguous", True), ("transposed", False),
                                              ("strided", False)])
def test_layouts_give_leaves_with_those_strides(kind, contiguous):
    """The harness itself: a non-contiguous layout really reaches the engine."""
    values = np.arange(6.0).reshape(2, 3)
    x = leaf(values, Layout(kind))
    assert x.is_leaf and x.requires_grad
    assert x.numpy().flags.c_contiguous == contiguous
    np.testing.assert_array_equal(x.numpy(), values)


@pytest.mark.parametrize("case", CASES, ids=case_ids)
@PROPERTY_SETTINGS
@given(data=st.data())
def test_vjp_matches_finite_differences(case, data):
    example = data.draw(case.examples, label="example")
    lays = data.draw(st.tuples(*[layouts() for _ in example.inputs]), label="layouts")
    leaves, outputs = run_engine(case, example, lays)
    upstream = draw_upstream(data, outputs)
    backward_all(outputs, upstream)
    expected = numeric_vjp(case, example, upstream)
    for i, (x, want) in enumerate(zip(leaves, expected, strict=True)):
        assert x.grad is not None, f"input {i} got no gradient"
        assert x.grad.shape == x.shape and x.grad.dtype == np.float64
        np.testing.assert_allclose(x.grad.numpy(), want, rtol=1e-5, atol=1e-6,
                                   err_msg=f"{case.name}: gradient of input {i}")


@pytest.mark.parametrize("case", CASES, ids=case_ids)
@settings(PROPERTY_SETTINGS, max_examples=4)
@given(data=st.data())
def test_float32_forward_and_backward(case, data):
    """float32 runs end to end, each ``.grad`` has its leaf's dtype, and the numbers
    agree with the float64 run to float32 precision."""
    example = data.draw(case.examples, label="example")
    leaves64, outputs64 = run_engine(case, example)
    leaves32, outputs32 = run_engine(case, example, dtype=np.float32)
    upstream = draw_upstream(data, outputs64)
    backward_all(outputs64, upstream)
    backward_all(outputs32, upstream)
    for y32, y64 in zip(outputs32, outputs64, strict=True):
        np.testing.assert_allclose(y32.numpy(), y64.numpy(), rtol=1e-4, atol=1e-5)
    for x32, x64 in zip(leaves32, leaves64, strict=True):
        assert x32.dtype == np.float32 and x32.grad.dtype == np.float32
        np.testing.assert_allclose(x32.grad.numpy(), x64.grad.numpy(), rtol=1e-3, atol=1e-4)


# -- every reduction axis, both spellings ---------------------------------------------------
REDUCTIONS = {
    "sum": ag.sum, "mean": ag.mean, "var": ag.var,
    "max": lambda x, **kw: values(ag.max(x, **kw)),
    "min": lambda x, **kw: values(ag.min(x, **kw)),
}
NUMPY_REDUCTIONS = {"sum": np.sum, "mean": np.mean, "max": np.max, "min": np.min,
                    "var": lambda x, **kw: np.var(x, ddof=1, **kw)}
AXES_3D = [None, 0, 1, 2, -1, (0, 1), (0, 2), (1, 2), (0, 1, 2), (2, -3)]


@pytest.mark.parametrize("keepdim", [False, True])
@pytest.mark.parametrize("dim", AXES_3D, ids=repr)
@pytest.mark.parametrize("name", REDUCTIONS)
def test_every_reduction_axis(name, dim, keepdim):
    """Each reduction over each axis set of a 3-D input: values equal NumPy's, the
    NumPy spelling (axis=, keepdims=) equals the PyTorch one, and gradcheck passes."""
    x = ag.tensor(np.random.default_rng(0).permutation(24).reshape(2, 3, 4) / 7.0,
                  requires_grad=True)  # distinct values: no ties for max/min
    reduce = REDUCTIONS[name]
    torch_style = reduce(x, dim=dim, keepdim=keepdim)
    numpy_style = reduce(x, axis=dim, keepdims=keepdim)
    expected = NUMPY_REDUCTIONS[name](x.numpy(), axis=dim, keepdims=keepdim)
    assert torch_style.shape == numpy_style.shape == np.shape(expected)
    np.testing.assert_allclose(torch_style.numpy(), expected, rtol=1e-12)
    np.testing.assert_array_equal(numpy_style.numpy(), torch_style.numpy())
    assert gradcheck(lambda t: reduce(t, dim=dim, keepdim=keepdim), (x,))


# -- gradcheck on small fixed programs ------------------------------------------------------
def _rand(*shape, seed=0):
    return ag.tensor(np.random.default_rng(seed).normal(size=shape), requires_grad=True)


def _layer_norm(x):
    centered = x - x.mean(-1, keepdim=True)
    return centered / ag.sqrt(x.var(-1, keepdim=True, correction=0) + 1e-5)


def _cross_entropy(z):
    targets = np.array([2, 0, 2, 1])
    return -ag.log_softmax(z, 1)[np.arange(4), targets].mean()


def _attention(q, k, v):
    scores = q @ k.transpose(-2, -1) / np.sqrt(q.shape[-1])
    return ag.softmax(scores, -1) @ v


GRADCHECK_PROGRAMS = [
    ("linear_tanh", lambda x, w, b: ag.tanh(x @ w + b), (_rand(4, 3), _rand(3, 2, seed=1),
                                                         _rand(2, seed=2))),
    ("batched_matmul_broadcast", lambda a, b: a @ b, (_rand(2, 1, 3, 4),
                                                      _rand(5, 4, 2, seed=1))),
    ("vector_times_batch", lambda v, m: v @ m, (_rand(4), _rand(2, 4, 3, seed=1))),
    ("batch_times_vector", lambda m, v: m @ v, (_rand(2, 3, 4), _rand(4, seed=1))),
    ("layer_norm", _layer_norm, (_rand(3, 5),)),
    ("cross_entropy", _cross_entropy, (_rand(4, 3),)),
    ("attention", _attention, (_rand(2, 3, 4), _rand(2, 5, 4, seed=1),
                               _rand(2, 5, 2, seed=2))),
    ("embedding_repeats", lambda w, x: w[np.array([0, 2, 0, 0])].sum(0) * x,
     (_rand(3, 4), _rand(4, seed=1))),
    ("polynomial_fan_out", lambda x: x * x * x - 2 * x + x / (1 + x ** 2), (_rand(5),)),
    ("split_swap_cat", lambda x, w: ag.cat(ag.split(x, 2, dim=1)[::-1], dim=1) * w,
     (_rand(2, 4), _rand(4, seed=1))),
    ("leaky_relu_where", lambda x: ag.where(x > 0, x, 0.1 * x), (_rand(3, 3),)),
    ("logsumexp_of_matmul", lambda x, w: ag.logsumexp(x @ w, dim=0), (_rand(3, 2),
                                                                         _rand(2, 4, seed=1))),
]


@pytest.mark.parametrize("fn, inputs", [p[1:] for p in GRADCHECK_PROGRAMS],
                         ids=[p[0] for p in GRADCHECK_PROGRAMS])
def test_gradcheck_small_programs(fn, inputs):
    assert gradcheck(fn, inputs)


class _MulWrongAtOneElement(Mul):
    """a * b whose backward overstates db at one element: a deliberately wrong op."""

    name = "wrong_mul"
    rule = "da = g * b\ndb = g * a   (but 3x too big at [1, 0])"

    @staticmethod
    def backward(ctx, g):
        da, db = Mul.backward(ctx, g)
        db[1, 0] *= 3  # db is a fresh array, so scaling it in place is safe here
        return da, db


def test_gradcheck_fails_on_a_wrong_backward_and_names_the_element():
    a, b = _rand(2, 3), _rand(2, 3, seed=1)
    with pytest.raises(GradcheckError) as caught:
        gradcheck(lambda x, y: _MulWrongAtOneElement.apply(x, y), (a, b))
    message = str(caught.value)
    assert "input 1" in message and "input index (1, 0)" in message
    analytic = float(re.search(r"analytic \(engine\) = (\S+)", message).group(1))
    numeric = float(re.search(r"numeric \(finite diff\) = (\S+)", message).group(1))
    a10 = float(a.numpy()[1, 0])
    assert analytic == pytest.approx(3 * a10, rel=1e-9)
    assert numeric == pytest.approx(a10, rel=1e-6)
    assert gradcheck(lambda x, y: _MulWrongAtOneElement.apply(x, y), (a, b),
                     raise_exception=False) is False
    assert gradcheck(lambda x, y: x * y, (a, b))  # the correct op passes at the same point


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_clone_records_a_clone_node_with_its_own_memory(dtype):
    x = ag.tensor([1.0, 2.0], requires_grad=True, dtype=dtype)
    y = x.clone()
    assert [op.op for op in capture(y).ops] == ["clone"]  # what the learner wrote
    assert y.dtype == dtype and not np.shares_memory(y.numpy(), x.numpy())
    (y * ag.tensor([3.0, 4.0], dtype=dtype)).sum().backward()
    assert x.grad.tolist() == [3.0, 4.0]


def test_each_op_function_is_named_as_it_is_called():
    """The functions built from the op table carry the name they are imported by,
    which is also the op's name in the graph and in error messages."""
    for name in F.__all__:
        assert getattr(F, name).__name__ == ("clip" if name == "clamp" else name)
