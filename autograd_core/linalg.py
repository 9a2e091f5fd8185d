"""Linear algebra with PyTorch's names (``torch.linalg``): det, inv, solve and slogdet of
a square matrix or a batch of them, each with its gradient, forward mode and higher
order. The rules are in ``ops/linalg.py``; ``trace`` is with the other ops
(``autograd_core.trace``).

>>> import autograd_core as ag
>>> A = ag.tensor([[2.0, 1.0], [1.0, 3.0]], requires_grad=True)
>>> ag.linalg.det(A).backward()
>>> A.grad                      # det(A) A⁻ᵀ: for a 2 by 2 matrix, [[d, -c], [-b, a]]
tensor([[ 3., -1.],
        [-1.,  2.]])
"""

from __future__ import annotations

from collections import namedtuple

import numpy as np

from . import errors
from .ops import api as _api
from .ops import linalg as _ops
from .recording.tensor import Tensor

__all__ = ["det", "inv", "solve", "slogdet"]

SlogdetResult = namedtuple("SlogdetResult", ["sign", "logabsdet"])
SlogdetResult.__doc__ = ("slogdet's two values: the sign of det(A) (-1, 0 or 1; no "
                         "gradient) and log|det(A)|.")
_FLOATS = (np.float32, np.float64)


def _matrices(op: str, A) -> Tensor:
    """``A`` as a Tensor of square matrices in float32 or float64, or the sentence that
    says what it is instead."""
    a = _api.tensor_operand(f"linalg.{op}", A)
    if a.ndim < 2:
        raise errors.linalg_too_few_dims(op, a.shape)
    if a.shape[-1] != a.shape[-2]:
        raise errors.linalg_not_square(op, a.shape)
    if a.dtype not in _FLOATS:
        raise errors.linalg_dtype(op, a.dtype)
    return a


def det(A) -> Tensor:
    """The determinant of each square matrix of ``A`` (n, n) or (..., n, n). Its gradient
    is det(A) A⁻ᵀ (Jacobi's formula); at a singular A, where A⁻¹ does not exist, the
    gradient is refused with a sentence."""
    return _ops.Det.apply(_matrices("det", A))


def inv(A) -> Tensor:
    """A⁻¹ for each square matrix of ``A``; a singular matrix is refused with a sentence.
    Its gradient is -A⁻ᵀ g A⁻ᵀ."""
    return _ops.Inv.apply(_matrices("inv", A))


def slogdet(A) -> SlogdetResult:
    """(sign, logabsdet) of each square matrix of ``A``: det(A) = sign · exp(logabsdet),
    without the overflow of det itself for a large matrix. Only logabsdet has a
    gradient, A⁻ᵀ; a singular A (sign 0, logabsdet -inf) has none."""
    a = _matrices("slogdet", A)
    with np.errstate(invalid="ignore"):
        sign = np.asarray(np.linalg.slogdet(a.detach().numpy()).sign)
    return SlogdetResult(Tensor._wrap(sign), _ops.LogAbsDet.apply(a))


def solve(A, B) -> Tensor:
    """X with A X = B, for each square matrix of ``A`` (n, n) or (..., n, n). ``B`` is a
    vector (n,) (or a batch of vectors, (..., n), when it has one dim fewer than ``A``),
    or matrices (..., n, k) whose k columns are right-hand sides; batch sizes broadcast.
    Gradients: dB = A⁻ᵀ g (one more solve) and dA = -dB Xᵀ."""
    a = _matrices("solve", A)
    b = _api.tensor_operand("linalg.solve", B)
    if b.dtype != a.dtype:
        raise errors.linalg_dtypes_differ("solve", a.dtype, b.dtype)
    vector = b.ndim == 1 or (b.ndim == a.ndim - 1 and b.shape == a.shape[:-1])
    matrices = b.unsqueeze(-1) if vector else b
    if matrices.ndim < 2 or matrices.shape[-2] != a.shape[-1]:
        raise errors.solve_shapes(a.shape, b.shape)
    try:
        np.broadcast_shapes(a.shape[:-2], matrices.shape[:-2])
    except ValueError:
        raise errors.solve_shapes(a.shape, b.shape) from None
    x = _ops.Solve.apply(a, matrices)
    return x.squeeze(-1) if vector else x
