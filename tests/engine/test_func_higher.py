"""Higher-order and composed transforms (func/transforms.py): grad, grad_and_value, vhp, hvp as
forward over reverse, and transforms of transforms, against torch.func and
torch.autograd.functional on the same programs in float64.

* grad / grad_and_value: an MLP loss w.r.t. several arguments (argnums tuples), has_aux,
  keyword arguments, an unused argument;
* composition: grad(grad(sin)) = -sin, three levels, jacrev(jacrev(f)) of a vector
  function, jacrev(grad(f)) / jacfwd(jacrev(f)) / hessian = the Hessian, mixed partials
  with argnums, jvp(grad(f)) = H·v, the third derivative through hessian;
* what the connected path promises: results stay on the enclosing graph (a learner's
  own backward reaches them), the inner sweep stops at its inputs (an outer leaf's hook
  does not run), the fast path keeps no history;
* hvp is forward over reverse (its counted work is in the jvp phase, its saved-tensor
  peak below vhp's); vhp is reverse over reverse; both equal torch;
* mistakes: a sentence for a non-scalar output, bad argnums, has_aux without a pair,
  reverse over forward and forward over forward.
"""

from __future__ import annotations

import numpy as np
import pytest

import autograd_core as ag
from autograd_core.autograd.functional import hessian, hvp, vhp
from autograd_core.func import grad, grad_and_value, jacfwd, jacrev, jvp, vjp
from autograd_core.tools import counting, memory

try:
    import torch
    import torch.func as tf
    from torch.autograd import functional as taf
except ImportError:
    torch = None

needs_torch = pytest.mark.skipif(torch is None, reason="PyTorch is not installed: the "
                                 "cross-check against torch.func is skipped "
                                 "(pip install -e '.[torch]')")

RNG = np.random.default_rng(20)
X = RNG.standard_normal((6, 4))
W1, B1, W2 = RNG.standard_normal((4, 5)) * 0.6, RNG.standard_normal(5) * 0.3, \
    RNG.standard_normal((5, 3)) * 0.6
TARGET = RNG.standard_normal((6, 3))


def mlp_loss(lib, w1, b1, w2, x=None):
    """tanh MLP with a mean-squared loss plus a sum: matmul, add, tanh, sub, mul, mean."""
    x = _as(lib, X) if x is None else x
    hidden = lib.tanh(x @ w1 + b1)
    err = hidden @ w2 - _as(lib, TARGET)
    return (err * err).mean() + 0.1 * (w1 * w1).sum()


def _as(lib, a):
    return lib.tensor(a, dtype=lib.float64)


def ours(*arrays):
    return tuple(ag.tensor(a) for a in arrays)


def theirs(*arrays):
    return tuple(torch.tensor(a, dtype=torch.float64) for a in arrays)


def close(a, b, tol=1e-11):
    """``a`` (ours: a Tensor or a tuple) against ``b`` (torch's), element by element."""
    if isinstance(a, tuple | list):
        assert isinstance(b, tuple | list) and len(a) == len(b)
        for x, y in zip(a, b, strict=True):
            close(x, y, tol)
        return
    b = b.detach().numpy() if torch is not None and isinstance(b, torch.Tensor) else b
    assert a.shape == tuple(b.shape)
    np.testing.assert_allclose(a.numpy(), b, rtol=tol, atol=tol)


# -- grad and grad_and_value --------------------------------------------------------------
@needs_torch
@pytest.mark.parametrize("argnums", [0, 2, (0, 1), (2, 0), (0, 1, 2), -1])
def test_grad_of_an_mlp_loss_matches_torch_func_grad(argnums):
    g = grad(lambda *p: mlp_loss(ag, *p), argnums=argnums)(*ours(W1, B1, W2))
    t = tf.grad(lambda *p: mlp_loss(torch, *p), argnums=argnums)(*theirs(W1, B1, W2))
    assert isinstance(g, tuple) == isinstance(argnums, tuple)
    close(g, t)
    assert np.abs(np.concatenate([r.numpy().ravel() for r in _flat(g)])).max() > 1e-3


