"""``nn.MultiheadAttention`` with PyTorch's parameters, layouts and answers, made of the
engine's ops (``F.linear``, reshapes, ``nn/attention.py``'s composition).

The steps of one call, each a recorded op (or a few):

1. in-projection: for self-attention (``query is key is value``) one ``linear`` with
   the packed ``in_proj_weight`` (3E, E), split into q, k and v, as PyTorch does;
   otherwise the weight is split and each input gets its own ``linear``;
2. heads: (N, L, E) -> (N, L, H, E/H) -> (N, H, L, E/H) (reshape, transpose);
3. attention per head: softmax(q @ kᵀ / sqrt(E/H) + mask) @ v;
4. heads merged back to (N, L, E) and the out-projection ``out_proj`` (a Linear).

The two paths of PyTorch's ``multi_head_attention_forward`` are kept, with their
differences: ``need_weights=True`` (the default) returns the attention weights
(after dropout, averaged over heads unless ``average_attn_weights=False``) and gives
a query that may attend to no key nan, as PyTorch does; ``need_weights=False``
returns ``None`` for them and goes through ``scaled_dot_product_attention``'s rules,
which give such a query 0. Masks follow MultiheadAttention's convention, the
opposite of scaled_dot_product_attention's: in a bool ``attn_mask`` or
``key_padding_mask``, True means *do not attend*.
"""

from __future__ import annotations

import warnings

import numpy as np

from .. import errors
from ..ops import api as ag
from ..recording import creation, default_dtype
from ..recording.tensor import Tensor, tensor
from . import functional as F
from . import init
from .attention import attend
from .layers import Linear
from .module import Module
from .parameter import Parameter

__all__ = ["MultiheadAttention"]


