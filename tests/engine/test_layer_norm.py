"""layer_norm and rms_norm (ops/layer_norm.py, their rules recorded under create_graph
included) and the modules nn.LayerNorm and nn.RMSNorm, against
PyTorch 2.13.0 CPU.

The op table (tests/helpers/op_table.py) already checks the rows layer_norm,
layer_norm_affine, layer_norm_weight, rms_norm and rms_norm_weight_eps against finite
differences and PyTorch (values, gradients, second derivatives, forward mode) with
leaf inputs. Here: what the table cannot reach (a computed input, whose Tensor rule
puts x̂ / inv_std on the input's edge; a bias without a weight; third derivatives;
float32 against PyTorch's float32), what each op saves and its size, the edges (empty,
constant rows, nan/inf, eps), every argument error with PyTorch's type and sentence,
and the modules.
"""

from __future__ import annotations

import numpy as np
import pytest
from test_adversarial_ops import THEIRS, compare, leaf, r, raises_like

import autograd_core as ag
from autograd_core import autograd, nn
from autograd_core.func import jacfwd, jacrev, jvp
from autograd_core.nn import functional as F
from autograd_core.ops import layer_norm as ln
from autograd_core.tools import graph

torch = pytest.importorskip(
    "torch", reason="PyTorch is not installed: the cross-check against PyTorch 2.13.0 CPU "
    "is skipped (install it with: pip install -e '.[torch]')")

pytestmark = [pytest.mark.torch, pytest.mark.filterwarnings("ignore::RuntimeWarning")]
TF = torch.nn.functional
F64 = ag.float64


def _torch_norm(name, x, shape, w, b, eps):
    """PyTorch's layer_norm / rms_norm; a bias without a weight gets torch's weight of
    ones, the same function, because PyTorch's double backward of that case fails."""
    if name == "rms_norm":
        return TF.rms_norm(x, shape, w, eps=eps)
    if w is None and b is not None:
        w = torch.ones(shape, dtype=x.dtype)
    return TF.layer_norm(x, shape, w, b, eps=1e-5 if eps is None else eps)


def _our_norm(name, x, shape, w, b, eps):
    if name == "rms_norm":
        return F.rms_norm(x, shape, w, eps=eps)
    return F.layer_norm(x, shape, w, b, eps=1e-5 if eps is None else eps)


# (name, input shape, normalized_shape, weight?, bias?, eps)
LAYOUTS = [
    ("layer_norm", (2, 3, 4), (4,), True, True, None),
    ("layer_norm", (2, 3, 4), (3, 4), True, False, 1e-3),
    ("layer_norm", (2, 3, 4), (2, 3, 4), False, False, None),
    ("layer_norm", (3, 5), (5,), False, True, None),  # a bias, no weight
    ("layer_norm", (5,), (5,), True, True, 0.5),
    ("rms_norm", (2, 3, 4), (4,), True, False, None),
    ("rms_norm", (2, 3, 4), (3, 4), False, False, 1e-2),
    ("rms_norm", (4, 1, 3), (1, 3), True, False, None),
]
LAYOUT_IDS = [f"{n}-{'x'.join(map(str, s))}-{len(k)}d-{'w' if w else ''}{'b' if b else ''}"
              for n, s, k, w, b, _ in LAYOUTS]


def _arrays(shape, normalized_shape, weight, bias, seed=0):
    rng = np.random.default_rng(seed)
    arrays = [rng.standard_normal(shape)]
    arrays += [rng.standard_normal(normalized_shape) for flag in (weight, bias) if flag]
    return arrays


def _split(leaves, weight, bias):
    x, rest = leaves[0], list(leaves[1:])
    w = rest.pop(0) if weight else None
    b = rest.pop(0) if bias else None
    return x, w, b


