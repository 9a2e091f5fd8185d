"""``nn.TransformerBlock`` (a pre-norm GPT block) and its ``nn.SelfAttention``, against
the same composition written with PyTorch 2.13.0 modules (issue "Attention on the
engine"): PyTorch's weights copied in, float64, the output and the gradient of the
input and of every parameter; causality; the recorded graph (module clusters, what
the attention probabilities cost); and that a block trains with AdamW.
"""

from __future__ import annotations

from collections import OrderedDict

import numpy as np
import pytest

import autograd_core as ag
from autograd_core import nn, optim
from autograd_core.nn import functional as F
from autograd_core.recording.grad_mode import no_grad
from autograd_core.tools import graph

torch = pytest.importorskip(
    "torch", reason="PyTorch is not installed: the cross-check against PyTorch 2.13.0 CPU "
    "is skipped (install it with: pip install -e '.[torch]')")

pytestmark = pytest.mark.torch


class TorchSelfAttention(torch.nn.Module):
    def __init__(self, d, heads, causal):
        super().__init__()
        self.heads, self.causal = heads, causal
        self.q_proj, self.k_proj, self.v_proj, self.out_proj = (
            torch.nn.Linear(d, d, dtype=torch.float64) for _ in range(4))

    def forward(self, x):
        b, t, c = x.shape

        def split(h):
            return h.reshape(b, t, self.heads, c // self.heads).transpose(1, 2)

        q, k, v = (split(p(x)) for p in (self.q_proj, self.k_proj, self.v_proj))
        y = torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=self.causal)
        return self.out_proj(y.transpose(1, 2).reshape(b, t, c))


class TorchBlock(torch.nn.Module):
    """The block written once more with PyTorch's modules."""

    def __init__(self, d, heads, d_ff, causal):
        super().__init__()
        f64 = {"dtype": torch.float64}
        self.ln1 = torch.nn.LayerNorm(d, **f64)
        self.attn = TorchSelfAttention(d, heads, causal)
        self.ln2 = torch.nn.LayerNorm(d, **f64)
        self.mlp = torch.nn.Sequential(OrderedDict([
            ("fc", torch.nn.Linear(d, d_ff, **f64)), ("gelu", torch.nn.GELU()),
            ("proj", torch.nn.Linear(d_ff, d, **f64))]))

    def forward(self, x):
        x = x + self.attn(self.ln1(x))
        return x + self.mlp(self.ln2(x))


def block_pair(d=8, heads=2, d_ff=None, causal=True):
    torch.manual_seed(0)
    theirs = TorchBlock(d, heads, 4 * d if d_ff is None else d_ff, causal)
    with torch.no_grad():  # LayerNorm starts at (1, 0): move it, so its gradient shows
        for ln in (theirs.ln1, theirs.ln2):
            ln.weight.uniform_(0.5, 1.5)
            ln.bias.uniform_(-0.5, 0.5)
    ours = nn.TransformerBlock(d, heads, d_ff, causal=causal, dtype=ag.float64)
    state = {n: p.detach().numpy() for n, p in theirs.named_parameters()}
    assert sorted(n for n, _ in ours.named_parameters()) == sorted(state)
    with no_grad():
        for name, p in ours.named_parameters():
            p.copy_(state[name])
    return ours, theirs


@pytest.mark.parametrize("causal", [True, False])
@pytest.mark.parametrize("d, heads, d_ff, t", [(8, 2, None, 5), (6, 3, 10, 4), (4, 1, 8, 1)])
def test_forward_and_backward_match_the_same_block_in_torch(causal, d, heads, d_ff, t):
    ours, theirs = block_pair(d, heads, d_ff, causal)
    x = np.random.default_rng(1).standard_normal((2, t, d))
    g = np.random.default_rng(2).standard_normal((2, t, d))
    xo, xt = ag.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    yo, yt = ours(xo), theirs(xt)
    np.testing.assert_allclose(yo.numpy(), yt.detach().numpy(), rtol=1e-10, atol=1e-12)
    yo.backward(ag.tensor(g))
    yt.backward(torch.from_numpy(g))
    np.testing.assert_allclose(xo.grad.numpy(), xt.grad.numpy(), rtol=1e-10, atol=1e-12)
    theirs_grads = dict(theirs.named_parameters())
    for name, p in ours.named_parameters():
        np.testing.assert_allclose(p.grad.numpy(), theirs_grads[name].grad.numpy(),
                                   rtol=1e-10, atol=1e-12, err_msg=name)


def test_the_block_is_causal():
    """Position 0's output does not depend on later positions: their gradient is 0."""
    block = nn.TransformerBlock(8, 2, dtype=ag.float64, generator=ag.Generator(0))
    x = ag.tensor(np.random.default_rng(0).standard_normal((2, 5, 8)), requires_grad=True)
    block(x)[:, :2].sum().backward()
    g = x.grad.numpy()
    assert np.all(g[:, 2:] == 0) and np.all(g[:, :2] != 0)
    x.grad = None
    nn.TransformerBlock(8, 2, causal=False, dtype=ag.float64)(x)[:, 0].sum().backward()
    assert np.all(x.grad.numpy()[:, 1:] != 0)


