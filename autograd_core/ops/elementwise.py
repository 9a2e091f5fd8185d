"""Elementwise ops: arithmetic, activations, max/min, where and clip.

All of them broadcast their inputs like NumPy. Their backward rules return
gradients in the broadcast shape; the engine sums them back to each input's shape
in one place (see ``engine.sum_to``). ``g`` below is the upstream gradient.
"""

from __future__ import annotations

import numpy as np

from ..function import Function
from ._util import broadcasting, tangent_sum


class Add(Function):
    """f(a, b) = a + b"""

    name = "add"
    rule = "da = g\ndb = g"

    @staticmethod
    def forward(ctx, a, b):
        return broadcasting(np.add, "add", a, b)

    @staticmethod
    def backward(ctx, g):
        return g, g

    @staticmethod
    def jvp(ctx, ta, tb):
        """dout = ta + tb"""
        return tangent_sum(ta, tb)


class Sub(Function):
    """f(a, b) = a - b"""

    name = "sub"
    rule = "da = g\ndb = -g"

    @staticmethod
    def forward(ctx, a, b):
        return broadcasting(np.subtract, "sub", a, b)

    @staticmethod
    def backward(ctx, g):
        return g, (-g if ctx.needs_input_grad[1] else None)

    @staticmethod
    def jvp(ctx, ta, tb):
        """dout = ta - tb"""
        return tangent_sum(ta, None if tb is None else -tb)


class Mul(Function):
    """f(a, b) = a * b"""

    name = "mul"
    rule = "da = g * b\ndb = g * a"

    @staticmethod
    def forward(ctx, a, b):
        if ctx.needs_input_grad[0]:
            ctx.save(b=b)
        if ctx.needs_input_grad[1]:
            ctx.save(a=a)
        return broadcasting(np.multiply, "mul", a, b)

    @staticmethod
    def backward(ctx, g):
        da = g * ctx.load("b") if ctx.needs_input_grad[0] else None
        db = g * ctx.load("a") if ctx.needs_input_grad[1] else None
        return da, db

    @staticmethod
    def jvp(ctx, ta, tb):
        """dout = ta * b + a * tb"""
        return tangent_sum(None if ta is None else ta * ctx.load("b"),
                           None if tb is None else ctx.load("a") * tb)


class Div(Function):
    """f(a, b) = a / b"""

    name = "div"
    rule = "da = g / b\ndb = -g * a / b**2"

    @staticmethod
    def forward(ctx, a, b):
        if ctx.needs_input_grad[1]:
            ctx.save(a=a)
        if any(ctx.needs_input_grad):
            ctx.save(b=b)
        return broadcasting(np.true_divide, "div", a, b)

    @staticmethod
    def backward(ctx, g):
        b = ctx.load("b")
        da = g / b if ctx.needs_input_grad[0] else None
        db = -g * ctx.load("a") / (b * b) if ctx.needs_input_grad[1] else None
        return da, db

    @staticmethod
    def jvp(ctx, ta, tb):
        """dout = ta / b - tb * a / b**2"""
        b = ctx.load("b")
        return tangent_sum(None if ta is None else ta / b,
                           None if tb is None else -tb * ctx.load("a") / (b * b))


class Pow(Function):
    """f(a, b) = a ** b"""

    name = "pow"
    rule = "da = g * b * a**(b - 1)\ndb = g * a**b * log(a)"

    @staticmethod
    def forward(ctx, a, b):
        out = broadcasting(np.power, "pow", a, b)
        ctx.save(a=a, b=b)
        if ctx.needs_input_grad[1]:
            ctx.save(out=out)
        return out

    @staticmethod
    def backward(ctx, g):
        a, b = ctx.load("a"), ctx.load("b")
        da = g * b * np.power(a, b - 1) if ctx.needs_input_grad[0] else None
        db = None
        if ctx.needs_input_grad[1]:
            db = g * ctx.load("out") * _log_positive(a)
        return da, db

    @staticmethod
    def jvp(ctx, ta, tb):
        """dout = ta * b * a**(b - 1) + tb * out * log(a)"""
        a, b = ctx.load("a"), ctx.load("b")
        return tangent_sum(None if ta is None else ta * b * np.power(a, b - 1),
                           None if tb is None else tb * ctx.load("out") * _log_positive(a))


def _log_positive(a):
    """log(a) where a > 0 and 0 elsewhere: d(a**b)/db is taken as 0 for a base <= 0."""
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(a > 0, np.log(np.where(a > 0, a, 1)), 0)


