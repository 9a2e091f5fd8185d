"""``F.scaled_dot_product_attention`` and ``nn.MultiheadAttention`` against PyTorch 2.13.0
CPU (issue "Attention on the engine").

Attention is no op of its own here but matmul, mul, add, softmax [, dropout], matmul
composed (nn/attention.py), so the op table's rows (``scaled_dot_product_attention``,
``sdpa_bool_mask``, ``sdpa_float_mask``, ``sdpa_causal``) already check finite
differences, PyTorch's values, gradients and second derivatives, and forward mode.
This file adds what a table row cannot say:

* fixed cases in float64 and float32: broadcast batch dims, unbatched inputs, masks of
  every kind, rows masked entirely (PyTorch gives them 0, not nan: values, gradients
  and second derivatives), grouped-query attention;
* the recorded graph: the ops in order, their names, what each saves;
* dropout: PyTorch's statistics (not its random stream), seeded reproducibility;
* edges: empty L, S, E or batch; nan and inf; 0-d and 1-d inputs (refused: attention
  needs (sequence, features)); wrong shapes, dtypes and argument types, with PyTorch's
  error types;
* MultiheadAttention with PyTorch's weights copied in: outputs, attention weights and
  the gradients of every parameter and input, for self- and cross-attention, causal
  and key-padding masks, both layouts, need_weights on and off, unbatched inputs.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import autograd_core as ag
from autograd_core import autograd, nn
from autograd_core.func import jvp
from autograd_core.nn import functional as F
from autograd_core.recording.grad_mode import no_grad
from autograd_core.tools import graph

torch = pytest.importorskip(
    "torch", reason="PyTorch is not installed: the cross-check against PyTorch 2.13.0 CPU "
    "is skipped (install it with: pip install -e '.[torch]')")
TF = torch.nn.functional

pytestmark = [pytest.mark.torch, pytest.mark.filterwarnings("ignore::RuntimeWarning")]

INF, NAN = np.inf, np.nan


def r(*shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape)


def _ours(x, grad=True):
    if isinstance(x, np.ndarray) and x.dtype.kind == "f":
        return ag.tensor(x, requires_grad=grad)
    return ag.tensor(x) if isinstance(x, np.ndarray) else x


def _theirs(x, grad=True):
    if isinstance(x, np.ndarray) and x.dtype.kind == "f":
        return torch.tensor(x, requires_grad=grad)
    return torch.from_numpy(np.array(x)) if isinstance(x, np.ndarray) else x


def sdpa_both(arrays, mask=None, mask_grad=False, rtol=1e-10, atol=1e-12, **kw):
    """Run SDPA on both engines from the same arrays (and mask), compare the outputs and
    the gradients of q, k, v (and a float mask with ``mask_grad``); return ours."""
    results = []
    for lib, make in ((F, _ours), (TF, _theirs)):
        inputs = [make(a) for a in arrays]
        m = None if mask is None else make(mask, grad=mask_grad)
        out = lib.scaled_dot_product_attention(*inputs, attn_mask=m, **kw)
        g = np.random.default_rng(7).uniform(0.5, 1.5, tuple(out.shape)).astype(arrays[0].dtype)
        out.backward(ag.tensor(g) if lib is F else torch.from_numpy(g))
        leaves = inputs + ([m] if mask_grad else [])
        results.append((_numpy(out), [_numpy(t.grad) for t in leaves]))
    (ours, our_grads), (theirs, their_grads) = results
    assert ours.shape == theirs.shape
    np.testing.assert_allclose(ours, theirs, rtol=rtol, atol=atol, equal_nan=True)
    for i, (a, b) in enumerate(zip(our_grads, their_grads, strict=True)):
        assert a.shape == b.shape
        np.testing.assert_allclose(a, b, rtol=rtol, atol=atol, equal_nan=True,
                                   err_msg=f"gradient of input {i}")
    return ours, our_grads


def _numpy(t):
    return t.detach().numpy() if isinstance(t, torch.Tensor) else t.numpy()


def raises_like(ours, theirs):
    """Both calls raise the same kind of error; return our message."""
    with pytest.raises(Exception) as their_error:
        theirs()
    with pytest.raises(Exception) as our_error:
        ours()
    assert our_error.type is their_error.type, (our_error.value, their_error.value)
    return str(our_error.value)


def _sdpa_raises_like(arrays, **kw):
    def call(lib, make):
        kw_ = {k: (make(v, grad=False) if isinstance(v, np.ndarray) else v)
               for k, v in kw.items()}
        return lambda: lib.scaled_dot_product_attention(*[make(a) for a in arrays], **kw_)
    return raises_like(call(F, _ours), call(TF, _theirs))


QKV = (r(2, 3, 4), r(2, 5, 4, seed=1), r(2, 5, 6, seed=2))


# -- values and gradients ------------------------------------------------------------------------
@pytest.mark.parametrize("shapes", [
    ((2, 3, 4), (2, 5, 4), (2, 5, 6)),             # batched
    ((2, 2, 3, 4), (2, 2, 5, 4), (2, 2, 5, 1)),    # (N, H, L, E), Ev = 1
    ((3, 4), (5, 4), (5, 6)),                      # unbatched
    ((2, 3, 3, 4), (5, 4), (5, 6)),                # key and value broadcast over the batch
    ((2, 1, 3, 4), (1, 4, 5, 4), (4, 5, 2)),       # batch dims broadcast both ways
    ((1, 1), (1, 1), (1, 1)),                      # one query, one key
], ids=["batched", "heads", "unbatched", "kv-broadcast", "both-broadcast", "single"])
def test_values_and_gradients_match_torch(shapes):
    sdpa_both([r(*s, seed=i) for i, s in enumerate(shapes)])


@pytest.mark.parametrize("kw", [
    {"is_causal": True}, {"scale": 0.3}, {"scale": -2.0}, {"scale": 0.0},
    {"is_causal": True, "scale": 1.5},
], ids=["causal", "scale", "negative-scale", "zero-scale", "causal-scale"])
def test_options_match_torch(kw):
    sdpa_both(list(QKV), **kw)


@pytest.mark.parametrize("length, source", [(3, 5), (5, 3), (4, 4), (1, 3), (3, 1)])
def test_causal_mask_is_lower_triangular_from_the_top_left_corner(length, source):
    """Query i sees keys 0..i whatever L and S, as in PyTorch."""
    arrays = [r(2, length, 4), r(2, source, 4, seed=1), r(2, source, 3, seed=2)]
    sdpa_both(arrays, is_causal=True)
    explicit = np.tril(np.ones((length, source), dtype=bool))
    a = F.scaled_dot_product_attention(*map(ag.tensor, arrays), is_causal=True)
    b = F.scaled_dot_product_attention(*map(ag.tensor, arrays), attn_mask=explicit)
    np.testing.assert_array_equal(a.numpy(), b.numpy())


@pytest.mark.parametrize("mask_shape", [(3, 5), (1, 5), (2, 3, 5), (2, 1, 1), ()],
                         ids=["LS", "1S", "NLS", "N11", "0-d"])
def test_bool_masks_broadcast_and_match_torch(mask_shape):
    mask = np.random.default_rng(3).random(mask_shape) > 0.3
    sdpa_both(list(QKV), mask=np.asarray(mask))


@pytest.mark.parametrize("mask_shape", [(3, 5), (2, 1, 5), (2, 3, 5)])
def test_float_masks_are_added_and_get_their_gradient(mask_shape):
    sdpa_both(list(QKV), mask=r(*mask_shape, seed=4), mask_grad=True)


def test_a_float32_mask_on_float64_inputs_is_accepted_as_in_torch():
    sdpa_both(list(QKV), mask=r(3, 5, seed=4).astype(np.float32))


def test_float32_inputs_match_torch_in_float32():
    arrays = [a.astype(np.float32) for a in QKV]
    ours, grads = sdpa_both(arrays, rtol=1e-5, atol=1e-6, is_causal=True)
    assert ours.dtype == np.float32 and all(g.dtype == np.float32 for g in grads)
    mask = np.random.default_rng(3).random((3, 5)) > 0.5
    sdpa_both(arrays, mask=mask, rtol=1e-5, atol=1e-6)


def test_a_numpy_array_mask_works_like_a_tensor():
    mask = np.tril(np.ones((3, 5), dtype=bool))
    a = F.scaled_dot_product_attention(*map(ag.tensor, QKV), attn_mask=mask)
    b = F.scaled_dot_product_attention(*map(ag.tensor, QKV), attn_mask=ag.tensor(mask))
    np.testing.assert_array_equal(a.numpy(), b.numpy())


# -- rows that may attend to nothing ------------------------------------------------------------
def _fully_masked_bool():
    mask = np.random.default_rng(3).random((2, 3, 5)) > 0.4
    mask[0, 1] = False
    mask[1, :] = False  # every query of the second batch entry
    return mask


def test_a_query_that_may_attend_to_nothing_gets_zeros_like_torch():
    """PyTorch 2.13's _safe_softmax: weights 0 in a row of -inf scores, so output 0 and
    no gradient through that row, rather than nan."""
    out, grads = sdpa_both(list(QKV), mask=_fully_masked_bool())
    assert np.all(out[0, 1] == 0) and np.all(out[1] == 0)
    assert np.all(grads[0][0, 1] == 0) and np.all(grads[0][1] == 0)
    assert not any(np.isnan(g).any() for g in grads)


def test_a_float_mask_of_minus_inf_rows_gives_zeros_and_gradient_zero():
    mask = r(3, 5, seed=4)
    mask[1] = -INF
    out, grads = sdpa_both(list(QKV), mask=mask, mask_grad=True)
    assert np.all(out[:, 1] == 0) and np.all(grads[3][1] == 0)


def test_rows_of_minus_inf_scores_from_the_inputs_give_zeros_too():
    """The check is on the scores, as PyTorch's: q = inf against negative keys."""
    q, k, v = r(1, 2, 1), -np.abs(r(1, 3, 1, seed=1)) - 0.1, r(1, 3, 2, seed=2)
    q[0, 0, 0] = INF
    out, _ = sdpa_both([q, k, v])
    assert np.all(out[0, 0] == 0) and np.all(np.isfinite(out))