@needs_torch
def test_grad_and_value_and_has_aux_match_torch():
    def f(lib, w1, b1, w2):
        loss = mlp_loss(lib, w1, b1, w2)
        return loss, {"scaled": loss * 2, "w1": w1}

    (g, aux) = grad(lambda *p: f(ag, *p), argnums=(0, 2), has_aux=True)(*ours(W1, B1, W2))
    (tg, taux) = tf.grad(lambda *p: f(torch, *p), argnums=(0, 2), has_aux=True)(
        *theirs(W1, B1, W2))
    close(g, tg)
    close(aux["scaled"], taux["scaled"])
    close(aux["w1"], taux["w1"])
    assert not aux["scaled"].requires_grad  # the fast path hands aux back without history

    g2, (value, aux2) = grad_and_value(lambda *p: f(ag, *p), has_aux=True)(*ours(W1, B1, W2))
    tg2, (tvalue, _) = tf.grad_and_value(lambda *p: f(torch, *p), has_aux=True)(
        *theirs(W1, B1, W2))
    close(g2, tg2)
    close(value, tvalue)
    assert value.item() * 2 == pytest.approx(aux2["scaled"].item(), rel=1e-15)
    g3, value3 = grad_and_value(lambda *p: mlp_loss(ag, *p), argnums=1)(*ours(W1, B1, W2))
    close(g3, tf.grad(lambda *p: mlp_loss(torch, *p), argnums=1)(*theirs(W1, B1, W2)))
    assert value3.item() == pytest.approx(value.item(), rel=1e-15)


def test_grad_passes_keywords_through_and_gives_zeros_for_an_unused_argument():
    def f(x, y, scale=1.0):
        return (x * x).sum() * scale

    gx, gy = grad(f, argnums=(0, 1))(ag.tensor([1.0, -2.0]), ag.tensor([5.0]), scale=3.0)
    assert gx.tolist() == [6.0, -12.0]
    assert gy.tolist() == [0.0]
    assert gx.grad_fn is None and not gx.requires_grad  # fast path: no history


# -- composition: second and third derivatives ---------------------------------------------------
@pytest.mark.parametrize("x", [-2.0, 0.3, 1.7])
def test_grad_of_grad_of_sin_is_minus_sin_and_one_more_level_minus_cos(x):
    t = ag.tensor(x, dtype=ag.float64)
    assert grad(grad(ag.sin))(t).item() == pytest.approx(-np.sin(x), abs=1e-15)
    assert grad(grad(grad(ag.sin)))(t).item() == pytest.approx(-np.cos(x), abs=1e-15)
    assert grad(ag.sin)(t).item() == pytest.approx(np.cos(x), abs=1e-15)


def vector_function(lib, x, w):
    return lib.tanh(w @ x) * x.sum() + x * x * x


W_SQUARE = RNG.standard_normal((3, 3))
X3 = RNG.standard_normal(3)


@needs_torch
def test_jacrev_of_jacrev_matches_torch():
    mine = jacrev(jacrev(lambda x: vector_function(ag, x, ag.tensor(W_SQUARE))))(*ours(X3))
    ref = tf.jacrev(tf.jacrev(lambda x: vector_function(torch, x, theirs(W_SQUARE)[0])))(
        *theirs(X3))
    assert mine.shape == (3, 3, 3)
    close(mine, ref)
    assert np.abs(mine.numpy()).max() > 0.1  # not the zeros a cut graph would give


@needs_torch
def test_every_way_to_the_hessian_of_an_mlp_loss_agrees_with_torch():
    def f(w1):
        return mlp_loss(ag, w1, ag.tensor(B1), ag.tensor(W2))

    def ft(w1):
        return mlp_loss(torch, w1, *theirs(B1, W2))

    expected = tf.hessian(ft)(*theirs(W1))
    assert expected.shape == (4, 5, 4, 5)
    close(jacrev(grad(f))(*ours(W1)), expected)
    close(jacrev(jacrev(f))(*ours(W1)), expected)
    close(jacfwd(jacrev(f))(*ours(W1)), expected)
    close(hessian(f, *ours(W1)), taf.hessian(ft, *theirs(W1)))


