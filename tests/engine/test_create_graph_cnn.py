"""Second (and third) derivatives through the CNN ops: conv2d, max_pool2d, avg_pool2d,
batch norm in training and evaluation mode, and var (their recorded backwards).

Each case is a small float64 program f(inputs) with an upstream v. The first
derivatives g = d<v, f>/d inputs come from ``autograd.grad(create_graph=True)``; the
second ones are the gradient of phi = Σ <g_i, w_i> (w random). They are compared
with central differences of phi computed from the lean engine's ``backward()`` on
fresh graphs (NumPy, nothing recorded twice: an independent path), and with PyTorch's
``torch.autograd.grad(create_graph=True)`` on the same values. Then
``autograd.functional``'s ``hvp`` and ``hessian`` (forward over reverse: the recorded ops' jvp
rules too) against
``torch.autograd.functional`` and ``torch.func.hessian`` on a small CNN and on batch
norm in training mode.
"""

from __future__ import annotations

import numpy as np
import pytest
from op_table import central_differences

import autograd_core as ag
from autograd_core import autograd
from autograd_core.autograd.functional import hessian, hvp

try:
    import torch
except ImportError:
    torch = None

needs_torch = pytest.mark.skipif(
    torch is None, reason="PyTorch is not installed: the cross-check against PyTorch is "
    "skipped (pip install -e '.[torch]')")

EPS = 1e-5  # central differences of the lean gradient
NUMERIC = dict(rtol=1e-4, atol=1e-6)
TORCH = dict(rtol=1e-9, atol=1e-11)


# -- the check -------------------------------------------------------------------------------
def _lean_gradients(program, values, params, v) -> list[np.ndarray]:
    """d<v, f>/d inputs by the lean sweep on a fresh graph."""
    leaves = [ag.tensor(x, requires_grad=True) for x in values]
    program(ag, *leaves, **params).backward(ag.tensor(v))
    return [np.zeros_like(x) if t.grad is None else t.grad.numpy()
            for t, x in zip(leaves, values, strict=True)]


def _ours(program, values, params, v, weights):
    """(first derivatives, second derivatives of phi) by the recorded sweep."""
    leaves = [ag.tensor(x, requires_grad=True) for x in values]
    out = program(ag, *leaves, **params)
    firsts = autograd.grad(out, leaves, ag.tensor(v), create_graph=True,
                           materialize_grads=True)
    phi = sum((g * ag.tensor(w)).sum() for g, w in zip(firsts, weights, strict=True))
    seconds = autograd.grad(phi, leaves, materialize_grads=True)
    return [g.numpy() for g in firsts], [s.numpy() for s in seconds]


def _theirs(program, values, params, v, weights):
    leaves = [torch.tensor(x, requires_grad=True) for x in values]
    out = program(torch, *leaves, **params)
    firsts = torch.autograd.grad(out, leaves, torch.tensor(v), create_graph=True,
                                 materialize_grads=True)
    phi = sum((g * torch.tensor(w)).sum() for g, w in zip(firsts, weights, strict=True))
    seconds = torch.autograd.grad(phi, leaves, materialize_grads=True)
    return [g.detach().numpy() for g in firsts], [s.numpy() for s in seconds]


def check_second_derivatives(program, values, params=None, seed=0):
    """Our first and second derivatives against the lean sweep, central differences of
    it, and PyTorch (if installed). Returns our second derivatives."""
    params = params or {}
    rng = np.random.default_rng(seed)
    with ag.no_grad():
        shape = program(ag, *map(ag.tensor, values), **params).shape
    v = rng.standard_normal(shape)
    weights = [rng.standard_normal(np.shape(x)) for x in values]
    firsts, seconds = _ours(program, values, params, v, weights)
    for got, lean in zip(firsts, _lean_gradients(program, values, params, v), strict=True):
        np.testing.assert_allclose(got, lean, rtol=1e-10, atol=1e-12)

    def phi(vals) -> float:
        grads = _lean_gradients(program, vals, params, v)
        return sum(float(np.sum(g * w)) for g, w in zip(grads, weights, strict=True))

    expected = central_differences(phi, values, EPS)
    for i, (got, e) in enumerate(zip(seconds, expected, strict=True)):
        np.testing.assert_allclose(got, e, **NUMERIC, err_msg=f"input {i}")
    assert max(np.abs(s).max() for s in seconds) > 1e-3  # not the zero of a lost graph
    if torch is not None:
        t_firsts, t_seconds = _theirs(program, values, params, v, weights)
        for i, (got, t) in enumerate(zip(firsts + seconds, t_firsts + t_seconds,
                                         strict=True)):
            np.testing.assert_allclose(got, t, **TORCH, err_msg=f"vs PyTorch, result {i}")
    return seconds