class MultiheadAttention(Module):
    """Attention with ``num_heads`` heads of ``embed_dim // num_heads`` features each.

    Parameters (PyTorch's names, shapes and initialisation): ``in_proj_weight`` (3E, E),
    the query, key and value projections stacked (xavier_uniform_); ``in_proj_bias``
    (3E,) (zeros); ``out_proj``, a Linear(E, E) (weight: Linear's default; bias
    zeros). ``bias=False`` drops both biases.

    Inputs (L, N, E) (``batch_first=False``, PyTorch's default), (N, L, E) with
    ``batch_first=True``, or unbatched (L, E). ``forward`` returns ``(attn_output,
    attn_weights)``: the output in the query's layout and the weights (N, L, S)
    (averaged over heads) or (N, H, L, S), or ``None`` with ``need_weights=False``.
    Dropout (probability ``dropout``, in training only) drops attention weights, with
    masks from ``generator``, which also seeds the initial weights. ``kdim``/``vdim``
    other than ``embed_dim``, ``add_bias_kv`` and ``add_zero_attn`` are not supported.

    >>> mha = MultiheadAttention(8, 2, batch_first=True)
    >>> x = ag.randn(3, 5, 8)
    >>> out, weights = mha(x, x, x)
    >>> out.shape, weights.shape
    ((3, 5, 8), (3, 5, 5))
    """

    def __init__(self, embed_dim: int, num_heads: int, dropout: float = 0.0, bias: bool = True,
                 add_bias_kv: bool = False, add_zero_attn: bool = False,
                 kdim: int | None = None, vdim: int | None = None, batch_first: bool = False,
                 *, dtype=None, generator: creation.Generator | None = None):
        if embed_dim <= 0 or num_heads <= 0:
            raise errors.mha_sizes(embed_dim, num_heads)
        super().__init__()
        self.embed_dim, self.num_heads = embed_dim, num_heads
        self.kdim = kdim if kdim is not None else embed_dim
        self.vdim = vdim if vdim is not None else embed_dim
        if self.kdim != embed_dim or self.vdim != embed_dim:
            raise errors.mha_not_implemented(
                "kdim or vdim other than embed_dim", "its separate q/k/v projection weights "
                "are not implemented; project the keys and values to embed_dim first")
        if add_bias_kv or add_zero_attn:
            raise errors.mha_not_implemented(
                "add_bias_kv=True" if add_bias_kv else "add_zero_attn=True",
                "the extra key/value position it adds is not implemented")
        self._qkv_same_embed_dim = True
        self.dropout, self.batch_first = dropout, batch_first
        self.head_dim = embed_dim // num_heads
        if self.head_dim * num_heads != embed_dim:
            raise errors.mha_not_divisible()
        self.generator = generator
        dtype = np.dtype(default_dtype.resolve(dtype))
        self.in_proj_weight = Parameter(np.zeros((3 * embed_dim, embed_dim), dtype=dtype))
        for name in ("q_proj_weight", "k_proj_weight", "v_proj_weight"):
            self.register_parameter(name, None)
        if bias:
            self.in_proj_bias = Parameter(np.zeros(3 * embed_dim, dtype=dtype))
        else:
            self.register_parameter("in_proj_bias", None)
        self.out_proj = Linear(embed_dim, embed_dim, bias=bias, dtype=dtype, generator=generator)
        self.bias_k = self.bias_v = None
        self.add_zero_attn = False
        # PyTorch's _reset_parameters (out_proj.weight keeps Linear's initialisation)
        init.xavier_uniform_(self.in_proj_weight, generator=generator)
        if bias:
            init.zeros_(self.out_proj.bias)

    def forward(self, query: Tensor, key: Tensor, value: Tensor,
                key_padding_mask: Tensor | None = None, need_weights: bool = True,
                attn_mask: Tensor | None = None, average_attn_weights: bool = True,
                is_causal: bool = False) -> tuple[Tensor, Tensor | None]:
        """(attn_output, attn_weights or None); see the class docstring for the layouts.

        ``key_padding_mask`` (N, S) (unbatched: (S,)): True (or -inf) marks keys to
        ignore. ``attn_mask`` (L, S) or (N·num_heads, L, S): True marks pairs that may not
        attend; a float mask is added to the scores. ``is_causal`` is PyTorch's hint
        that ``attn_mask`` is the causal mask (a mask is still required); without a
        key_padding_mask and with ``need_weights=False`` the causal mask is then built
        from the shapes instead of read from ``attn_mask``, as in PyTorch.
        """
        self_attention = query is key and key is value
        same_kv = key is value
        query, key, value = (x if isinstance(x, Tensor) else tensor(x)
                             for x in (query, key, value))
        batched = _check_ranks(query, key, value, key_padding_mask, attn_mask, self.num_heads)
        key_padding_mask = _canonical_mask(key_padding_mask, "key_padding_mask", query.dtype,
                                           other=attn_mask)
        attn_mask = _canonical_mask(attn_mask, "attn_mask", query.dtype)
        if is_causal and attn_mask is None:
            raise errors.mha_causal_needs_mask()
        if is_causal and key_padding_mask is None and not need_weights:
            attn_mask = None  # scaled_dot_product_attention's own causal mask
        elif key_padding_mask is not None:
            is_causal = False  # the merged mask is not causal any more
        # (N, L, E) inside, whatever the layout outside
        if not batched:
            query, key, value = (ag.unsqueeze(x, 0) for x in (query, key, value))
            if key_padding_mask is not None:
                key_padding_mask = ag.unsqueeze(key_padding_mask, 0)
        elif not self.batch_first:  # each distinct input transposed once
            query, key, value = _batch_first(query, key, value, self_attention, same_kv)
        n, length, embed = query.shape
        if embed != self.embed_dim:
            raise errors.mha_embed_dim(self.embed_dim, embed)
        if key.shape != value.shape:
            raise errors.mha_key_value_shapes(key.shape, value.shape)
        if key.shape[0] != n:
            raise errors.mha_batch_sizes(query.shape, key.shape)
        source = key.shape[1]
        q, k, v = self._in_projection(query, key, value, self_attention, same_kv)
        bias = _merged_bias(attn_mask, key_padding_mask, n, self.num_heads, length, source)
        q, k, v = (self._split_heads(t) for t in (q, k, v))
        dropout_p = self.dropout if self.training else 0.0
        if need_weights:
            if dropout_p > 1:  # (F.dropout's check; a negative p drops nothing)
                raise errors.dropout_probability(dropout_p)
            out, weights = attend(q, k, v, bias, dropout_p=dropout_p, safe_softmax=False,
                                  generator=self.generator)
        else:
            out = F.scaled_dot_product_attention(q, k, v, bias, dropout_p, is_causal,
                                                 generator=self.generator)
            weights = None
        out = ag.reshape(ag.transpose(out, 1, 2), n, length, embed)  # heads merged
        out = self.out_proj(out)
        if not batched:
            out = ag.squeeze(out, 0)
        elif not self.batch_first:
            out = ag.transpose(out, 0, 1)
        if weights is not None:
            if average_attn_weights:
                weights = ag.mean(weights, dim=1)
            if not batched:
                weights = ag.squeeze(weights, 0)
        return out, weights

    def _in_projection(self, query, key, value, self_attention: bool, same_kv: bool):
        """q, k, v: one packed ``linear`` for self-attention, else one per input."""
        e, w, b = self.embed_dim, self.in_proj_weight, self.in_proj_bias
        if self_attention:
            return ag.split(F.linear(query, w, b), e, dim=-1)
        ws = ag.split(w, e, dim=0)
        bs = (None,) * 3 if b is None else ag.split(b, e, dim=0)
        q = F.linear(query, ws[0], bs[0])
        if same_kv:
            kv_w = ag.cat([ws[1], ws[2]], dim=0)
            kv_b = None if b is None else ag.cat([bs[1], bs[2]], dim=0)
            k, v = ag.split(F.linear(key, kv_w, kv_b), e, dim=-1)
            return q, k, v
        return q, F.linear(key, ws[1], bs[1]), F.linear(value, ws[2], bs[2])

    def _split_heads(self, x: Tensor) -> Tensor:
        n, length, _ = x.shape
        return ag.transpose(ag.reshape(x, n, length, self.num_heads, self.head_dim), 1, 2)

    def extra_repr(self) -> str:
        s = f"embed_dim={self.embed_dim}, num_heads={self.num_heads}"
        if self.dropout:
            s += f", dropout={self.dropout}"
        return s + (", batch_first=True" if self.batch_first else "")