@needs_torch
def test_mixed_partials_with_argnums_match_torch():
    def f(lib, w1, b1, w2):
        return mlp_loss(lib, w1, b1, w2)

    mine = jacrev(grad(lambda *p: f(ag, *p), argnums=1), argnums=(0, 2))(*ours(W1, B1, W2))
    ref = tf.jacrev(tf.grad(lambda *p: f(torch, *p), argnums=1), argnums=(0, 2))(
        *theirs(W1, B1, W2))
    assert [m.shape for m in mine] == [(5, 4, 5), (5, 5, 3)]
    close(mine, ref)


@needs_torch
def test_third_derivative_through_hessian_and_grad_of_grad_of_grad():
    def f(lib, x):
        return (lib.sin(x) * x * x).sum() + (x * x).sum() ** 2

    mine = jacrev(lambda x: hessian(lambda t: f(ag, t), x))(*ours(X3))
    close(mine, tf.jacrev(tf.hessian(lambda t: f(torch, t)))(*theirs(X3)))
    s = 0.8
    mine3 = grad(grad(grad(lambda t: f(ag, t))))(ag.tensor(s))
    ref3 = tf.grad(tf.grad(tf.grad(lambda t: f(torch, t))))(torch.tensor(s, dtype=torch.float64))
    assert mine3.item() == pytest.approx(ref3.item(), rel=1e-12)


@needs_torch
def test_vjp_inside_jacrev_stays_on_the_graph():
    u = RNG.standard_normal(3)

    def mine(x):
        _, pull = vjp(lambda t: vector_function(ag, t, ag.tensor(W_SQUARE)), x)
        return pull(ag.tensor(u))[0]

    def ref(x):
        _, pull = tf.vjp(lambda t: vector_function(torch, t, theirs(W_SQUARE)[0]), x)
        return pull(theirs(u)[0])[0]

    close(jacrev(mine)(*ours(X3)), tf.jacrev(ref)(*theirs(X3)))


# -- forward over reverse ------------------------------------------------------------------
@needs_torch
def test_jvp_of_grad_matches_torch_func_jvp_of_grad():
    v = RNG.standard_normal(W1.shape)

    def f(w1):
        return mlp_loss(ag, w1, ag.tensor(B1), ag.tensor(W2))

    def ft(w1):
        return mlp_loss(torch, w1, *theirs(B1, W2))

    g, hv = jvp(grad(f), ours(W1), ours(v))
    tg, thv = tf.jvp(tf.grad(ft), theirs(W1), theirs(v))
    close(g, tg)
    close(hv, thv)
    g2, hv2 = jvp(lambda w: grad(f)(w), ours(W1), ours(v))  # the lambda of the brief
    close(hv2, thv)
    assert not hv.requires_grad and not g.requires_grad
    # through an op before the inner grad, and grad of grad inside jvp
    _, through = jvp(lambda w: grad(f)(w * 2.0), ours(W1), ours(v))
    close(through, tf.jvp(lambda w: tf.grad(ft)(w * 2.0), theirs(W1), theirs(v))[1])
    _, cubic = jvp(grad(grad(ag.sin)), (ag.tensor(0.4),), (ag.tensor(2.0),))
    assert cubic.item() == pytest.approx(-2.0 * np.cos(0.4), rel=1e-14)


@needs_torch
def test_hvp_and_vhp_match_torch_autograd_functional_for_several_inputs():
    vs = tuple(RNG.standard_normal(a.shape) for a in (W1, B1, W2))

    def f(*p):
        return mlp_loss(ag, *p)

    def ft(*p):
        return mlp_loss(torch, *p)

    value, product = hvp(f, ours(W1, B1, W2), ours(*vs))
    t_value, t_product = taf.hvp(ft, theirs(W1, B1, W2), theirs(*vs))
    close(value, t_value)
    close(product, t_product)
    v_value, v_product = vhp(f, ours(W1, B1, W2), ours(*vs))
    tv_value, tv_product = taf.vhp(ft, theirs(W1, B1, W2), theirs(*vs))
    close(v_value, tv_value)
    close(v_product, tv_product)
    single = vhp(lambda w: f(w, *ours(B1, W2)), ag.tensor(W1), ag.tensor(vs[0]))[1]
    close(single, taf.vhp(lambda w: ft(w, *theirs(B1, W2)), *theirs(W1, vs[0]))[1])


