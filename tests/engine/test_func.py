"""Forward mode (jvp), vjp and Jacobians (func/transforms.py), for every op with a jvp rule.

* jvp of every program in the op table (test_op_gradients.CASES) equals the
  central difference of f along the same tangent, in float64;
* the forward-mode Jacobian (jacfwd: one JVP per input element) equals the
  reverse-mode one (jacrev: one VJP per output element) to rounding;
* both equal PyTorch's torch.func.jvp / jacrev on the same programs;
* the same for the neural-network ops (conv2d, pooling, batch norm, linear,
  dropout, embedding, the losses), from a table of fixed seeded inputs;
* jvp is ONE forward pass, keeps no saved tensors, and fails with the op's name
  when an op has no forward-mode rule.
"""

from __future__ import annotations

import inspect
from dataclasses import dataclass

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from op_table import CASES, as_outputs, case_ids
from strategies import PROPERTY_SETTINGS, arrays

import autograd_core as ag
from autograd_core.autograd.functional import jacobian
from autograd_core.func import jacfwd, jacrev, jvp, vjp
from autograd_core.nn import functional as F
from autograd_core.ops import (
    conv,
    elementwise,
    indexing,
    joining,
    matmul,
    nn_ops,
    normalization,
    pooling,
    reductions,
    shape,
    softmax,
)
from autograd_core.recording.node import Function
from autograd_core.tools import counting, memory
from autograd_core.utils.checkpoint import Checkpoint, checkpoint

try:  # the PyTorch side of the op table, when PyTorch is installed
    import torch
    from test_torch_crosscheck import TorchLib, to_torch
except ImportError:
    torch = None

OP_MODULES = [elementwise, reductions, shape, indexing, joining, matmul, softmax, conv,
              pooling, normalization, nn_ops]
TORCH_REASON = ("PyTorch is not installed: the cross-check against torch.func is skipped "
                "(install it with: pip install -e '.[torch]')")
EPS = 1e-6


def _flat(structure) -> list[np.ndarray]:
    """Every array in a (nested) tuple of tensors, in order."""
    if isinstance(structure, tuple | list):
        return [a for item in structure for a in _flat(item)]
    return [np.asarray(structure.numpy() if hasattr(structure, "numpy") else structure)]


def _central_jvp(program, inputs, tangents) -> list[np.ndarray]:
    """(f(x + eps·v) - f(x - eps·v)) / 2eps for every output, in float64."""
    def run(sign):
        moved = [ag.tensor(np.asarray(x, np.float64) + sign * EPS * t)
                 for x, t in zip(inputs, tangents)]
        with ag.no_grad():
            return [y.numpy() for y in as_outputs(program(*moved))]
    return [(p - m) / (2 * EPS) for p, m in zip(run(1), run(-1))]


def _case_program(case, example, lib=ag):
    return lambda *xs: case.program(lib, *xs, **example.params)


# -- every core op: jvp against finite differences, forward vs reverse Jacobians ------------
@pytest.mark.parametrize("case", CASES, ids=case_ids)
@settings(PROPERTY_SETTINGS, max_examples=8)
@given(data=st.data())
def test_jvp_equals_central_difference_along_the_tangent(case, data):
    example = data.draw(case.examples, label="example")
    tangents = [data.draw(arrays(np.shape(x)), label="tangent") for x in example.inputs]
    program = _case_program(case, example)
    primals = tuple(ag.tensor(x, dtype=np.float64) for x in example.inputs)
    outputs, out_tangents = jvp(program, primals, tuple(ag.tensor(t) for t in tangents))
    expected = _central_jvp(program, example.inputs, tangents)
    got = _flat(out_tangents)
    assert len(got) == len(expected)
    for i, (g, e) in enumerate(zip(got, expected)):
        np.testing.assert_allclose(g, e, rtol=1e-6, atol=1e-7, err_msg=f"output {i}")
    with ag.no_grad():  # and the primal output is the plain forward value
        for y, ref in zip(_flat(outputs), _flat(as_outputs(program(*primals)))):
            np.testing.assert_array_equal(y, ref)