def _second_derivatives(lib, name, arrays, shape, weight, bias, eps, pre):
    """First and second derivatives of <v, f(pre(x), w, b)>: one library's (our
    autograd.grad with create_graph, or torch's)."""
    rng = np.random.default_rng(5)
    if lib == "ours":
        leaves = [ag.tensor(a, requires_grad=True) for a in arrays]
        wrap, grad, norm = ag.tensor, autograd.grad, _our_norm
    else:
        leaves = [torch.tensor(a, requires_grad=True) for a in arrays]
        wrap, grad, norm = torch.from_numpy, torch.autograd.grad, _torch_norm
    x, w, b = _split(leaves, weight, bias)
    y = norm(name, x.sin() if pre else x, shape, w, b, eps)
    v = rng.standard_normal(tuple(y.shape))
    firsts = grad(y, leaves, wrap(v), create_graph=True)
    weights = [rng.standard_normal(a.shape) for a in arrays]
    phi = sum((g * wrap(u)).sum() for g, u in zip(firsts, weights, strict=True))
    seconds = grad(phi, leaves, allow_unused=True, materialize_grads=True)
    return ([np.asarray(t.detach().numpy()) for t in (y, *firsts)],
            [np.asarray(s.detach().numpy()) for s in seconds])


# -- against PyTorch: a computed input, bias alone, float32 --------------------------------
@pytest.mark.parametrize("pre", [False, True], ids=["leaf", "computed-input"])
@pytest.mark.parametrize("name, shape, normalized_shape, weight, bias, eps", LAYOUTS,
                         ids=LAYOUT_IDS)
def test_values_gradients_and_second_derivatives_match_torch(name, shape, normalized_shape,
                                                             weight, bias, eps, pre):
    arrays = _arrays(shape, normalized_shape, weight, bias)
    args = (name, arrays, normalized_shape, weight, bias, eps, pre)
    ours_first, ours_second = _second_derivatives("ours", *args)
    theirs_first, theirs_second = _second_derivatives("torch", *args)
    for a, b in zip(ours_first, theirs_first, strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)
    for a, b in zip(ours_second, theirs_second, strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-9, atol=1e-11)


@pytest.mark.parametrize("name, shape, normalized_shape, weight, bias, eps", LAYOUTS,
                         ids=LAYOUT_IDS)
def test_forward_mode_matches_torch_func(name, shape, normalized_shape, weight, bias, eps):
    """jvp through a computed input (sin(x)) equals torch.func.jvp; jacfwd == jacrev."""
    arrays = _arrays(shape, normalized_shape, weight, bias)
    tangents = _arrays(shape, normalized_shape, weight, bias, seed=1)

    def ours(*leaves):
        x, w, b = _split(leaves, weight, bias)
        return _our_norm(name, x.sin(), normalized_shape, w, b, eps)

    def theirs(*leaves):
        x, w, b = _split(leaves, weight, bias)
        return _torch_norm(name, x.sin(), normalized_shape, w, b, eps)

    _, ours_t = jvp(ours, tuple(map(ag.tensor, arrays)), tuple(map(ag.tensor, tangents)))
    _, theirs_t = torch.func.jvp(theirs, tuple(map(torch.from_numpy, arrays)),
                                 tuple(map(torch.from_numpy, tangents)))
    np.testing.assert_allclose(ours_t.numpy(), theirs_t.numpy(), rtol=1e-10, atol=1e-12)
    argnums = tuple(range(len(arrays)))
    primals = [ag.tensor(a) for a in arrays]
    for f, rv in zip(jacfwd(ours, argnums)(*primals), jacrev(ours, argnums)(*primals),
                     strict=True):
        np.testing.assert_allclose(f.numpy(), rv.numpy(), rtol=1e-12, atol=1e-13)


@pytest.mark.parametrize("name, shape, normalized_shape, weight, bias, eps", LAYOUTS,
                         ids=LAYOUT_IDS)
def test_float32_matches_torch_float32(name, shape, normalized_shape, weight, bias, eps):
    """float32 in, float32 out and float32 gradients, the numbers PyTorch's float32 gives
    (rms_norm's eps=None is float32's machine epsilon on both)."""
    arrays = [a.astype(np.float32) for a in _arrays(shape, normalized_shape, weight, bias)]
    leaves = [ag.tensor(a, requires_grad=True) for a in arrays]
    t_leaves = [torch.tensor(a, requires_grad=True) for a in arrays]
    x, w, b = _split(leaves, weight, bias)
    y = _our_norm(name, x, normalized_shape, w, b, eps)
    tx, tw, tb = _split(t_leaves, weight, bias)
    ty = _torch_norm(name, tx, normalized_shape, tw, tb, eps)
    assert y.dtype == np.float32
    np.testing.assert_allclose(y.numpy(), ty.detach().numpy(), rtol=1e-5, atol=1e-5)
    v = np.random.default_rng(2).standard_normal(y.shape).astype(np.float32)
    y.backward(ag.tensor(v))
    ty.backward(torch.from_numpy(v))
    for a, b in zip(leaves, t_leaves, strict=True):
        assert a.grad.dtype == np.float32
        np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), rtol=1e-4, atol=1e-4)