def _deep_loss():
    gen = np.random.default_rng(0)
    weights = [ag.tensor(gen.standard_normal((32, 32)) * 0.3) for _ in range(10)]

    def loss(x):
        for w in weights:
            x = ag.tanh(w @ x)
        return (x * x).sum()

    return loss, weights, gen.standard_normal(32), gen.standard_normal(32)


def test_hvp_is_forward_over_reverse_and_vhp_reverse_over_reverse():
    loss, weights, x0, v = _deep_loss()
    with counting.count_ops() as gradient:
        leaf = ag.tensor(x0, requires_grad=True)
        loss(leaf).backward()
    with counting.count_ops() as fwd, memory.track_saved_bytes(exclude=weights) as fwd_mem:
        _, a = hvp(loss, ag.tensor(x0), ag.tensor(v))
    with counting.count_ops() as rev, memory.track_saved_bytes(exclude=weights) as rev_mem:
        _, b = vhp(loss, ag.tensor(x0), ag.tensor(v))
    np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-12, atol=1e-13)  # H symmetric
    # forward over reverse: one reverse sweep (recorded, counted as backward work as
    # count_ops counts any sweep) with tangents carried through it; reverse over reverse:
    # no tangents, and a second sweep through the first
    # (multiply-adds: the transform adds a reshape, which costs none)
    assert fwd.jvp.ops > 0 and fwd.backward.macs == gradient.backward.macs
    assert rev.jvp.ops == 0 and rev.backward.macs > 2 * gradient.backward.macs
    for counted in (fwd, rev):  # the forward pass once: the sweeps' ops are not forward
        assert counted.forward.macs == gradient.forward.macs
    for counted in (fwd, rev):  # each about two gradients, not n = 32 of them
        assert 1.5 < counted.total_macs / gradient.total_macs < 3
    # the recorded sweep's saves are released as the tangent passes them
    assert fwd_mem.peak < rev_mem.peak


def test_a_plain_jvp_still_keeps_no_saved_tensors_after_a_jvp_of_grad():
    loss, weights, x0, v = _deep_loss()
    jvp(grad(loss), (ag.tensor(x0),), (ag.tensor(v),))
    with memory.track_saved_bytes(exclude=weights) as tracked:
        jvp(loss, (ag.tensor(x0),), (ag.tensor(v),))
    assert tracked.peak == 32 * 8  # one tanh output at a time, as before


# -- what the connected path promises --------------------------------------------------------
@needs_torch
def test_a_learners_own_backward_reaches_through_grad():
    def f(lib, x):
        return (lib.tanh(x) * x).sum()

    x = ag.tensor(X3, requires_grad=True)
    g = grad(lambda t: f(ag, t))(x)
    assert g.requires_grad and g.grad_fn is not None
    (g * g).sum().backward()
    xt = torch.tensor(X3, requires_grad=True)
    gt = tf.grad(lambda t: f(torch, t))(xt)
    (gt * gt).sum().backward()
    close(x.grad, xt.grad)


def test_the_inner_sweep_stops_at_its_inputs():
    """An outer leaf's hook runs in the outer backward only, not in grad's own sweep."""
    x = ag.tensor([0.5, -1.0], requires_grad=True)
    calls = []
    x.register_hook(lambda g: calls.append(g.tolist()))
    g = grad(lambda t: (t * t * t).sum())(x)
    assert calls == []
    np.testing.assert_allclose(g.numpy(), 3 * x.numpy() ** 2)
    g.sum().backward()
    assert len(calls) == 1
    np.testing.assert_allclose(x.grad.numpy(), 6 * x.numpy())


def test_the_fast_path_is_unchanged_and_under_no_grad_nothing_is_connected():
    x = ag.tensor([1.0, 2.0])
    j = jacrev(lambda t: t * t)(x)
    assert j.grad_fn is None and j.tolist() == [[2.0, 0.0], [0.0, 4.0]]
    leaf = ag.tensor([1.0, 2.0], requires_grad=True)
    with ag.no_grad():
        g = grad(lambda t: (t * t).sum())(leaf)
    assert g.grad_fn is None and g.tolist() == [2.0, 4.0]


# -- mistakes get a sentence -------------------------------------------------------------------
def _square_sum(t):
    return (t * t).sum()


