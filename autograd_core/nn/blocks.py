"""Teaching blocks: a residual block (merge by adding), an Inception-style block
(branch, then merge by concatenating) and a pre-norm GPT block (self-attention and an
MLP, each added to the residual stream).

Each is small enough to read in full next to the graph it records.
"""

from __future__ import annotations

from collections import OrderedDict

from .. import errors
from ..func.checkpoint import checkpoint
from ..ops import api as ag
from ..recording import creation
from ..recording.tensor import Tensor
from . import functional as F
from .layers import (
    GELU,
    BatchNorm1d,
    BatchNorm2d,
    Conv2d,
    Dropout,
    LayerNorm,
    Linear,
    MaxPool2d,
    ReLU,
    Sequential,
)
from .module import Module

__all__ = ["ResidualBlock", "InceptionBlock", "SelfAttention", "TransformerBlock"]


class ResidualBlock(Module):
    """y = F(x) + shortcut(x): the block learns a correction F to the identity.

    * ``F`` (``self.body``) is conv3x3 -> batch norm -> ReLU -> conv3x3 -> batch norm
      (the first conv carries the ``stride``; the convs have no bias, batch norm
      shifts). With ``linear=True`` it is Linear -> BatchNorm1d -> ReLU -> Linear ->
      BatchNorm1d on (N, features) inputs.
    * ``shortcut`` is the identity when input and output shapes agree, and a
      projection (1x1 conv with the stride + batch norm, or a bias-free Linear) only
      when ``in_channels != out_channels`` or ``stride != 1``; then it is
      ``self.shortcut``, otherwise ``self.shortcut is None``.
    * The merge is a plain addition: it adds no parameters.

    As in the brief y = F(x) + x, there is no activation after the sum (ResNet puts
    a ReLU there: follow the block with ``nn.ReLU()`` for that). ``dtype`` defaults
    to the default dtype; ``generator`` seeds the initial weights.

    >>> block = ResidualBlock(8, 8)
    >>> block.shortcut is None
    True
    >>> ResidualBlock(8, 16, stride=2).shortcut is None
    False
    """

    def __init__(self, in_channels: int, out_channels: int | None = None, stride: int = 1, *,
                 linear: bool = False, dtype=None,
                 generator: creation.Generator | None = None):
        super().__init__()
        out_channels = in_channels if out_channels is None else out_channels
        if linear and stride != 1:
            raise errors.bad_option("ResidualBlock", "stride", stride,
                                    "1 for the linear variant")
        self.in_channels, self.out_channels = in_channels, out_channels
        self.stride, self.linear = stride, linear
        kw = {"dtype": dtype, "generator": generator}
        if linear:
            self.body = Sequential(OrderedDict([
                ("fc1", Linear(in_channels, out_channels, bias=False, **kw)),
                ("bn1", BatchNorm1d(out_channels, dtype=dtype)),
                ("relu", ReLU()),
                ("fc2", Linear(out_channels, out_channels, bias=False, **kw)),
                ("bn2", BatchNorm1d(out_channels, dtype=dtype)),
            ]))
        else:
            self.body = Sequential(OrderedDict([
                ("conv1", Conv2d(in_channels, out_channels, 3, stride, padding=1, bias=False,
                                 **kw)),
                ("bn1", BatchNorm2d(out_channels, dtype=dtype)),
                ("relu", ReLU()),
                ("conv2", Conv2d(out_channels, out_channels, 3, padding=1, bias=False, **kw)),
                ("bn2", BatchNorm2d(out_channels, dtype=dtype)),
            ]))
        self.shortcut = None
        if in_channels != out_channels or stride != 1:
            self.shortcut = (
                Linear(in_channels, out_channels, bias=False, **kw) if linear else
                Sequential(OrderedDict([
                    ("conv", Conv2d(in_channels, out_channels, 1, stride, bias=False, **kw)),
                    ("bn", BatchNorm2d(out_channels, dtype=dtype)),
                ])))

    def forward(self, x: Tensor) -> Tensor:
        out = self.body(x)  # F(x) first: the order a learner traces it in
        return out + (x if self.shortcut is None else self.shortcut(x))

    def extra_repr(self) -> str:
        s = f"{self.in_channels}, {self.out_channels}"
        if self.stride != 1:
            s += f", stride={self.stride}"
        return s + (", linear=True" if self.linear else "")