def _composite_layer_norm(x, shape, w, b, eps):
    """Layer norm from PyTorch's elementary ops, which it differentiates exactly to any order."""
    axes = tuple(range(-len(shape), 0))
    c = x - x.mean(axes, keepdim=True)
    return c / torch.sqrt((c * c).mean(axes, keepdim=True) + eps) * w


def _third(lib, norm):
    """d/d(x, w) of sum(d/dx of |d/dx sum(norm(sin x, w)²)|²): a third derivative."""
    rng = np.random.default_rng(3)
    x_np, w_np = rng.standard_normal((2, 4)), rng.standard_normal(4)
    if lib == "ours":
        x, w = ag.tensor(x_np, requires_grad=True), ag.tensor(w_np, requires_grad=True)
        grad = autograd.grad
    else:
        x, w = torch.tensor(x_np, requires_grad=True), torch.tensor(w_np, requires_grad=True)
        grad = torch.autograd.grad
    y = (norm(x.sin(), (4,), w, None, 1e-5) ** 2).sum()
    (g,) = grad(y, [x], create_graph=True)
    (h,) = grad((g * g).sum(), [x], create_graph=True)
    return [t.numpy() for t in grad(h.sum(), [x, w])]


@pytest.mark.parametrize("name", ["layer_norm", "rms_norm"])
def test_third_derivative_matches_torch(name):
    """The Tensor rules record only ops that have rules, so a third derivative works.
    PyTorch's fused layer_norm is not exact there: its double backward treats the
    saved mean and 1/std as constants (pytorch/pytorch#175754), so layer norm is
    compared with the same function written in PyTorch's elementary ops, and the
    fused one is pinned as different. PyTorch's rms_norm is elementary ops already."""
    def ours(x, shape, w, b, eps):
        return _our_norm(name, x, shape, w, b, eps)

    def theirs(x, shape, w, b, eps):
        if name == "layer_norm":
            return _composite_layer_norm(x, shape, w, b, eps)
        return _torch_norm(name, x, shape, w, b, eps)

    mine, expected = _third("ours", ours), _third("torch", theirs)
    for a, b in zip(mine, expected, strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-9, atol=1e-10)
    if name == "layer_norm":
        fused = _third("torch", lambda x, shape, w, b, eps: TF.layer_norm(x, shape, w, b, eps))
        assert not np.allclose(fused[0], expected[0], rtol=1e-3)


def test_only_weight_and_bias_requiring_grad_have_second_derivatives():
    x = ag.tensor(r(3, 4))  # a constant input: the rule reads x̂ as saved
    w, b = ag.tensor(r(4, seed=1), requires_grad=True), ag.tensor(r(4, seed=2),
                                                                    requires_grad=True)
    y = F.layer_norm(x, (4,), w, b)
    dw, db = autograd.grad((y * y).sum(), [w, b], create_graph=True)
    tx = torch.tensor(r(3, 4))
    tw, tb = (torch.tensor(a, requires_grad=True) for a in (r(4, seed=1), r(4, seed=2)))
    ty = TF.layer_norm(tx, (4,), tw, tb)
    tdw, tdb = torch.autograd.grad((ty * ty).sum(), [tw, tb], create_graph=True)
    mine = autograd.grad((dw * dw).sum() + db.sum() * dw.sum(), [w, b])
    theirs = torch.autograd.grad((tdw * tdw).sum() + tdb.sum() * tdw.sum(), [tw, tb])
    for a, t in zip(mine, theirs, strict=True):
        np.testing.assert_allclose(a.numpy(), t.numpy(), rtol=1e-10, atol=1e-12)


def test_both_norms_have_jvps_and_rules():
    for op in (ln.LayerNorm, ln.RMSNorm):
        assert callable(op.jvp) and op.rule


