"""Messages of attention: ``F.scaled_dot_product_attention`` (nn/attention.py) and
``nn.MultiheadAttention`` (nn/multihead_attention.py). Each starts with PyTorch's
sentence for the same mistake where PyTorch has one (``AssertionError`` where
PyTorch's MultiheadAttention asserts), with the shapes written as this engine writes
them.

Raised from: nn/attention.py, nn/blocks.py, nn/multihead_attention.py.
"""

from __future__ import annotations

import numpy as np

from ._text import error, shape_text, size_text

_SDPA = "scaled_dot_product_attention"
_TORCH_DTYPE_NAMES = {"float16": "c10::Half", "float32": "float", "float64": "double",
                      "int8": "signed char", "int16": "short int", "int32": "int",
                      "int64": "long int", "uint8": "unsigned char", "bool": "bool"}


def _dtype(dtype) -> str:
    name = np.dtype(dtype).name
    return _TORCH_DTYPE_NAMES.get(name, name)


# -- scaled_dot_product_attention --------------------------------------------------------------
def sdpa_argument_type(name: str, expected: str, value) -> TypeError:
    """dropout_p, scale, is_causal, enable_gqa or attn_mask of the wrong type."""
    example = {"float": f"{name}=0.1", "bool": f"{name}=True",
               "Tensor": f"{name}=ag.tensor(...)"}[expected]
    return error(TypeError, f"{_SDPA}(): argument '{name}' must be {expected}, not "
                 f"{type(value).__name__}.", f"pass e.g. {example}.")


def sdpa_rank(q, k, v) -> RuntimeError:
    """query, key or value with fewer than 2 dims (a 0-d or 1-d tensor has no sequence)."""
    return error(RuntimeError, "Expected query, key, and value to all be at least 2 "
                 f"dimensional, but got query.dim: {q} key.dim: {k} and value.dim: {v} instead.",
                 "the last two dims are (sequence, features): a single vector is (1, E).")


def sdpa_dtypes(q, k, v) -> RuntimeError:
    return error(RuntimeError, "Expected query, key, and value to have the same dtype, but got "
                 f"query.dtype: {_dtype(q)} key.dtype: {_dtype(k)} and value.dtype: "
                 f"{_dtype(v)} instead.", "convert them to one dtype, e.g. with .double().")


def sdpa_not_floating(dtype) -> RuntimeError:
    return error(RuntimeError, f"{_SDPA}: expected floating-point query, key and value, but "
                 f"got {np.dtype(dtype).name}.", "convert first, e.g. x.double() or x.float().")


def sdpa_mask_dtype(mask_dtype, query_dtype) -> RuntimeError:
    return error(RuntimeError, "Expected attn_mask dtype to be bool or float or to match query "
                 f"dtype, but got attn_mask.dtype: {_dtype(mask_dtype)} and query.dtype: "
                 f"{_dtype(query_dtype)} instead.",
                 "a bool mask says which keys each query may attend to (True = attend); a "
                 "float mask is added to the scores.")


def sdpa_mask_and_causal() -> RuntimeError:
    return error(RuntimeError, f"_{_SDPA}: Explicit attn_mask should not be set when "
                 "is_causal=True.", "pass one of them: is_causal=True builds the causal mask "
                 "itself.")


def sdpa_feature_sizes(q_shape, k_shape) -> RuntimeError:
    """query and key whose last dims (E) differ: q @ k^T has no inner dim."""
    return error(RuntimeError, f"{_SDPA}: query and key must have the same last dim E, but "
                 f"query is {shape_text(q_shape)} and key is {shape_text(k_shape)}.",
                 "each score is the dot product of a query row with a key row.")


def sdpa_sequence_sizes(k_shape, v_shape) -> RuntimeError:
    """key and value with different numbers of positions (S)."""
    return error(RuntimeError, f"{_SDPA}: key and value must have the same second-to-last "
                 f"dim S, but key is {shape_text(k_shape)} and value is "
                 f"{shape_text(v_shape)}.", "there is one value row per key row.")


def sdpa_mask_grows(scores_shape, broadcast_shape) -> RuntimeError:
    """A mask with more (or larger) batch dims than the scores it is added to."""
    return error(RuntimeError, f"output with shape {size_text(scores_shape)} doesn't match "
                 f"the broadcast shape {size_text(broadcast_shape)}.",
                 "the mask must broadcast to the scores' shape (..., L, S) without "
                 "enlarging it.")