@pytest.mark.parametrize("case", CASES, ids=case_ids)
@settings(PROPERTY_SETTINGS, max_examples=4)
@given(data=st.data())
def test_forward_and_reverse_jacobians_agree_to_rounding(case, data):
    example = data.draw(case.examples, label="example")
    primals = [ag.tensor(x, dtype=np.float64) for x in example.inputs]
    argnums = tuple(range(len(primals)))
    program = _case_program(case, example)
    forward = _flat(jacfwd(program, argnums)(*primals))
    reverse = _flat(jacrev(program, argnums)(*primals))
    for f, r in zip(forward, reverse, strict=True):
        assert f.shape == r.shape
        np.testing.assert_allclose(f, r, rtol=1e-12, atol=1e-14)


@pytest.mark.torch
@pytest.mark.parametrize("case", CASES, ids=case_ids)
@settings(PROPERTY_SETTINGS, max_examples=3)
@given(data=st.data())
def test_jvp_and_jacobian_match_torch_func(case, data):
    pytest.importorskip("torch", reason=TORCH_REASON)
    if case.torch_skip:
        pytest.skip(case.torch_skip)
    example = data.draw(case.examples, label="example")
    tangents = [data.draw(arrays(np.shape(x)), label="tangent") for x in example.inputs]
    params = {k: to_torch(v) for k, v in example.params.items()}

    def torch_program(*xs):
        out = case.program(TorchLib(), *xs, **params)
        return tuple(out) if isinstance(out, tuple | list) else out

    t_primals = tuple(torch.tensor(x, dtype=torch.float64) for x in example.inputs)
    t_tangents = tuple(torch.tensor(t, dtype=torch.float64) for t in tangents)
    _, t_out = torch.func.jvp(torch_program, t_primals, t_tangents)
    primals = tuple(ag.tensor(x, dtype=np.float64) for x in example.inputs)
    _, out = jvp(_case_program(case, example), primals, tuple(map(ag.tensor, tangents)))
    for ours, theirs in zip(_flat(out), _flat(t_out), strict=True):
        np.testing.assert_allclose(ours, theirs, rtol=1e-10, atol=1e-12)

    argnums = tuple(range(len(primals)))
    t_jac = torch.func.jacrev(torch_program, argnums)(*t_primals)
    ours = jacfwd(_case_program(case, example), argnums)(*primals)
    for a, b in zip(_flat(ours), _flat(t_jac), strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)


# -- the neural-network ops -----------------------------------------------------------------------
@dataclass(frozen=True)
class NNCase:
    """``program(F, *inputs)`` with F = our nn.functional or torch.nn.functional;
    ``shapes`` of the float inputs; ``torch_skip`` when PyTorch cannot run the same."""

    name: str
    program: object
    shapes: tuple
    torch_skip: str | None = None

    def __repr__(self) -> str:
        return self.name


CLASSES = np.array([2, 0, 1, 2])
INDICES = np.array([[1, 3], [3, 0]])
NN_CASES = [
    NNCase("conv2d", lambda F, x, w, b: F.conv2d(x, w, b, stride=2, padding=1),
           ((2, 3, 5, 5), (4, 3, 3, 3), (4,))),
    NNCase("conv2d_groups_dilation", lambda F, x, w: F.conv2d(x, w, dilation=2, groups=2),
           ((1, 4, 6, 6), (2, 2, 2, 2))),
    NNCase("max_pool2d", lambda F, x: F.max_pool2d(x, 2, stride=1, padding=1),
           ((2, 2, 4, 4),)),
    NNCase("avg_pool2d", lambda F, x: F.avg_pool2d(x, 3, stride=2, padding=1),
           ((2, 2, 5, 5),)),
    NNCase("batch_norm_train", lambda F, x, w, b: F.batch_norm(x, None, None, w, b,
                                                               training=True),
           ((4, 3, 2, 2), (3,), (3,))),
    NNCase("batch_norm_train_no_affine", lambda F, x: F.batch_norm(x, None, None,
                                                                   training=True),
           ((5, 3),)),
    NNCase("linear", lambda F, x, w, b: F.linear(x, w, b), ((3, 4), (2, 4), (2,))),
    NNCase("linear_no_bias", lambda F, x, w: F.linear(x, w), ((2, 3, 4), (5, 4))),
    NNCase("embedding", lambda F, w: F.embedding(_indices(F, INDICES), w), ((4, 3),)),
    NNCase("nll_loss", lambda F, x: F.nll_loss(x, _indices(F, CLASSES)), ((4, 3),)),
    NNCase("cross_entropy_sum", lambda F, x: F.cross_entropy(x, _indices(F, CLASSES),
                                                             reduction="sum"), ((4, 3),)),
    NNCase("mse_loss", lambda F, x, t: F.mse_loss(x, t), ((3, 4), (3, 4))),
    NNCase("mse_loss_none", lambda F, x, t: F.mse_loss(x, t, reduction="none"),
           ((2, 3), (2, 3))),
    NNCase("bce_with_logits", lambda F, x, t: F.binary_cross_entropy_with_logits(x, t),
           ((3, 4), (3, 4))),
    NNCase("dropout", lambda F, x: F.dropout(x, 0.4, generator=ag.Generator(3)), ((3, 5),),
           torch_skip=("no PyTorch counterpart, nothing to install: PyTorch draws its "
                       "dropout masks from another random stream")),
]