# -- what is saved --------------------------------------------------------------------------------
@pytest.mark.parametrize("dtype, itemsize", [(np.float16, 2), (np.float32, 4), (np.float64, 8)])
def test_layer_norm_saves_x_hat_of_the_inputs_size_and_one_inv_std_per_row(dtype, itemsize):
    """For an (s, b, h) activation: x̂ (not the input) of s·b·h values, 2sbh bytes in
    fp16, the size the published formula counts for layer norm's saved input; 1/std
    per row (s·b values); the weight (a parameter)."""
    s, b, h = 5, 2, 8
    x = ag.tensor(r(s, b, h).astype(dtype), requires_grad=True)
    layer = nn.LayerNorm(h, dtype=dtype)
    node = layer(x).grad_fn
    assert node.name == "layer_norm"
    saved = node.saved
    assert set(saved) == {"normalized", "inv_std", "weight"}
    assert saved["normalized"].shape == (s, b, h) and saved["normalized"].source is None
    assert saved["normalized"].nbytes == s * b * h * itemsize
    assert saved["inv_std"].shape == (s, b, 1) and saved["inv_std"].nbytes == s * b * itemsize
    assert saved["weight"].source == ("input", 1)
    assert not any(np.shares_memory(t.array, x.numpy()) for t in saved.values())
    if dtype == np.float16:
        assert saved["normalized"].nbytes == 2 * s * b * h  # the formula's 2sbh


@pytest.mark.parametrize("name, needs, expected", [
    ("layer_norm", (True, True, True), {"normalized", "inv_std", "weight"}),
    ("layer_norm", (True, False, False), {"normalized", "inv_std", "weight"}),
    ("layer_norm", (False, True, True), {"normalized", "inv_std"}),  # dweight reads x̂
    ("layer_norm", (False, False, True), set()),  # dbias = Σ g: nothing
    ("layer_norm", (True,), {"normalized", "inv_std"}),  # no weight: none saved
    ("rms_norm", (True, True), {"normalized", "inv_rms", "weight"}),
    ("rms_norm", (False, True), {"normalized", "inv_rms"}),
    ("rms_norm", (True,), {"normalized", "inv_rms"}),
])
def test_each_norm_saves_only_what_its_backward_reads(name, needs, expected):
    """What a norm saves is what its two sweeps read. When only the weight needs a
    gradient, backward() reads x̂ alone, and a create_graph sweep reads 1/std (one value
    per row) too: it rebuilds x from both (an x the op did not save and that is not a
    leaf), since the rule computes x̂ from x."""
    arrays = [r(3, 4), r(4, seed=1), r(4, seed=2)][:len(needs)]

    def run(computed_x: bool = False):
        leaves = [ag.tensor(a, requires_grad=n) for a, n in zip(arrays, needs, strict=True)]
        x = leaves[0] * 1.0 if computed_x else leaves[0]  # a leaf x is itself on the graph
        if name == "layer_norm":
            return leaves, F.layer_norm(x, (4,), *leaves[1:])
        return leaves, F.rms_norm(x, (4,), *leaves[1:])

    _, y = run()
    assert set(y.grad_fn.saved) == expected
    lean = set(next(iter(graph.backward_steps(y, ag.tensor(r(3, 4, seed=3))))).reads)
    weight_only = needs[0] is False and needs[1] is True
    assert lean == (expected - {"inv_std", "inv_rms"} if weight_only else expected)
    leaves, y = run(computed_x=True)
    wanted = [x for x in leaves if x.requires_grad]
    if not wanted:
        return
    node, reads = y.grad_fn, []
    node.reads = reads
    autograd.grad(y, wanted, ag.tensor(r(3, 4, seed=3)), create_graph=True)
    assert set(reads) == expected


def test_the_graph_shows_one_node_with_x_weight_and_bias_as_inputs():
    x = ag.tensor(r(2, 4), requires_grad=True)
    layer = nn.LayerNorm(4, dtype=F64)
    captured = graph.capture(layer(x))
    assert [op.op for op in captured.ops] == ["layer_norm"]
    assert len(captured.edges) == 4  # x, weight, bias -> the op -> its output
    assert [op.op for op in graph.capture(nn.RMSNorm(4, dtype=F64)(x)).ops] == ["rms_norm"]


