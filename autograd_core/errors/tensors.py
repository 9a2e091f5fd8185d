"""Messages of making a Tensor and of using one (recording/tensor.py, recording/creation.py):
data it cannot hold, requires_grad, in-place changes, and the Python protocols (bool, len,
item, index).

Raised from: ops/_util.py, ops/api.py, recording/default_dtype.py, recording/tensor.py.
"""

from __future__ import annotations

import math

from ._text import error, shape_text


def ragged(detail: str) -> ValueError:
    """tensor() of nested lists whose rows differ in length."""
    return error(ValueError, f"cannot make a tensor from ragged nested sequences: {detail}.",
                 "every row must have the same length.")


def unsupported_data(kind: str) -> TypeError:
    """tensor() of something that is not numbers."""
    return TypeError(f"cannot make a tensor from data of type {kind}; expected numbers (int, "
                     "float, bool), nested lists of numbers or a numeric NumPy array.")


def not_a_tensor(op: str, value) -> TypeError:
    """An op's operand is neither a Tensor, an array nor a number."""
    return TypeError(f"{op}: expected a Tensor, a NumPy array or a Python number, got "
                     f"{type(value).__name__}.")


def default_dtype(dtype) -> TypeError:
    """set_default_dtype() of something that is not a floating dtype (PyTorch's words)."""
    return error(TypeError, "only floating-point types are supported as the default type "
                 f"(got {getattr(dtype, '__name__', dtype)!s}).",
                 "pass float32, float64 or float16.")


def non_float_grad(dtype) -> RuntimeError:
    """requires_grad=True on integer or boolean data."""
    return error(RuntimeError, "only Tensors of floating point dtype can require gradients "
                 f"(got {dtype}).", "create the data as floats, e.g. tensor([1.0, 2.0]) or "
                 "dtype=float64.")


def non_leaf_requires_grad() -> RuntimeError:
    """requires_grad=False on a computed tensor (PyTorch's wording, no hint)."""
    return RuntimeError(
        "you can only change requires_grad flags of leaf variables. If you want to use a "
        "computed variable in a subgraph that doesn't require differentiation use "
        "var_no_grad = var.detach().")


def hook_needs_grad() -> RuntimeError:
    """register_hook on a tensor that will never receive a gradient."""
    return error(RuntimeError, "cannot register a hook on a tensor that doesn't require "
                 "gradient.", "set requires_grad=True first.")


def inplace_leaf() -> RuntimeError:
    """An in-place op on a leaf that requires grad, outside no_grad()."""
    return error(RuntimeError, "a leaf Variable that requires grad is being used in an "
                 "in-place operation.", "wrap the update in no_grad(), as optimizers do.")


def inplace_view() -> RuntimeError:
    """An in-place op, outside no_grad(), on a view of a leaf that requires grad (even a view
    taken before requires_grad was set)."""
    return error(RuntimeError, "a view of a leaf Variable that requires grad is being used in "
                 "an in-place operation.", "change the leaf itself under no_grad(), or take "
                 "the view of x.detach() if the change must not reach the gradient.")


def inplace_recorded() -> RuntimeError:
    """An in-place op on a tensor computed inside a recorded graph."""
    return error(RuntimeError, "in-place operations on a tensor that is part of a recorded "
                 "graph are not supported by this engine.", "use an out-of-place op (e.g. "
                 "where(mask, a, b)), or .detach() the tensor.")


def ambiguous_bool(shape) -> RuntimeError:
    """bool() (an ``if``) of a tensor that does not hold exactly one value."""
    how_many = "no values" if 0 in shape else "more than one value"
    return error(RuntimeError, f"Boolean value of Tensor with {how_many} is ambiguous (shape "
                 f"{shape_text(shape)}).", "use .any() or .all(), or compare a single element.")


def item_of_many(shape) -> RuntimeError:
    """item() or float() of a tensor with more than one element."""
    return error(RuntimeError, f"a Tensor with {math.prod(shape)} elements cannot be "
                 f"converted to a Python scalar (its shape is {shape_text(shape)}).",
                 ".item() needs a tensor with exactly one element.")


def len_of_scalar() -> TypeError:
    """len() of a 0-d tensor (PyTorch's wording)."""
    return TypeError("len() of a 0-d tensor")


def not_an_index() -> TypeError:
    """A float or many-element tensor used as a Python index (PyTorch's wording)."""
    return TypeError("only integer tensors of a single element can be used as an index")
