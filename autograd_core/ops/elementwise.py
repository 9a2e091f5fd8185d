"""Elementwise ops: arithmetic, activations, max/min, where and clip.

All of them broadcast their inputs like NumPy. Their backward rules return
gradients in the broadcast shape; the engine sums them back to each input's shape
in one place (see ``engine.sum_to``). ``g`` below is the upstream gradient.
"""

from __future__ import annotations

import numpy as np

from .. import errors
from ..recording.node import Function
from ._util import broadcasting, promoted


class Add(Function):
    """f(a, b) = a + b"""

    name = "add"
    rule = "da = g\ndb = g"
    elementwise = True

    @staticmethod
    def forward(ctx, a, b):
        return broadcasting(np.add, "add", a, b)


class Sub(Function):
    """f(a, b) = a - b"""

    name = "sub"
    rule = "da = g\ndb = -g"
    elementwise = True

    @staticmethod
    def forward(ctx, a, b):
        return broadcasting(np.subtract, "sub", a, b)


class Mul(Function):
    """f(a, b) = a * b"""

    name = "mul"
    rule = "da = g * b\ndb = g * a"
    elementwise = True

    @staticmethod
    def forward(ctx, a, b):
        if ctx.needs_input_grad[0]:
            ctx.save(b=b)
        if ctx.needs_input_grad[1]:
            ctx.save(a=a)
        return broadcasting(np.multiply, "mul", a, b)


class Div(Function):
    """f(a, b) = a / b"""

    name = "div"
    rule = "da = g / b\ndb = -g * a / b**2"
    elementwise = True

    @staticmethod
    def forward(ctx, a, b):
        if ctx.needs_input_grad[1]:
            ctx.save(a=a)
        if any(ctx.needs_input_grad):
            ctx.save(b=b)
        return broadcasting(np.true_divide, "div", a, b)


class Pow(Function):
    """f(a, b) = a ** b

    At the edges the gradients are PyTorch's: da is 0 wherever b == 0 (a**0 is the
    constant 1, even at a = 0), and db is 0 where a == 0 and b >= 0, -inf where a == 0
    and b < 0 (out = inf, log(0) = -inf), nan where a < 0 (no real log). Where db is 0,
    the rule takes the log of 1 rather than of 0: log(0)'s -inf would reach a second
    derivative (as 0 * inf = nan) even though the first one does not use it.
    """

    name = "pow"
    rule = ("da = g * where(b == 0, 0, b * a**(b - 1))  (a**0 is the constant 1)\n"
            "flat = (a == 0) & (b >= 0)  (where PyTorch's db is 0)\n"
            "db = g * where(flat, 0, out * log(where(flat, 1, a)))")
    elementwise = True
    rule_quiet = True  # 0 ** -1 and 0 * inf on the side where() drops: no warning

    @staticmethod
    def forward(ctx, a, b):
        out = broadcasting(np.power, "pow", a, b)
        ctx.save(a=a, b=b)
        if ctx.needs_input_grad[1]:
            ctx.save(out=out)
        return out


class Neg(Function):
    """f(a) = -a"""

    name = "neg"
    rule = "da = -g"
    elementwise = True

    @staticmethod
    def forward(ctx, a):
        return np.negative(a)


class Exp(Function):
    """f(a) = exp(a); backward reuses the output."""

    name = "exp"
    rule = "da = g * out"
    elementwise = True

    @staticmethod
    def forward(ctx, a):
        out = np.exp(a)
        ctx.save(out=out)
        return out


class Log(Function):
    """f(a) = log(a)"""

    name = "log"
    rule = "da = g / a"
    elementwise = True

    @staticmethod
    def forward(ctx, a):
        ctx.save(a=a)
        return np.log(a)


class Sqrt(Function):
    """f(a) = sqrt(a); backward reuses the output."""

    name = "sqrt"
    rule = "da = g / (2 * out)"
    elementwise = True

    @staticmethod
    def forward(ctx, a):
        out = np.sqrt(a)
        ctx.save(out=out)
        return out


class Abs(Function):
    """f(a) = |a|; the gradient at 0 is 0, and at nan 0 too (PyTorch's sgn(nan))."""

    name = "abs"
    rule = "da = g * nan_to_num(sign(a))   (sign(nan) is nan: 0 there, as in PyTorch)"
    elementwise = True

    @staticmethod
    def forward(ctx, a):
        ctx.save(a=a)
        return np.abs(a)


class Sin(Function):
    """f(a) = sin(a)"""

    name = "sin"
    rule = "da = g * cos(a)"
    elementwise = True

    @staticmethod
    def forward(ctx, a):
        ctx.save(a=a)
        return np.sin(a)


class Cos(Function):
    """f(a) = cos(a)"""

    name = "cos"
    rule = "da = -g * sin(a)"
    elementwise = True

    @staticmethod
    def forward(ctx, a):
        ctx.save(a=a)
        return np.cos(a)


class Tanh(Function):
    """f(a) = tanh(a); backward reads only the saved output."""

    name = "tanh"
    rule = "da = g * (1 - out**2)"
    elementwise = True

    @staticmethod
    def forward(ctx, a):
        out = np.tanh(a)
        ctx.save(out=out)
        return out


