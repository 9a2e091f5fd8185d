"""The programs of the op table, run on PyTorch CPU too: same values, same gradients.

Each row of ``CASES`` (test_op_gradients.py) is run twice in float64, once with
``lib`` = this engine and once with ``lib`` = :class:`TorchLib`, from the same
inputs and with the same non-uniform upstream gradient; the outputs and the
gradient of every input must agree.

Where the names differ, :class:`TorchLib` maps ours to PyTorch's: ``clip`` ->
``torch.clamp``, and ``max``/``min`` over a tuple of dims or over everything ->
``torch.amax``/``torch.amin``. NumPy constants become tensors that do not require
grad, as a PyTorch user would write them.

Tie conventions (inputs tie or sit on a kink), pinned by ``test_tie_conventions``:

* ``max``/``min`` reductions: tied winners share the gradient equally, like
  ``torch.amax``/``amin``. ``torch.max(x, dim)`` instead sends all of it to the one
  index it returns; off ties (as in the table) all of these agree.
* ``maximum``/``minimum``: a tie gives each side half, as in PyTorch.
* ``clip`` at a bound passes the gradient; ``abs`` and ``relu`` at 0 give 0: as
  in PyTorch.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from op_table import CASES, as_outputs, backward_all, case_ids, draw_upstream, run_engine
from strategies import PROPERTY_SETTINGS

import autograd_core as ag
from autograd_core import autograd

torch = pytest.importorskip(
    "torch", reason="PyTorch is not installed: the cross-check against PyTorch 2.13.0 CPU "
    "is skipped (install it with: pip install -e '.[torch]')")

pytestmark = pytest.mark.torch


class _TorchFunctional:
    """torch.nn.functional, with scaled_dot_product_attention on PyTorch's math kernel:
    the fused CPU kernels it picks by shape have no forward mode (torch.func.jvp raises
    NotImplementedError on them), and the math kernel computes the same function."""

    def __getattr__(self, name):
        return getattr(torch.nn.functional, name)

    @staticmethod
    def scaled_dot_product_attention(*args, **kwargs):
        from torch.nn.attention import SDPBackend, sdpa_kernel

        with sdpa_kernel(SDPBackend.MATH):
            return torch.nn.functional.scaled_dot_product_attention(*args, **kwargs)


class _TorchNN:
    """torch.nn, with :class:`_TorchFunctional` as its ``functional``."""

    functional = _TorchFunctional()

    def __getattr__(self, name):
        return getattr(torch.nn, name)


class TorchLib:
    """PyTorch under this engine's function names (only the differences are spelled
    out; everything else is ``torch.<same name>``)."""

    clip = staticmethod(torch.clamp)
    nn = _TorchNN()

    def __getattr__(self, name):
        return getattr(torch, name)

    @staticmethod
    def max(x, dim=None, keepdim=False):
        if isinstance(dim, int):
            return torch.max(x, dim, keepdim)  # (values, indices), like ours
        return torch.amax(x, dim=() if dim is None else dim, keepdim=keepdim)

    @staticmethod
    def min(x, dim=None, keepdim=False):
        if isinstance(dim, int):
            return torch.min(x, dim, keepdim)
        return torch.amin(x, dim=() if dim is None else dim, keepdim=keepdim)


def to_torch(value):
    """NumPy constants and index arrays as PyTorch tensors (inside tuples too)."""
    if isinstance(value, np.ndarray):
        return torch.from_numpy(value.copy())
    if isinstance(value, tuple):
        return tuple(to_torch(v) for v in value)
    return value


def run_torch(case, example):
    leaves = [torch.tensor(x, dtype=torch.float64, requires_grad=True) for x in example.inputs]
    params = {k: to_torch(v) for k, v in example.params.items()}
    return leaves, as_outputs(case.program(TorchLib(), *leaves, **params))


def _run_or_skip(case):
    if case.torch_skip:
        pytest.skip(case.torch_skip)


@pytest.mark.parametrize("case", CASES, ids=case_ids)
@settings(PROPERTY_SETTINGS, max_examples=8)
@given(data=st.data())
def test_same_values_and_gradients_as_torch(case, data):
    _run_or_skip(case)
    example = data.draw(case.examples, label="example")
    leaves, outputs = run_engine(case, example)
    torch_leaves, torch_outputs = run_torch(case, example)
    upstream = draw_upstream(data, outputs)

    assert len(outputs) == len(torch_outputs)
    for y, ty in zip(outputs, torch_outputs, strict=True):
        assert y.shape == tuple(ty.shape)
        np.testing.assert_allclose(y.numpy(), ty.detach().numpy(), rtol=1e-12, atol=1e-12)

    backward_all(outputs, upstream)
    torch.autograd.backward(torch_outputs, [torch.from_numpy(v) for v in upstream])
    for i, (x, tx) in enumerate(zip(leaves, torch_leaves, strict=True)):
        assert (x.grad is None) == (tx.grad is None), f"input {i}"
        np.testing.assert_allclose(x.grad.numpy(), tx.grad.numpy(), rtol=1e-10, atol=1e-12,
                                   err_msg=f"{case.name}: gradient of input {i}")


def _second(grad, outputs, leaves, seeds, weights, tensor):
    """d/dx of sum_i <g_i, w_i>, g = d<v, f(x)>/dx recorded with create_graph=True:
    one library's (``grad``: autograd.grad or torch.autograd.grad) second derivative."""
    firsts = grad(outputs, leaves, seeds, create_graph=True, allow_unused=True,
                  materialize_grads=True)
    phi = sum((g * tensor(w)).sum() for g, w in zip(firsts, weights, strict=True))
    if not phi.requires_grad:  # every first derivative is a constant
        return [np.zeros(tuple(x.shape)) for x in leaves]
    return [s.detach().numpy(force=True) if isinstance(s, torch.Tensor) else s.numpy() for s in
            grad(phi, leaves, allow_unused=True, materialize_grads=True)]


