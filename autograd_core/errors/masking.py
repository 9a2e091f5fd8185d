"""Messages of masking, triangles, running sums, flips, padding, gather and scatter_add
(ops/masking.py, ops/scatter.py and their wrappers in ops/api.py and
nn/functional.py). Each starts with PyTorch's sentence for the same mistake.

Raised from: ops/_util.py, ops/api.py, ops/masking.py, ops/scatter.py, tensor_methods.py.
"""

from __future__ import annotations

import numpy as np

from ._text import error, shape_text, size_text

# How PyTorch's messages name a dtype (its C++ type names).
_TORCH_DTYPE_NAMES = {
    "float16": "c10::Half", "float32": "float", "float64": "double", "int8": "signed char",
    "int16": "short int", "int32": "int", "int64": "long int", "uint8": "unsigned char",
    "uint16": "short unsigned int", "uint32": "unsigned int", "uint64": "long unsigned int",
}


def _type_name(value) -> str:
    return type(value).__name__


# -- arguments of the wrong type ------------------------------------------------------------
def int_argument(op: str, name: str, position: int, value) -> TypeError:
    """An argument that must be an int (a dim, a diagonal) given as something else."""
    return error(TypeError, f"{op}(): argument '{name}' (position {position}) must be int, "
                 f"not {_type_name(value)}.", f"pass a whole number, e.g. {name}=1.")


def int_tuple_argument(op: str, name: str, position: int, value) -> TypeError:
    """An argument that must be a tuple of ints (flip's dims, pad's pad)."""
    if isinstance(value, tuple | list):
        bad = next(i for i, v in enumerate(value) if not _is_int(v))
        message = (f"{op}(): argument '{name}' (position {position}) must be tuple of ints, "
                   f"but found element of type {_type_name(value[bad])} at pos {bad}.")
    else:
        message = (f"{op}(): argument '{name}' (position {position}) must be tuple of ints, "
                   f"not {_type_name(value)}.")
    return error(TypeError, message, f"write the ints as a tuple, e.g. {name}=(0, 1).")


def _is_int(v) -> bool:
    return isinstance(v, int | np.integer) and not isinstance(v, bool | np.bool_)


def not_a_tensor_argument(op: str, name: str, value) -> TypeError:
    """An index, mask or src given as something that is not a tensor (or NumPy array)."""
    return error(TypeError, f"{op}(): argument '{name}' must be Tensor, not "
                 f"{_type_name(value)}.", f"wrap it first: ag.tensor({name}).")


# -- masked_fill ------------------------------------------------------------------------------
def mask_dtype(dtype) -> RuntimeError:
    """masked_fill with a mask that is not boolean (PyTorch's wording and kind)."""
    name = _TORCH_DTYPE_NAMES.get(np.dtype(dtype).name, np.dtype(dtype).name)
    return error(RuntimeError, "masked_fill_ only supports boolean masks, but got mask with "
                 f"dtype {name}.", "compare to get a boolean mask, e.g. "
                 "x.masked_fill(mask == 0, value).")


def fill_value_type(op: str, value) -> TypeError:
    """masked_fill/pad with a fill value that is not a number."""
    return error(TypeError, f"{op}(): value must be a number or a 0-dimensional tensor, but "
                 f"got {_type_name(value)}.", "use a Python float, e.g. float('-inf').")


def fill_value_dims(ndim: int) -> RuntimeError:
    """masked_fill with a value tensor that is not 0-d (PyTorch's wording)."""
    return error(RuntimeError, "masked_fill_ only supports a 0-dimensional value tensor, but "
                 f"got tensor with {ndim} dimension(s).", "to fill from a tensor of values, "
                 "use ag.where(mask, values, x).")


def fill_value_overflow(value, dtype) -> RuntimeError:
    """A fill value the input's dtype cannot hold (PyTorch's wording)."""
    return error(RuntimeError, f"value cannot be converted to type {np.dtype(dtype).name} "
                 f"without overflow (got {value!r}).", "the output keeps the input's dtype: "
                 "convert the input first (x.astype(...)) or pick a value it can hold.")


# -- tril, triu, flip -------------------------------------------------------------------------
def triangle_rank(op: str, shape) -> RuntimeError:
    """tril/triu of a tensor with fewer than 2 dims (PyTorch's wording)."""
    return error(RuntimeError, f"{op}: input tensor must have at least 2 dimensions (got "
                 f"shape {shape_text(shape)}).", "the triangle is taken over the last two "
                 "dims; a tensor with fewer dims has no diagonal.")


def flip_no_dims() -> TypeError:
    """Tensor.flip() without the dims to reverse."""
    return error(TypeError, "flip() missing 1 required positional arguments: \"dims\".",
                 "say which dims to reverse: x.flip(0), x.flip(0, 1) or x.flip(dims=(0, 1)).")


