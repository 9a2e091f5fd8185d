"""autograd_core.nn.functional: gradients, references, saved tensors and errors.

* every op passes gradcheck (float64, central differences) over hypothesis-drawn
  shapes, strides, paddings, dilations, groups, kernel sizes and batch sizes
  (1 included where legal);
* conv2d and the pools agree, forward and backward, with naive loops
  (tests/helpers/reference_layers.py), ties included; batch_norm and cross_entropy agree
  with composite graphs of the engine's primitive ops;
* what each op saves, dtypes kept, dropout's contract, and every error message.
"""

from __future__ import annotations

import numpy as np
import pytest
import reference_layers as ref
from hypothesis import given, settings
from hypothesis import strategies as st

import autograd_core as ag
from autograd_core.autograd import gradcheck
from autograd_core.nn import functional as F
from autograd_core.tools.graph import capture

SETTINGS = settings(deadline=None, max_examples=40, derandomize=True, database=None)


def leaf(array, requires_grad=True) -> ag.Tensor:
    return ag.tensor(np.asarray(array, dtype=np.float64), requires_grad=requires_grad)


def distinct(rng, shape) -> np.ndarray:
    """Values at least 0.1 apart (no ties, so max pooling has one winner per window)."""
    return rng.permutation(int(np.prod(shape))).reshape(shape) * 0.1 - 1.0