@pytest.mark.parametrize("case", CASES, ids=case_ids)
@settings(PROPERTY_SETTINGS, max_examples=4)
@given(data=st.data())
def test_same_second_derivatives_as_torch(case, data):
    """backward of a create_graph backward: the same numbers as PyTorch's double
    backward."""
    _run_or_skip(case)
    example = data.draw(case.examples, label="example")
    leaves, outputs = run_engine(case, example)
    torch_leaves, torch_outputs = run_torch(case, example)
    upstream = draw_upstream(data, outputs)
    weights = [np.random.default_rng(11 + i).standard_normal(x.shape)
               for i, x in enumerate(leaves)]
    ours = _second(autograd.grad, outputs, leaves, [ag.tensor(v) for v in upstream],
                   weights, ag.tensor)
    theirs = _second(torch.autograd.grad, torch_outputs, torch_leaves,
                     [torch.from_numpy(v) for v in upstream], weights, torch.from_numpy)
    for i, (a, b) in enumerate(zip(ours, theirs, strict=True)):
        np.testing.assert_allclose(a, b, rtol=1e-9, atol=1e-11,
                                   err_msg=f"{case.name}: second derivative, input {i}")


TIES = [  # name, input, our program, PyTorch's program: the same convention
    ("amax_ties_share", [[1.0, 3.0, 3.0], [2.0, 2.0, 0.0]],
     lambda x: ag.max(x, axis=1), lambda x: torch.amax(x, dim=1)),
    ("max_all_ties_share", [[1.0, 3.0, 3.0], [2.0, 2.0, 0.0]],
     lambda x: ag.max(x), lambda x: torch.max(x)),
    ("amin_ties_share", [[1.0, 0.0, 0.0], [2.0, 2.0, 5.0]],
     lambda x: ag.min(x, axis=(0, 1), keepdims=True),
     lambda x: torch.amin(x, dim=(0, 1), keepdim=True)),
    ("maximum_tie_halves", [1.0, 2.0],
     lambda x: ag.maximum(x, ag.tensor([1.0, 3.0])),
     lambda x: torch.maximum(x, torch.tensor([1.0, 3.0], dtype=torch.float64))),
    ("minimum_tie_halves", [1.0, 2.0],
     lambda x: ag.minimum(ag.tensor([1.0, 0.0]), x),
     lambda x: torch.minimum(torch.tensor([1.0, 0.0], dtype=torch.float64), x)),
    ("clip_at_bounds_passes", [-1.0, 0.0, 1.0],
     lambda x: ag.clip(x, -1.0, 1.0), lambda x: torch.clamp(x, -1.0, 1.0)),
    ("abs_at_zero", [-1.0, 0.0, 1.0], ag.abs, torch.abs),
    ("relu_at_zero", [-1.0, 0.0, 1.0], ag.relu, torch.relu),
]


def _grad(program, tensor_of, values, weights):
    x = tensor_of(values)
    y = program(x)
    y.backward(weights(y.shape))
    return np.asarray(x.grad.tolist())


@pytest.mark.parametrize("ours, theirs, values", [t[2:] + (t[1],) for t in TIES],
                         ids=[t[0] for t in TIES])
def test_tie_conventions(ours, theirs, values):
    def weights(shape):  # non-uniform, so a misplaced share would show
        return np.arange(1.0, 1.0 + np.prod(shape, dtype=int)).reshape(tuple(shape))

    mine = _grad(ours, lambda v: ag.tensor(v, requires_grad=True), values, weights)
    torch_grad = _grad(theirs, lambda v: torch.tensor(v, dtype=torch.float64,
                                                      requires_grad=True),
                       values, lambda s: torch.from_numpy(weights(s)))
    np.testing.assert_array_equal(mine, torch_grad)


def test_max_over_one_dim_with_ties_differs_from_torch_max_dim_by_design():
    """Ours shares a tie (like torch.amax); torch.max(x, dim) gives it to one index.
    Both send the whole upstream gradient: only where it lands differs."""
    values = [[1.0, 3.0, 3.0]]
    x = ag.tensor(values, requires_grad=True)
    ag.max(x, dim=1).values.sum().backward()
    t = torch.tensor(values, dtype=torch.float64, requires_grad=True)
    torch.max(t, dim=1).values.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [[0.0, 0.5, 0.5]])
    np.testing.assert_array_equal(t.grad.numpy(), [[0.0, 1.0, 0.0]])