@pytest.mark.parametrize("call, match", [
    (lambda: grad(lambda t: t * t)(ag.tensor([1.0, 2.0])),
     r"grad\(f\)\(\*args\): Expected f\(\*args\) to return a scalar Tensor, got tensor "
     r"with 1 dims \(shape \(2,\)\)\. Maybe you wanted to use the vjp or jacrev APIs"),
    (lambda: grad(lambda t: (t * t).sum().item())(ag.tensor([1.0])),
     r"Expected f\(\*args\) to return a Tensor, got float"),
    (lambda: grad(lambda t: (t, t))(ag.tensor(1.0)),
     r"Expected f\(\*args\) to return a Tensor, got tuple"),
    (lambda: grad(_square_sum, argnums=1)(ag.tensor([1.0])),
     r"argnums 1 is out of range for a function called with 1 argument\(s\)"),
    (lambda: grad(_square_sum, argnums=1.0)(ag.tensor([1.0])),
     r"argnums must be int or Tuple\[int, \.\.\.\], got: <class 'float'>"),
    (lambda: grad(_square_sum, argnums=())(ag.tensor([1.0])),
     r"argnums must be non-empty: there is nothing to differentiate"),
    (lambda: jacrev(_square_sum, argnums=(0, -1))(ag.tensor([1.0])),
     r"argnums elements must be unique, got \(0, -1\)"),
    (lambda: grad(_square_sum, has_aux=True)(ag.tensor([1.0])),
     r"grad\(f\)\(\*args\): output of function f should be a tuple: \(output, aux\) if "
     r"has_aux is True"),
    (lambda: grad_and_value(lambda t: (_square_sum(t),), has_aux=True)(ag.tensor([1.0])),
     r"grad_and_value\(f\)\(\*args\): output of function f should be a tuple"),
    (lambda: vhp(lambda t: t * 2, ag.tensor([1.0, 2.0]), ag.tensor([1.0, 0.0])),
     r"vhp: the function must return one tensor with a single element"),
    (lambda: hvp(lambda t: t * 2, ag.tensor([1.0, 2.0]), ag.tensor([1.0, 0.0])),
     r"hvp: the function must return one tensor with a single element"),
])
def test_mistakes_get_a_sentence(call, match):
    with pytest.raises(RuntimeError, match=match) as info:
        call()
    lines = str(info.value).split("\n")
    assert lines[0][-1] in ".?" and len(lines[0].split()) >= 5, lines
    # every message but the range one (pinned without a hint in test_errors) says how
    # to fix it
    if "out of range" not in lines[0]:
        assert len(lines) == 2 and lines[1].startswith("Hint: ") and lines[1].endswith(".")


@pytest.mark.parametrize("call, match", [
    (lambda: jacrev(jacfwd(_square_sum))(ag.tensor([1.0, 2.0])),
     r"jacfwd: its primals depend on tensors that an enclosing reverse-mode transform"),
    (lambda: grad(lambda t: jvp(_square_sum, (t,), (ag.ones(2),))[1])(ag.tensor([1.0, 2.0])),
     r"forward mode computes its tangents with NumPy outside the graph"),
    (lambda: jvp(lambda t: jvp(_square_sum, (t,), (t,))[1], (ag.tensor([1.0, 2.0]),),
                 (ag.ones(2),)),
     r"jvp: its primals carry the tangent of an enclosing jvp/jacfwd"),
])
def test_compositions_that_would_silently_give_zeros_raise_instead(call, match):
    with pytest.raises(NotImplementedError, match=match):
        call()


def _flat(value):
    return list(value) if isinstance(value, tuple) else [value]


def _indexed(t):
    """Basic slicing, repeated advanced indices and a single element: getitem's backward
    (a scatter) is itself differentiated, in forward mode by hvp."""
    return (t[:2] ** 3).sum() + (t[[0, 0, 2]] ** 2).sum() + t[1] * t[2]


@needs_torch
def test_hvp_and_vhp_through_indexing_match_pytorch():
    x, v = np.array([1.0, 2.0, 3.0]), np.array([1.0, -2.0, 0.5])
    expected = taf.hvp(_indexed, torch.tensor(x), torch.tensor(v))[1].numpy()
    for transform in (hvp, vhp):
        got = transform(_indexed, ag.tensor(x), ag.tensor(v))[1].numpy()
        np.testing.assert_allclose(got, expected, rtol=1e-12)