class Neg(Function):
    """f(a) = -a"""

    name = "neg"
    rule = "da = -g"

    @staticmethod
    def forward(ctx, a):
        return np.negative(a)

    @staticmethod
    def backward(ctx, g):
        return (-g,)

    @staticmethod
    def jvp(ctx, ta):
        """dout = -ta"""
        return -ta


class Exp(Function):
    """f(a) = exp(a); backward reuses the output."""

    name = "exp"
    rule = "da = g * out"

    @staticmethod
    def forward(ctx, a):
        out = np.exp(a)
        ctx.save(out=out)
        return out

    @staticmethod
    def backward(ctx, g):
        return (g * ctx.load("out"),)

    @staticmethod
    def jvp(ctx, ta):
        """dout = ta * out"""
        return ta * ctx.load("out")


class Log(Function):
    """f(a) = log(a)"""

    name = "log"
    rule = "da = g / a"

    @staticmethod
    def forward(ctx, a):
        ctx.save(a=a)
        return np.log(a)

    @staticmethod
    def backward(ctx, g):
        return (g / ctx.load("a"),)

    @staticmethod
    def jvp(ctx, ta):
        """dout = ta / a"""
        return ta / ctx.load("a")


class Sqrt(Function):
    """f(a) = sqrt(a); backward reuses the output."""

    name = "sqrt"
    rule = "da = g / (2 * out)"

    @staticmethod
    def forward(ctx, a):
        out = np.sqrt(a)
        ctx.save(out=out)
        return out

    @staticmethod
    def backward(ctx, g):
        return (g / (2 * ctx.load("out")),)

    @staticmethod
    def jvp(ctx, ta):
        """dout = ta / (2 * out)"""
        return ta / (2 * ctx.load("out"))


class Abs(Function):
    """f(a) = |a|; the gradient at 0 is 0."""

    name = "abs"
    rule = "da = g * sign(a)"

    @staticmethod
    def forward(ctx, a):
        ctx.save(a=a)
        return np.abs(a)

    @staticmethod
    def backward(ctx, g):
        return (g * np.sign(ctx.load("a")),)

    @staticmethod
    def jvp(ctx, ta):
        """dout = ta * sign(a)"""
        return ta * np.sign(ctx.load("a"))


class Sin(Function):
    """f(a) = sin(a)"""

    name = "sin"
    rule = "da = g * cos(a)"

    @staticmethod
    def forward(ctx, a):
        ctx.save(a=a)
        return np.sin(a)

    @staticmethod
    def backward(ctx, g):
        return (g * np.cos(ctx.load("a")),)

    @staticmethod
    def jvp(ctx, ta):
        """dout = ta * cos(a)"""
        return ta * np.cos(ctx.load("a"))


class Cos(Function):
    """f(a) = cos(a)"""

    name = "cos"
    rule = "da = -g * sin(a)"

    @staticmethod
    def forward(ctx, a):
        ctx.save(a=a)
        return np.cos(a)

    @staticmethod
    def backward(ctx, g):
        return (-g * np.sin(ctx.load("a")),)

    @staticmethod
    def jvp(ctx, ta):
        """dout = -ta * sin(a)"""
        return -ta * np.sin(ctx.load("a"))


class Tanh(Function):
    """f(a) = tanh(a); backward reads only the saved output."""

    name = "tanh"
    rule = "da = g * (1 - out**2)"

    @staticmethod
    def forward(ctx, a):
        out = np.tanh(a)
        ctx.save(out=out)
        return out

    @staticmethod
    def backward(ctx, g):
        out = ctx.load("out")
        return (g * (1 - out * out),)

    @staticmethod
    def jvp(ctx, ta):
        """dout = ta * (1 - out**2)"""
        out = ctx.load("out")
        return ta * (1 - out * out)


class Sigmoid(Function):
    """f(a) = 1 / (1 + exp(-a)); backward reads only the saved output: s' = s(1 - s)."""

    name = "sigmoid"
    rule = "da = g * out * (1 - out)"

    @staticmethod
    def forward(ctx, a):
        # 0.5 * (1 + tanh(a / 2)) equals the logistic function and never overflows.
        out = 0.5 * (1 + np.tanh(0.5 * a))
        ctx.save(out=out)
        return out

    @staticmethod
    def backward(ctx, g):
        out = ctx.load("out")
        return (g * out * (1 - out),)

    @staticmethod
    def jvp(ctx, ta):
        """dout = ta * out * (1 - out)"""
        out = ctx.load("out")
        return ta * out * (1 - out)