def gqa_rank(ndim: int) -> IndexError:
    return error(IndexError, f"Dimension out of range (expected to be in range of [{-ndim}, "
                 f"{ndim - 1}], but got -3).", "enable_gqa needs (..., heads, sequence, "
                 "features) inputs: the heads are dim -3.")


def gqa_heads(q_heads: int, k_heads: int, v_heads: int) -> RuntimeError:
    return error(RuntimeError, "Number of heads in key and value must divide the number of "
                 f"heads in query (query {q_heads}, key {k_heads}, value {v_heads}).",
                 "each key/value head is shared by a group of query heads.")


def sdpa_dropout_probability(p) -> RuntimeError:
    return error(RuntimeError, f"dropout probability has to be between 0 and 1, but got {p}.",
                 "dropout_p is the probability of zeroing an attention weight, e.g. 0.1.")


# -- MultiheadAttention -----------------------------------------------------------------------
def mha_sizes(embed_dim, num_heads) -> ValueError:
    return error(ValueError, "embed_dim and num_heads must be greater than 0, got "
                 f"embed_dim={embed_dim} and num_heads={num_heads} instead.")


def mha_not_divisible() -> AssertionError:
    return error(AssertionError, "embed_dim must be divisible by num_heads.",
                 "each head gets embed_dim // num_heads features.")


def mha_not_implemented(option: str, why: str) -> NotImplementedError:
    return error(NotImplementedError, f"MultiheadAttention: {option} is not supported by "
                 f"this engine: {why}.")


def mha_query_rank(ndim: int) -> AssertionError:
    return error(AssertionError, "query should be unbatched 2D or batched 3D tensor but "
                 f"received {ndim}-D query tensor.")


def mha_rank(batched: bool, what: str, allowed: str, found: str) -> AssertionError:
    kind = "batched (3-D)" if batched else "unbatched (2-D)"
    return error(AssertionError, f"For {kind} `query`, expected {what} to be {allowed} but "
                 f"found {found} instead.")


def mha_embed_dim(expected: int, got: int) -> AssertionError:
    return error(AssertionError, f"was expecting embedding dimension of {expected}, but got "
                 f"{got}.")


def mha_key_value_shapes(k_shape, v_shape) -> AssertionError:
    return error(AssertionError, f"key shape {shape_text(k_shape)} does not match value shape "
                 f"{shape_text(v_shape)}.")


def mha_batch_sizes(q_shape, k_shape) -> RuntimeError:
    return error(RuntimeError, f"MultiheadAttention: query {shape_text(q_shape)} and key "
                 f"{shape_text(k_shape)} have different batch sizes.",
                 "check batch_first: the batch is dim 0 with batch_first=True, else dim 1.")


def mha_mask_dtype(name: str) -> AssertionError:
    return error(AssertionError, f"only bool and floating types of {name} are supported.")


def mha_attn_mask_shape(ndim: int, shape, expected) -> RuntimeError:
    return error(RuntimeError, f"The shape of the {ndim}D attn_mask is {shape_text(shape)}, "
                 f"but should be {shape_text(expected)}.", "(L, S) for every batch entry and "
                 "head, or (N·num_heads, L, S).")


def mha_unbatched_attn_mask_shape(shape, expected) -> AssertionError:
    return error(AssertionError, f"Expected `attn_mask` shape to be {shape_text(expected)} "
                 f"but got {shape_text(shape)}.")


def mha_key_padding_mask_shape(dim: int, expected: int, got: int) -> AssertionError:
    # (PyTorch spells it key_padded_mask in this message)
    return error(AssertionError, f"Expected key_padded_mask.shape[{dim}] to be {expected}, but "
                 f"got {got}.")


def mha_causal_needs_mask() -> RuntimeError:
    return error(RuntimeError, "Need attn_mask if specifying the is_causal hint. You may use "
                 "the Transformer module method `generate_square_subsequent_mask` to create "
                 "this mask.", "for MultiheadAttention is_causal is only a hint that attn_mask "
                 "is causal; pass the mask too.")


# -- the teaching blocks ----------------------------------------------------------------------
def sequence_input_rank(module: str, shape) -> RuntimeError:
    """SelfAttention (and so TransformerBlock) given something other than (batch, T, d)."""
    return error(RuntimeError, f"Expected 3D (batch, T, d_model) input to {module}, but got "
                 f"input of size: {size_text(shape)}.", "one sequence is (1, T, d_model): add "
                 "the batch axis with x.unsqueeze(0).")