def test_the_zero_rows_only_cost_ops_when_there_are_some():
    q, k, v = (ag.tensor(a, requires_grad=True) for a in QKV)
    ops = [o.op for o in graph.capture(F.scaled_dot_product_attention(
        q, k, v, attn_mask=np.ones((3, 5), dtype=bool))).ops]
    assert "masked_fill" not in ops
    g = graph.capture(F.scaled_dot_product_attention(q, k, v, attn_mask=_fully_masked_bool()))
    assert [o.op for o in g.ops] == ["permute", "matmul", "mul", "add", "masked_fill",
                                     "softmax", "masked_fill", "matmul"]
    assert [g.tensor(o.output).name for o in g.ops][3:7] == [
        "masked_scores", "finite_scores", "attn_weights", "safe_weights"]


def test_second_derivatives_through_fully_masked_rows_match_torch():
    mask = _fully_masked_bool()
    seeds = [r(2, 3, 6, seed=9)]
    weights = [r(*a.shape, seed=10 + i) for i, a in enumerate(QKV)]
    results = []
    for lib, make, grad, tensor in ((F, _ours, autograd.grad, ag.tensor),
                                    (TF, _theirs, torch.autograd.grad, torch.from_numpy)):
        leaves = [make(a) for a in QKV]
        out = lib.scaled_dot_product_attention(*leaves, attn_mask=make(mask))
        firsts = grad([out], leaves, [tensor(seeds[0])], create_graph=True)
        phi = sum((g * tensor(w)).sum() for g, w in zip(firsts, weights))
        results.append([_numpy(s) for s in grad(phi, leaves)])
    for a, b in zip(*results):
        np.testing.assert_allclose(a, b, rtol=1e-9, atol=1e-11)
        assert not np.isnan(a).any()