def test_no_grad_saves_nothing():
    x = ag.tensor(r(2, 4), requires_grad=True)
    with ag.no_grad():
        y = F.layer_norm(x, (4,), ag.ones(4, requires_grad=True))
    assert y.grad_fn is None and graph.saved_bytes(y) == 0


# -- edge cases against PyTorch ---------------------------------------------------------------
def _ln(shape, eps=1e-5, affine=False):
    if affine:
        return lambda lib, x, w, b: lib.F.layer_norm(x, shape, w, b, eps=eps)
    return lambda lib, x: lib.F.layer_norm(x, shape, eps=eps)


def _rms(shape, eps=None, weight=False):
    if weight:
        return lambda lib, x, w: lib.F.rms_norm(x, shape, w, eps=eps)
    return lambda lib, x: lib.F.rms_norm(x, shape, eps=eps)


ROW = np.array([[1.0, 2.0, 4.0, 8.0]])
EDGES = {
    "layer_norm-empty-batch": (_ln((4,), affine=True), [np.zeros((0, 4)), r(4), r(4)]),
    "layer_norm-empty-batch-3d": (_ln((2, 3)), [np.zeros((2, 0, 2, 3))]),
    "layer_norm-empty-rows": (_ln((0,), affine=True), [np.zeros((3, 0)), np.zeros(0),
                                                       np.zeros(0)]),
    "layer_norm-one-value-per-row": (_ln((1,), affine=True), [r(3, 1), r(1), r(1)]),
    "layer_norm-constant-row": (_ln((4,)), [np.full((2, 4), 3.0)]),
    "layer_norm-constant-row-affine": (_ln((4,), affine=True), [np.full((2, 4), -1.5), r(4),
                                                                r(4)]),
    "layer_norm-constant-row-eps0": (_ln((4,), eps=0.0), [np.full((2, 4), 3.0)]),
    "layer_norm-nan": (_ln((4,)), [np.vstack([ROW, [[1.0, np.nan, 2.0, 3.0]]])]),
    "layer_norm-inf": (_ln((4,)), [np.vstack([ROW, [[1.0, np.inf, 2.0, 3.0]]])]),
    "layer_norm-huge-eps": (_ln((4,), eps=1e6), [ROW]),
    "layer_norm-eps0": (_ln((4,), eps=0.0), [ROW]),
    "layer_norm-int-eps": (_ln((4,), eps=1), [ROW]),
    "layer_norm-huge-values": (_ln((4,)), [ROW * 1e150]),
    "layer_norm-whole-input": (_ln((2, 3, 4), affine=True), [r(2, 3, 4), r(2, 3, 4),
                                                             r(2, 3, 4)]),
    "layer_norm-list-shape": (lambda lib, x: lib.F.layer_norm(x, [3, 4]), [r(2, 3, 4)]),
    "layer_norm-numpy-int-shape": (lambda lib, x: lib.F.layer_norm(x, (np.int64(4),)),
                                   [r(2, 4)]),
    "layer_norm-aliased-weight": (lambda lib, x: lib.F.layer_norm(x, (3,), x[0], x[1]),
                                  [r(2, 3)]),
    "layer_norm-non-contiguous": (_ln((3,)), [r(3, 4).T]),
    "rms_norm-empty-batch": (_rms((4,), weight=True), [np.zeros((0, 4)), r(4)]),
    "rms_norm-empty-rows": (_rms((0,)), [np.zeros((3, 0))]),
    "rms_norm-zero-row": (_rms((4,)), [np.zeros((2, 4))]),
    "rms_norm-zero-row-eps0": (_rms((4,), eps=0.0), [np.zeros((2, 4))]),
    "rms_norm-constant-row": (_rms((4,)), [np.full((2, 4), 3.0)]),
    "rms_norm-nan": (_rms((4,)), [np.vstack([ROW, [[1.0, np.nan, 2.0, 3.0]]])]),
    "rms_norm-inf": (_rms((4,)), [np.vstack([ROW, [[1.0, np.inf, 2.0, 3.0]]])]),
    "rms_norm-huge-eps": (_rms((4,), eps=1e6, weight=True), [ROW, r(4)]),
    "rms_norm-one-value-per-row": (_rms((1,)), [r(3, 1)]),
    "rms_norm-whole-input": (_rms((2, 3), weight=True), [r(2, 3), r(2, 3)]),
    "rms_norm-non-contiguous": (_rms((3,)), [r(3, 4).T]),
}