class Sigmoid(Function):
    """f(a) = 1 / (1 + exp(-a)); backward reads only the saved output: s' = s(1 - s)."""

    name = "sigmoid"
    rule = "da = g * out * (1 - out)"
    elementwise = True

    @staticmethod
    def forward(ctx, a):
        # 0.5 * (1 + tanh(a / 2)) equals the logistic function and never overflows.
        out = 0.5 * (1 + np.tanh(0.5 * a))
        ctx.save(out=out)
        return out


class _UnaryByMask(Function):
    """A one-input op whose slope is 1 or 0 (relu, clip): its forward saves the 0/1
    ``mask`` of where the slope is 1, and its rule sends g where the mask is set, 0
    elsewhere. On arrays the same values are computed on the bits (``_masked``), ten
    times faster than ``where``: the rule runs under ``create_graph``."""

    elementwise = True

    @staticmethod
    def fast_backward(ctx, g):
        return (_masked(g, ctx.load("mask")),)


def _masked(g: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """``where(mask, g, 0)``: g where the mask is set, +0.0 elsewhere, even where g is nan
    or negative (``g * mask`` would give nan there, or -0.), as PyTorch's backward does.
    Computed on the bits, as fast as ``g * mask`` (``np.where`` with a mask like relu's is
    ten times slower): each kept entry's bits are ANDed with all ones, the rest with 0."""
    g = np.asarray(g)
    if g.dtype.kind != "f" or g.shape != np.shape(mask):
        return np.where(mask, g, 0)
    bits = np.dtype(f"u{g.dtype.itemsize}")
    keep = np.asarray(mask).astype(bits)
    np.negative(keep, out=keep)  # 1 -> all ones
    np.bitwise_and(keep, g.view(bits), out=keep)
    return keep.view(g.dtype)


class Relu(_UnaryByMask):
    """f(a) = max(a, 0); backward reads only a 0/1 mask (the gradient at 0 is 0, and
    at nan it passes, as in PyTorch: the mask is "not a <= 0")."""

    name = "relu"
    rule = "da = where(mask, g, 0)   (mask: not a <= 0, so nan passes; saved by the forward)"

    @staticmethod
    def forward(ctx, a):
        out = np.maximum(a, 0)  # not a * mask: that gives -0.0 for negative inputs
        # "not a <= 0" read off the output in one pass: out is a where a > 0 and at nan
        # (nonzero), and 0 where a <= 0
        ctx.save(mask=out != 0)
        return out


class Maximum(Function):
    """f(a, b) = max(a, b) elementwise; on a tie each side gets half the gradient. Each
    side gets g unless it loses, so where a or b is nan both get it, as in PyTorch."""

    name = "maximum"
    rule = "da = g * (1 - (a < b) - 0.5 * (a == b))\ndb = g * (1 - (b < a) - 0.5 * (a == b))"
    elementwise = True

    @classmethod
    def forward(cls, ctx, a, b):
        ctx.save(a=a, b=b)
        return broadcasting(np.maximum if cls is Maximum else np.minimum, cls.name, a, b)


class Minimum(Maximum):
    """f(a, b) = min(a, b) elementwise; on a tie each side gets half the gradient."""

    name = "minimum"
    rule = "da = g * (1 - (a > b) - 0.5 * (a == b))\ndb = g * (1 - (b > a) - 0.5 * (a == b))"


class Where(Function):
    """f(cond, a, b) = a where cond else b; cond is a constant mask."""

    name = "where"
    rule = "da = where(cond, g, 0)\ndb = where(cond, 0, g)"
    elementwise = True

    @staticmethod
    def forward(ctx, cond, a, b):
        cond = np.asarray(cond, dtype=bool)
        ctx.save(cond=cond)
        a, b = promoted(a, b)
        try:
            return np.where(cond, a, b)
        except ValueError:
            try:
                values = np.broadcast_shapes(np.shape(a), np.shape(b))
            except ValueError:
                raise errors.broadcast("where", np.shape(a), np.shape(b)) from None
            raise errors.where_condition(cond.shape, values) from None



class Clip(_UnaryByMask):
    """f(a) = min(max(a, low), high); gradient passes where low <= a <= high."""

    name = "clip"
    rule = "da = where(mask, g, 0)   (mask: low <= a <= high, saved by the forward)"

    @staticmethod
    def forward(ctx, a, low=None, high=None):
        inside = np.ones(np.shape(a), dtype=bool)
        if low is not None:
            inside &= a >= low
        if high is not None:
            inside &= a <= high
        ctx.save(mask=inside)
        return np.clip(a, low, high)


class Cast(Function):
    """f(a) = a converted to another dtype; the engine casts the gradient back."""

    name = "cast"
    rule = "da = g   (the engine casts it back to a's dtype)"

    @staticmethod
    def forward(ctx, a, dtype=None):
        return np.asarray(a).astype(dtype)

    @staticmethod
    def jvp(ctx, ta):
        """dout = ta (cast to the output's dtype)"""
        return ta.astype(ctx.params["dtype"])


class Clone(Cast):
    """f(a) = a copy of a with its own memory: a cast to a's own dtype, named for what
    the learner wrote (``x.clone()``)."""

    name = "clone"
    rule = "da = g"


class Contiguous(Clone):
    """f(a) = a copy of a laid out row after row in memory (C order), for a that is not
    (a transpose, a strided slice): ``x.contiguous()``"""

    name = "contiguous"

    @staticmethod
    def forward(ctx, a, dtype=None):
        return np.ascontiguousarray(a, dtype=dtype)