# -- grouped-query attention ---------------------------------------------------------------------
@pytest.mark.parametrize("heads", [(4, 2, 2), (4, 1, 1), (4, 2, 1), (2, 2, 2)])
def test_grouped_query_attention_matches_torch(heads):
    hq, hk, hv = heads
    arrays = [r(2, hq, 3, 4), r(2, hk, 5, 4, seed=1), r(2, hv, 5, 3, seed=2)]
    sdpa_both(arrays, enable_gqa=True)
    sdpa_both(arrays, enable_gqa=True, is_causal=True)


def test_grouped_query_attention_repeats_each_head_for_its_group():
    """Key head j serves query heads j·g .. j·g + g - 1 (repeat_interleave), shown in the
    graph as unsqueeze (a reshape), expand and reshape; and its second derivatives match
    PyTorch's on explicitly repeated keys and values (PyTorch's own GQA path has no double
    backward)."""
    q, k, v = r(1, 4, 3, 4), r(1, 2, 5, 4, seed=1), r(1, 2, 5, 3, seed=2)
    ours = F.scaled_dot_product_attention(*map(ag.tensor, (q, k, v)), enable_gqa=True)
    repeated = F.scaled_dot_product_attention(
        ag.tensor(q), ag.tensor(np.repeat(k, 2, axis=1)), ag.tensor(np.repeat(v, 2, axis=1)))
    np.testing.assert_array_equal(ours.numpy(), repeated.numpy())
    leaves = [ag.tensor(a, requires_grad=True) for a in (q, k, v)]
    ops = [o.op for o in graph.capture(F.scaled_dot_product_attention(
        *leaves, enable_gqa=True)).ops]
    assert ops.count("expand") == 2

    weights = [r(*a.shape, seed=10 + i) for i, a in enumerate((q, k, v))]
    seed = r(1, 4, 3, 3, seed=9)
    out = F.scaled_dot_product_attention(*leaves, enable_gqa=True)
    firsts = autograd.grad([out], leaves, [ag.tensor(seed)], create_graph=True)
    mine = autograd.grad(sum((g * ag.tensor(w)).sum() for g, w in zip(firsts, weights)), leaves)
    t_leaves = [torch.tensor(a, requires_grad=True) for a in (q, k, v)]
    t_out = TF.scaled_dot_product_attention(t_leaves[0], t_leaves[1].repeat_interleave(2, 1),
                                            t_leaves[2].repeat_interleave(2, 1))
    t_firsts = torch.autograd.grad([t_out], t_leaves, [torch.from_numpy(seed)],
                                   create_graph=True)
    theirs = torch.autograd.grad(sum((g * torch.from_numpy(w)).sum()
                                     for g, w in zip(t_firsts, weights)), t_leaves)
    for a, b in zip(mine, theirs):
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-9, atol=1e-11)


def test_forward_mode_of_grouped_query_attention_matches_torch():
    q, k, v = r(1, 4, 3, 4), r(1, 2, 5, 4, seed=1), r(1, 2, 5, 3, seed=2)
    tangents = [r(*a.shape, seed=20 + i) for i, a in enumerate((q, k, v))]
    _, ours = jvp(lambda *xs: F.scaled_dot_product_attention(*xs, enable_gqa=True),
                  tuple(map(ag.tensor, (q, k, v))), tuple(map(ag.tensor, tangents)))
    _, theirs = torch.func.jvp(
        lambda a, b, c: TF.scaled_dot_product_attention(a, b.repeat_interleave(2, 1),
                                                        c.repeat_interleave(2, 1)),
        tuple(map(torch.from_numpy, (q, k, v))), tuple(map(torch.from_numpy, tangents)))
    np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-10, atol=1e-12)


# -- the recorded graph --------------------------------------------------------------------------
def test_the_graph_shows_every_step_with_its_name():
    q, k, v = (ag.tensor(r(2, 4, 8, seed=i), requires_grad=True) for i in range(3))
    out = F.scaled_dot_product_attention(q, k, v, is_causal=True, dropout_p=0.1,
                                         generator=ag.Generator(0))
    g = graph.capture(out)
    assert [o.op for o in g.ops] == ["permute", "matmul", "mul", "add", "softmax", "dropout",
                                     "matmul"]
    names = [g.tensor(o.output).name for o in g.ops]
    assert names == ["k_T", "scores", "scaled_scores", "masked_scores", "attn_weights",
                     "dropped_weights", None]
    bias = next(t for t in g.tensors if t.name == "attn_bias")
    assert bias.kind == "constant" and bias.shape == (4, 4)