def _indices(F, values):
    if F.__name__.startswith("torch"):
        return torch.from_numpy(values)
    return ag.tensor(values)


def _nn_inputs(case: NNCase) -> list[np.ndarray]:
    rng = np.random.default_rng(len(case.name))
    return [rng.uniform(-1.5, 1.5, s) for s in case.shapes]


def _nn_program(case: NNCase, lib=F):
    return lambda *xs: case.program(lib, *xs)


@pytest.mark.parametrize("case", NN_CASES, ids=repr)
def test_nn_op_jvp_equals_central_difference(case):
    inputs = _nn_inputs(case)
    tangents = [np.random.default_rng(7 + i).uniform(-1, 1, x.shape)
                for i, x in enumerate(inputs)]
    _, out = jvp(_nn_program(case), tuple(map(ag.tensor, inputs)),
                 tuple(map(ag.tensor, tangents)))
    expected = _central_jvp(_nn_program(case), inputs, tangents)
    np.testing.assert_allclose(out.numpy(), expected[0], rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("case", NN_CASES, ids=repr)
def test_nn_op_forward_and_reverse_jacobians_agree(case):
    inputs = [ag.tensor(x) for x in _nn_inputs(case)]
    argnums = tuple(range(len(inputs)))
    for f, r in zip(_flat(jacfwd(_nn_program(case), argnums)(*inputs)),
                    _flat(jacrev(_nn_program(case), argnums)(*inputs)), strict=True):
        np.testing.assert_allclose(f, r, rtol=1e-12, atol=1e-13)


@pytest.mark.torch
@pytest.mark.parametrize("case", NN_CASES, ids=repr)
def test_nn_op_jvp_matches_torch_func(case):
    pytest.importorskip("torch", reason=TORCH_REASON)
    if case.torch_skip:
        pytest.skip(case.torch_skip)
    inputs = _nn_inputs(case)
    tangents = [np.random.default_rng(7 + i).uniform(-1, 1, x.shape)
                for i, x in enumerate(inputs)]
    _, ours = jvp(_nn_program(case), tuple(map(ag.tensor, inputs)),
                  tuple(map(ag.tensor, tangents)))
    _, theirs = torch.func.jvp(lambda *xs: case.program(torch.nn.functional, *xs),
                               tuple(torch.from_numpy(x) for x in inputs),
                               tuple(torch.from_numpy(t) for t in tangents))
    np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-10, atol=1e-12)


def _op_classes():
    for module in OP_MODULES:
        for _, cls in inspect.getmembers(module, inspect.isclass):
            # A private class (elementwise._UnaryByMask) is a base ops share, not an op.
            if (issubclass(cls, Function) and cls.__module__ == module.__name__
                    and not cls.__name__.startswith("_")):
                yield cls
    yield Checkpoint


def test_every_op_defines_its_forward_mode_rule_beside_its_backward():
    missing = [cls.__name__ for cls in _op_classes() if not hasattr(cls, "jvp")]
    assert not missing, f"ops without a jvp rule: {missing}"


