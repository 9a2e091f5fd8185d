"""``autograd.grad``: gradients returned instead of accumulated, with PyTorch's semantics.

* Over every op of the table, ``grad(outputs, leaves, grad_outputs)`` equals central
  differences of ``sum(output * grad_output)`` (independent of the engine's sweep), and
  leaves every ``.grad`` as it was.
* Several outputs, an intermediate tensor as input, an output that is itself an input,
  a hook on an input, ``allow_unused`` / ``materialize_grads``, ``retain_graph``.
* Each misuse gets PyTorch's message (first line), checked against PyTorch 2.13 when
  it is installed.
* The parity fixes found beside it: relu's and clip's backward send 0 (not nan, not -0.)
  where the input was masked, ``logsumexp`` takes a tuple of dims, and ``GradcheckError``
  is a ``RuntimeError``.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from op_table import CASES, as_outputs, case_ids, central_differences
from strategies import PROPERTY_SETTINGS, arrays

import autograd_core as ag
from autograd_core import autograd
from autograd_core.func import jvp
from autograd_core.recording.node import Function

try:
    import torch
except ImportError:
    torch = None

TORCH_REASON = ("PyTorch is not installed: the cross-check against torch.autograd.grad is "
                "skipped (install it with: pip install -e '.[torch]')")
EPS = 1e-6


def _central_gradient(program, inputs, cotangents, k) -> np.ndarray:
    """d/d inputs[k] of sum_o(output_o * cotangent_o), by central differences."""
    def weighted(values):
        with ag.no_grad():
            outs = as_outputs(program(*[ag.tensor(v) for v in values]))
            return sum(float(np.sum(o.numpy() * c)) for o, c in zip(outs, cotangents)
                       if c is not None)

    return central_differences(weighted, inputs, EPS)[k]


@pytest.mark.parametrize("case", CASES, ids=case_ids)
@settings(PROPERTY_SETTINGS, max_examples=4)
@given(data=st.data())
def test_grad_equals_central_differences_and_touches_no_grad(case, data):
    example = data.draw(case.examples, label="example")
    leaves = [ag.tensor(np.array(x, dtype=np.float64), requires_grad=True)
              for x in example.inputs]
    outputs = as_outputs(case.program(ag, *leaves, **example.params))
    differentiable = [o for o in outputs if o.requires_grad and np.issubdtype(o.dtype, np.floating)]
    if not differentiable:
        return
    cotangents = [data.draw(arrays(o.shape), label="cotangent") for o in differentiable]
    got = autograd.grad(differentiable, leaves, [ag.tensor(c) for c in cotangents],
                        allow_unused=True, materialize_grads=True)
    assert all(x.grad is None for x in leaves)
    weights = [c if any(o is d for d in differentiable) else None
               for o, c in zip(outputs, _align(outputs, differentiable, cotangents))]

    def program(*xs):
        return case.program(ag, *xs, **example.params)

    for k, g in enumerate(got):
        expected = _central_gradient(program, example.inputs, weights, k)
        np.testing.assert_allclose(g.numpy(), expected, rtol=1e-5, atol=1e-6,
                                   err_msg=f"input {k}")


def _align(outputs, differentiable, cotangents) -> list:
    """Each output's cotangent (None for an output that gets none)."""
    by_id = {id(d): c for d, c in zip(differentiable, cotangents)}
    return [by_id.get(id(o)) for o in outputs]


def _leaf(values):
    return ag.tensor(np.asarray(values, dtype=np.float64), requires_grad=True)


def test_several_outputs_are_one_weighted_sum():
    x = _leaf([1.0, 2.0, 3.0])
    a, b = (x * x).sum(), (x * 3).sum()
    (g,) = autograd.grad([a, b], x, [ag.tensor(2.0), ag.tensor(-1.0)])
    np.testing.assert_array_equal(g.numpy(), 2 * 2 * np.array([1.0, 2.0, 3.0]) - 3)


def test_an_intermediate_tensor_and_the_output_itself_as_inputs():
    x = _leaf([1.0, -2.0])
    h = x * 3
    y = (h * h).sum()
    dh, dx, dy = autograd.grad(y, [h, x, y])
    np.testing.assert_array_equal(dh.numpy(), 2 * np.array([3.0, -6.0]))
    np.testing.assert_array_equal(dx.numpy(), 18 * np.array([1.0, -2.0]))
    assert dy.item() == 1.0
    assert x.grad is None and h.grad is None


def test_a_leaf_output_differentiated_by_itself_is_its_seed():
    x = _leaf([1.0, 2.0])
    (g,) = autograd.grad(x, x, ag.tensor([5.0, 7.0]))
    np.testing.assert_array_equal(g.numpy(), [5.0, 7.0])