@pytest.mark.parametrize("program, arrays", EDGES.values(), ids=EDGES.keys())
def test_edges_match_torch(program, arrays):
    compare(program, *arrays)


@pytest.mark.parametrize("dtype, eps_dtype", [(np.float16, np.float32),
                                               (np.float32, np.float32),
                                               (np.float64, np.float64)])
def test_rms_norm_default_eps_is_the_dtypes_machine_epsilon(dtype, eps_dtype):
    """eps=None: np.finfo(dtype).eps (float16: float32's, the precision PyTorch computes
    half in), so a zero row's gradient is 1 / sqrt(eps), as PyTorch's."""
    compare(_rms((4,)), np.zeros((1, 4), dtype=dtype), rtol=1e-3)
    x = ag.tensor(np.zeros((1, 4), dtype=dtype), requires_grad=True)
    F.rms_norm(x, (4,)).sum().backward()
    expected = 1 / np.sqrt(np.finfo(eps_dtype).eps)
    np.testing.assert_allclose(x.grad.numpy(), np.full((1, 4), expected), rtol=1e-3)
    assert x.grad.dtype == dtype


@pytest.mark.parametrize("name", ["layer_norm", "rms_norm"])
def test_empty_inputs_have_empty_second_derivatives(name):
    for shape, normalized_shape in (((0, 4), (4,)), ((3, 0), (0,))):
        x = ag.tensor(np.zeros(shape), requires_grad=True)
        w = ag.tensor(np.ones(normalized_shape), requires_grad=True)
        y = _our_norm(name, x.sin(), normalized_shape, w, None, None)
        gx, gw = autograd.grad((y * y).sum(), [x, w], create_graph=True)
        hx, hw = autograd.grad(gx.sum() + gw.sum(), [x, w], allow_unused=True,
                               materialize_grads=True)
        assert hx.shape == shape and hw.shape == normalized_shape
        assert np.all(hw.numpy() == 0)


# -- argument errors: PyTorch's types and sentences ------------------------------------------------
W3 = np.ones(3)
ERRORS = {
    # (program, arrays, PyTorch's message, when ours starts with the same sentence)
    "layer_norm-mismatch": (lambda lib, x: lib.F.layer_norm(x, (3,)), [r(2, 3, 4)], True),
    "layer_norm-mismatch-2d": (lambda lib, x: lib.F.layer_norm(x, (5, 4)), [r(2, 3, 4)], True),
    "layer_norm-too-many-dims": (lambda lib, x: lib.F.layer_norm(x, (1, 2, 3, 4)),
                                 [r(2, 3, 4)], True),
    "layer_norm-0d": (lambda lib, x: lib.F.layer_norm(x, (1,)), [np.array(1.0)], True),
    "layer_norm-negative": (lambda lib, x: lib.F.layer_norm(x, (-4,)), [r(2, 4)], True),
    "layer_norm-empty-shape": (lambda lib, x: lib.F.layer_norm(x, ()), [r(2, 4)], True),
    "layer_norm-empty-shape-0d": (lambda lib, x: lib.F.layer_norm(x, ()), [np.array(1.0)],
                                  True),
    "layer_norm-int-shape": (lambda lib, x: lib.F.layer_norm(x, 4), [r(2, 4)], True),
    "layer_norm-float-shape": (lambda lib, x: lib.F.layer_norm(x, 4.0), [r(2, 4)], True),
    "layer_norm-str-shape": (lambda lib, x: lib.F.layer_norm(x, "4"), [r(2, 4)], True),
    "layer_norm-float-element": (lambda lib, x: lib.F.layer_norm(x, (4.0,)), [r(2, 4)], True),
    "layer_norm-bool-element": (lambda lib, x: lib.F.layer_norm(x, (True,)), [r(2, 1)], True),
    "layer_norm-weight-shape": (lambda lib, x, w: lib.F.layer_norm(x, (4,), w), [r(2, 4), W3],
                                True),
    "layer_norm-weight-rank": (lambda lib, x, w: lib.F.layer_norm(x, (4,), w),
                               [r(2, 4), np.ones((1, 4))], True),
    "layer_norm-weight-flat": (lambda lib, x, w: lib.F.layer_norm(x, (3, 4), w),
                               [r(2, 3, 4), np.ones(12)], True),
    "layer_norm-bias-shape": (lambda lib, x, b: lib.F.layer_norm(x, (4,), None, b),
                              [r(2, 4), W3], True),
    "layer_norm-weight-before-input": (lambda lib, x, w: lib.F.layer_norm(x, (5,), w),
                                       [r(2, 4), W3], True),
    "layer_norm-eps-none": (lambda lib, x: lib.F.layer_norm(x, (4,), eps=None), [r(2, 4)],
                            True),
    "rms_norm-mismatch": (lambda lib, x: lib.F.rms_norm(x, (3,)), [r(2, 3, 4)], False),
    "rms_norm-too-many-dims": (lambda lib, x: lib.F.rms_norm(x, (1, 2, 3, 4)), [r(2, 3, 4)],
                               True),
    "rms_norm-0d": (lambda lib, x: lib.F.rms_norm(x, (1,)), [np.array(1.0)], True),
    "rms_norm-empty-shape": (lambda lib, x: lib.F.rms_norm(x, ()), [r(2, 4)], True),
    "rms_norm-int-shape": (lambda lib, x: lib.F.rms_norm(x, 4), [r(2, 4)], True),
    "rms_norm-weight-shape": (lambda lib, x, w: lib.F.rms_norm(x, (4,), w), [r(2, 4), W3],
                              True),
    "rms_norm-weight-before-rank": (lambda lib, x, w: lib.F.rms_norm(x, (1, 2, 3, 4), w),
                                    [r(2, 3, 4), W3], True),
    "rms_norm-eps-str": (lambda lib, x: lib.F.rms_norm(x, (4,), eps="small"), [r(2, 4)],
                         True),
}