# -- hypothesis strategies: a config is (function of the tensors, the tensors) ----------------
@st.composite
def conv_cases(draw, batched=None):
    rng = np.random.default_rng(draw(st.integers(0, 2**16)))
    groups = draw(st.sampled_from([1, 1, 2]))
    cin, cout = groups * draw(st.integers(1, 2)), groups * draw(st.integers(1, 2))
    kernel = (draw(st.integers(1, 3)), draw(st.integers(1, 3)))
    stride = (draw(st.integers(1, 3)), draw(st.integers(1, 2)))
    padding = (draw(st.integers(0, 2)), draw(st.integers(0, 1)))
    dilation = (draw(st.integers(1, 2)), draw(st.integers(1, 2)))
    size = []
    for k, p, d in zip(kernel, padding, dilation):
        span = d * (k - 1) + 1
        smallest = max(1, span - 2 * p)  # the window must fit in the padded input
        size.append(draw(st.integers(smallest, smallest + 3)))
    batch = draw(st.integers(1, 2))
    batched = draw(st.booleans()) if batched is None else batched
    shape = ((batch,) if batched else ()) + (cin, *size)
    x = leaf(rng.standard_normal(shape))
    w = leaf(rng.standard_normal((cout, cin // groups, *kernel)))
    b = leaf(rng.standard_normal(cout)) if draw(st.booleans()) else None
    params = dict(stride=stride, padding=padding, dilation=dilation, groups=groups)
    inputs = (x, w) if b is None else (x, w, b)
    return (lambda *t: F.conv2d(*t, **params)), inputs, params


@st.composite
def pool_cases(draw, values="distinct"):
    rng = np.random.default_rng(draw(st.integers(0, 2**16)))
    kernel = (draw(st.integers(1, 3)), draw(st.integers(1, 3)))
    stride = (draw(st.integers(1, 3)), draw(st.integers(1, 3)))
    padding = (draw(st.integers(0, kernel[0] // 2)), draw(st.integers(0, kernel[1] // 2)))
    size = tuple(draw(st.integers(max(1, k - 2 * p), max(1, k - 2 * p) + 3))
                 for k, p in zip(kernel, padding))
    shape = (draw(st.integers(1, 2)), draw(st.integers(1, 2)), *size)
    data = distinct(rng, shape) if values == "distinct" else rng.integers(-2, 3, shape)
    return leaf(data), dict(kernel_size=kernel, stride=stride, padding=padding)


@st.composite
def batch_norm_cases(draw, training=None):
    rng = np.random.default_rng(draw(st.integers(0, 2**16)))
    training = draw(st.booleans()) if training is None else training
    channels = draw(st.integers(1, 3))
    spatial = draw(st.sampled_from([(), (2, 3), (1, 1), (3,)]))
    batch = draw(st.integers(2 if not spatial or spatial == (1, 1) else 1, 3))
    x = leaf(rng.standard_normal((batch, channels, *spatial)) * 2 + 1)
    affine = draw(st.sampled_from(["both", "none", "weight", "bias"]))
    w = leaf(rng.standard_normal(channels)) if affine in ("both", "weight") else None
    b = leaf(rng.standard_normal(channels)) if affine in ("both", "bias") else None
    running = (rng.standard_normal(channels), rng.random(channels) + 0.5)
    return x, w, b, running, training


@st.composite
def class_cases(draw):
    rng = np.random.default_rng(draw(st.integers(0, 2**16)))
    n, c = draw(st.integers(1, 4)), draw(st.integers(1, 4))
    extra = draw(st.sampled_from([(), (2,)]))
    logits = leaf(rng.standard_normal((n, c, *extra)) * 3)
    target = rng.integers(0, c, (n, *extra))
    return logits, target, draw(st.sampled_from(["mean", "sum", "none"]))


@st.composite
def gradcheck_cases(draw, name):
    """(fn, inputs) for one row of the gradcheck table."""
    rng = np.random.default_rng(draw(st.integers(0, 2**16)))
    if name == "conv2d":
        fn, inputs, _ = draw(conv_cases())
        return fn, inputs
    if name in ("max_pool2d", "avg_pool2d"):
        x, params = draw(pool_cases())
        pool = getattr(F, name)
        return (lambda t: pool(t, **params)), (x,)
    if name == "batch_norm":
        x, w, b, (mean, var), training = draw(batch_norm_cases())
        inputs = tuple(t for t in (x, w, b) if t is not None)

        def bn(x, *affine):
            weight = affine[0] if w is not None else None
            bias = affine[-1] if b is not None else None
            return F.batch_norm(x, ag.tensor(mean), ag.tensor(var), weight, bias,
                                training=training)
        return bn, inputs
    if name == "dropout":
        x = leaf(rng.standard_normal(draw(st.sampled_from([(5,), (2, 3, 4)]))))
        p, seed = draw(st.sampled_from([0.2, 0.5, 0.9])), draw(st.integers(0, 99))
        return (lambda t: F.dropout(t, p, generator=ag.Generator(seed))), (x,)
    if name == "embedding":
        rows, dim = draw(st.integers(1, 4)), draw(st.integers(1, 3))
        ids = rng.integers(0, rows, draw(st.sampled_from([(3,), (2, 3), ()])))
        return (lambda w: F.embedding(ids, w)), (leaf(rng.standard_normal((rows, dim))),)
    if name == "linear":
        lead = draw(st.sampled_from([(), (1,), (3,), (2, 2)]))
        fin, fout = draw(st.integers(1, 3)), draw(st.integers(1, 3))
        inputs = (leaf(rng.standard_normal((*lead, fin))),
                  leaf(rng.standard_normal((fout, fin))))
        if draw(st.booleans()):
            inputs += (leaf(rng.standard_normal(fout)),)
        return F.linear, inputs
    if name in ("cross_entropy", "nll_loss"):
        logits, target, reduction = draw(class_cases())
        loss = getattr(F, name)
        return (lambda t: loss(t, target, reduction=reduction)), (logits,)
    shape = draw(st.sampled_from([(3,), (2, 3), (2, 1, 2)]))
    reduction = draw(st.sampled_from(["mean", "sum", "none"]))
    x = leaf(rng.standard_normal(shape) * 2)
    t = leaf(rng.random(shape) if name == "binary_cross_entropy_with_logits"
             else rng.standard_normal(shape))
    loss = getattr(F, name)
    return (lambda a, b: loss(a, b, reduction=reduction)), (x, t)


GRADCHECK_OPS = ["conv2d", "max_pool2d", "avg_pool2d", "batch_norm", "dropout", "embedding",
                 "linear", "cross_entropy", "nll_loss", "mse_loss",
                 "binary_cross_entropy_with_logits"]


@pytest.mark.parametrize("name", GRADCHECK_OPS)
@SETTINGS
@given(data=st.data())
def test_gradcheck(name, data):
    fn, inputs = data.draw(gradcheck_cases(name))
    assert gradcheck(fn, inputs)


# -- against naive loops ---------------------------------------------------------------------
@SETTINGS
@given(case=conv_cases(batched=True), seed=st.integers(0, 99))
def test_conv2d_matches_naive_loops(case, seed):
    fn, inputs, params = case
    out = fn(*inputs)
    g = np.random.default_rng(seed).standard_normal(out.shape)
    out.backward(g)
    x, w = inputs[0].numpy(), inputs[1].numpy()
    b = inputs[2].numpy() if len(inputs) == 3 else None
    np.testing.assert_allclose(out.numpy(), ref.conv2d(x, w, b, **params), atol=1e-12)
    expected = ref.conv2d_backward(x, w, g, **params)
    for t, want in zip(inputs, expected):
        np.testing.assert_allclose(t.grad.numpy(), want, atol=1e-12)


@pytest.mark.parametrize("name", ["max_pool2d", "avg_pool2d"])
@SETTINGS
@given(case=pool_cases(values="small integers"), seed=st.integers(0, 99))
def test_pool_matches_naive_loops_with_ties(name, case, seed):
    """Integer inputs in [-2, 2] tie often: the first maximum in row-major window order
    must win, and overlapping windows (stride < kernel) must add up."""
    x, params = case
    out = getattr(F, name)(x, **params)
    g = np.random.default_rng(seed).standard_normal(out.shape)
    out.backward(g)
    args = (params["kernel_size"], params["stride"], params["padding"])
    want_out, want_dx = getattr(ref, name)(x.numpy(), g, *args)
    np.testing.assert_allclose(out.numpy(), want_out, atol=1e-12)
    np.testing.assert_allclose(x.grad.numpy(), want_dx, atol=1e-12)


def test_max_pool_tie_goes_to_first_maximum_in_row_major_order():
    x = leaf([[[[1.0, 5.0], [5.0, 5.0]]]])
    F.max_pool2d(x, 2).sum().backward()
    assert x.grad.tolist() == [[[[0.0, 1.0], [0.0, 0.0]]]]


def test_max_pool_overlapping_windows_accumulate_at_a_shared_maximum():
    x = leaf([[[[0.0, 9.0, 0.0], [0.0, 0.0, 0.0]]]])  # 9 is the max of both 2x2 windows
    F.max_pool2d(x, 2, stride=1).sum().backward()
    assert x.grad.tolist() == [[[[0.0, 2.0, 0.0], [0.0, 0.0, 0.0]]]]


# -- against composite graphs of engine primitives --------------------------------------------
@SETTINGS
@given(case=batch_norm_cases(), steps=st.integers(1, 3), seed=st.integers(0, 99))
def test_batch_norm_matches_composite_graph(case, steps, seed):
    x, w, b, (mean, var), training = case
    ours = [ag.tensor(mean), ag.tensor(var)]
    theirs = [mean.copy(), var.copy()]
    rng = np.random.default_rng(seed)
    for _ in range(steps):  # several steps: the running estimates must keep agreeing
        out = F.batch_norm(x, *ours, w, b, training=training)
        twins = [None if t is None else leaf(t.numpy()) for t in (x, w, b)]
        want = ref.batch_norm(twins[0], *theirs, twins[1], twins[2], training=training)
        g = rng.standard_normal(out.shape)
        out.backward(g)
        want.backward(g)
        np.testing.assert_allclose(out.numpy(), want.numpy(), atol=1e-10)
        for t, twin in zip((x, w, b), twins):
            if t is not None:
                np.testing.assert_allclose(t.grad.numpy(), twin.grad.numpy(), atol=1e-9)
                t.grad = None
        for r, r_want in zip(ours, theirs):
            np.testing.assert_allclose(r.numpy(), r_want, atol=1e-12)


def test_batch_norm_training_couples_the_batch_and_eval_does_not():
    """G14: in training one sample's input gradient depends on its batch-mates."""
    rng = np.random.default_rng(0)
    sample = rng.standard_normal((1, 3))
    grads = {}
    for training in (True, False):
        for mates in (rng.standard_normal((3, 3)), rng.standard_normal((3, 3)) * 5):
            x = leaf(np.concatenate([sample, mates]))
            F.batch_norm(x, ag.zeros(3), ag.ones(3), training=training)[0].sum().backward()
            grads.setdefault(training, []).append(x.grad.numpy()[0])
    assert not np.allclose(*grads[True])
    np.testing.assert_allclose(*grads[False])


@SETTINGS
@given(case=class_cases())
def test_cross_entropy_matches_composite_graph(case):
    logits, target, reduction = case
    if logits.ndim != 2:
        return
    twin = leaf(logits.numpy())
    out = F.cross_entropy(logits, target, reduction=reduction)
    want = ref.cross_entropy(twin, target, reduction)
    g = np.linspace(0.5, 1.5, out.numel()).reshape(out.shape)
    out.backward(g)
    want.backward(g)
    np.testing.assert_allclose(out.numpy(), want.numpy(), atol=1e-12)
    np.testing.assert_allclose(logits.grad.numpy(), twin.grad.numpy(), atol=1e-12)


def test_cross_entropy_is_stable_for_huge_logits():
    logits = leaf([[1000.0, -1000.0, 0.0], [-5000.0, 5000.0, 1.0]])
    loss = F.cross_entropy(logits, [0, 0], reduction="none")
    loss.sum().backward()
    np.testing.assert_allclose(loss.numpy(), [0.0, 10000.0])
    np.testing.assert_allclose(logits.grad.numpy(), [[0, 0, 0], [-1, 1, 0]], atol=1e-12)


@pytest.mark.parametrize("logit", [-800.0, -30.0, 0.0, 30.0, 800.0])
def test_binary_cross_entropy_with_logits_is_stable(logit):
    x = leaf([logit])
    loss = F.binary_cross_entropy_with_logits(x, ag.tensor([1.0]))
    loss.backward()
    want = np.logaddexp(0.0, -logit)  # -log(sigmoid(x)), computed independently
    np.testing.assert_allclose(loss.item(), want, rtol=1e-12)
    # sigmoid(x) - 1 cancels for large x, here as in PyTorch: absolute precision only
    want_grad = -np.exp(-np.logaddexp(0.0, logit))  # sigmoid(x) - 1 = -1 / (1 + e^x)
    np.testing.assert_allclose(x.grad.item(), want_grad, rtol=1e-12, atol=1e-15)


def test_embedding_repeated_ids_accumulate():
    """G10: the row of an id that occurs k times gets the sum of its k gradients."""
    rng = np.random.default_rng(1)
    ids = np.array([[3, 1, 3], [3, 0, 1]])
    table = leaf(rng.standard_normal((5, 2)))
    out = F.embedding(ids, table)
    g = rng.standard_normal(out.shape)
    out.backward(g)
    np.testing.assert_allclose(out.numpy(), table.numpy()[ids])
    np.testing.assert_allclose(table.grad.numpy(), ref.embedding_backward(ids, g, 5))
    overwrite = np.zeros((5, 2))
    overwrite[ids] = g  # what an overwriting scatter would give: a different answer
    assert not np.allclose(table.grad.numpy(), overwrite)


# -- dropout -------------------------------------------------------------------------------------
def test_dropout_eval_and_p_zero_return_the_input_itself():
    x = leaf(np.ones(4))
    assert F.dropout(x, 0.5, training=False) is x
    assert F.dropout(x, 0.0) is x


def test_dropout_p_one_gives_zeros_and_zero_gradient():
    x = leaf(np.ones(4))
    y = F.dropout(x, 1.0)
    y.sum().backward()
    assert y.tolist() == [0.0] * 4 and x.grad.tolist() == [0.0] * 4


def test_dropout_is_reproducible_from_a_seeded_generator_and_saves_its_mask():
    x = leaf(np.arange(1.0, 2001.0))
    first = F.dropout(x, 0.25, generator=ag.Generator(7))
    second = F.dropout(x, 0.25, generator=ag.Generator(7))
    other = F.dropout(x, 0.25, generator=ag.Generator(8))
    assert np.array_equal(first.numpy(), second.numpy())
    assert not np.array_equal(first.numpy(), other.numpy())
    mask = first.grad_fn.saved["mask"].array
    assert mask.dtype == bool and mask.shape == x.shape
    np.testing.assert_allclose(first.numpy(), x.numpy() * mask / 0.75)
    first.backward(np.full(x.shape, 3.0))
    np.testing.assert_allclose(x.grad.numpy(), 3.0 * mask / 0.75)
    assert abs(mask.mean() - 0.75) < 0.05  # 2000 draws: 5 standard deviations is 0.048


def test_dropout_default_generator_follows_manual_seed():
    x = leaf(np.ones(50))
    ag.manual_seed(3)
    a = F.dropout(x, 0.5).numpy()
    ag.manual_seed(3)
    assert np.array_equal(a, F.dropout(x, 0.5).numpy())


# -- what each op saves, and dtypes ----------------------------------------------------------
def _saved_names(out) -> set:
    return {s.name for op in capture(out).ops for s in op.saved if op.op == out.grad_fn.name}


X4 = np.arange(32.0).reshape(1, 2, 4, 4) / 7
SAVED = [
    ("conv2d, both", lambda x, w: F.conv2d(x, w), (True, True), {"input", "weight"}),
    ("conv2d, weight only", lambda x, w: F.conv2d(x, w), (False, True), {"input"}),
    ("conv2d, input only", lambda x, w: F.conv2d(x, w), (True, False), {"weight"}),
    ("max_pool2d", lambda x, w: F.max_pool2d(x, 2), (True, False), {"argmax"}),
    ("avg_pool2d", lambda x, w: F.avg_pool2d(x, 2), (True, False), set()),
    ("batch_norm train", lambda x, w: F.batch_norm(x, None, None, w[0, :, 0, 0],
                                                   training=True),
     (True, True), {"normalized", "inv_std", "weight"}),
    ("batch_norm eval, input only",
     lambda x, w: F.batch_norm(x, ag.zeros(2), ag.ones(2)), (True, False), {"inv_std"}),
    ("dropout", lambda x, w: F.dropout(x, 0.5), (True, False), {"mask"}),
    ("linear, both", lambda x, w: F.linear(x, w[0, 0]), (True, True), {"input", "weight"}),
    ("linear, weight only", lambda x, w: F.linear(x, w[0, 0]), (False, True), {"input"}),
    ("embedding", lambda x, w: F.embedding([0, 1], w[0, 0]), (False, True), {"indices"}),
    ("cross_entropy", lambda x, w: F.cross_entropy(x[0, 0], [0, 1, 2, 3]), (True, False),
     {"target"}),
    ("mse_loss", lambda x, w: F.mse_loss(x, X4), (True, False), {"input", "target"}),
    ("bce_with_logits", lambda x, w: F.binary_cross_entropy_with_logits(x, X4 / 5),
     (True, False), {"input", "target"}),
]


@pytest.mark.parametrize("fn, needs, names", [row[1:] for row in SAVED],
                         ids=[row[0] for row in SAVED])
def test_each_op_saves_exactly_what_its_backward_reads(fn, needs, names):
    x = ag.tensor(X4, requires_grad=needs[0])
    w = ag.tensor(np.linspace(-1, 1, 2 * 2 * 4 * 4).reshape(2, 2, 4, 4), requires_grad=needs[1])
    out = fn(x, w)
    assert _saved_names(out) == names
    out.backward(np.ones(out.shape))  # and backward reads them all without error
    assert all(t.grad is not None for t, need in zip((x, w), needs) if need)


def test_linear_is_one_node():
    out = F.linear(leaf(np.ones((5, 3))), leaf(np.ones((2, 3))), leaf(np.zeros(2)))
    assert [op.op for op in capture(out).ops] == ["linear"]


NON_CONTIGUOUS = [
    ("conv2d", lambda x: F.conv2d(x, ag.tensor(np.linspace(-1, 1, 36).reshape(2, 2, 3, 3)),
                                  stride=(1, 2), padding=1)),
    ("max_pool2d", lambda x: F.max_pool2d(x, 2, 1)),
    ("avg_pool2d", lambda x: F.avg_pool2d(x, 3, 2, 1)),
    ("batch_norm", lambda x: F.batch_norm(x, None, None, training=True)),
]


@pytest.mark.parametrize("fn", [row[1] for row in NON_CONTIGUOUS],
                         ids=[row[0] for row in NON_CONTIGUOUS])
def test_non_contiguous_input_gives_the_same_values_and_gradients(fn):
    """A transposed view (strides out of order) must behave like its contiguous copy."""
    data = distinct(np.random.default_rng(0), (2, 2, 5, 4))
    base = leaf(data)
    view = base.permute(0, 1, 3, 2)
    assert not view.numpy().flags.c_contiguous
    copy = leaf(np.ascontiguousarray(data.transpose(0, 1, 3, 2)))
    out_view, out_copy = fn(view), fn(copy)
    g = np.linspace(0.5, 1.5, out_view.numel()).reshape(out_view.shape)
    out_view.backward(g)
    out_copy.backward(g)
    np.testing.assert_allclose(out_view.numpy(), out_copy.numpy(), atol=1e-12)
    np.testing.assert_allclose(base.grad.numpy().transpose(0, 1, 3, 2), copy.grad.numpy(),
                               atol=1e-12)


FLOAT32 = [
    ("conv2d", lambda x: F.conv2d(x, ag.ones(3, 2, 3, 3, dtype=np.float32),
                                  ag.zeros(3, dtype=np.float32), padding=1)),
    ("max_pool2d", lambda x: F.max_pool2d(x, 2)),
    ("avg_pool2d", lambda x: F.avg_pool2d(x, 3, 1, 1)),
    ("batch_norm", lambda x: F.batch_norm(x, ag.zeros(2, dtype=np.float32),
                                          ag.ones(2, dtype=np.float32), training=True)),
    ("dropout", lambda x: F.dropout(x, 0.3)),
    ("linear", lambda x: F.linear(x, ag.ones(2, 4, dtype=np.float32))),
    ("mse_loss", lambda x: F.mse_loss(x, np.zeros(x.shape, np.float32))),
    ("bce", lambda x: F.binary_cross_entropy_with_logits(x, np.zeros(x.shape, np.float32))),
    ("cross_entropy", lambda x: F.cross_entropy(x.reshape(8, 4), np.arange(8) % 4)),
]


@pytest.mark.parametrize("fn", [row[1] for row in FLOAT32], ids=[row[0] for row in FLOAT32])
def test_float32_stays_float32(fn):
    x = ag.tensor(X4.astype(np.float32), requires_grad=True)
    out = fn(x)
    out.backward(np.ones(out.shape, np.float32))
    assert out.dtype == np.float32 and x.grad.dtype == np.float32


# -- errors ---------------------------------------------------------------------------------------
def _x(*shape):
    return ag.zeros(*shape)


ERRORS = [
    ("conv input rank", lambda: F.conv2d(_x(2, 3), _x(1, 3, 3, 3)), RuntimeError,
     r"Expected 3D \(unbatched\) or 4D \(batched\) input to conv2d, .* size: \[2, 3\]"),
    ("conv weight rank", lambda: F.conv2d(_x(1, 1, 5, 5), _x(2, 1, 3)), RuntimeError,
     r"weight should have 4 dimensions"),
    ("conv channels", lambda: F.conv2d(_x(1, 1, 5, 5), _x(8, 3, 3, 3)), RuntimeError,
     r"weight of size \[8, 3, 3, 3\], expected input\[1, 1, 5, 5\] to have 3 channels, "
     r"but got 1 channels"),
    ("conv kernel too large", lambda: F.conv2d(_x(1, 1, 2, 2), _x(1, 1, 3, 3)), RuntimeError,
     r"padded input size per channel: \(2 x 2\)\. Kernel size: \(3 x 3\)"),
    ("conv dilated kernel too large",
     lambda: F.conv2d(_x(1, 1, 4, 4), _x(1, 1, 3, 3), dilation=2, padding=0), RuntimeError,
     r"Kernel size: \(5 x 5\)"),
    ("conv stride 0", lambda: F.conv2d(_x(1, 1, 5, 5), _x(1, 1, 3, 3), stride=0),
     RuntimeError, r"non-positive stride is not supported"),
    ("conv stride negative", lambda: F.conv2d(_x(1, 1, 5, 5), _x(1, 1, 3, 3), stride=(1, -2)),
     RuntimeError, r"non-positive stride"),
    ("conv dilation 0", lambda: F.conv2d(_x(1, 1, 5, 5), _x(1, 1, 3, 3), dilation=0),
     RuntimeError, r"non-positive dilation"),
    ("conv padding negative", lambda: F.conv2d(_x(1, 1, 5, 5), _x(1, 1, 3, 3), padding=-1),
     RuntimeError, r"negative padding is not supported"),
    ("conv stride not int", lambda: F.conv2d(_x(1, 1, 5, 5), _x(1, 1, 3, 3), stride=1.5),
     TypeError, r"stride must be an int or a pair of ints"),
    ("conv groups", lambda: F.conv2d(_x(1, 4, 5, 5), _x(3, 2, 3, 3), groups=2), RuntimeError,
     r"expected weight to be divisible by 2 at dimension 0"),
    ("conv bias", lambda: F.conv2d(_x(1, 1, 5, 5), _x(2, 1, 3, 3), _x(3)), RuntimeError,
     r"expected bias to be 1-dimensional with 2 elements, but got bias of size \[3\]"),
    ("pool input rank", lambda: F.max_pool2d(_x(5, 5), 2), RuntimeError,
     r"input to max_pool2d"),
    ("pool padding", lambda: F.max_pool2d(_x(1, 1, 5, 5), 3, padding=2), RuntimeError,
     r"pad should be at most half of effective kernel size"),
    ("pool kernel too large", lambda: F.avg_pool2d(_x(1, 1, 2, 2), 3), RuntimeError,
     r"Kernel size can't be greater than actual input size"),
    ("pool stride 0", lambda: F.max_pool2d(_x(1, 1, 4, 4), 2, stride=0), RuntimeError,
     r"non-positive stride"),
    ("pool kernel 0", lambda: F.avg_pool2d(_x(1, 1, 4, 4), 0), RuntimeError,
     r"non-positive kernel_size"),
    ("bn one value per channel",
     lambda: F.batch_norm(_x(1, 3), _x(3), ag.ones(3), training=True), ValueError,
     r"Expected more than 1 value per channel when training, got input size \[1, 3\]"),
    ("bn one value per channel 4d",
     lambda: F.batch_norm(_x(1, 2, 1, 1), None, None, training=True), ValueError,
     r"Expected more than 1 value per channel when training"),
    ("bn running_mean length",
     lambda: F.batch_norm(_x(2, 3), _x(4), ag.ones(3), training=True), RuntimeError,
     r"running_mean should contain 3 elements not 4"),
    ("bn running_var length", lambda: F.batch_norm(_x(2, 3, 2, 2), _x(3), ag.ones(2)),
     RuntimeError, r"running_var should contain 3 elements not 2"),
    ("bn weight length", lambda: F.batch_norm(_x(2, 3), _x(3), ag.ones(3), _x(2)),
     RuntimeError, r"weight should contain 3 elements not 2"),
    ("bn eval without running stats", lambda: F.batch_norm(_x(2, 3), None, None),
     RuntimeError, r"running_mean and running_var must be defined in evaluation mode"),
    ("bn input rank", lambda: F.batch_norm(_x(3), None, None, training=True), RuntimeError,
     r"input to batch_norm"),
    ("ce target too large", lambda: F.cross_entropy(_x(2, 3), [0, 3]), IndexError,
     r"Target 3 is out of bounds\. cross_entropy: the input has 3 classes"),
    ("ce target negative", lambda: F.cross_entropy(_x(2, 3), [0, -1]), IndexError,
     r"Target -1 is out of bounds"),
    ("ce float target", lambda: F.cross_entropy(_x(2, 3), ag.tensor([0.0, 1.0])),
     RuntimeError, r"expected class indices \(an integer target\), .* dtype float64"),
    ("nll float target", lambda: F.nll_loss(_x(2, 3), np.array([0.0, 1.0], np.float32)),
     RuntimeError, r"nll_loss: expected class indices"),
    ("ce batch size", lambda: F.cross_entropy(_x(2, 3), [0, 1, 2]), ValueError,
     r"Expected input batch_size \(2\) to match target batch_size \(3\)"),
    ("ce target shape", lambda: F.cross_entropy(_x(2, 3, 4), np.zeros((2, 5), int)),
     ValueError, r"expected a class target of shape \(2, 4\)"),
    ("ce input rank", lambda: F.cross_entropy(_x(3), [0]), RuntimeError,
     r"expected input of shape \(N, C\)"),
    ("bad reduction", lambda: F.mse_loss(_x(2), _x(2), reduction="avg"), ValueError,
     r"avg is not a valid value for reduction"),
    ("mse shapes", lambda: F.mse_loss(_x(4, 1), _x(4)), ValueError,
     r"Target size \(4,\) must be the same as input size \(4, 1\)"),
    ("bce shapes", lambda: F.binary_cross_entropy_with_logits(_x(4, 1), _x(4)), ValueError,
     r"Target size \(4,\) must be the same as input size \(4, 1\)"),
    ("dropout p", lambda: F.dropout(_x(3), 1.5), ValueError,
     r"dropout probability has to be between 0 and 1, but got 1.5"),
    ("dropout p negative", lambda: F.dropout(_x(3), -0.1), ValueError,
     r"dropout probability"),
    ("embedding range", lambda: F.embedding([0, 5], _x(5, 2)), IndexError,
     r"indices span \[0, 5\] but the table has 5 rows"),
    ("embedding negative", lambda: F.embedding([-1], _x(5, 2)), IndexError,
     r"index out of range"),
    ("embedding float ids", lambda: F.embedding(ag.tensor([0.0, 1.0]), _x(5, 2)),
     RuntimeError, r"expected integer indices, got float64"),
    ("embedding weight rank", lambda: F.embedding([0], _x(5)), RuntimeError,
     r"'weight' must be 2-D \(num_embeddings, embedding_dim\), got shape \(5,\)"),
    ("linear shapes", lambda: F.linear(_x(4, 3), _x(2, 5)), RuntimeError,
     r"input of shape \(4, 3\) has 3 features but weight of shape \(2, 5\) expects "
     r"in_features=5"),
    ("linear bias", lambda: F.linear(_x(4, 3), _x(2, 3), _x(3)), RuntimeError,
     r"bias should contain 2 elements not \[3\]"),
]


@pytest.mark.parametrize("call, kind, message", [row[1:] for row in ERRORS],
                         ids=[row[0] for row in ERRORS])
def test_error_messages(call, kind, message):
    with pytest.raises(kind, match=message) as info:
        call()
    assert "Hint:" in str(info.value)