def test_a_hook_on_an_input_sees_the_whole_gradient_once():
    x = _leaf([1.0, 2.0])
    seen = []
    x.register_hook(lambda g: (seen.append(g.numpy().copy()), g * 10)[1])
    y = (x * 2).sum() + (x * x).sum()  # two paths into x: the hook runs on their sum
    (g,) = autograd.grad(y, x)
    assert len(seen) == 1
    np.testing.assert_array_equal(seen[0], [4.0, 6.0])
    np.testing.assert_array_equal(g.numpy(), [40.0, 60.0])


def test_unused_inputs_need_allow_unused():
    x, z = _leaf([1.0]), _leaf([2.0])
    with pytest.raises(RuntimeError, match="index 1 appears to not have been used"):
        autograd.grad((x * 2).sum(), [x, z])
    assert autograd.grad((x * 2).sum(), [x, z], allow_unused=True)[1] is None
    zeros = autograd.grad((x * 2).sum(), [x, z], materialize_grads=True)[1]
    np.testing.assert_array_equal(zeros.numpy(), [0.0])


def test_retain_graph_keeps_the_graph_for_a_second_call():
    x = _leaf([1.0, 2.0])
    y = (x * x).sum()
    first = autograd.grad(y, x, retain_graph=True)[0].numpy()
    second = autograd.grad(y, x)[0].numpy()
    np.testing.assert_array_equal(first, second)
    with pytest.raises(RuntimeError, match="backward through the graph a second time"):
        autograd.grad(y, x)


def _misuses(lib, grad):
    """(name, call) pairs: each a misuse of grad written for ``lib`` (ag or torch)."""
    def leaf():
        return lib.tensor([1.0, 2.0, 3.0], requires_grad=True)

    def constant():
        return lib.tensor([1.0, 2.0, 3.0])

    return [
        ("input without grad", lambda: grad((leaf() * 2).sum(), constant())),
        ("unused input", lambda: grad((leaf() * 2).sum(), leaf())),
        ("non-scalar output", lambda: (lambda x: grad(x * 2, x))(leaf())),
        ("output without grad", lambda: grad(constant() * 2, leaf())),
        ("grad_outputs count", lambda: (lambda x: grad([(x * 2).sum(), x.sum()], x,
                                                       grad_outputs=[lib.tensor(1.0)]))(leaf())),
        ("grad_output shape", lambda: (lambda x: grad((x * 2).sum(), x,
                                                      grad_outputs=lib.ones(2)))(leaf())),
        ("no inputs", lambda: grad((leaf() * 2).sum(), [])),
    ]


ENGINE_MESSAGES = {
    "input without grad": "One of the differentiated Tensors does not require grad",
    "unused input": "The differentiated Tensor at index 0 appears to not have been used",
    "non-scalar output": "grad can be implicitly created only for scalar outputs",
    "output without grad": "element 0 of tensors does not require grad and does not have a grad_fn",
    "grad_outputs count": "got 2 tensors and 1 gradients",
    "grad_output shape": "Mismatch in shape: grad_output[0] has a shape of (2,) and output[0] "
                         "has a shape of ()",
    "no inputs": "`inputs` argument to `grad()` cannot be empty.",
}


@pytest.mark.parametrize("index", range(len(ENGINE_MESSAGES)))
def test_each_misuse_gets_a_sentence_with_a_hint(index):
    name, call = _misuses(ag, autograd.grad)[index]
    with pytest.raises(RuntimeError) as caught:
        call()
    first, *rest = str(caught.value).splitlines()
    assert first.startswith(ENGINE_MESSAGES[name]), (name, first)
    assert rest and rest[-1].startswith("Hint: "), name


@pytest.mark.torch
@pytest.mark.parametrize("index", range(len(ENGINE_MESSAGES)))
def test_pytorch_raises_the_same_misuses_with_the_same_words(index):
    pytest.importorskip("torch", reason=TORCH_REASON)
    name, call = _misuses(torch, torch.autograd.grad)[index]
    with pytest.raises(RuntimeError) as caught:
        call()
    # PyTorch writes shapes its own way ("torch.Size([2])"); the words before them agree
    words = ENGINE_MESSAGES[name].split(" (")[0]
    assert str(caught.value).startswith(words), name


@pytest.mark.torch
def test_grad_of_a_small_network_matches_torch():
    pytest.importorskip("torch", reason=TORCH_REASON)
    rng = np.random.default_rng(4)
    x, w1, w2 = rng.normal(size=(5, 3)), rng.normal(size=(3, 4)), rng.normal(size=(4, 2))
    seed = rng.normal(size=(5, 2))

    def net(lib, x, w1, w2):
        hidden = lib.tanh(x @ w1)
        return hidden @ w2, (hidden * hidden).sum()

    ours = [_leaf(v) for v in (x, w1, w2)]
    theirs = [torch.tensor(v, requires_grad=True) for v in (x, w1, w2)]
    out, extra = net(ag, *ours)
    got = autograd.grad([out, extra], ours, [ag.tensor(seed), None])
    t_out, t_extra = net(torch, *theirs)
    want = torch.autograd.grad([t_out, t_extra], theirs, [torch.tensor(seed), None])
    for g, w in zip(got, want, strict=True):
        np.testing.assert_allclose(g.numpy(), w.numpy(), rtol=1e-12, atol=1e-12)