# -- conv2d ---------------------------------------------------------------------------------
def conv_program(lib, x, w, *bias, stride, padding, dilation, groups):
    """tanh after the convolution, so that g depends on the inputs too (conv2d alone is
    bilinear: its own second derivatives are only the x-w cross terms)."""
    out = lib.nn.functional.conv2d(x, w, bias[0] if bias else None, stride=stride,
                                   padding=padding, dilation=dilation, groups=groups)
    return lib.tanh(out)


# (input shape, weight shape, bias, stride, padding, dilation, groups)
CONV_CONFIGS = [
    ((2, 3, 5, 5), (4, 3, 3, 3), True, 1, 0, 1, 1),  # stride 1: the gather
    ((2, 2, 6, 5), (3, 2, 3, 2), False, 2, 1, 1, 1),  # strided: the scatter, a pixel left
    ((1, 2, 7, 7), (2, 2, 2, 3), True, 1, 2, 2, 1),  # dilation
    ((2, 4, 6, 7), (4, 2, 3, 3), True, (2, 1), (1, 0), (1, 2), 2),  # groups, mixed pairs
    ((2, 2, 5, 5), (6, 1, 3, 3), False, 1, 1, 1, 2),  # O > 2·C at stride 1: the scatter
    ((2, 4, 5), (3, 2, 3, 3), True, 1, 1, 1, 1),  # one (C, H, W) image
]


@pytest.mark.parametrize("config", CONV_CONFIGS, ids=[f"conv{i}" for i in
                                                       range(len(CONV_CONFIGS))])
def test_conv2d_second_derivatives(config):
    x_shape, w_shape, bias, stride, padding, dilation, groups = config
    rng = np.random.default_rng(len(x_shape) + w_shape[0])
    values = [rng.standard_normal(x_shape), rng.standard_normal(w_shape) * 0.5]
    if bias:
        values.append(rng.standard_normal(w_shape[0]) * 0.5)
    check_second_derivatives(conv_program, values, dict(stride=stride, padding=padding,
                                                        dilation=dilation, groups=groups))


@pytest.mark.parametrize("stride", [1, 2])
def test_conv2d_third_derivative(stride):
    """Three sweeps, the first two recorded: the rules of conv2d_input_grad and
    conv2d_weight_grad (the ops of the first recorded sweep) are recorded in turn."""
    rng = np.random.default_rng(11 + stride)
    x0, w0 = rng.standard_normal((2, 2, 5, 5)), rng.standard_normal((3, 2, 3, 3)) * 0.5
    b0 = rng.standard_normal(3) * 0.5
    v, u1, u2 = (rng.standard_normal(s) for s in [(2, 3, 3, 3), x0.shape, w0.shape])
    u3, u4 = rng.standard_normal(x0.shape), rng.standard_normal(w0.shape)
    params = dict(stride=stride, padding=stride - 1, dilation=1, groups=1)  # out: 3 x 3

    def third(lib, tensor, grad, values):
        x, w, b = (tensor(a, requires_grad=True) for a in values)
        out = conv_program(lib, x, w, b, **params)
        gx, gw = grad(out, (x, w), tensor(v), create_graph=True)
        phi = (gx * tensor(u1)).sum() + (gw * tensor(u2)).sum()
        hx, hw, hb = grad(phi, (x, w, b), create_graph=True)
        psi = (hx * tensor(u3)).sum() + (hw * tensor(u4)).sum() + hb.sum()
        return [t.detach().numpy() for t in grad(psi, (x, w, b))], psi

    got, psi = third(ag, ag.tensor, autograd.grad, [x0, w0, b0])
    assert {n.name for n in _recorded_ops(psi)} >= {"conv2d_input_grad", "conv2d_weight_grad"}

    def psi_of(values) -> float:  # central differences of the (checked) second derivative
        return float(third(ag, ag.tensor, autograd.grad, values)[1].item())

    expected = central_differences(psi_of, [x0, w0, b0], EPS)
    for g, e in zip(got, expected, strict=True):
        np.testing.assert_allclose(g, e, rtol=1e-4, atol=1e-6)
    assert max(np.abs(g).max() for g in got) > 1e-3
    if torch is not None:
        theirs, _ = third(torch, torch.tensor, torch.autograd.grad, [x0, w0, b0])
        for g, t in zip(got, theirs, strict=True):
            np.testing.assert_allclose(g, t, **TORCH)