def _check_ranks(query, key, value, key_padding_mask, attn_mask, num_heads) -> bool:
    """PyTorch's _mha_shape_check: whether the input is batched (3-D) or not (2-D)."""
    def ndim(mask):
        return np.ndim(mask._data if isinstance(mask, Tensor) else mask)

    if query.ndim not in (2, 3):
        raise errors.mha_query_rank(query.ndim)
    batched = query.ndim == 3
    if key.ndim != query.ndim or value.ndim != query.ndim:
        raise errors.mha_rank(batched, "`key` and `value`", f"{query.ndim}-D",
                              f"{key.ndim}-D and {value.ndim}-D tensors respectively")
    if key_padding_mask is not None and ndim(key_padding_mask) != query.ndim - 1:
        raise errors.mha_rank(batched, "`key_padding_mask`", f"`None` or {query.ndim - 1}-D",
                              f"{ndim(key_padding_mask)}-D tensor")
    if attn_mask is not None:
        if ndim(attn_mask) not in (2, 3):
            raise errors.mha_rank(batched, "`attn_mask`", "`None`, 2-D or 3-D",
                                  f"{ndim(attn_mask)}-D tensor")
        expected = (num_heads, query.shape[0], key.shape[0])
        if not batched and ndim(attn_mask) == 3 and np.shape(_values(attn_mask)) != expected:
            raise errors.mha_unbatched_attn_mask_shape(np.shape(_values(attn_mask)), expected)
    return batched


def _batch_first(query, key, value, self_attention: bool, same_kv: bool) -> tuple:
    """(L, N, E) inputs as (N, L, E), one transpose per distinct tensor."""
    if self_attention:
        query = ag.transpose(query, 0, 1)
        return query, query, query
    query, key = ag.transpose(query, 0, 1), ag.transpose(key, 0, 1)
    return query, key, key if same_kv else ag.transpose(value, 0, 1)


def _values(mask) -> np.ndarray:
    return mask._data if isinstance(mask, Tensor) else np.asarray(mask)


def _canonical_mask(mask, name: str, dtype, other=None):
    """A mask as a float bias: bool True -> -inf (do not attend), False -> 0 (a constant);
    a float mask as it is (in the query's dtype). Other dtypes are refused, and a bool
    key_padding_mask beside a float attn_mask (or the reverse) warns, as in PyTorch."""
    if mask is None:
        return None
    values = _values(mask)
    if values.dtype != np.bool_ and values.dtype.kind != "f":
        raise errors.mha_mask_dtype(name)
    if other is not None and _values(other).dtype != values.dtype:
        warnings.warn(f"Support for mismatched {name} and attn_mask is deprecated. Use same "
                      "type for both instead.", UserWarning, stacklevel=4)
    if values.dtype == np.bool_:
        return tensor(np.where(values, -np.inf, 0.0).astype(dtype), name=name)
    mask = mask if isinstance(mask, Tensor) else tensor(values)
    return mask if mask.dtype == dtype else ag.astype(mask, dtype)


def _merged_bias(attn_mask, key_padding_mask, n: int, heads: int, length: int, source: int):
    """attn_mask (L, S) or (N·H, L, S) plus key_padding_mask (N, S), as one bias that
    broadcasts to the scores (N, H, L, S)."""
    if attn_mask is not None:
        if attn_mask.ndim == 2:
            if attn_mask.shape != (length, source):
                raise errors.mha_attn_mask_shape(2, attn_mask.shape, (length, source))
        else:
            if attn_mask.shape != (n * heads, length, source):
                raise errors.mha_attn_mask_shape(3, attn_mask.shape,
                                                 (n * heads, length, source))
            attn_mask = ag.reshape(attn_mask, n, heads, length, source)
    if key_padding_mask is None:
        return attn_mask
    for dim, expected in enumerate((n, source)):
        if key_padding_mask.shape[dim] != expected:
            raise errors.mha_key_padding_mask_shape(dim, expected, key_padding_mask.shape[dim])
    padding = ag.reshape(key_padding_mask, n, 1, 1, source)
    return padding if attn_mask is None else attn_mask + padding