def _conv_relu(in_channels: int, out_channels: int, kernel_size: int, **kw) -> list:
    return [Conv2d(in_channels, out_channels, kernel_size, padding=kernel_size // 2, **kw),
            ReLU()]


class InceptionBlock(Module):
    """Four parallel branches over the same input, joined along channels:

    * ``branch1x1``: 1x1 conv -> ReLU (``out_1x1`` channels);
    * ``branch3x3``: [1x1 reduce -> ReLU ->] 3x3 conv -> ReLU (``out_3x3``);
    * ``branch5x5``: [1x1 reduce -> ReLU ->] 5x5 conv -> ReLU (``out_5x5``);
    * ``branch_pool``: 3x3 max pool (stride 1) -> 1x1 conv -> ReLU (``out_pool``).

    Padding keeps H and W, so ``cat`` along dim 1 gives out_1x1 + out_3x3 + out_5x5 +
    out_pool channels; in the backward, the concatenation splits the gradient back
    to each branch. ``reduce_3x3``/``reduce_5x5`` (optional) add GoogLeNet's 1x1
    reductions. ``dtype`` defaults to the default dtype; ``generator`` seeds the weights.

    >>> InceptionBlock(4, 2, 3, 1, 2).out_channels
    8
    """

    def __init__(self, in_channels: int, out_1x1: int, out_3x3: int, out_5x5: int,
                 out_pool: int, reduce_3x3: int | None = None, reduce_5x5: int | None = None,
                 *, dtype=None, generator: creation.Generator | None = None):
        super().__init__()
        kw = {"dtype": dtype, "generator": generator}
        self.in_channels = in_channels
        self.out_channels = out_1x1 + out_3x3 + out_5x5 + out_pool

        def branch(out: int, kernel_size: int, reduce: int | None) -> Sequential:
            layers = []
            if reduce is not None:
                layers += _conv_relu(in_channels, reduce, 1, **kw)
            layers += _conv_relu(in_channels if reduce is None else reduce, out, kernel_size,
                                 **kw)
            return Sequential(*layers)

        self.branch1x1 = branch(out_1x1, 1, None)
        self.branch3x3 = branch(out_3x3, 3, reduce_3x3)
        self.branch5x5 = branch(out_5x5, 5, reduce_5x5)
        self.branch_pool = Sequential(MaxPool2d(3, stride=1, padding=1),
                                      *_conv_relu(in_channels, out_pool, 1, **kw))

    def forward(self, x: Tensor) -> Tensor:
        branches = (self.branch1x1, self.branch3x3, self.branch5x5, self.branch_pool)
        return ag.cat([branch(x) for branch in branches], dim=1)

    def extra_repr(self) -> str:
        return f"{self.in_channels} -> {self.out_channels}"


class SelfAttention(Module):
    """Multi-head self-attention over (batch, T, d_model) inputs, with its own four
    Linear layers, so the graph shows each projection by name:

    * ``q_proj``, ``k_proj``, ``v_proj`` (d_model -> d_model): three linear ops on the
      same input, whose outputs are named ``q``, ``k`` and ``v``;
    * heads: each (B, T, d_model) -> (B, n_heads, T, d_model / n_heads) (reshape,
      transpose);
    * ``F.scaled_dot_product_attention`` (causal when ``causal``): matmul, mul, add,
      softmax [, dropout], matmul (nn/attention.py);
    * heads merged back (transpose, reshape), then ``out_proj`` and ``resid_drop``.

    ``dropout`` drops attention weights and the output (in training only), with masks
    from ``generator``, which also seeds the initial weights (PyTorch's Linear ones).

    ``checkpoint_core=True`` is *selective recomputation* (Korthikanti et al. 2023):
    the attention core, from q, k, v to the weighted values, runs inside one
    ``checkpoint`` op, which keeps only q, k and v; the (batch, heads, T, T) scores and
    weights are recomputed in backward instead of kept. The projections are not re-run.

    >>> SelfAttention(8, 2)(ag.randn(3, 5, 8, dtype=ag.float32)).shape
    (3, 5, 8)
    """

    def __init__(self, d_model: int, n_heads: int, dropout: float = 0.0, causal: bool = True,
                 *, dtype=None, generator: creation.Generator | None = None,
                 checkpoint_core: bool = False):
        super().__init__()
        if n_heads <= 0 or d_model % n_heads:
            raise errors.bad_option("SelfAttention", "n_heads", n_heads,
                                    f"a positive divisor of d_model={d_model}")
        self.d_model, self.n_heads, self.causal = d_model, n_heads, causal
        self.checkpoint_core = checkpoint_core
        self.dropout, self.generator = dropout, generator
        kw = {"dtype": dtype, "generator": generator}
        self.q_proj = Linear(d_model, d_model, **kw)
        self.k_proj = Linear(d_model, d_model, **kw)
        self.v_proj = Linear(d_model, d_model, **kw)
        self.out_proj = Linear(d_model, d_model, **kw)
        self.resid_drop = Dropout(dropout, generator=generator)

    def forward(self, x: Tensor) -> Tensor:
        if x.ndim != 3:
            raise errors.sequence_input_rank("SelfAttention", x.shape)
        b, t, c = x.shape
        q = self.q_proj(x).named("q")
        k = self.k_proj(x).named("k")
        v = self.v_proj(x).named("v")
        q, k, v = (self._split_heads(h) for h in (q, k, v))
        if self.checkpoint_core:

            y = checkpoint(self.core, q, k, v, parameters=(),
                           generators=() if self.generator is None else (self.generator,))
        else:
            y = self.core(q, k, v)
        y = ag.reshape(ag.transpose(y, 1, 2), b, t, c)  # the heads side by side again
        return self.resid_drop(self.out_proj(y))

    def core(self, q: Tensor, k: Tensor, v: Tensor) -> Tensor:
        """The attention core on (batch, heads, T, head size) q, k, v: scaled scores,
        the causal mask, softmax [, dropout], the weighted sum of the values."""
        return F.scaled_dot_product_attention(
            q, k, v, dropout_p=self.dropout if self.training else 0.0, is_causal=self.causal,
            generator=self.generator)

    def _split_heads(self, h: Tensor) -> Tensor:
        b, t, c = h.shape
        return ag.transpose(ag.reshape(h, b, t, self.n_heads, c // self.n_heads), 1, 2)

    def extra_repr(self) -> str:
        s = f"d_model={self.d_model}, n_heads={self.n_heads}, causal={self.causal}"
        s += f", dropout={self.dropout}" if self.dropout else ""
        return s + (", checkpoint_core=True" if self.checkpoint_core else "")


class TransformerBlock(Module):
    """A pre-norm GPT block on (batch, T, d_model) inputs:

        x = x + attn(ln1(x))      (SelfAttention, causal by default)
        x = x + mlp(ln2(x))       (Linear d_model -> d_ff, GELU, Linear d_ff -> d_model,
                                   Dropout)

    The residual stream ``x`` is never normalised itself: each branch reads a
    normalised copy and adds its correction, so the gradient reaches the input
    through the two additions unchanged, as in ResidualBlock. ``d_ff`` defaults to
    4 · d_model; ``dropout`` is used on the attention weights, after the attention's
    out-projection and after the MLP (in training only). ``dtype`` defaults to
    the default dtype; ``generator`` seeds the initial weights and the dropout masks;
    ``gelu_approximate="tanh"`` uses GELU's tanh form (GPT-2's).

    >>> block = TransformerBlock(8, 2)
    >>> block(ag.randn(3, 5, 8, dtype=ag.float32)).shape
    (3, 5, 8)
    """

    def __init__(self, d_model: int, n_heads: int, d_ff: int | None = None,
                 dropout: float = 0.0, causal: bool = True, *, dtype=None,
                 generator: creation.Generator | None = None,
                 gelu_approximate: str = "none"):
        super().__init__()
        d_ff = 4 * d_model if d_ff is None else d_ff
        self.d_model, self.n_heads, self.d_ff = d_model, n_heads, d_ff
        kw = {"dtype": dtype, "generator": generator}
        self.ln1 = LayerNorm(d_model, dtype=dtype)
        self.attn = SelfAttention(d_model, n_heads, dropout, causal, **kw)
        self.ln2 = LayerNorm(d_model, dtype=dtype)
        self.mlp = Sequential(OrderedDict([
            ("fc", Linear(d_model, d_ff, **kw)),
            ("gelu", GELU(approximate=gelu_approximate)),
            ("proj", Linear(d_ff, d_model, **kw)),
            ("drop", Dropout(dropout, generator=generator)),
        ]))

    def forward(self, x: Tensor) -> Tensor:
        x = x + self.attn(self.ln1(x))
        return x + self.mlp(self.ln2(x))

    def extra_repr(self) -> str:
        return f"d_model={self.d_model}, n_heads={self.n_heads}, d_ff={self.d_ff}"