def _recorded_ops(out) -> list:
    """Every node of ``out``'s graph."""
    seen, stack = set(), [out.grad_fn]
    while stack:
        node = stack.pop()
        if node is None or node in seen or isinstance(node, ag.Tensor):
            continue
        seen.add(node)
        stack.extend(node.edges)
    return list(seen)


# -- pooling -------------------------------------------------------------------------------
def pool_program(lib, x, *, op, kernel_size, stride, padding):
    """sin before and tanh after the pool: the pool's g depends on x, and its input."""
    pool = getattr(lib.nn.functional, op)
    return lib.tanh(pool(lib.sin(x), kernel_size, stride, padding) * 1.5)


POOL_CONFIGS = [((2, 2), (2, 2), 0), ((3, 3), (2, 2), 1), ((2, 3), (1, 2), (1, 0))]


@pytest.mark.parametrize("op", ["max_pool2d", "avg_pool2d"])
@pytest.mark.parametrize("config", POOL_CONFIGS, ids=["tiled", "overlapping", "mixed"])
def test_pooling_second_derivatives(op, config):
    kernel, stride, padding = config
    rng = np.random.default_rng(sum(kernel))
    x = rng.standard_normal((2, 2, 6, 5))  # distinct values: no ties, argmax stays put
    check_second_derivatives(pool_program, [x], dict(op=op, kernel_size=kernel,
                                                     stride=stride, padding=padding))


@pytest.mark.parametrize("op", ["max_pool2d", "avg_pool2d"])
def test_pooling_of_one_image_and_third_order(op):
    rng = np.random.default_rng(5)
    x0 = rng.standard_normal((2, 5, 4))  # (C, H, W)
    check_second_derivatives(pool_program, [x0], dict(op=op, kernel_size=2, stride=1,
                                                      padding=1))
    x = ag.tensor(x0, requires_grad=True)
    out = pool_program(ag, x, op=op, kernel_size=2, stride=1, padding=1).sum()
    (g,) = autograd.grad(out, x, create_graph=True)
    (h,) = autograd.grad((g * g).sum(), x, create_graph=True)
    (third,) = autograd.grad((h * h).sum(), x)  # the pool's backward ops, recorded again
    if torch is not None:
        t = torch.tensor(x0, requires_grad=True)
        (tg,) = torch.autograd.grad(pool_program(torch, t, op=op, kernel_size=2, stride=1,
                                                 padding=1).sum(), t, create_graph=True)
        (th,) = torch.autograd.grad((tg * tg).sum(), t, create_graph=True)
        (t_third,) = torch.autograd.grad((th * th).sum(), t)
        np.testing.assert_allclose(third.numpy(), t_third.numpy(), **TORCH)


# -- batch norm ------------------------------------------------------------------------------
def bn_program(lib, x, *affine, training, layout, stats=None, pre=False):
    """batch_norm (weight and bias as ``layout`` says: "wb", "w", "b" or ""), then tanh;
    ``pre``: the input computed (sin) rather than a leaf."""
    f = lib.nn.functional
    given = dict(zip(layout, affine, strict=True))
    if lib is torch and "b" in given and "w" not in given:
        # PyTorch's double backward of batch_norm fails with a bias and no weight
        # ("Expected a proper Tensor but got None"): the same function with ones
        given["w"] = torch.ones(x.shape[1], dtype=x.dtype)
    mean, var = (None, None) if stats is None else (lib.tensor(s) for s in stats)
    y = f.batch_norm(lib.sin(x) if pre else x, mean, var, given.get("w"), given.get("b"),
                     training=training, eps=1e-3)
    return lib.tanh(y)


@pytest.mark.parametrize("training", [True, False], ids=["train", "eval"])
@pytest.mark.parametrize("layout", ["wb", "w", "b", ""])
@pytest.mark.parametrize("shape", [(3, 2, 2, 3), (5, 3)])
@pytest.mark.parametrize("pre", [False, True], ids=["leaf", "computed"])
def test_batch_norm_second_derivatives(training, layout, shape, pre):
    rng = np.random.default_rng(len(layout) + len(shape))
    channels = shape[1]
    values = [rng.standard_normal(shape) * 1.3 + 0.4]
    values += [rng.standard_normal(channels) for _ in layout]
    stats = None
    if not training:
        stats = (rng.standard_normal(channels) * 0.3, rng.uniform(0.5, 2.0, channels))
    check_second_derivatives(bn_program, values, dict(training=training, layout=layout,
                                                      stats=stats, pre=pre))


