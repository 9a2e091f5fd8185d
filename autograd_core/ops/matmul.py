"""Matrix product ``a @ b`` for 1-D, 2-D and batched (broadcast) operands.

For C = A B the rules are dA = G Bᵀ and dB = Aᵀ G: each is the only product of G
with the other operand that has the right shape. A 1-D operand is treated as a
row (left) or column (right) vector, as NumPy does, and batch axes that were
broadcast are summed back by the engine.
"""

from __future__ import annotations

import numpy as np

from .. import errors
from ..recording.node import Function
from ._util import tangent_sum


class MatMul(Function):
    """f(a, b) = a @ b"""

    name = "matmul"
    rule = ("B = b if b.ndim > 1 else b.reshape(-1, 1)  (a 1-D b is read as a column)\n"
            "dA = g @ mT(B)  (mT: each matrix transposed, its last two axes swapped)\n"
            "da = dA if a.ndim > 1 else dA[..., 0, :]  (a 1-D a's row, back to 1-D)\n"
            "A = a if a.ndim > 1 else a.reshape(1, -1)  (a 1-D a is read as a row)\n"
            "dB = mT(A) @ g\n"
            "db = dB if b.ndim > 1 else dB[..., 0]  (a 1-D b's column, back to 1-D)")

    @staticmethod
    def forward(ctx, a, b):
        if np.ndim(a) == 0 or np.ndim(b) == 0:
            raise errors.matmul_scalar(np.shape(a), np.shape(b))
        if ctx.needs_input_grad[0]:
            ctx.save(b=b)
        if ctx.needs_input_grad[1]:
            ctx.save(a=a)
        try:
            return np.matmul(a, b)
        except ValueError:
            raise errors.matmul_shapes(np.shape(a), np.shape(b)) from None

    @staticmethod
    def rule_gradient(ctx, g):
        """g as the product of A and B: with the axis a 1-D operand lost put back (b's
        first: for vector @ vector, g is 0-D and gets both)."""
        a_shape, b_shape = ctx.input_shapes
        if len(b_shape) == 1:
            g = g.reshape(g.shape + (1,))
        if len(a_shape) == 1:
            g = g.reshape(g.shape[:-1] + (1,) + g.shape[-1:])
        return g

    @staticmethod
    def jvp(ctx, ta, tb):
        """dout = ta @ b + a @ tb"""
        return tangent_sum(None if ta is None else np.matmul(ta, ctx.load("b")),
                           None if tb is None else np.matmul(ctx.load("a"), tb))