# -- parity fixes ---------------------------------------------------------------------------
MASKED = [
    ("relu", lambda lib, t: lib.relu(t)),
    ("clip", lambda lib, t: lib.clip(t, 0.0, 1.0) if lib is ag else lib.clamp(t, 0.0, 1.0)),
]


@pytest.mark.parametrize("name, op", MASKED, ids=[m[0] for m in MASKED])
def test_a_masked_entry_gets_zero_whatever_arrives(name, op):
    # inputs -1 (masked), 0.5 (passes), 2 (relu passes, clip masks)
    for upstream in ([np.nan] * 3, [-1.0, -1.0, -1.0]):
        x = _leaf([-1.0, 0.5, 2.0])
        op(ag, x).backward(ag.tensor(upstream))
        g = x.grad.numpy()
        assert g[0] == 0.0 and not np.signbit(g[0]), (name, upstream, g)
        passes = np.isnan(g[1]) if np.isnan(upstream[1]) else g[1] == upstream[1]
        assert passes, (name, upstream, g)


@pytest.mark.torch
@pytest.mark.parametrize("name, op", MASKED, ids=[m[0] for m in MASKED])
def test_masked_backward_matches_torch_bit_for_bit(name, op):
    pytest.importorskip("torch", reason=TORCH_REASON)
    values = [-1.0, -0.0, 0.0, 0.5, 2.0, np.nan]
    for upstream in ([np.nan] * 6, [-1.0] * 6, [np.inf] * 6):
        x = _leaf(values)
        op(ag, x).backward(ag.tensor(upstream))
        t = torch.tensor(values, dtype=torch.float64, requires_grad=True)
        op(torch, t).backward(torch.tensor(upstream, dtype=torch.float64))
        ours, theirs = x.grad.numpy(), t.grad.numpy()
        np.testing.assert_array_equal(ours, theirs)
        np.testing.assert_array_equal(np.signbit(ours), np.signbit(theirs))


@pytest.mark.torch
@pytest.mark.parametrize("name, op", MASKED, ids=[m[0] for m in MASKED])
def test_masked_forward_mode_matches_torch_func_bit_for_bit(name, op):
    pytest.importorskip("torch", reason=TORCH_REASON)
    values = [-1.0, -0.0, 0.0, 0.5, 2.0, np.nan]
    for tangent in ([np.nan] * 6, [-1.0] * 6):
        ours = jvp(lambda t: op(ag, t), (ag.tensor(values),), (ag.tensor(tangent),))[1]
        theirs = torch.func.jvp(lambda t: op(torch, t), (torch.tensor(values),),
                                (torch.tensor(tangent, dtype=torch.float64),))[1]
        np.testing.assert_array_equal(ours.numpy(), theirs.numpy())
        np.testing.assert_array_equal(np.signbit(ours.numpy()), np.signbit(theirs.numpy()))


@pytest.mark.parametrize("dim", [(1, 2), (0, -1), (2,), (0, 1, 2)])
@pytest.mark.parametrize("keepdim", [False, True])
def test_logsumexp_takes_a_tuple_of_dims(dim, keepdim):
    a = np.random.default_rng(1).normal(size=(2, 3, 4))
    x = _leaf(a)
    out = ag.logsumexp(x, dim=dim, keepdim=keepdim)
    expected = np.log(np.sum(np.exp(a), axis=dim, keepdims=keepdim))
    np.testing.assert_allclose(out.numpy(), expected, rtol=1e-12)
    out.sum().backward()
    weights = np.exp(a - np.log(np.sum(np.exp(a), axis=dim, keepdims=True)))
    np.testing.assert_allclose(x.grad.numpy(), weights, rtol=1e-12)


def test_logsumexp_names_a_repeated_dim():
    with pytest.raises(RuntimeError, match="appears multiple times"):
        ag.logsumexp(_leaf(np.ones((2, 3))), dim=(1, 1))


class _Broken(Function):
    """f(a) = 2a with a backward that sends 3g: a rule gradcheck must reject."""

    name = "broken"

    @staticmethod
    def forward(ctx, a):
        return a * 2

    @staticmethod
    def backward(ctx, g):
        return (g * 3,)


def test_gradcheck_error_is_a_runtime_error_as_in_pytorch():
    assert issubclass(autograd.GradcheckError, RuntimeError)
    x = _leaf([1.0, 2.0])
    with pytest.raises(RuntimeError, match="Jacobian mismatch"):
        autograd.gradcheck(lambda t: _Broken.apply(t).sum(), (x,))