def test_batch_norm_with_only_weight_and_bias_requiring_grad():
    """x̂ is then a constant (the input needs no gradient): d²/dweight dbias etc."""
    rng = np.random.default_rng(3)
    x = ag.tensor(rng.standard_normal((4, 3, 2, 2)))

    def program(lib, w, b):
        return bn_program(lib, lib.tensor(x.numpy()), w, b, training=True, layout="wb")

    check_second_derivatives(program, [rng.standard_normal(3), rng.standard_normal(3)])


# -- var ---------------------------------------------------------------------------------------
def var_program(lib, a, *, dim, keepdim, correction, pre):
    return lib.tanh(lib.var(lib.sin(a) if pre else a, dim=dim, keepdim=keepdim,
                            correction=correction))


@pytest.mark.parametrize("dim", [None, 0, (0, 2), -1])
@pytest.mark.parametrize("keepdim", [False, True])
@pytest.mark.parametrize("correction", [0, 1, 2])
@pytest.mark.parametrize("pre", [False, True], ids=["leaf", "computed"])
def test_var_second_derivatives(dim, keepdim, correction, pre):
    a = np.random.default_rng(4).standard_normal((3, 4, 3)) + 2.0  # not centred
    check_second_derivatives(var_program, [a], dict(dim=dim, keepdim=keepdim,
                                                    correction=correction, pre=pre))


def test_the_cnn_backward_ops_have_rules_and_jvps():
    from autograd_core.ops import conv, pooling
    for op in (conv.Conv2dInputGrad, conv.Conv2dWeightGrad, pooling.MaxPool2dBackward,
               pooling.MaxPool2dGather, pooling.AvgPool2dBackward):
        assert callable(getattr(op, "jvp", None)) and op.rule


def test_memory_the_forward_saves_is_unchanged():
    """The rules read only what the forward already saved (batch norm: x̂ and inv_std)."""
    x = ag.tensor(np.random.default_rng(0).standard_normal((4, 3, 2, 2)), requires_grad=True)
    y = ag.nn.functional.batch_norm(x, None, None, training=True)
    assert set(y.grad_fn.saved) == {"inv_std", "normalized"}
    v = ag.tensor(np.random.default_rng(1).standard_normal((4, 3, 2, 2)))
    (g,) = autograd.grad(y, x, v, create_graph=True)
    (lean,) = autograd.grad(ag.nn.functional.batch_norm(x, None, None, training=True), x, v)
    np.testing.assert_allclose(g.numpy(), lean.numpy(), rtol=1e-10, atol=1e-12)


# -- hvp and hessian vs PyTorch ---------------------------------------------------------------
def cnn_loss(lib, tensor, weight, x, rest, target):
    """conv2d -> relu -> max_pool2d -> flatten -> linear -> cross_entropy, as a function
    of the conv weight."""
    f = lib.nn.functional
    conv_bias, w2, b2 = (tensor(a) for a in rest)
    h = f.max_pool2d(f.relu(f.conv2d(tensor(x), weight, conv_bias, padding=1)), 2)
    logits = f.linear(h.flatten(1), w2, b2)
    return f.cross_entropy(logits, tensor(target))


def cnn_problem():
    rng = np.random.default_rng(21)
    x = rng.standard_normal((3, 2, 4, 4))
    weight = rng.standard_normal((3, 2, 3, 3)) * 0.4
    rest = [rng.standard_normal(3) * 0.1, rng.standard_normal((4, 12)) * 0.4,
            rng.standard_normal(4) * 0.1]
    return x, weight, rest, np.array([0, 3, 1]), rng.standard_normal(weight.shape)


def test_cnn_hvp_matches_central_differences_of_the_lean_gradient():
    x, weight, rest, target, v = cnn_problem()

    def loss_of(w):
        return cnn_loss(ag, ag.tensor, w, x, rest, target)

    def lean_grad(w):
        leaf = ag.tensor(w, requires_grad=True)
        loss_of(leaf).backward()
        return leaf.grad.numpy()

    _, product = hvp(loss_of, ag.tensor(weight), ag.tensor(v))
    expected = (lean_grad(weight + EPS * v) - lean_grad(weight - EPS * v)) / (2 * EPS)
    np.testing.assert_allclose(product.numpy(), expected, rtol=1e-5, atol=1e-8)
    assert np.abs(product.numpy()).max() > 1e-3


