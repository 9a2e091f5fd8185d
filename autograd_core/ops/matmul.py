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
    rule = "da = g @ b.T\ndb = a.T @ g"

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
    def backward(ctx, g):
        a_shape, b_shape = ctx.input_shapes
        # Promote 1-D operands to matrices so that one pair of formulas covers all cases
        # (b's axis first: for vector @ vector, g is 0-D and gets both axes back).
        g2, xp = g, ctx.xp
        if len(b_shape) == 1:
            g2 = g2.reshape(g2.shape + (1,))
        if len(a_shape) == 1:
            g2 = g2.reshape(g2.shape[:-1] + (1,) + g2.shape[-1:])
        da = db = None
        if ctx.needs_input_grad[0]:
            b = ctx.load("b")
            b2 = b.reshape(-1, 1) if b.ndim == 1 else b
            da = g2 @ xp.swapaxes(b2, -1, -2)
            if len(a_shape) == 1:  # the row put back: (..., 1, k) -> (..., k)
                da = da.reshape(da.shape[:-2] + da.shape[-1:])
        if ctx.needs_input_grad[1]:
            a = ctx.load("a")
            a2 = a.reshape(1, -1) if a.ndim == 1 else a
            db = xp.swapaxes(a2, -1, -2) @ g2
            if len(b_shape) == 1:  # the column put back: (..., k, 1) -> (..., k)
                db = db.reshape(db.shape[:-1])
        return da, db

    @staticmethod
    def jvp(ctx, ta, tb):
        """dout = ta @ b + a @ tb"""
        return tangent_sum(None if ta is None else np.matmul(ta, ctx.load("b")),
                           None if tb is None else np.matmul(ctx.load("a"), tb))