@pytest.mark.parametrize("program, arrays, same_sentence", ERRORS.values(), ids=ERRORS.keys())
def test_bad_arguments_raise_like_torch(program, arrays, same_sentence):
    """The same exception type as PyTorch's, and (but for rms_norm's shape message, which
    PyTorch writes "[*3]" and we "[*, 3]" as its layer_norm does) its sentence, then a
    Hint line."""
    with pytest.raises(Exception) as theirs:
        program(THEIRS, *[leaf(THEIRS, a) for a in arrays])
    message = raises_like(program, *arrays)
    first = message.split("\nHint: ")[0]
    assert "\nHint: " in message
    if same_sentence:
        assert first.rstrip(".") == str(theirs.value).rstrip(".")
    else:
        assert first == str(theirs.value).replace("[*", "[*, ") + "."


# -- modules -------------------------------------------------------------------------------------
MODULES = [
    ("LayerNorm", (4,), {}),
    ("LayerNorm", ((3, 4),), dict(eps=1e-3)),
    ("LayerNorm", ([4],), dict(bias=False)),
    ("LayerNorm", (4,), dict(elementwise_affine=False)),
    ("LayerNorm", (4,), dict(elementwise_affine=False, bias=True)),
    ("RMSNorm", (4,), {}),
    ("RMSNorm", ((3, 4),), dict(eps=1e-3, elementwise_affine=False)),
    ("RMSNorm", ([4],), dict(eps=1e-6)),
]
MODULE_IDS = [f"{m}-{a[0]}-{'-'.join(f'{k}={v}' for k, v in kw.items())}"
              for m, a, kw in MODULES]


@pytest.mark.usefixtures("float32_default")  # PyTorch's float32 layers
@pytest.mark.parametrize("module, args, kwargs", MODULES, ids=MODULE_IDS)
def test_modules_have_torchs_repr_parameters_and_init(module, args, kwargs):
    ours, theirs = getattr(nn, module)(*args, **kwargs), getattr(torch.nn, module)(*args,
                                                                                  **kwargs)
    assert repr(ours) == repr(theirs)
    assert ours.normalized_shape == theirs.normalized_shape
    assert ours.eps == theirs.eps and ours.elementwise_affine == theirs.elementwise_affine
    mine = dict(ours.named_parameters())
    expected = dict(theirs.named_parameters())
    assert list(mine) == list(expected)
    for name, p in mine.items():
        assert p.dtype == np.float32 and p.requires_grad
        np.testing.assert_array_equal(p.numpy(), expected[name].detach().numpy())
    assert list(ours.state_dict()) == list(theirs.state_dict())
    for name in ("weight", "bias"):
        if hasattr(theirs, name):
            assert (getattr(ours, name) is None) == (getattr(theirs, name) is None)