def test_what_each_step_saves():
    """The softmax keeps its (N, L, S) weights; the last matmul keeps the dropped weights
    and v; the scaling and the mask keep nothing of their own."""
    n, length, e = 2, 4, 8
    q, k, v = (ag.tensor(r(n, length, e, seed=i), requires_grad=True) for i in range(3))
    g = graph.capture(F.scaled_dot_product_attention(q, k, v, is_causal=True))
    saved = {(g.op(s.op).op, s.name): s for s in g.saved}
    assert saved["softmax", "out"].nbytes == n * length * length * 8
    assert saved["softmax", "out"].buffer == saved["matmul", "a"].buffer  # one buffer
    assert not any(op == "add" for op, _ in saved)
    assert {name for op, name in saved if op == "mul"} <= {"b"}
    assert all(s.nbytes == 0 for s in g.saved if g.op(s.op).op == "mul")


def test_no_grad_records_nothing():
    q, k, v = (ag.tensor(a, requires_grad=True) for a in QKV)
    with no_grad():
        out = F.scaled_dot_product_attention(q, k, v, is_causal=True, dropout_p=0.5)
    assert out.grad_fn is None and graph.saved_bytes(out) == 0


# -- dropout -------------------------------------------------------------------------------------
def test_dropout_has_torchs_statistics():
    """Each weight is kept with probability 1 - p and scaled by 1/(1 - p): the mean output
    over many draws is the output without dropout, and a fraction p of weights are 0.
    (PyTorch's masks come from another random stream; its statistics are the same.)"""
    q, k, v = (ag.tensor(r(1, 4, 6, seed=i)) for i in range(3))
    gen = ag.Generator(0)
    plain = F.scaled_dot_product_attention(q, k, v).numpy()
    draws = np.stack([F.scaled_dot_product_attention(q, k, v, dropout_p=0.3,
                                                     generator=gen).numpy()
                      for _ in range(4000)])
    np.testing.assert_allclose(draws.mean(0), plain, atol=0.03)
    t_draws = np.stack([TF.scaled_dot_product_attention(
        *(torch.from_numpy(r(1, 4, 6, seed=i)) for i in range(3)), dropout_p=0.3).numpy()
        for _ in range(4000)])
    np.testing.assert_allclose(draws.std(0), t_draws.std(0), rtol=0.1, atol=0.01)


def test_dropout_zeroes_a_fraction_p_of_the_weights_and_scales_the_rest():
    mha = nn.MultiheadAttention(8, 2, dropout=0.4, batch_first=True, dtype=ag.float64,
                                generator=ag.Generator(1))
    x = ag.tensor(r(4, 16, 8))
    _, weights = mha(x, x, x, average_attn_weights=False)
    w = weights.numpy()
    assert abs((w == 0).mean() - 0.4) < 0.03
    mha.eval()
    _, plain = mha(x, x, x, average_attn_weights=False)
    kept = w != 0
    np.testing.assert_allclose(w[kept], plain.numpy()[kept] / 0.6)


def test_dropout_is_seeded_and_p_1_gives_zeros_like_torch():
    q, k, v = (ag.tensor(a) for a in QKV)
    a = F.scaled_dot_product_attention(q, k, v, dropout_p=0.5, generator=ag.Generator(3))
    b = F.scaled_dot_product_attention(q, k, v, dropout_p=0.5, generator=ag.Generator(3))
    np.testing.assert_array_equal(a.numpy(), b.numpy())
    ag.manual_seed(5)
    c = F.scaled_dot_product_attention(q, k, v, dropout_p=0.5)
    ag.manual_seed(5)
    d = F.scaled_dot_product_attention(q, k, v, dropout_p=0.5)
    np.testing.assert_array_equal(c.numpy(), d.numpy())
    sdpa_both(list(QKV), dropout_p=1.0)


def test_a_negative_dropout_p_drops_nothing_as_in_torch():
    sdpa_both(list(QKV), dropout_p=-0.1)
    q, k, v = (ag.tensor(a, requires_grad=True) for a in QKV)
    out = F.scaled_dot_product_attention(q, k, v, dropout_p=-0.1)
    assert "dropout" not in [o.op for o in graph.capture(out).ops]


def test_dropout_backward_uses_the_same_mask():
    q, k, v = (ag.tensor(a, requires_grad=True) for a in QKV)
    out = F.scaled_dot_product_attention(q, k, v, dropout_p=0.5, generator=ag.Generator(2))
    out.sum().backward()
    assert np.isfinite(v.grad.numpy()).all()
    weights = graph.capture(out)
    mask = next(s for s in weights.saved if s.name == "mask")
    assert mask.dtype == "bool" and mask.shape == (2, 3, 5)


# -- edges: empty, nan, inf, 0-d -----------------------------------------------------------------
@pytest.mark.parametrize("shapes", [
    ((2, 0, 4), (2, 5, 4), (2, 5, 6)),   # L = 0: no queries
    ((2, 3, 4), (2, 0, 4), (2, 0, 6)),   # S = 0: nothing to attend to, output 0
    ((2, 3, 0), (2, 5, 0), (2, 5, 6)),   # E = 0: scores 0, uniform weights (not 0 · inf)
    ((0, 3, 4), (0, 5, 4), (0, 5, 6)),   # no batch entries
    ((2, 3, 4), (2, 5, 4), (2, 5, 0)),   # Ev = 0
], ids=["L=0", "S=0", "E=0", "N=0", "Ev=0"])
def test_empty_inputs_match_torch(shapes):
    sdpa_both([r(*s, seed=i) for i, s in enumerate(shapes)])
    sdpa_both([r(*s, seed=i) for i, s in enumerate(shapes)], is_causal=True)