@needs_torch
def test_cnn_hvp_and_hessian_match_pytorch():
    from torch.autograd.functional import hessian as torch_hessian
    from torch.autograd.functional import hvp as torch_hvp

    x, weight, rest, target, v = cnn_problem()

    def ours(w):
        return cnn_loss(ag, ag.tensor, w, x, rest, target)

    def theirs(w):
        return cnn_loss(torch, torch.tensor, w, x, rest, target)

    out, product = hvp(ours, ag.tensor(weight), ag.tensor(v))
    t_out, t_product = torch_hvp(theirs, torch.tensor(weight), torch.tensor(v))
    np.testing.assert_allclose(out.numpy(), t_out.numpy(), rtol=1e-12)
    np.testing.assert_allclose(product.numpy(), t_product.numpy(), **TORCH)
    full = hessian(ours, ag.tensor(weight)).numpy()
    assert full.shape == weight.shape * 2
    np.testing.assert_allclose(full, torch_hessian(theirs, torch.tensor(weight)).numpy(),
                               **TORCH)
    np.testing.assert_allclose(full, torch.func.hessian(theirs)(torch.tensor(weight)).numpy(),
                               **TORCH)
    flat = full.reshape(weight.size, weight.size)
    np.testing.assert_allclose(flat, flat.T, atol=1e-12)


def bn_loss(lib, tensor, x, weight, bias, c):
    """A batch norm layer in training mode, then tanh, weighted by ``c``: a scalar."""
    y = lib.nn.functional.batch_norm(x, None, None, weight, bias, training=True)
    return (lib.tanh(y) * tensor(c)).sum()


def bn_problem():
    rng = np.random.default_rng(31)
    x = rng.standard_normal((3, 2, 2, 2)) * 1.5 + 0.3
    weight, bias = rng.standard_normal(2), rng.standard_normal(2) * 0.2
    return x, weight, bias, rng.standard_normal(x.shape)


@needs_torch
@pytest.mark.parametrize("wrt", ["input", "weight"])
def test_batch_norm_hvp_and_hessian_match_pytorch(wrt):
    from torch.autograd.functional import hessian as torch_hessian
    from torch.autograd.functional import hvp as torch_hvp

    x, weight, bias, c = bn_problem()
    at = x if wrt == "input" else weight
    v = np.random.default_rng(32).standard_normal(at.shape)

    def make(lib, tensor):
        def f(t):
            if wrt == "input":
                return bn_loss(lib, tensor, t, tensor(weight), tensor(bias), c)
            return bn_loss(lib, tensor, tensor(x), t, tensor(bias), c)
        return f

    ours, theirs = make(ag, ag.tensor), make(torch, torch.tensor)
    _, product = hvp(ours, ag.tensor(at), ag.tensor(v))
    _, t_product = torch_hvp(theirs, torch.tensor(at), torch.tensor(v))
    np.testing.assert_allclose(product.numpy(), t_product.numpy(), **TORCH)
    assert np.abs(product.numpy()).max() > 1e-3
    full = hessian(ours, ag.tensor(at)).numpy()
    np.testing.assert_allclose(full, torch_hessian(theirs, torch.tensor(at)).numpy(), **TORCH)
    np.testing.assert_allclose(full, torch.func.hessian(theirs)(torch.tensor(at)).numpy(),
                               **TORCH)


def test_batch_norm_hessian_matches_central_differences_of_the_lean_gradient():
    x, weight, bias, c = bn_problem()

    def loss_of(t):
        return bn_loss(ag, ag.tensor, t, ag.tensor(weight), ag.tensor(bias), c)

    def lean_grad(values):
        leaf = ag.tensor(values[0], requires_grad=True)
        loss_of(leaf).backward()
        return leaf.grad.numpy()

    full = hessian(loss_of, ag.tensor(x)).numpy().reshape(x.size, x.size)
    columns = []
    for k in range(x.size):
        e = np.zeros(x.size)
        e[k] = EPS
        e = e.reshape(x.shape)
        columns.append(((lean_grad([x + e]) - lean_grad([x - e])) / (2 * EPS)).ravel())
    np.testing.assert_allclose(full, np.array(columns), rtol=1e-5, atol=1e-7)
    # batch norm is shift-invariant per channel: H · (ones on one channel) = 0
    shift = np.zeros(x.shape)
    shift[:, 0] = 1.0
    np.testing.assert_allclose(full @ shift.ravel(), 0.0, atol=1e-10)
