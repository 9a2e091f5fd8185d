"""Scaled dot-product attention, written as the plain ops it is made of.

    scores  = q @ kᵀ · scale                 (matmul, mul)
    scores  = scores + bias                  (add: the mask as 0 / -inf, or a float mask)
    weights = softmax(scores, dim=-1)        (softmax: it saves the (..., L, S) weights)
    weights = dropout(weights)               (only with dropout_p > 0)
    out     = weights @ v                    (matmul)

There is no fused attention op: every step is an op of the engine, so the recorded
graph shows each of them (with the names above: ``k_T``, ``scores``, ``scaled_scores``,
``masked_scores``, ``attn_weights``, ``dropped_weights``) and the saved-tensor record
says what each keeps for the backward; the largest is the softmax's L × S weights
per head, which the backward of ``weights @ v`` reads too (one buffer, counted once).
Gradients of any order and forward mode come from the ops' own rules.

What PyTorch 2.13 does, and this does too:

* a boolean mask says where a query may attend (True = take part) and becomes a
  constant bias of 0 and -inf, added to the scores (``attn_bias``); a float mask is
  added as it is (and gets a gradient if it requires one); ``is_causal`` is the
  lower-triangular (L, S) mask, aligned top-left;
* a row whose scores are all -inf (a query that may attend to nothing) gives weights
  0, not nan (PyTorch's ``_safe_softmax``): here two ``masked_fill`` ops put 0 in
  those rows before and after the softmax (``finite_scores``, ``safe_weights``), and
  appear only when such a row exists;
* with a nan among the keys, every output it meets is nan, masked or not (nan + -inf
  is nan), as in PyTorch.
"""

from __future__ import annotations

import math

import numpy as np

from .. import errors
from ..ops import api as ag
from ..ops import nn_ops
from ..recording import creation
from ..recording.tensor import Tensor, tensor

__all__ = ["scaled_dot_product_attention"]

_NUMBERS = (int, float, np.integer, np.floating)


def scaled_dot_product_attention(query: Tensor, key: Tensor, value: Tensor,
                                 attn_mask: Tensor | None = None, dropout_p: float = 0.0,
                                 is_causal: bool = False, scale: float | None = None,
                                 enable_gqa: bool = False, *,
                                 generator: creation.Generator | None = None) -> Tensor:
    """softmax(q @ kᵀ · scale + mask) @ v over the last two dims, as PyTorch computes it.

    Shapes: query (..., L, E), key (..., S, E), value (..., S, Ev) -> (..., L, Ev); the
    batch dims ``...`` broadcast. ``scale`` defaults to 1/sqrt(E).

    * ``attn_mask``: bool (True = this query may attend to this key) or float (added to
      the scores), broadcastable to (..., L, S). ``is_causal=True`` masks the future
      instead (query i sees keys 0..i); passing both is an error, as in PyTorch.
    * A query that may attend to no key gets weights 0 (an output of 0), as in PyTorch.
    * ``dropout_p`` > 0 drops attention weights (scaling the kept ones by 1/(1 - p))
      with a mask from ``generator`` (this engine's addition; default: the engine's
      default generator, see ``manual_seed``). Like PyTorch, this is applied whenever
      dropout_p > 0: pass ``dropout_p=0.0`` in evaluation.
    * ``enable_gqa=True`` (grouped-query attention): key and value may have fewer heads
      (dim -3) than query; each of their heads serves query heads // their heads query
      heads in a row (PyTorch's repeat_interleave), shown as unsqueeze, expand, reshape.

    >>> q, k, v = ag.randn(2, 4, 8), ag.randn(2, 6, 8), ag.randn(2, 6, 3)
    >>> scaled_dot_product_attention(q, k, v).shape
    (2, 4, 3)
    >>> scaled_dot_product_attention(q, k, v, is_causal=True).shape
    (2, 4, 3)
    """
    q, k, v = (_input(t) for t in (query, key, value))
    dropout_p = _float_argument("dropout_p", dropout_p)
    if scale is not None:
        scale = _float_argument("scale", scale)
    _bool_argument("is_causal", is_causal)
    _bool_argument("enable_gqa", enable_gqa)
    if q.dtype != k.dtype or q.dtype != v.dtype:
        raise errors.sdpa_dtypes(q.dtype, k.dtype, v.dtype)
    if min(q.ndim, k.ndim, v.ndim) < 2:
        raise errors.sdpa_rank(q.ndim, k.ndim, v.ndim)
    mask = _mask_argument(attn_mask, q.dtype)
    if q.dtype.kind != "f":
        raise errors.sdpa_not_floating(q.dtype)
    if mask is not None and is_causal:
        raise errors.sdpa_mask_and_causal()
    if enable_gqa:
        k, v = grouped_key_value(q, k, v)
    scores_shape = check_shapes(q, k, v)
    if dropout_p > 1:  # (a negative dropout_p drops nothing, as in PyTorch)
        raise errors.sdpa_dropout_probability(dropout_p)
    if is_causal:
        mask = np.tril(np.ones(scores_shape[-2:], dtype=bool))
    bias = attention_bias(mask, scores_shape, q.dtype)
    out, _ = attend(q, k, v, bias, scale=scale, dropout_p=dropout_p, safe_softmax=True,
                    generator=generator)
    return out


