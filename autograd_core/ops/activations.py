"""The activations of transformers and modern networks: gelu (exact, and its tanh
approximation), silu, softplus and leaky_relu, with PyTorch's formulas; and normal_cdf,
the Φ that gelu's recorded backward (second derivatives) is made of.

Each op's backward multiplies g by the local slope f'(a), and its forward mode multiplies
the tangent by the same slope. What each op saves is the least its slope can be computed
from, and that is the input for all but leaky_relu: unlike sigmoid and tanh (whose slopes
are read off their outputs), gelu and silu are not one-to-one (each has a minimum, near
a = -0.75 and a = -1.28, and every output between it and 0 comes from two inputs with
different slopes), so their output cannot tell which slope applies. softplus is
one-to-one, but its slope σ(βa) and which side of the threshold a lies on are direct
from a (PyTorch saves the input too).
leaky_relu saves a 0/1 mask of a > 0, one byte per element, as relu does.

Forward values follow PyTorch's kernels except where a form without cancellation or
overflow gives a better number (both within rounding of PyTorch's elsewhere): gelu's Φ
is erfc(-a/√2)/2 (``special``), which keeps Φ's tiny values far left where PyTorch's
(1 + erf(a/√2))/2 rounds them to 0 (in float64; float32 and float16 inputs are computed
in float32, through Mills' ratio, within 10 ulps of float32 and several times faster);
softplus is log1p(exp(-|z|)) + max(z, 0) with z = βa, which does not overflow even
where a large ``threshold`` lets PyTorch's log1p(exp(z)) give inf (and its slope nan).
"""

from __future__ import annotations

import math

import numpy as np

from ..recording import rule
from ..recording.accumulate import widened
from ..recording.node import Function
from . import special

_SQRT_2_OVER_PI = math.sqrt(2.0 / math.pi)  # PyTorch's kBeta
_KAPPA = 0.044715


# gelu's rule reads Φ by name: NumPy has no normal CDF (the recorded sweep's is the
# NormalCdf op below, named in ops/recorded_numpy.py)
rule.PLAIN.normal_cdf = special.normal_cdf


def _work(a) -> np.ndarray:
    """``a`` in the dtype to compute in: its own, float16 widened to float32 (as
    PyTorch's kernels compute half precision)."""
    return widened(np.asarray(a))


_CHUNK = 8192  # elements per piece: a piece's temporaries stay in the CPU's cache
# float32's formula has fewer, faster steps: there the cost of a call per step and piece
# would show at 8192 (it is a fraction of a percent at 65536, a piece's temporaries
# still in the L2 cache)
_CHUNK_F32 = 1 << 16


def _by_chunks(formula, x, chunk: int = _CHUNK) -> np.ndarray:
    """``formula(x)`` for an elementwise formula, evaluated over cache-sized pieces of
    x's flat view (``chunk`` elements each). Each element's arithmetic is unchanged (the
    same numbers, bit for bit); a formula of many steps (erfc's has dozens) then reads
    and writes each temporary in cache rather than in memory, several times faster on
    large arrays."""
    x = np.asarray(x)
    if x.size <= chunk:
        return np.asarray(formula(x))
    flat = x.reshape(-1)
    first = np.asarray(formula(flat[:chunk]))
    out = np.empty(flat.shape, dtype=first.dtype)
    out[:chunk] = first
    for start in range(chunk, flat.size, chunk):
        out[start:start + chunk] = formula(flat[start:start + chunk])
    return out.reshape(x.shape)


def _back(x, like) -> np.ndarray:
    """``x`` (computed in a wider dtype) in the dtype of ``like``."""
    dtype = np.asarray(like).dtype
    return x if x.dtype == dtype else x.astype(dtype)


def _fits(out, x) -> bool:
    """Whether ``x * out`` can be written into ``out``: an array of the result's shape
    and dtype that is nobody else's (not a view), times an array (not a Tensor of a
    recorded backward)."""
    if (out.__class__ is not np.ndarray or x.__class__ is not np.ndarray
            or out.base is not None or out.shape != x.shape):
        return False
    return out.dtype is getattr(x, "dtype", None) or out.dtype == np.result_type(out, x)


