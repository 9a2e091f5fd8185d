"""Every error message the engine can raise, in one place.

Messages follow PyTorch's wording where PyTorch has the same error (so a search
for the message finds useful answers), name the op and the shapes involved, and
end with one line that says how to fix it.
"""

from __future__ import annotations


class GradcheckError(AssertionError):
    """Raised by ``gradcheck`` when analytic and numeric gradients disagree."""


def _shape(shape) -> str:
    return "(" + ", ".join(str(s) for s in shape) + ("," if len(shape) == 1 else "") + ")"


def second_backward(op: str) -> RuntimeError:
    return RuntimeError(
        "Trying to backward through the graph a second time (or directly access saved "
        "tensors after they have already been freed). Saved intermediate values of the "
        f"graph are freed when you call .backward(); {op} needs one of them.\n"
        "Hint: specify retain_graph=True on the first .backward() if you need to "
        "backward through the graph a second time."
    )


def no_grad_fn() -> RuntimeError:
    return RuntimeError(
        "element 0 of tensors does not require grad and does not have a grad_fn.\n"
        "Hint: create the inputs with requires_grad=True, and do not compute the output "
        "inside no_grad() if you want to call .backward() on it."
    )


def implicit_grad(shape) -> RuntimeError:
    return RuntimeError(
        f"grad can be implicitly created only for scalar outputs; this output has shape "
        f"{_shape(shape)}.\n"
        "Hint: reduce it to a scalar first (e.g. .sum()), or pass gradient= with the "
        "output's shape."
    )


def gradient_shape(given, expected) -> RuntimeError:
    return RuntimeError(
        f"Mismatch in shape: gradient has a shape of {_shape(given)} and output has a "
        f"shape of {_shape(expected)}.\n"
        "Hint: gradient= must have exactly the shape of the tensor you call .backward() on."
    )


def matmul_shapes(a, b) -> RuntimeError:
    return RuntimeError(
        f"matmul: shapes {_shape(a)} and {_shape(b)} cannot be multiplied "
        f"(inner sizes {a[-1]} and {b[-2] if len(b) > 1 else b[0]} differ).\n"
        "Hint: the last size of the left operand must equal the second-to-last size of "
        "the right one; a transpose (.T) is often what is missing."
    )


def broadcast(op: str, a, b) -> RuntimeError:
    detail = ""
    for offset in range(1, min(len(a), len(b)) + 1):
        sa, sb = a[-offset], b[-offset]
        if sa != sb and sa != 1 and sb != 1:
            dim = max(len(a), len(b)) - offset
            detail = (
                f"The size of tensor a ({sa}) must match the size of tensor b ({sb}) at "
                f"non-singleton dimension {dim}"
            )
            break
    return RuntimeError(
        f"{op}: shapes {_shape(a)} and {_shape(b)} cannot be broadcast together. {detail}\n"
        "Hint: sizes are compared from the right; each pair must be equal or one of them 1."
    )


def modified_inplace(name: str, op: str, shape, dtype, version: int, expected: int):
    return RuntimeError(
        "one of the variables needed for gradient computation has been modified by an "
        f"inplace operation: the tensor {name!r} of shape {_shape(shape)} and dtype {dtype} "
        f"saved by {op} is at version {version}; expected version {expected} instead.\n"
        "Hint: do not modify a tensor in place between the forward pass and backward; "
        "use an out-of-place op or .clone() it first."
    )


def inplace_leaf() -> RuntimeError:
    return RuntimeError(
        "a leaf Variable that requires grad is being used in an in-place operation.\n"
        "Hint: wrap the update in no_grad(), as optimizers do."
    )


def inplace_recorded() -> RuntimeError:
    return RuntimeError(
        "in-place operations on a tensor that is part of a recorded graph are not "
        "supported by this engine.\n"
        "Hint: use an out-of-place op (e.g. where(mask, a, b)), or .detach() the tensor."
    )


def non_float_grad(dtype) -> RuntimeError:
    return RuntimeError(
        f"only Tensors of floating point dtype can require gradients (got {dtype}).\n"
        "Hint: create the data as floats, e.g. tensor([1.0, 2.0]) or dtype=float64."
    )


def non_leaf_requires_grad() -> RuntimeError:
    return RuntimeError(
        "you can only change requires_grad flags of leaf variables. If you want to use a "
        "computed variable in a subgraph that doesn't require differentiation use "
        "var_no_grad = var.detach()."
    )


def bad_reshape(shape, size: int) -> RuntimeError:
    return RuntimeError(
        f"shape {list(shape)!r} is invalid for input of size {size}.\n"
        "Hint: the product of the new sizes must equal the number of elements; use -1 "
        "for one size to have it inferred."
    )


def dim_out_of_range(dim: int, ndim: int) -> IndexError:
    low, high = (-ndim, ndim - 1) if ndim > 0 else (-1, 0)
    return IndexError(
        f"Dimension out of range (expected to be in range of [{low}, {high}], but got {dim}).\n"
        f"Hint: this tensor has {ndim} dimension(s)."
    )


def ambiguous_bool(shape) -> RuntimeError:
    return RuntimeError(
        f"Boolean value of Tensor with more than one value is ambiguous (shape "
        f"{_shape(shape)}).\nHint: use .any() or .all(), or compare a single element."
    )


def ragged(detail: str) -> ValueError:
    return ValueError(
        f"cannot make a tensor from ragged nested sequences: {detail}.\n"
        "Hint: every row must have the same length."
    )


def unsupported_data(kind: str) -> TypeError:
    return TypeError(
        f"cannot make a tensor from data of type {kind}; expected numbers (int, float, bool), "
        "nested lists of numbers or a numeric NumPy array."
    )


def not_a_tensor(op: str, value) -> TypeError:
    return TypeError(
        f"{op}: expected a Tensor, a NumPy array or a Python number, got "
        f"{type(value).__name__}."
    )


def item_of_many(shape) -> RuntimeError:
    return RuntimeError(
        f"a Tensor with {_shape(shape)} elements cannot be converted to a Python scalar.\n"
        "Hint: .item() needs a tensor with exactly one element."
    )


def missing_backward(op: str) -> NotImplementedError:
    return NotImplementedError(f"the op {op!r} defines no backward rule, so it cannot be "
                               "differentiated.")