def test_an_op_without_a_jvp_rule_fails_with_its_name():
    class Cube(Function):
        name = "cube"

        @staticmethod
        def forward(ctx, a):
            ctx.save(a=a)
            return a ** 3

        @staticmethod
        def backward(ctx, g):
            return (3 * g * ctx.load("a") ** 2,)

    with pytest.raises(NotImplementedError, match="'cube' defines no forward-mode rule"):
        jvp(lambda x: Cube.apply(x), (ag.tensor([1.0]),), (ag.tensor([1.0]),))
    # reverse mode still works, which is what the message suggests
    assert jacrev(lambda x: Cube.apply(x))(ag.tensor([2.0])).tolist() == [[12.0]]


# -- what forward mode costs --------------------------------------------------------------------
def _mlp(depth: int):
    gen = ag.Generator(0)
    weights = [ag.randn(8, 8, generator=gen) * 0.3 for _ in range(depth)]

    def f(x):
        for w in weights:
            x = ag.tanh(w @ x)
        return x.sum()

    return f, weights


def test_jvp_runs_the_function_once_and_each_op_once_in_forward_mode():
    (f, _), x = _mlp(5), ag.randn(8, generator=ag.Generator(1))
    with counting.count_ops() as plain:
        f(x)
    with counting.count_ops() as forward_mode:
        jvp(f, (x,), (ag.ones(8),))
    assert forward_mode.forward.ops == plain.forward.ops == 11  # 5 x (matmul, tanh) + sum
    assert forward_mode.jvp.ops == plain.forward.ops
    assert forward_mode.backward.ops == 0


@pytest.mark.parametrize("depth", [2, 10, 40])
def test_forward_mode_keeps_no_saved_tensors_whatever_the_depth(depth):
    (f, weights), x = _mlp(depth), ag.randn(8, generator=ag.Generator(1))
    with memory.track_saved_bytes(exclude=weights) as tracked:
        jvp(f, (x,), (ag.ones(8),))
    # only the op being differentiated holds its saves: one tanh output, 8 floats
    assert tracked.peak == 8 * 8
    x.requires_grad_()
    with memory.track_saved_bytes(exclude=[*weights, x]) as recorded:
        f(x)
    assert recorded.peak == depth * 8 * 8  # reverse mode keeps every tanh output


# -- vjp -----------------------------------------------------------------------------------------
def test_vjp_equals_backward_and_can_be_called_again():
    a, b = ag.tensor([[1.0, 2.0], [3.0, -1.0]]), ag.tensor([0.5, -2.0])

    def f(a, b):
        return ag.tanh(a @ b) * b

    out, vjp_fn = vjp(f, a, b)
    u = ag.tensor([1.0, -3.0])
    first = vjp_fn(u)
    second = vjp_fn(u)
    la, lb = a.detach().requires_grad_(), b.detach().requires_grad_()
    f(la, lb).backward(u.numpy())
    for got, again, leaf in zip(first, second, (la, lb)):
        np.testing.assert_allclose(got.numpy(), leaf.grad.numpy(), rtol=1e-14)
        np.testing.assert_array_equal(got.numpy(), again.numpy())
    np.testing.assert_allclose(out.numpy(), f(a, b).numpy())
    assert out.grad_fn is None and a.grad is None  # functional: nothing attached or filled


def test_vjp_of_a_tuple_output_and_an_unused_input():
    out, vjp_fn = vjp(lambda x, y: (x * 2, x.sum()), ag.tensor([1.0, 2.0]), ag.tensor(3.0))
    gx, gy = vjp_fn((ag.tensor([1.0, 1.0]), ag.tensor(10.0)))
    assert gx.tolist() == [12.0, 12.0] and gy.item() == 0.0
    assert isinstance(out, tuple) and len(out) == 2


@pytest.mark.torch
def test_vjp_matches_torch_func_vjp():
    pytest.importorskip("torch", reason=TORCH_REASON)
    x = np.random.default_rng(0).uniform(-1, 1, (3, 4))
    u = np.random.default_rng(1).uniform(-1, 1, (3,))
    _, fn = vjp(lambda t: ag.logsumexp(t * t, dim=1), ag.tensor(x))
    _, tfn = torch.func.vjp(lambda t: torch.logsumexp(t * t, dim=1), torch.from_numpy(x))
    np.testing.assert_allclose(fn(ag.tensor(u))[0].numpy(), tfn(torch.from_numpy(u))[0],
                               rtol=1e-12)