class _BySlope(Function):
    """A one-input op whose backward sends ``g * slope`` and whose forward mode carries
    ``ta * slope``. Its ``rule`` states the slope in plain operations: compiled, it is
    the backward a ``create_graph`` sweep records (so a second derivative goes through
    it). ``slope(ctx)`` computes the same values on arrays by a faster path (in chunks,
    float32 kernels, PyTorch's edge values) for ``backward()`` and forward mode.
    tests/engine/test_create_graph.py holds the two equal on every op of the op table."""

    @classmethod
    def slope(cls, ctx) -> np.ndarray:  # pragma: no cover - always overridden
        raise NotImplementedError

    @classmethod
    def fast_backward(cls, ctx, g):
        slope = cls.slope(ctx)
        if _fits(slope, g):  # a temporary of ours: written over, one array fewer
            return (np.multiply(g, slope, out=slope),)
        return (g * slope,)

    @classmethod
    def jvp(cls, ctx, ta):
        """dout = ta * slope (the slope of the rule)"""
        return ta * cls.slope(ctx)


class Gelu(_BySlope):
    """f(a) = a · Φ(a), Φ the standard normal CDF (``approximate='none'``).

    Saves the input a (8 bytes per float64 element): the slope Φ(a) + a·φ(a) needs a,
    and gelu's output cannot stand in for it (gelu is not one-to-one: each output
    between its minimum, at a = -0.75, and 0 comes from two inputs with different
    slopes). Φ(a) and φ(a) are recomputed in backward rather than saved too, which would
    triple the memory.

    float64 inputs are computed with ``special``'s float64 erfc; float32 (and float16)
    ones in float32 with ``special.normal_cdf_f32``, Φ and φ from one exp, as fast as
    the tanh form."""

    name = "gelu"
    rule = ("da = g * (normal_cdf(a) + a * exp(-a**2 / 2) / sqrt(2 * pi))  "
            "(Φ(a) + a·φ(a), Φ the standard normal CDF and φ its density)")

    @staticmethod
    def forward(ctx, a):
        ctx.save(a=a)
        x = _work(a)
        with np.errstate(invalid="ignore"):  # -inf · Φ(-inf) = -inf · 0: nan, as PyTorch
            if x.dtype == np.float32:
                return _back(_by_chunks(_gelu_f32, x, _CHUNK_F32), a)
            x = np.asarray(x, dtype=np.float64)
            return _back(_by_chunks(lambda x: x * special.normal_cdf(x), x), a)

    @classmethod
    def slope(cls, ctx):
        a = ctx.load("a")
        x = _work(a)
        with np.errstate(invalid="ignore"):  # ±inf · φ(±inf) = inf · 0: nan, as PyTorch
            if x.dtype == np.float32:
                return _back(_by_chunks(_gelu_slope_f32, x, _CHUNK_F32), a)
            x = np.asarray(x, dtype=np.float64)
            return _back(_by_chunks(
                lambda x: special.normal_cdf(x) + x * special.normal_pdf(x), x), a)


def _gelu_f32(x) -> np.ndarray:
    """x · Φ(x) in float32 (x a float32 array)."""
    out = special.normal_cdf_f32(x)
    out *= x
    return out


def _gelu_slope_f32(x) -> np.ndarray:
    """Φ(x) + x · φ(x) in float32 (x a float32 array)."""
    cdf, pdf = special.normal_cdf_and_pdf_f32(x)
    pdf *= x
    cdf += pdf
    return cdf


class GeluTanh(_BySlope):
    """f(a) = a/2 · (1 + tanh(√(2/π) · (a + 0.044715 a³))) (``approximate='tanh'``).

    Saves the input a: as for the exact gelu, the output cannot tell the slope."""

    name = "gelu"
    rule = ("t = tanh(sqrt(2 / pi) * (a + 0.044715 * a**3))\n"
            "da = g * (0.5 * (1 + t) + 0.5 * a * (1 - t**2) * sqrt(2 / pi) * "
            "(1 + 3 * 0.044715 * a**2))")

    @staticmethod
    def forward(ctx, a):
        ctx.save(a=a)
        with np.errstate(over="ignore", invalid="ignore"):
            return _back(_by_chunks(_gelu_tanh, _work(a)), a)

    @classmethod
    def slope(cls, ctx):
        a = ctx.load("a")
        with np.errstate(over="ignore", invalid="ignore"):
            return _back(_by_chunks(_gelu_tanh_slope, _work(a)), a)


def _gelu_tanh(x) -> np.ndarray:
    inner = _SQRT_2_OVER_PI * (x + _KAPPA * (x * x * x))
    return 0.5 * x * (1 + np.tanh(inner))


def _gelu_tanh_slope(x) -> np.ndarray:
    """PyTorch's kernel term by term (so huge |a| gives its nan: 0 · inf)."""
    x_sq = x * x
    t = np.tanh(_SQRT_2_OVER_PI * (x + _KAPPA * (x_sq * x)))
    left, right = 0.5 * x, 1 + t
    return 0.5 * right + left * (1 - t * t) * _SQRT_2_OVER_PI * (1 + 3 * _KAPPA * x_sq)