@pytest.mark.parametrize("module, args, kwargs", MODULES, ids=MODULE_IDS)
def test_modules_compute_what_torchs_compute(module, args, kwargs):
    """Random parameters (so that weight and bias matter), copied into PyTorch's module;
    outputs, input and parameter gradients compared, float64."""
    ours = getattr(nn, module)(*args, **kwargs, dtype=F64)
    rng = np.random.default_rng(0)
    with ag.no_grad():
        for p in ours.parameters():
            p.copy_(ag.tensor(rng.standard_normal(p.shape)))
    theirs = getattr(torch.nn, module)(*args, **kwargs).double()
    theirs.load_state_dict({k: torch.tensor(v.numpy()) for k, v in ours.state_dict().items()})
    x_np = rng.standard_normal((2, 3, 4))
    x, tx = ag.tensor(x_np, requires_grad=True), torch.tensor(x_np, requires_grad=True)
    y, ty = ours(x), theirs(tx)
    np.testing.assert_allclose(y.numpy(), ty.detach().numpy(), rtol=1e-12, atol=1e-12)
    v = rng.standard_normal(y.shape)
    (y * ag.tensor(v)).sum().backward()
    (ty * torch.tensor(v)).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), tx.grad.numpy(), rtol=1e-10, atol=1e-12)
    for (name, p), (_, tp) in zip(ours.named_parameters(), theirs.named_parameters(),
                                  strict=True):
        np.testing.assert_allclose(p.grad.numpy(), tp.grad.numpy(), rtol=1e-10, atol=1e-12,
                                   err_msg=name)


def test_modules_are_the_same_in_training_and_evaluation():
    layer = nn.LayerNorm(4, dtype=F64)
    x = ag.tensor(r(3, 4))
    train = layer(x).numpy()
    np.testing.assert_array_equal(layer.eval()(x).numpy(), train)


@pytest.mark.parametrize("module", ["LayerNorm", "RMSNorm"])
@pytest.mark.parametrize("shape, error", [(4.0, TypeError), ("4", TypeError),
                                          ((4.0,), TypeError), (-1, RuntimeError),
                                          ((3, -2), RuntimeError)])
def test_modules_refuse_a_bad_normalized_shape_like_torch(module, shape, error):
    with pytest.raises(error):
        getattr(torch.nn, module)(shape)
    with pytest.raises(error, match=f"{module}|negative dimension") as ours:
        getattr(nn, module)(shape)
    assert "\nHint: " in str(ours.value)


@pytest.mark.parametrize("module", ["LayerNorm", "RMSNorm"])
def test_a_module_of_the_wrong_shape_fails_at_its_call_like_torch(module):
    x_np = r(2, 3)
    for shape in ((), 4):
        with pytest.raises(RuntimeError) as theirs:
            getattr(torch.nn, module)(shape).double()(torch.tensor(x_np))
        with pytest.raises(RuntimeError) as ours:
            getattr(nn, module)(shape, dtype=F64)(ag.tensor(x_np))
        assert str(ours.value).split("\nHint: ")[0].rstrip(".") == \
            str(theirs.value).replace("[*4]", "[*, 4]")


def test_a_layer_norm_module_trains():
    """Gradient steps on LayerNorm's weight and bias bring its output to a target."""
    from autograd_core import optim
    layer = nn.LayerNorm(3, dtype=F64)
    x, target = ag.tensor(r(8, 3)), ag.tensor(r(8, 3, seed=1) * 0.1)
    opt = optim.SGD(layer.parameters(), lr=0.1)
    losses = []
    for _ in range(30):
        opt.zero_grad()
        loss = F.mse_loss(layer(x), target)
        loss.backward()
        opt.step()
        losses.append(loss.item())
    assert losses[-1] < 0.5 * losses[0]