def repeated_flip_dim(dim: int) -> RuntimeError:
    """flip over dims that name one axis twice (PyTorch's wording)."""
    return error(RuntimeError, f"dim {dim} appears multiple times in the list of dims.",
                 "name each axis once (-1 and ndim - 1 are the same axis).")


# -- pad ---------------------------------------------------------------------------------------
def pad_mode(mode) -> NotImplementedError:
    """F.pad with a mode other than 'constant'."""
    known = mode in ("reflect", "replicate", "circular")
    first = (f"pad: mode '{mode}' is not supported" if known
             else f"Unrecognised padding mode {mode}")
    return error(NotImplementedError, f"{first}: only mode='constant' is supported here.",
                 "pad with a constant (mode='constant', value=...).")


def pad_odd_length(pad) -> RuntimeError:
    """F.pad with an odd number of pads (PyTorch's wording)."""
    return error(RuntimeError, f"Padding length must be divisible by 2 (got pad={tuple(pad)}).",
                 "give pads in pairs, last dim first: (left, right, top, bottom, ...).")


def pad_too_long(length: int, ndim: int) -> RuntimeError:
    """F.pad with more pairs than the input has dims (PyTorch's wording)."""
    return error(RuntimeError, "Padding length should be less than or equal to two times the "
                 f"input dimension but got padding length {length} and input of dimension "
                 f"{ndim}.", "one (before, after) pair per dim, counted from the last dim.")


def pad_crops_too_much(dim: int, size: int, before: int, after: int) -> RuntimeError:
    """F.pad with negative pads that crop more than the dim holds (PyTorch's kind; its
    message comes from narrow())."""
    return error(RuntimeError, f"narrow(): length must be non-negative: the pads ({before}, "
                 f"{after}) of dim {dim} crop more than its {size} element(s).",
                 "a negative pad removes that many elements; together they must not "
                 "exceed the size of the dim.")


# -- gather, scatter_add ----------------------------------------------------------------------
def index_dtype(op: str, dtype) -> RuntimeError:
    """gather/scatter_add with an index that is not int32/int64 (PyTorch's wording)."""
    return error(RuntimeError, f"{op}(): Expected dtype int32/int64 for index (got "
                 f"{np.dtype(dtype).name}).", "convert the index: index.astype('int64').")


def src_dtype(dtype, src) -> RuntimeError:
    """scatter_add with src of another dtype than the input (PyTorch's wording)."""
    return error(RuntimeError, "scatter_add(): Expected self.dtype to be equal to src.dtype "
                 f"(got {np.dtype(dtype).name} and {np.dtype(src).name}).",
                 "convert one of them, e.g. src.astype(input.dtype).")


def index_rank(op: str, other: str, index_shape, other_shape) -> RuntimeError:
    """gather/scatter_add with an index of another number of dims (PyTorch's wording)."""
    return error(RuntimeError, f"Index tensor must have the same number of dimensions as "
                 f"{other} tensor ({op}: index {shape_text(index_shape)}, {other} "
                 f"{shape_text(other_shape)}).", "index has one entry per output element: "
                 "give it as many dims as the input (unsqueeze a missing one).")


def gather_index_size(mismatch: int, index_shape, shape, dim: int) -> RuntimeError:
    """gather with an index larger than the input outside ``dim`` (PyTorch's wording)."""
    return error(RuntimeError, f"Size does not match at dimension {mismatch} expected index "
                 f"{size_text(index_shape)} to be no larger than self {size_text(shape)} "
                 f"apart from dimension {dim}.", "out[i][j] reads input[i][index[i][j]] "
                 "(dim 1): outside dim, index cannot reach past the input.")


def scatter_index_size(index_shape, shape, src_shape, dim: int) -> RuntimeError:
    """scatter_add with an index larger than the input (outside ``dim``) or than src."""
    return error(RuntimeError, f"Expected index {size_text(index_shape)} to be no larger than "
                 f"self {size_text(shape)} apart from dimension {dim} and to be no larger "
                 f"size than src {size_text(src_shape)}.", "each index entry adds the src "
                 "entry at the same position: index cannot be larger than src, nor than the "
                 "input outside dim.")


def index_out_of_bounds(value: int, dim: int, size: int) -> RuntimeError:
    """gather/scatter_add with an index value outside [0, size) (PyTorch's wording)."""
    hint = (f"index values along dim must be in 0 .. {size - 1}; negative values do not "
            "count from the end here." if size else "that dim is empty: no index fits.")
    return error(RuntimeError, f"index {value} is out of bounds for dimension {dim} with size "
                 f"{size}.", hint)