# -- the composition ------------------------------------------------------------------------
def attend(q: Tensor, k: Tensor, v: Tensor, bias: Tensor | None, *, scale: float | None = None,
           dropout_p: float = 0.0, safe_softmax: bool = True,
           generator: creation.Generator | None = None) -> tuple[Tensor, Tensor]:
    """(weights @ v, weights) for checked inputs: the ops of the module docstring.
    ``bias`` (or None) is added to the scores; ``safe_softmax`` gives rows of -inf
    scores weights 0 (scaled_dot_product_attention) instead of nan (what
    MultiheadAttention's ``need_weights=True`` path gives, as PyTorch's does)."""
    e = q.shape[-1]
    scores = (q @ ag.transpose(k, -2, -1).named("k_T")).named("scores")
    if e:  # E = 0: every score is an empty dot product, 0; 1/sqrt(0) would make it nan
        scores = (scores * (1.0 / math.sqrt(e) if scale is None else scale)).named(
            "scaled_scores")
    if bias is not None:
        scores = (scores + bias).named("masked_scores")
    dead = None
    if safe_softmax and scores.shape[-1]:
        dead = np.all(scores._data == -np.inf, axis=-1, keepdims=True)
        if dead.any():  # a finite row for the softmax, then weights 0 in it
            scores = ag.masked_fill(scores, dead, 0.0).named("finite_scores")
        else:
            dead = None
    weights = ag.softmax(scores, -1).named("attn_weights")
    if dead is not None:
        weights = ag.masked_fill(weights, dead, 0.0).named("safe_weights")
    if dropout_p > 0:
        generator = generator if generator is not None else creation.default_generator
        weights = nn_ops.Dropout.apply(weights, p=float(dropout_p), generator=generator
                                       ).named("dropped_weights")
    return weights @ v, weights


def attention_bias(mask, scores_shape: tuple, dtype) -> Tensor | None:
    """The mask as what is added to the scores: a bool mask as a constant tensor of 0
    (attend) and -inf (do not), named ``attn_bias``; a float mask as it is, in the
    scores' dtype. The mask must broadcast to ``scores_shape`` without enlarging it."""
    if mask is None:
        return None
    shape = np.shape(mask._data if isinstance(mask, Tensor) else mask)
    try:
        grown = np.broadcast_shapes(scores_shape, shape)
    except ValueError:
        raise errors.broadcast("scaled_dot_product_attention", scores_shape, shape) from None
    if grown != tuple(scores_shape):
        raise errors.sdpa_mask_grows(scores_shape, grown)
    values = mask._data if isinstance(mask, Tensor) else np.asarray(mask)
    if values.dtype == np.bool_:
        return tensor(np.where(values, 0.0, -np.inf).astype(dtype), name="attn_bias")
    if not isinstance(mask, Tensor):
        mask = tensor(values)
    return mask if mask.dtype == dtype else ag.astype(mask, dtype)


def grouped_key_value(q: Tensor, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
    """key and value with each head (dim -3) repeated for its group of query heads."""
    for t in (q, k, v):
        if t.ndim < 3:
            raise errors.gqa_rank(t.ndim)
    heads = q.shape[-3]
    if heads == k.shape[-3] == v.shape[-3]:
        return k, v
    if heads % k.shape[-3] or heads % v.shape[-3]:
        raise errors.gqa_heads(heads, k.shape[-3], v.shape[-3])

    def repeated(t: Tensor) -> Tensor:
        group = heads // t.shape[-3]
        if group == 1:
            return t
        wide = ag.expand(ag.unsqueeze(t, -3), *t.shape[:-2], group, *t.shape[-2:])
        return ag.reshape(wide, *t.shape[:-3], heads, *t.shape[-2:])

    return repeated(k), repeated(v)


# -- checking the arguments -------------------------------------------------------------------
def _input(x) -> Tensor:
    return x if isinstance(x, Tensor) else tensor(x)


def check_shapes(q: Tensor, k: Tensor, v: Tensor) -> tuple:
    """The scores' shape (batch, L, S) after the checks PyTorch's matmuls make: E of
    query and key, S of key and value, batch dims that broadcast."""
    if q.shape[-1] != k.shape[-1]:
        raise errors.sdpa_feature_sizes(q.shape, k.shape)
    if k.shape[-2] != v.shape[-2]:
        raise errors.sdpa_sequence_sizes(k.shape, v.shape)
    batch = q.shape[:-2]
    for other in (k.shape[:-2], v.shape[:-2]):
        try:
            batch = np.broadcast_shapes(batch, other)
        except ValueError:
            raise errors.broadcast("scaled_dot_product_attention", batch, other) from None
    return tuple(batch) + (q.shape[-2], k.shape[-2])


def _mask_argument(mask, dtype):
    """attn_mask: None, a Tensor or a NumPy array of bool, float32 or the query's dtype."""
    if mask is None:
        return None
    if not isinstance(mask, Tensor | np.ndarray):
        raise errors.sdpa_argument_type("attn_mask", "Tensor", mask)
    mask_dtype = mask.dtype
    if mask_dtype not in (np.bool_, np.float32, dtype):
        raise errors.sdpa_mask_dtype(mask_dtype, dtype)
    return mask


def _float_argument(name: str, value) -> float:
    """A float argument: a Python or NumPy number (a bool too) or a 0-d tensor, as
    PyTorch takes it."""
    if isinstance(value, Tensor) and value.ndim == 0:
        return float(value.item())
    if isinstance(value, _NUMBERS):
        return float(value)
    raise errors.sdpa_argument_type(name, "float", value)


def _bool_argument(name: str, value) -> None:
    if not isinstance(value, bool | np.bool_):
        raise errors.sdpa_argument_type(name, "bool", value)