@pytest.mark.parametrize("where", ["q", "k", "v", "k masked", "v masked"])
def test_nan_in_inputs_spreads_as_in_torch(where):
    """A nan key spoils every query's row, even where the mask hides it (nan + -inf is
    nan, PyTorch adds its mask too); a nan value spoils every output column it meets."""
    arrays = [a.copy() for a in QKV]
    arrays["qkv".index(where[0])][0, 0, 0] = NAN
    mask = None
    if "masked" in where:
        mask = np.ones((3, 5), dtype=bool)
        mask[:, 0] = False
    out, _ = sdpa_both(arrays, mask=mask)
    assert np.isnan(out[0]).any() and not np.isnan(out[1]).any()


def test_inf_in_a_float_mask_gives_nan_rows_as_in_torch():
    mask = np.zeros((3, 5))
    mask[0, 0] = INF
    out, _ = sdpa_both(list(QKV), mask=mask)
    assert np.isnan(out[:, 0]).all() and not np.isnan(out[:, 1:]).any()


@pytest.mark.parametrize("ndim", [0, 1])
def test_0d_and_1d_inputs_are_refused_as_in_torch(ndim):
    """0-d does not apply: attention needs (sequence, features) in the last two dims."""
    arrays = [r(*(4,) * ndim, seed=i) for i in range(3)]
    message = _sdpa_raises_like(arrays)
    assert f"query.dim: {ndim}" in message and "at least 2" in message


# -- wrong shapes, dtypes and arguments ----------------------------------------------------------
@pytest.mark.parametrize("shapes, words", [
    (((2, 3, 4), (2, 5, 3), (2, 5, 6)), "same last dim E"),
    (((2, 3, 4), (2, 5, 4), (2, 4, 6)), "same second-to-last dim S"),
    (((2, 3, 4), (3, 5, 4), (3, 5, 6)), "size of tensor a (2) must match the size of tensor b (3)"),
    (((4, 3, 4), (4, 5, 4), (2, 5, 6)), "must match"),
], ids=["E", "S", "batch", "value-batch"])
def test_mismatched_shapes_are_refused_as_in_torch(shapes, words):
    assert words in _sdpa_raises_like([r(*s) for s in shapes])


@pytest.mark.parametrize("mask_shape, words", [
    ((3, 4), "size of tensor a (5) must match the size of tensor b (4)"),
    ((7, 2, 3, 5), "doesn't match the broadcast shape [7, 2, 3, 5]"),
    ((2, 2, 3, 5), "doesn't match the broadcast shape"),
], ids=["wrong-S", "more-dims", "grows-batch"])
def test_a_mask_of_the_wrong_shape_is_refused_as_in_torch(mask_shape, words):
    for mask in (np.ones(mask_shape, dtype=bool), np.zeros(mask_shape)):
        assert words in _sdpa_raises_like(list(QKV), attn_mask=mask)


def test_dtypes_are_checked_as_in_torch():
    q, k, v = QKV
    assert "same dtype" in _sdpa_raises_like([q.astype(np.float32), k, v])
    ints = [np.ones((2, 3, 4), dtype=np.int64)] * 3
    assert "floating-point" in _sdpa_raises_like(ints)
    f32 = [a.astype(np.float32) for a in QKV]
    assert "attn_mask dtype" in _sdpa_raises_like(f32, attn_mask=np.zeros((3, 5)))
    assert "attn_mask dtype" in _sdpa_raises_like(list(QKV),
                                                  attn_mask=np.ones((3, 5), dtype=np.int64))


def test_a_mask_and_is_causal_together_are_refused_as_in_torch():
    message = _sdpa_raises_like(list(QKV), attn_mask=np.ones((3, 5), dtype=bool),
                                is_causal=True)
    assert "should not be set when is_causal=True" in message


@pytest.mark.parametrize("kw, words", [
    ({"dropout_p": "a"}, "'dropout_p' must be float, not str"),
    ({"scale": "x"}, "'scale' must be float, not str"),
    ({"is_causal": 1}, "'is_causal' must be bool, not int"),
    ({"is_causal": None}, "'is_causal' must be bool, not NoneType"),
    ({"enable_gqa": 1}, "'enable_gqa' must be bool, not int"),
    ({"dropout_p": 1.5}, "between 0 and 1, but got 1.5"),
])
def test_bad_arguments_are_refused_as_in_torch(kw, words):
    assert words in _sdpa_raises_like(list(QKV), **kw)


def test_a_list_mask_is_refused_as_in_torch():
    def call(lib, make):
        return lambda: lib.scaled_dot_product_attention(*map(make, QKV), attn_mask=[[True]])
    assert "must be Tensor, not list" in raises_like(call(F, _ours), call(TF, _theirs))


def test_number_arguments_take_0d_tensors_and_bools_as_in_torch():
    sdpa_both(list(QKV), scale=2.0)
    q, k, v = (ag.tensor(a) for a in QKV)
    a = F.scaled_dot_product_attention(q, k, v, scale=ag.tensor(2.0))
    b = F.scaled_dot_product_attention(q, k, v, scale=2.0)
    np.testing.assert_array_equal(a.numpy(), b.numpy())
    sdpa_both(list(QKV), scale=True)


@pytest.mark.parametrize("shapes, words", [
    (((2, 4, 3, 5), (2, 3, 6, 5), (2, 3, 6, 7)), "must divide the number of heads"),
    (((2, 2, 3, 5), (2, 4, 6, 5), (2, 4, 6, 7)), "must divide the number of heads"),
    (((3, 5), (6, 5), (6, 7)), "Dimension out of range"),
], ids=["not-divisible", "more-kv-heads", "2-D"])
def test_grouped_query_attention_refuses_what_torch_refuses(shapes, words):
    assert words in _sdpa_raises_like([r(*s) for s in shapes], enable_gqa=True)


