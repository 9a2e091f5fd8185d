"""Messages of operands that do not fit together (ops/elementwise.py, ops/matmul.py and
their wrappers in ops/api.py): broadcasting, where, matmul, clip.

Raised from: nn/attention.py, ops/_util.py, ops/api.py, ops/elementwise.py, ops/matmul.py,
ops/shape.py, recording/node.py.
"""

from __future__ import annotations

from ._text import error, shape_text


def broadcast(op: str, a, b) -> RuntimeError:
    """Two shapes that broadcasting cannot line up; names the first clashing dimension."""
    detail = ""
    for offset in range(1, min(len(a), len(b)) + 1):
        sa, sb = a[-offset], b[-offset]
        if sa != sb and sa != 1 and sb != 1:
            dim = max(len(a), len(b)) - offset
            detail = (f"The size of tensor a ({sa}) must match the size of tensor b ({sb}) at "
                      f"non-singleton dimension {dim}.")
            break
    return error(RuntimeError, f"{op}: shapes {shape_text(a)} and {shape_text(b)} cannot be "
                 f"broadcast together. {detail}", "sizes are compared from the right; each "
                 "pair must be equal or one of them 1.")


def where_condition(condition, values) -> RuntimeError:
    """where(): the condition's shape does not broadcast against the values'."""
    return error(RuntimeError, f"where: the condition of shape {shape_text(condition)} cannot "
                 f"be broadcast against the values of shape {shape_text(values)}.",
                 "the condition needs the values' shape, or a shape that broadcasts to it "
                 "(sizes compared from the right, each equal or 1).")


def matmul_shapes(a, b) -> RuntimeError:
    """matmul: the batch sizes do not broadcast (checked first, as PyTorch does: its
    message names them), or else the inner sizes differ."""
    batch_a, batch_b = tuple(a[:-2]), tuple(b[:-2])
    for offset in range(1, min(len(batch_a), len(batch_b)) + 1):
        sa, sb = batch_a[-offset], batch_b[-offset]
        if sa != sb and sa != 1 and sb != 1:
            dim = max(len(batch_a), len(batch_b)) - offset
            return error(RuntimeError, f"matmul: shapes {shape_text(a)} and {shape_text(b)} "
                         f"cannot be multiplied: the batch dimensions do not broadcast. The "
                         f"size of tensor a ({sa}) must match the size of tensor b ({sb}) at "
                         f"non-singleton dimension {dim}.", "all but the last two sizes are "
                         "batch sizes, compared from the right; each pair must be equal or "
                         "one of them 1.")
    inner_b = b[-2] if len(b) > 1 else b[0]
    return error(RuntimeError, f"matmul: shapes {shape_text(a)} and {shape_text(b)} cannot be "
                 f"multiplied (inner sizes {a[-1]} and {inner_b} differ).",
                 "the last size of the left operand must equal the second-to-last size of "
                 "the right one; a transpose (.T) is often what is missing.")


def matmul_scalar(a, b) -> RuntimeError:
    """matmul with a 0-d operand."""
    return error(RuntimeError, f"matmul: both arguments must be at least 1-D, got shapes {a} "
                 f"and {b}.", "use * for scalars.")


def clip_bounds() -> RuntimeError:
    """clip/clamp with neither bound (PyTorch's wording and kind)."""
    return error(RuntimeError, "clip: At least one of 'min' or 'max' must not be None.",
                 "give min=, max= or both.")


def tensor_sequence_operand(op: str, value) -> TypeError:
    """A tuple or list holding tensors used as an op's operand (``x.max(dim=1) * w``):
    NumPy would turn it into a constant array and the gradient would be lost; PyTorch
    raises a TypeError."""
    kind = type(value).__name__
    pair = " such as the (values, indices) pair that max(dim=...) and min(dim=...) return" \
        if len(value) == 2 else ""
    return error(TypeError, f"{op}: an operand is a {kind} that holds tensors{pair}; an op "
                 "takes one tensor per operand, and a sequence of tensors would become a "
                 "constant with no gradient.", "take the tensor you mean from it, e.g. "
                 "x.max(dim=1).values (or [0]); to join tensors, use stack or cat.")