def test_structure_names_and_defaults():
    block = nn.TransformerBlock(8, 2)
    assert block.d_ff == 32 and block.mlp.fc.out_features == 32
    assert [n for n, _ in block.named_children()] == ["ln1", "attn", "ln2", "mlp"]
    assert [n for n, _ in block.attn.named_children()] == ["q_proj", "k_proj", "v_proj",
                                                            "out_proj", "resid_drop"]
    assert block.attn.q_proj.weight.dtype == ag.get_default_dtype() == np.float64
    assert sum(p.numpy().size for p in block.parameters()) == \
        2 * 16 + 4 * (64 + 8) + (8 * 32 + 32) + (32 * 8 + 8)
    assert "d_model=8, n_heads=2, d_ff=32" in repr(block)
    a = nn.TransformerBlock(8, 2, generator=ag.Generator(3))
    b = nn.TransformerBlock(8, 2, generator=ag.Generator(3))
    for (_, p), (_, q) in zip(a.named_parameters(), b.named_parameters()):
        np.testing.assert_array_equal(p.numpy(), q.numpy())


def test_the_graph_of_one_block():
    """Every op of attention is in the graph, inside the module that ran it; the softmax
    keeps the B·H·T·T attention probabilities."""
    b, t, d, h = 2, 5, 8, 2
    block = nn.TransformerBlock(d, h, dtype=ag.float64, generator=ag.Generator(0))
    x = ag.tensor(np.random.default_rng(0).standard_normal((b, t, d)), requires_grad=True)
    g = graph.capture(block(x))
    ops = [(o.module, o.op) for o in g.ops]
    assert ops[0] == ("ln1", "layer_norm")
    assert [op for m, op in ops if m == "attn.q_proj"] == ["linear"]
    heads = ["reshape", "permute"] * 3  # q, k, v split into heads
    assert [op for m, op in ops if m == "attn"] == heads + [
        "permute", "matmul", "mul", "add", "softmax", "matmul",  # attention
        "permute", "reshape"]  # heads merged
    assert [op for m, op in ops if m is None] == ["add", "add"]  # the residual stream
    assert [op for m, op in ops if m and m.startswith("mlp")] == ["linear", "gelu", "linear"]
    softmax = next(o for o in g.ops if o.op == "softmax")
    assert g.tensor(softmax.output).name == "attn_weights"
    (probs,) = softmax.saved
    assert probs.shape == (b, h, t, t) and probs.nbytes == b * h * t * t * 8
    names = {t_.name for t_ in g.tensors}
    assert {"q", "k", "v", "scores", "attn_weights", "attn_bias"} <= names
    assert "attn.q_proj.weight" in names and "mlp.fc.weight" in names


def test_dropout_in_training_only_and_seeded():
    def make():
        return nn.TransformerBlock(8, 2, dropout=0.3, dtype=ag.float64,
                                   generator=ag.Generator(4))
    x = ag.tensor(np.random.default_rng(0).standard_normal((2, 5, 8)))
    a, b = make(), make()
    np.testing.assert_array_equal(a(x).numpy(), b(x).numpy())  # same seed, same masks
    assert not np.allclose(a(x).numpy(), a(x).numpy())
    a.eval()
    np.testing.assert_array_equal(a(x).numpy(), a(x).numpy())
    ops = [o.op for o in graph.capture(a.train()(ag.tensor(x.numpy(), requires_grad=True))).ops]
    assert ops.count("dropout") == 3  # attention weights, after out_proj, after the MLP


def test_a_block_trains_with_adamw():
    """A toy task that needs attention: output at position t is the input at t - 1
    (position 0: zeros). A few AdamW steps make the loss fall."""
    gen = ag.Generator(0)
    block = nn.TransformerBlock(8, 2, d_ff=16, generator=gen, dtype=ag.float64)
    head = nn.Linear(8, 8, generator=gen, dtype=ag.float64)
    params = list(block.parameters()) + list(head.parameters())
    opt = optim.AdamW(params, lr=1e-2, weight_decay=0.01)
    rng = np.random.default_rng(0)
    x = rng.standard_normal((16, 6, 8))
    target = np.concatenate([np.zeros((16, 1, 8)), x[:, :-1]], axis=1)
    losses = []
    for _ in range(60):
        opt.zero_grad()
        loss = F.mse_loss(head(block(ag.tensor(x))), ag.tensor(target))
        loss.backward()
        opt.step()
        losses.append(loss.item())
    assert losses[-1] < 0.5 * losses[0]
    assert all(np.isfinite(losses))


@pytest.mark.parametrize("args, error, words", [
    ((8, 3), ValueError, "n_heads"),
    ((8, 0), ValueError, "n_heads"),
    ((8, 2, None, 1.5), ValueError, "dropout probability"),
])
def test_bad_options_are_refused(args, error, words):
    with pytest.raises(error, match=words):
        nn.TransformerBlock(*args)


def test_wrong_inputs_are_refused():
    block = nn.TransformerBlock(8, 2)
    with pytest.raises(RuntimeError, match="normalized_shape"):
        block(ag.zeros(2, 5, 6))
    with pytest.raises(RuntimeError, match=r"3D \(batch, T, d_model\) input to SelfAttention, "
                       r"but got input of size: \[5, 8\]"):
        nn.SelfAttention(8, 2)(ag.zeros(5, 8))


def test_an_empty_sequence_gives_an_empty_output():
    block = nn.TransformerBlock(8, 2, dtype=ag.float64)
    x = ag.zeros(2, 0, 8, dtype=ag.float64, requires_grad=True)
    y = block(x)
    assert y.shape == (2, 0, 8)
    y.sum().backward()
    assert x.grad.shape == (2, 0, 8)