class Relu(Function):
    """f(a) = max(a, 0); backward reads only a 0/1 mask (the gradient at 0 is 0)."""

    name = "relu"
    rule = "da = g * (a > 0)"

    @staticmethod
    def forward(ctx, a):
        mask = a > 0
        ctx.save(mask=mask)
        return np.maximum(a, 0)  # not a * mask: that gives -0.0 for negative inputs

    @staticmethod
    def backward(ctx, g):
        return (g * ctx.load("mask"),)

    @staticmethod
    def jvp(ctx, ta):
        """dout = ta * (a > 0)"""
        return ta * ctx.load("mask")


class Maximum(Function):
    """f(a, b) = max(a, b) elementwise; on a tie each side gets half the gradient."""

    name = "maximum"
    rule = "da = g * ([a > b] + 0.5 [a == b])\ndb = g * ([b > a] + 0.5 [a == b])"
    _pick = staticmethod(np.greater)

    @classmethod
    def forward(cls, ctx, a, b):
        ctx.save(a=a, b=b)
        return broadcasting(np.maximum if cls is Maximum else np.minimum, cls.name, a, b)

    @classmethod
    def backward(cls, ctx, g):
        share_a = cls._share_a(ctx)
        da = g * share_a if ctx.needs_input_grad[0] else None
        db = g * (1 - share_a) if ctx.needs_input_grad[1] else None
        return da, db

    @classmethod
    def jvp(cls, ctx, ta, tb):
        """dout = ta * share_a + tb * (1 - share_a)"""
        share_a = cls._share_a(ctx)
        return tangent_sum(None if ta is None else ta * share_a,
                           None if tb is None else tb * (1 - share_a))

    @classmethod
    def _share_a(cls, ctx):
        """1 where a wins, 0 where b wins, 0.5 on a tie."""
        a, b = ctx.load("a"), ctx.load("b")
        return cls._pick(a, b) + 0.5 * (a == b)


class Minimum(Maximum):
    """f(a, b) = min(a, b) elementwise; on a tie each side gets half the gradient."""

    name = "minimum"
    rule = "da = g * ([a < b] + 0.5 [a == b])\ndb = g * ([b < a] + 0.5 [a == b])"
    _pick = staticmethod(np.less)


class Where(Function):
    """f(cond, a, b) = a where cond else b; cond is a constant mask."""

    name = "where"
    rule = "da = g * cond\ndb = g * (1 - cond)"

    @staticmethod
    def forward(ctx, cond, a, b):
        cond = np.asarray(cond, dtype=bool)
        ctx.save(cond=cond)
        try:
            return np.where(cond, a, b)
        except ValueError:
            from .. import errors

            try:
                values = np.broadcast_shapes(np.shape(a), np.shape(b))
            except ValueError:
                raise errors.broadcast("where", np.shape(a), np.shape(b)) from None
            raise errors.where_condition(cond.shape, values) from None

    @staticmethod
    def backward(ctx, g):
        cond = ctx.load("cond")
        zero = np.zeros((), dtype=g.dtype)
        da = np.where(cond, g, zero) if ctx.needs_input_grad[1] else None
        db = np.where(cond, zero, g) if ctx.needs_input_grad[2] else None
        return None, da, db

    @staticmethod
    def jvp(ctx, tcond, ta, tb):
        """dout = where(cond, ta, tb)"""
        zero = np.zeros((), dtype=ctx.output_dtype)
        return np.where(ctx.load("cond"), zero if ta is None else ta, zero if tb is None else tb)


class Clip(Function):
    """f(a) = min(max(a, low), high); gradient passes where low <= a <= high."""

    name = "clip"
    rule = "da = g * (low <= a <= high)"

    @staticmethod
    def forward(ctx, a, low=None, high=None):
        inside = np.ones(np.shape(a), dtype=bool)
        if low is not None:
            inside &= a >= low
        if high is not None:
            inside &= a <= high
        ctx.save(mask=inside)
        return np.clip(a, low, high)

    @staticmethod
    def backward(ctx, g):
        return (g * ctx.load("mask"),)

    @staticmethod
    def jvp(ctx, ta):
        """dout = ta * (low <= a <= high)"""
        return ta * ctx.load("mask")


class Cast(Function):
    """f(a) = a converted to another dtype; the engine casts the gradient back."""

    name = "cast"
    rule = "da = g (cast to a's dtype)"

    @staticmethod
    def forward(ctx, a, dtype=None):
        return np.asarray(a).astype(dtype)

    @staticmethod
    def backward(ctx, g):
        return (g,)

    @staticmethod
    def jvp(ctx, ta):
        """dout = ta (cast to the output's dtype)"""
        return ta.astype(ctx.params["dtype"])