# -- Jacobians: shapes, argnums, modes -----------------------------------------------------------
def test_jacobian_has_output_shape_then_input_shape_and_both_modes_agree():
    x = ag.tensor(np.arange(6.0).reshape(2, 3) / 4)

    def f(t):
        return ag.softmax(t, dim=1)[:, :2]

    forward = jacobian(f, x, strategy="forward-mode")
    reverse = jacobian(f, x, strategy="reverse-mode")
    assert forward.shape == reverse.shape == (2, 2, 2, 3)
    np.testing.assert_allclose(forward.numpy(), reverse.numpy(), rtol=1e-12, atol=1e-15)
    # rows of different samples do not interact
    assert np.all(forward.numpy()[0, :, 1, :] == 0)


def test_jacobian_of_several_inputs_and_outputs_is_structured_like_torch_func():
    x, y = ag.tensor([1.0, 2.0]), ag.tensor(3.0)

    def f(a, b):
        return a * b, (a * a).sum()

    jac = jacrev(f, argnums=(0, 1))(x, y)
    assert isinstance(jac, tuple) and len(jac) == 2 and len(jac[0]) == 2
    assert jac[0][0].tolist() == [[3.0, 0.0], [0.0, 3.0]]  # d(a*b)/da
    assert jac[0][1].tolist() == [1.0, 2.0]                # d(a*b)/db
    assert jac[1][0].tolist() == [2.0, 4.0]                # d(sum a²)/da
    assert jac[1][1].item() == 0.0
    fwd = jacfwd(f, argnums=(0, 1))(x, y)
    for a, b in zip(_flat(jac), _flat(fwd)):
        np.testing.assert_array_equal(a, b)
    assert jacfwd(f, argnums=1)(x, y)[0].tolist() == [1.0, 2.0]


def test_jvp_through_a_checkpointed_segment_equals_jvp_of_the_plain_function():
    def block(t):
        return ag.tanh(t * t + 1.0).exp()

    x, v = ag.tensor([0.3, -0.7]), ag.tensor([1.0, 2.0])
    _, plain = jvp(lambda t: block(t).sum(), (x,), (v,))
    _, through = jvp(lambda t: checkpoint(block, t).sum(), (x,), (v,))
    assert through.item() == pytest.approx(plain.item(), rel=1e-14)


@pytest.mark.parametrize("call, error, match", [
    (lambda: jvp(ag.exp, (ag.tensor([1.0, 2.0]),), (ag.tensor([1.0]),)), RuntimeError,
     r"tangents\[0\] to have the shape of primals\[0\], \(2,\), but got \(1,\)"),
    (lambda: jvp(ag.add, (ag.tensor(1.0), ag.tensor(2.0)), (ag.tensor(1.0),)), RuntimeError,
     "one tangent per primal, got 2 primal"),
    (lambda: jvp(lambda t: t * 2, (ag.tensor([1, 2]),), (ag.tensor([1, 1]),)), RuntimeError,
     "only floating point inputs can be differentiated, but input 0 has dtype int64"),
    (lambda: jvp(lambda t: t.sum().item(), (ag.tensor([1.0]),), (ag.tensor([1.0]),)),
     TypeError, "must return a Tensor or a tuple of Tensors, got float"),
    (lambda: vjp(ag.exp, ag.tensor([1.0, 2.0]))[1](ag.tensor([1.0])), RuntimeError,
     r"cotangent 0 has a shape of \(1,\) and output 0 has a shape of \(2,\)"),
    (lambda: jacobian(ag.exp, ag.tensor([1.0]), strategy="sideways"), ValueError,
     'Expected strategy to be either "forward-mode" or "reverse-mode", got .sideways.'),
])
def test_mistakes_get_a_sentence_naming_what_is_wrong(call, error, match):
    with pytest.raises(error, match=match):
        call()


def test_outputs_that_do_not_depend_on_the_primals_get_zero_tangents():
    c = ag.tensor([5.0, 6.0])
    out, t = jvp(lambda x: (x, c * 2), (ag.tensor([1.0, 2.0]),), (ag.tensor([3.0, 4.0]),))
    assert t[0].tolist() == [3.0, 4.0]  # the identity passes the tangent through
    assert t[1].tolist() == [0.0, 0.0]