def _sigmoid(z) -> np.ndarray:
    """1 / (1 + exp(-z)), PyTorch's form: exp overflows to inf where z is very negative,
    and 1 / inf is the 0 it should be."""
    with np.errstate(over="ignore"):
        return 1 / (1 + np.exp(-z))


class Silu(_BySlope):
    """f(a) = a · σ(a) = a / (1 + exp(-a)) (also called swish).

    Saves the input a: silu is not one-to-one (its minimum is at a = -1.28), so the
    output cannot tell the slope σ(a)·(1 + a·(1 - σ(a)))."""

    name = "silu"
    rule = "s = sigmoid(a)  (σ(a) = 1 / (1 + exp(-a)))\nda = g * s * (1 + a * (1 - s))"

    @staticmethod
    def forward(ctx, a):
        ctx.save(a=a)
        x = _work(a)
        with np.errstate(over="ignore", invalid="ignore"):
            return _back(np.asarray(x / (1 + np.exp(-x))), a)

    @classmethod
    def slope(cls, ctx):
        a = ctx.load("a")
        x = _work(a)
        s = _sigmoid(x)
        with np.errstate(invalid="ignore"):  # a = ±inf: inf · 0, nan as in PyTorch
            return _back(np.asarray(s * (1 + x * (1 - s))), a)


class Softplus(_BySlope):
    """f(a) = log(1 + exp(β·a)) / β, and a itself where β·a > threshold (PyTorch's
    switch to the line it approaches, for speed and against overflow).

    Saves the input a: the slope is σ(β·a), and 1 where β·a > threshold. At β·a ==
    threshold exactly the slope is σ(β·a) held constant, as in PyTorch, whose double
    backward differentiates σ only where β·a < threshold."""

    name = "softplus"
    rule = ("z = where(beta * a < threshold, beta * a, threshold)  (βa, held at the "
            "threshold from there on)\n"
            "da = where(beta * a > threshold, g, g * sigmoid(z))  (σ(βa); 1 where the "
            "output is a itself)")

    @staticmethod
    def forward(ctx, a, beta=1.0, threshold=20.0):
        ctx.save(a=a)
        x = _work(a)
        # (beta = 0: inf · 0 and log(2) / 0, nan and inf as in PyTorch)
        with np.errstate(over="ignore", divide="ignore", invalid="ignore"):
            z = x * beta
            # log(1 + e^z) = max(z, 0) + log1p(e^-|z|): no overflow for any z
            smooth = (np.maximum(z, 0) + np.log1p(np.exp(-np.abs(z)))) / beta
        return _back(np.asarray(np.where(z > threshold, x, smooth)), a)

    @classmethod
    def slope(cls, ctx):
        a = ctx.load("a")
        x = _work(a)
        with np.errstate(invalid="ignore"):
            z = x * ctx.params["beta"]
        ones = np.ones((), dtype=z.dtype)
        return _back(np.asarray(np.where(z > ctx.params["threshold"], ones, _sigmoid(z))), a)


class LeakyRelu(Function):
    """f(a) = a where a > 0, else negative_slope · a. Saves only a 0/1 mask of a > 0;
    at 0 (and at nan) the slope is negative_slope, as in PyTorch."""

    name = "leaky_relu"
    rule = "da = where(mask, g, negative_slope * g)   (mask: a > 0, saved by the forward)"
    elementwise = True

    @staticmethod
    def forward(ctx, a, negative_slope=0.01):
        mask = np.asarray(a > 0)
        ctx.save(mask=mask)
        x = _work(a)
        with np.errstate(over="ignore", invalid="ignore"):  # the side where() drops
            return _back(np.asarray(np.where(mask, x, x * negative_slope)), a)


class NormalCdf(_BySlope):
    """f(a) = Φ(a), the standard normal CDF. Not a function of the public API: it is what
    gelu's backward records when it is differentiated again (its slope holds Φ).
    Saves the input a: the slope is the density φ(a)."""

    name = "normal_cdf"
    rule = "da = g * exp(-a**2 / 2) / sqrt(2 * pi)  (φ(a))"

    @staticmethod
    def forward(ctx, a):
        ctx.save(a=a)
        x = _work(a)
        if x.dtype == np.float32:  # gelu's own Φ (Gelu), in float32
            return _back(_by_chunks(special.normal_cdf_f32, x, _CHUNK_F32), a)
        return _back(special.normal_cdf(np.asarray(x, dtype=np.float64)), a)

    @classmethod
    def slope(cls, ctx):
        a = ctx.load("a")
        return _back(special.normal_pdf(np.asarray(a, dtype=np.float64)), a)