def test_without_enable_gqa_fewer_kv_heads_do_not_broadcast():
    shapes = ((2, 4, 3, 5), (2, 2, 6, 5), (2, 2, 6, 7))
    assert "must match" in _sdpa_raises_like([r(*s) for s in shapes])


# -- MultiheadAttention --------------------------------------------------------------------------
def mha_pair(embed_dim=8, num_heads=2, **kw):
    """Ours and PyTorch's MultiheadAttention in float64, PyTorch's weights copied in."""
    torch.manual_seed(0)
    theirs = torch.nn.MultiheadAttention(embed_dim, num_heads, dtype=torch.float64, **kw)
    ours = nn.MultiheadAttention(embed_dim, num_heads, dtype=ag.float64, **kw)
    state = {name: p.detach().numpy() for name, p in theirs.named_parameters()}
    assert [name for name, _ in ours.named_parameters()] == list(state)
    with no_grad():
        for name, p in ours.named_parameters():
            p.copy_(state[name])
    return ours, theirs


def mha_both(ours, theirs, inputs, rtol=1e-10, atol=1e-12, **kw):
    """Call both modules on the same inputs ("q", "k", "v" arrays, or "x" for
    self-attention: one tensor passed three times) and compare outputs, weights and
    the gradients of every parameter and input; return (out, weights) of ours."""
    results = []
    for module, make in ((ours, _ours), (theirs, _theirs)):
        leaves = {name: make(a) for name, a in inputs.items()}
        args = [leaves["x"]] * 3 if "x" in leaves else [leaves[n] for n in "qkv"]
        kw_ = {k: (make(v, grad=False) if isinstance(v, np.ndarray) else v)
               for k, v in kw.items()}
        out, weights = module(*args, **kw_)
        rng = np.random.default_rng(11)
        loss = (out * _wrap(rng.standard_normal(tuple(out.shape)), make)).sum()
        if weights is not None:
            loss = loss + (weights * _wrap(rng.standard_normal(tuple(weights.shape)),
                                           make)).sum()
        loss.backward()
        grads = {name: _numpy(p.grad) for name, p in module.named_parameters()}
        grads.update({name: _numpy(t.grad) for name, t in leaves.items()})
        results.append((_numpy(out), None if weights is None else _numpy(weights), grads))
    (out, weights, grads), (t_out, t_weights, t_grads) = results
    assert out.shape == t_out.shape
    np.testing.assert_allclose(out, t_out, rtol=rtol, atol=atol, equal_nan=True)
    assert (weights is None) == (t_weights is None)
    if weights is not None:
        assert weights.shape == t_weights.shape
        np.testing.assert_allclose(weights, t_weights, rtol=rtol, atol=atol, equal_nan=True)
    assert grads.keys() == t_grads.keys()
    for name in grads:
        np.testing.assert_allclose(grads[name], t_grads[name], rtol=rtol, atol=atol,
                                   equal_nan=True, err_msg=f"gradient of {name}")
    return out, weights


def _wrap(array, make):
    return make(array, grad=False)


def _causal(length):
    return np.triu(np.ones((length, length), dtype=bool), 1)  # True = may not attend


def _padding():
    mask = np.zeros((3, 4), dtype=bool)  # True = ignore this key
    mask[0, 2:] = True
    mask[2, 0] = True
    return mask


@pytest.mark.parametrize("batch_first", [False, True])
@pytest.mark.parametrize("need_weights", [True, False])
def test_causal_self_attention_matches_torch(batch_first, need_weights):
    ours, theirs = mha_pair(batch_first=batch_first)
    x = r(3, 4, 8) if batch_first else r(4, 3, 8)
    out, weights = mha_both(ours, theirs, {"x": x}, attn_mask=_causal(4),
                            need_weights=need_weights, is_causal=True)
    assert out.shape == x.shape
    assert (weights is None) != need_weights
    if need_weights:
        assert weights.shape == (3, 4, 4) and np.all(weights[:, 0, 1:] == 0)


@pytest.mark.parametrize("batch_first", [False, True])
@pytest.mark.parametrize("need_weights", [True, False])
def test_key_padding_mask_matches_torch(batch_first, need_weights):
    ours, theirs = mha_pair(batch_first=batch_first)
    x = r(3, 4, 8) if batch_first else r(4, 3, 8)
    _, weights = mha_both(ours, theirs, {"x": x}, key_padding_mask=_padding(),
                          need_weights=need_weights)
    if need_weights:
        assert np.all(weights[0, :, 2:] == 0) and np.all(weights[2, :, 0] == 0)


@pytest.mark.parametrize("need_weights", [True, False])
def test_causal_and_padding_masks_together_match_torch(need_weights):
    ours, theirs = mha_pair(batch_first=True)
    mha_both(ours, theirs, {"x": r(3, 4, 8)}, key_padding_mask=_padding(),
             attn_mask=_causal(4), need_weights=need_weights, is_causal=True)


@pytest.mark.parametrize("kind", ["float", "3-D bool", "3-D float"])
def test_other_masks_match_torch(kind):
    ours, theirs = mha_pair(batch_first=True)
    mask = {"float": r(4, 4, seed=5), "3-D bool": np.random.default_rng(5).random((6, 4, 4)) > 0.3,
            "3-D float": r(6, 4, 4, seed=5)}[kind]
    for need_weights in (True, False):
        mha_both(ours, theirs, {"x": r(3, 4, 8)}, attn_mask=mask, need_weights=need_weights)


def test_float_padding_mask_matches_torch():
    ours, theirs = mha_pair(batch_first=True)
    padding = np.where(_padding(), -INF, 0.0)
    mha_both(ours, theirs, {"x": r(3, 4, 8)}, key_padding_mask=padding)


