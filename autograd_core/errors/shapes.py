"""Messages of dims and of the ops that reshape or join tensors (ops/_util.py,
ops/shape.py, ops/joining.py, ops/indexing.py and their wrappers in ops/api.py).

Raised from: ops/_util.py, ops/api.py, ops/shape.py.
"""

from __future__ import annotations

from ._text import error


def dim_out_of_range(dim: int, ndim: int) -> IndexError:
    """A ``dim`` that names no axis of the input."""
    low, high = (-ndim, ndim - 1) if ndim > 0 else (-1, 0)
    return error(IndexError, f"Dimension out of range (expected to be in range of [{low}, "
                 f"{high}], but got {dim}).", f"this tensor has {ndim} dimension(s).")


def new_dim_out_of_range(dim: int, ndim: int) -> IndexError:
    """For ops that insert an axis (unsqueeze, stack): ``dim`` names a position among
    the ``ndim + 1`` axes of the result, not an axis of the input."""
    return error(IndexError, f"Dimension out of range (expected to be in range of "
                 f"[{-ndim - 1}, {ndim}], but got {dim}).", f"the input has {ndim} "
                 f"dimension(s) and the new axis can go at any of the {ndim + 1} positions "
                 "of the result.")


def repeated_dim(dim: int | tuple) -> RuntimeError:
    """A reduction over a list of dims that names one twice, ``dim`` (as a non-negative
    dim, PyTorch's wording: ``(0, -2)`` of a 2-d input repeats dim 0)."""
    return RuntimeError(f"dim {dim} appears multiple times in the list of dims")


def no_dims(op: str) -> RuntimeError:
    """logsumexp over ``dim=()``: PyTorch refuses it (where sum and amax read it as every
    dim)."""
    return error(RuntimeError, f"{op}(): dim=() names no dim to reduce over.",
                 "pass the dims to reduce, e.g. dim=(0, 1); to reduce over every dim, name "
                 "them all.")


def empty_reduction(op: str, dim) -> RuntimeError:
    """max/min over no values (PyTorch's wording): they have no identity."""
    if dim is None:
        message = (f"{op}(): Expected reduction dim to be specified for input.numel() == 0. "
                   "Specify the reduction dim with the 'dim' argument.")
    else:
        message = f"{op}(): Expected reduction dim {dim} to have non-zero size."
    return error(IndexError if dim is not None else RuntimeError, message,
                 f"{op} of no values is undefined; reduce over a dim that has values.")


def bad_reshape(shape, size: int) -> RuntimeError:
    """reshape/view to sizes whose product is not the number of elements."""
    return error(RuntimeError, f"shape {list(shape)!r} is invalid for input of size {size}.",
                 "the product of the new sizes must equal the number of elements; use -1 "
                 "for one size to have it inferred.")


def not_a_permutation(dims, ndim: int) -> RuntimeError:
    """permute() with dims that do not name each axis exactly once."""
    return error(RuntimeError, f"permute: dims {dims} are not a permutation of the {ndim} "
                 "dimensions of the input.", "name every dimension exactly once.")


def empty_sequence(op: str) -> ValueError:
    """cat/stack of no tensors at all."""
    return ValueError(f"{op}: expected a non-empty sequence of tensors.")


def cat_shapes(shapes: list, dim: int, reason) -> RuntimeError:
    """cat() of tensors whose sizes differ outside the joined dim."""
    return error(RuntimeError, f"cat: shapes {shapes} do not match outside dim {dim} "
                 f"({reason}).", "every size except the one along dim must agree.")


def stack_shapes(shapes: list) -> RuntimeError:
    """stack() of tensors of different shapes (PyTorch's wording)."""
    return RuntimeError(f"stack expects each tensor to be equal size, but got {shapes}.")


def split_size(step: int) -> ValueError:
    """split() into pieces of a size that is not positive."""
    return ValueError(f"split: split_size must be positive, got {step}.")


def split_sections(sizes: list, dim: int, total: int) -> RuntimeError:
    """split() into sections that do not add up to the size of the dim."""
    return RuntimeError(f"split: sizes {sizes} must sum to the size of dim {dim} ({total}).")
