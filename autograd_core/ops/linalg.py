"""Linear algebra on square matrices: det, inv, solve, the log of |det| (slogdet's
logabsdet) and trace.

Each works on one matrix (n, n) or a batch (..., n, n), as ``torch.linalg`` does; trace,
like ``torch.trace``, takes one matrix (any m by n). The rules come from one identity,
the derivative of the inverse: from A A⁻¹ = I, d(A⁻¹) = -A⁻¹ dA A⁻¹. Then, for the
upstream gradient g (A⁻ᵀ is the inverse, transposed):

* inv:       dA = -A⁻ᵀ g A⁻ᵀ
* solve:     X = A⁻¹ B, so dB = A⁻ᵀ g (one more solve, with Aᵀ) and dA = -dB Xᵀ
* det:       d det(A) = det(A) tr(A⁻¹ dA) (Jacobi's formula), so dA = g det(A) A⁻ᵀ
* logabsdet: d log|det(A)| = tr(A⁻¹ dA), so dA = g A⁻ᵀ
* trace:     the sum of the diagonal, so dA = g I (g on the diagonal, 0 elsewhere)

Forward mode reads the same identities the other way round (the tangent of det(A) along
tA is det(A) tr(A⁻¹ tA)). At a singular A there is no A⁻¹: inv and solve refuse with a
sentence, and so does the gradient of det and logabsdet there (PyTorch goes on through
other factorisations: the README's table of differences says so).
"""

from __future__ import annotations

import numpy as np

from .. import errors
from ..recording import rule
from ..recording.accumulate import accumulated
from ..recording.node import Function
from ._util import tangent_sum


def inverse(a: np.ndarray) -> np.ndarray:
    """A⁻¹ of each matrix of ``a``, or the sentence saying one is singular."""
    try:
        return np.linalg.inv(a)
    except np.linalg.LinAlgError:
        raise errors.singular("inv") from None


def solved(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """X with A X = B for each matrix of ``a`` (``b``: matrices (..., n, k), batches
    broadcast), or the sentence saying A is singular."""
    try:
        return np.linalg.solve(a, b)
    except np.linalg.LinAlgError:
        raise errors.singular("solve") from None


# the names the rules below call, on arrays (ops/recorded_numpy.py: on Tensors)
rule.PLAIN.inv = inverse
rule.PLAIN.solve = solved


def _trace_of_product(a_inverse: np.ndarray, t: np.ndarray) -> np.ndarray:
    """tr(A⁻¹ t) of each matrix: the tangent of log|det(A)| along t."""
    return np.einsum("...ij,...ji->...", a_inverse, t)


class Det(Function):
    """f(a) = det(a), the determinant of each matrix"""

    name = "det"
    rule = ("inverse = inv(a)  (A⁻¹: a singular A has none, and this gradient is refused)\n"
            "da = (g * out)[..., None, None] * mT(inverse)  (g det(A) A⁻ᵀ)")

    @staticmethod
    def forward(ctx, a):
        with np.errstate(invalid="ignore"):  # nan in, nan out, as in PyTorch
            out = np.asarray(np.linalg.det(a))
        if ctx.needs_input_grad[0]:
            ctx.save(a=a, out=out)
        return out

    @staticmethod
    def jvp(ctx, ta):
        """dout = det(a) tr(a⁻¹ ta)"""
        return ctx.load("out") * _trace_of_product(inverse(ctx.load("a")), ta)


class LogAbsDet(Function):
    """f(a) = log|det(a)| of each matrix (slogdet's second value; its sign has no
    gradient)"""

    name = "logabsdet"
    rule = ("inverse = inv(a)  (A⁻¹: a singular A has none, and this gradient is refused)\n"
            "da = g[..., None, None] * mT(inverse)  (g A⁻ᵀ)")

    @staticmethod
    def forward(ctx, a):
        with np.errstate(invalid="ignore", divide="ignore"):
            out = np.asarray(np.linalg.slogdet(a).logabsdet)
        if ctx.needs_input_grad[0]:
            ctx.save(a=a)
        return out

    @staticmethod
    def jvp(ctx, ta):
        """dout = tr(a⁻¹ ta)"""
        return _trace_of_product(inverse(ctx.load("a")), ta)


class Inv(Function):
    """f(a) = a⁻¹, the inverse of each matrix"""

    name = "inv"
    rule = "da = -(mT(out) @ g @ mT(out))  (-A⁻ᵀ g A⁻ᵀ: out is A⁻¹)"

    @staticmethod
    def forward(ctx, a):
        out = inverse(a)
        if ctx.needs_input_grad[0]:
            ctx.save(out=out)
        return out

    @staticmethod
    def jvp(ctx, ta):
        """dout = -a⁻¹ ta a⁻¹"""
        out = ctx.load("out")
        return -(out @ ta @ out)


class Solve(Function):
    """f(a, b) = x with a @ x = b, for each matrix of a and the matrices (n, k) of b"""

    name = "solve"
    rule = ("adjoint = solve(mT(a), g)  (Aᵀ Y = g: one more solve, with A transposed)\n"
            "db = adjoint\n"
            "da = -(adjoint @ mT(out))  (-dB Xᵀ: out is X)")

    @staticmethod
    def forward(ctx, a, b):
        out = solved(a, b)
        if ctx.needs_input_grad[0] or ctx.needs_input_grad[1]:
            ctx.save(a=a)
        if ctx.needs_input_grad[0]:
            ctx.save(out=out)
        return out

    @staticmethod
    def jvp(ctx, ta, tb):
        """dout = a⁻¹ (tb - ta x)"""
        change = tangent_sum(tb, None if ta is None else -(ta @ ctx.load("out")))
        return solved(ctx.load("a"), change)


class Trace(Function):
    """f(a) = the sum of a's main diagonal (one matrix, any m by n)"""

    name = "trace"
    rule = "da = g * eye(a.shape[0], a.shape[1], dtype=g.dtype)  (g on the diagonal, 0 off it)"

    @staticmethod
    def forward(ctx, a):
        return np.asarray(accumulated(np.trace, a))

    @staticmethod
    def jvp(ctx, ta):
        """dout = trace(ta)"""
        return np.asarray(accumulated(np.trace, ta))