@pytest.mark.parametrize("same_kv", [True, False])
@pytest.mark.parametrize("batch_first", [False, True])
def test_cross_attention_matches_torch(same_kv, batch_first):
    """Queries from one sequence (L = 4), keys and values from another (S = 5)."""
    ours, theirs = mha_pair(batch_first=batch_first)
    shape = (lambda n: (3, n, 8)) if batch_first else (lambda n: (n, 3, 8))
    q, k = r(*shape(4)), r(*shape(5), seed=1)
    v = k if same_kv else r(*shape(5), seed=2)
    _, weights = mha_both(ours, theirs, {"q": q, "k": k, "v": v})
    assert weights.shape == (3, 4, 5)


@pytest.mark.parametrize("kw", [{"average_attn_weights": False}, {"bias": False},
                                {"num_heads": 1}, {"num_heads": 4}],
                         ids=["per-head", "no-bias", "one-head", "four-heads"])
def test_options_of_multihead_attention_match_torch(kw):
    module_kw = {k: v for k, v in kw.items() if k in ("bias", "num_heads")}
    call_kw = {k: v for k, v in kw.items() if k not in module_kw}
    ours, theirs = mha_pair(batch_first=True, **module_kw)
    _, weights = mha_both(ours, theirs, {"x": r(3, 4, 8)}, **call_kw)
    if call_kw:
        assert weights.shape == (3, 2, 4, 4)


@pytest.mark.parametrize("average", [True, False])
def test_unbatched_inputs_match_torch(average):
    ours, theirs = mha_pair()
    _, weights = mha_both(ours, theirs, {"x": r(4, 8)}, attn_mask=_causal(4),
                          key_padding_mask=np.array([False, False, False, True]),
                          average_attn_weights=average)
    assert weights.shape == ((4, 4) if average else (2, 4, 4))
    mha_both(ours, theirs, {"x": r(4, 8)}, need_weights=False)


def test_fully_masked_queries_give_nan_with_weights_and_zeros_without_as_in_torch():
    """PyTorch's two paths differ: need_weights=True uses a plain softmax (nan),
    need_weights=False scaled_dot_product_attention (0)."""
    ours, theirs = mha_pair(batch_first=True)
    padding = _padding()
    padding[1] = True
    x = r(3, 4, 8)
    for module, make in ((ours, _ours), (theirs, _theirs)):
        out, weights = module(*[make(x)] * 3, key_padding_mask=make(padding, grad=False))
        assert np.isnan(_numpy(out)[1]).all() and np.isnan(_numpy(weights)[1]).all()
    out, _ = mha_both(ours, theirs, {"x": x}, key_padding_mask=padding, need_weights=False)
    assert np.all(out[1] == ours.out_proj.bias.numpy())


def test_is_causal_is_only_a_hint_as_in_torch():
    """Without a padding mask and with need_weights=False PyTorch builds the causal mask
    from the shapes and ignores attn_mask's values; so do we."""
    ours, theirs = mha_pair(batch_first=True)
    x = r(3, 4, 8)
    wrong = np.zeros((4, 4), dtype=bool)
    out, _ = mha_both(ours, theirs, {"x": x}, attn_mask=wrong, is_causal=True,
                      need_weights=False)
    causal, _ = mha_both(ours, theirs, {"x": x}, attn_mask=_causal(4))
    np.testing.assert_allclose(out, causal, rtol=1e-12, atol=1e-14)


def test_dropout_only_in_training_and_seeded():
    mha = nn.MultiheadAttention(8, 2, dropout=0.5, batch_first=True, dtype=ag.float64,
                                generator=ag.Generator(0))
    x = ag.tensor(r(3, 4, 8))
    a, _ = mha(x, x, x)
    b, _ = mha(x, x, x)
    assert not np.allclose(a.numpy(), b.numpy())
    mha.eval()
    c, _ = mha(x, x, x)
    d, _ = mha(x, x, x, need_weights=False)
    np.testing.assert_allclose(c.numpy(), d.numpy(), rtol=1e-12)


@pytest.mark.usefixtures("float32_default")  # PyTorch's float32 layers
def test_parameters_have_torchs_names_shapes_and_initialisation():
    ours = nn.MultiheadAttention(16, 4, generator=ag.Generator(0))
    theirs = torch.nn.MultiheadAttention(16, 4)
    assert [(n, tuple(p.shape)) for n, p in ours.named_parameters()] == \
        [(n, tuple(p.shape)) for n, p in theirs.named_parameters()]
    assert ours.in_proj_weight.dtype == np.float32 and ours.head_dim == 4
    assert np.all(ours.in_proj_bias.numpy() == 0) and np.all(ours.out_proj.bias.numpy() == 0)
    bound = (6 / (16 + 48)) ** 0.5  # xavier_uniform_ on (3E, E)
    w = ours.in_proj_weight.numpy()
    assert np.abs(w).max() <= bound and np.abs(w).max() > 0.9 * bound
    assert abs(w.std() - bound / 3 ** 0.5) < 0.1 * bound
    again = nn.MultiheadAttention(16, 4, generator=ag.Generator(0))
    np.testing.assert_array_equal(again.in_proj_weight.numpy(), w)
    assert ours.q_proj_weight is None and ours.bias_k is None and ours.batch_first is False
    no_bias = nn.MultiheadAttention(16, 4, bias=False)
    assert [n for n, _ in no_bias.named_parameters()] == ["in_proj_weight", "out_proj.weight"]


def test_the_graph_of_self_attention_has_one_packed_projection():
    mha = nn.MultiheadAttention(8, 2, batch_first=True, dtype=ag.float64)
    x = ag.tensor(r(3, 4, 8), requires_grad=True)
    out, _ = mha(x, x, x, need_weights=False)
    ops = [o.op for o in graph.capture(out).ops]
    assert ops.count("linear") == 2 and "softmax" in ops
    modules = {o.module for o in graph.capture(out).ops}
    assert "out_proj" in modules


def test_empty_sequences_and_batches_match_torch():
    ours, theirs = mha_pair(batch_first=True)
    for shapes in (((3, 0, 8), (3, 4, 8)), ((3, 4, 8), (3, 0, 8)), ((0, 4, 8), (0, 4, 8))):
        q, kv = r(*shapes[0]), r(*shapes[1], seed=1)
        for need_weights in (True, False):
            mha_both(ours, theirs, {"q": q, "k": kv, "v": kv}, need_weights=need_weights)


@pytest.mark.parametrize("args, words", [
    ((5, 2), "embed_dim must be divisible by num_heads"),
    ((4, 0), "must be greater than 0"),
    ((0, 2), "must be greater than 0"),
])
def test_bad_sizes_are_refused_as_in_torch(args, words):
    assert words in raises_like(lambda: nn.MultiheadAttention(*args),
                                lambda: torch.nn.MultiheadAttention(*args))


@pytest.mark.parametrize("kw", [{"kdim": 3}, {"vdim": 5}, {"add_bias_kv": True},
                                {"add_zero_attn": True}])
def test_unsupported_options_say_so(kw):
    with pytest.raises(NotImplementedError, match="not supported by this engine"):
        nn.MultiheadAttention(4, 2, **kw)
    torch.nn.MultiheadAttention(4, 2, **kw)  # (PyTorch has them)


def _mha_raises_like(inputs, **kw):
    ours, theirs = mha_pair(batch_first=True)

    def call(module, make):
        kw_ = {k: (make(v, grad=False) if isinstance(v, np.ndarray) else v)
               for k, v in kw.items()}
        return lambda: module(*[make(a) for a in inputs], **kw_)
    return raises_like(call(ours, _ours), call(theirs, _theirs))


X = r(3, 4, 8)


@pytest.mark.parametrize("inputs, kw, words", [
    ((r(3, 4, 5),) * 3, {}, "was expecting embedding dimension of 8, but got 5"),
    ((r(1, 3, 4, 8),) * 3, {}, "received 4-D query tensor"),
    ((X, X[0], X[0]), {}, "expected `key` and `value` to be 3-D"),
    ((X, X, X[:, :2]), {}, "does not match value shape"),
    ((X, X, X), {"key_padding_mask": np.zeros((3, 5), dtype=bool)},
     "key_padded_mask.shape[1] to be 4, but got 5"),
    ((X, X, X), {"key_padding_mask": np.zeros((2, 4), dtype=bool)},
     "key_padded_mask.shape[0] to be 3, but got 2"),
    ((X, X, X), {"key_padding_mask": np.zeros((3, 4, 1), dtype=bool)},
     "`key_padding_mask` to be `None` or 2-D"),
    ((X, X, X), {"attn_mask": np.zeros((4, 5), dtype=bool)}, "2D attn_mask is (4, 5)"),
    ((X, X, X), {"attn_mask": np.zeros((3, 4, 4), dtype=bool)}, "should be (6, 4, 4)"),
    ((X, X, X), {"attn_mask": np.zeros((1, 1, 4, 4), dtype=bool)}, "2-D or 3-D"),
    ((X, X, X), {"attn_mask": np.zeros((4, 4), dtype=np.int64)},
     "only bool and floating types of attn_mask"),
    ((X, X, X), {"key_padding_mask": np.zeros((3, 4), dtype=np.int64)},
     "only bool and floating types of key_padding_mask"),
    ((X, X, X), {"is_causal": True}, "Need attn_mask if specifying the is_causal hint"),
], ids=["embed-dim", "4-D", "key-2-D", "key-value", "kpm-S", "kpm-N", "kpm-3-D", "mask-2-D",
        "mask-3-D", "mask-4-D", "int-mask", "int-kpm", "causal-no-mask"])
def test_wrong_inputs_are_refused_as_in_torch(inputs, kw, words):
    assert words in _mha_raises_like(inputs, **kw)


def test_mismatched_mask_types_warn_as_in_torch():
    ours, theirs = mha_pair(batch_first=True)
    with pytest.warns(UserWarning, match="mismatched key_padding_mask and attn_mask"):
        ours(*[ag.tensor(X)] * 3, key_padding_mask=ag.tensor(_padding()),
             attn_mask=ag.tensor(np.zeros((4, 4))))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        ours(*[ag.tensor(X)] * 3, key_padding_mask=ag.tensor(_padding()),
             attn_mask=ag.tensor(_causal(4)))


def test_kept_difference_a_float_mask_of_another_dtype_is_converted():
    """PyTorch refuses a float64 mask with float32 inputs here ("Input dtypes must be the
    same"); this engine converts the mask to the query's dtype (README, "Attention")."""
    theirs = torch.nn.MultiheadAttention(8, 2, batch_first=True)
    x = torch.from_numpy(X.astype(np.float32))
    with pytest.raises(RuntimeError):
        theirs(x, x, x, attn_mask=torch.zeros(4, 4, dtype=torch.float64))
    ours = nn.MultiheadAttention(8, 2, batch_first=True, dtype=ag.float32)
    x = ag.tensor(X.astype(np.float32))
    for kw in ({"attn_mask": ag.tensor(np.zeros((4, 4)))},
               {"key_padding_mask": ag.tensor(np.zeros((3, 4)))}):
        out, weights = ours(x, x, x, **kw)
        assert out.dtype == np.float32 and weights.dtype == np.float32
