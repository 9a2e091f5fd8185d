"""erf and erfc, and the standard normal's CDF Φ and density φ, in NumPy (gelu needs Φ).

NumPy has no erf, and the engine imports nothing but NumPy, so it is written here with
W. J. Cody's rational Chebyshev approximations ("Rational Chebyshev approximations for
the error function", Math. Comp. 23, 1969, pp. 631-638; the coefficients are those of
his CALERF), on three intervals of y = |x|:

* y <= 0.46875:      erf(x) = x · A(y²) / B(y²);
* 0.46875 < y <= 4:  erfc(y) = exp(-y²) · C(y) / D(y);
* y > 4:             erfc(y) = exp(-y²) / y · (1/√π - R(1/y²)), R a ratio of polynomials.

erf and erfc are each good to a few ulps (relative error below 1e-15; 3 and 6 ulps at
worst on the test's grid), erfc in its tail too: it is computed directly, never as
1 - erf (erfc(10) = 2.1e-45 would be 0), and exp(-y²) is taken as exp(-r²) ·
exp(-(y - r)(y + r)), r = y cut down to a multiple of 1/16, so that r² is exact and the
rounding of y² does not cost relative accuracy (Cody's device).
``tests/engine/test_activations.py`` checks all of it against ``math.erf``/``math.erfc``.

Every function above computes in float64 and returns an array of its input's floating
dtype (float64 for integers); nan gives nan, erf(±inf) = ±1, erfc(+inf) = 0,
erfc(-inf) = 2.

For float32 (what gelu runs on in a float32 network) ``normal_cdf_f32`` and
``normal_cdf_and_pdf_f32`` compute Φ (and φ) in float32 arithmetic, several times
faster, through the upper tail written with Mills' ratio:

    1 - Φ(y) = exp(-y²/2) · R(y),   y = |x|,   R(y) = P(y) / Q(y),

P and Q of degrees 4 and 5 with positive coefficients, fitted for this module (minimax
relative error 6.3e-9 on [0, 15]; 1.4e-8 as stored, with Φ(0) = 0.5 made exact, and
once rounded to float32). Φ(x) is 1 - (1 - Φ(|x|)) for x >= 0 and the tail itself for
x < 0: no cancellation far left, where Φ is tiny, and one exp shared with φ(x) =
exp(-x²/2) / √(2π). For |x| > 4 (rare in activations) the tail is
computed again in float64, where the rounding of x² in exp's argument would cost up to
x²/2 ulps in float32. Against ``math.erfc`` every float32 Φ is within 10 ulps (within 3
for x >= 0, within 1 for |x| > 4), far left too, down to float32's subnormals; φ within
8 ulps (NumPy's float32 exp is good to 2.3); the test measures both.
"""

from __future__ import annotations

import math

import numpy as np

__all__ = ["erf", "erfc", "normal_cdf", "normal_pdf", "normal_cdf_f32",
           "normal_cdf_and_pdf_f32"]

# Cody's coefficients, lowest interval first; each list is in the order his nested
# evaluation (``_ratio``) uses them.
_A = (3.16112374387056560e00, 1.13864154151050156e02, 3.77485237685302021e02,
      3.20937758913846947e03, 1.85777706184603153e-1)
_B = (2.36012909523441209e01, 2.44024637934444173e02, 1.28261652607737228e03,
      2.84423683343917062e03)
_C = (5.64188496988670089e-1, 8.88314979438837594e00, 6.61191906371416295e01,
      2.98635138197400131e02, 8.81952221241769090e02, 1.71204761263407058e03,
      2.05107837782607147e03, 1.23033935479799725e03, 2.15311535474403846e-8)
_D = (1.57449261107098347e01, 1.17693950891312499e02, 5.37181101862009858e02,
      1.62138957456669019e03, 3.29079923573345963e03, 4.36261909014324716e03,
      3.43936767414372164e03, 1.23033935480374942e03)
_P = (3.05326634961232344e-1, 3.60344899949804439e-1, 1.25781726111229246e-1,
      1.60837851487422766e-2, 6.58749161529837803e-4, 1.63153871373020978e-2)
_Q = (2.56852019228982242e00, 1.87295284992346047e00, 5.27905102951428412e-1,
      6.05183413124413191e-2, 2.33520497626869185e-3)

_SMALL = 0.46875  # below: the series-like erf; above: erfc
_UNDERFLOW = 27.3  # from here on erfc(y) < 2.5e-324 rounds to 0 (and y² may overflow)
_ONE_OVER_SQRT_PI = 0.56418958354775628695
_SQRT_HALF = math.sqrt(0.5)
_ONE_OVER_SQRT_2PI = 1.0 / math.sqrt(2.0 * math.pi)


def _ratio(num, den, t):
    """Cody's nested evaluation: num[-1] and den's implicit leading 1 multiply first,
    then each pair of coefficients is added and the sum multiplied by t again (in place:
    two arrays, however many terms)."""
    n, d = num[-1] * t, np.array(t)
    for a, b in zip(num[:-2], den[:-1]):
        n += a
        n *= t
        d += b
        d *= t
    n += num[-2]
    d += den[-1]
    n /= d
    return n


def _small_erf(x):
    """erf(x) where |x| <= 0.46875; elsewhere the same formula at x clipped into
    [-0.46875, 0.46875], a finite value the caller replaces."""
    c = np.clip(x, -_SMALL, _SMALL)
    return c * _ratio(_A, _B, c * c)


def _exp_minus_square(t):
    """exp(-t²) as exp(-r²) · exp(-(t - r)(t + r)), r = t cut down to a multiple of
    1/16: r² is exact, so the rounding of t² costs no relative accuracy."""
    r = t * 16.0
    np.trunc(r, out=r)
    r /= 16.0
    d = t - r
    d *= t + r
    np.negative(d, out=d)
    np.exp(d, out=d)
    np.multiply(r, r, out=r)
    np.negative(r, out=r)
    np.exp(r, out=r)
    r *= d
    return r


def _far_erfc(t):
    """erfc(t) for t > 4 (nan and inf included): 0 from 27.3 on, where it is below the
    smallest double."""
    inv = 1.0 / (t * t)
    out = (_ONE_OVER_SQRT_PI - inv * _ratio(_P, _Q, inv)) / t
    out *= _exp_minus_square(t)
    out[t >= _UNDERFLOW] = 0.0  # inf too (there the formula gives 0 · nan)
    return out


def _erfc_of_abs(y, small_erf):
    """erfc(y) for y = |x| (any float64, nan and inf included), given ``small_erf`` =
    erf(y) where y <= 0.46875.

    Each interval's formula runs on the whole array at y clipped into it, and the
    results are picked by y: whole-array arithmetic is several times faster than
    gathering each interval's elements by a mask. Only y > 4 (rare in a network's
    activations) is gathered."""
    t = np.clip(y, _SMALL, 4.0)
    out = _ratio(_C, _D, t)
    out *= _exp_minus_square(t)
    np.copyto(out, 1.0 - small_erf, where=y <= _SMALL)
    far = np.flatnonzero(~(y <= 4.0))  # nan too
    if far.size:
        out[far] = _far_erfc(y[far])
    return out


def _flat64(x) -> tuple[np.ndarray, tuple, np.dtype]:
    """``x`` as a flat float64 array, its shape and the dtype to return."""
    x = np.asarray(x)
    dtype = x.dtype if x.dtype.kind == "f" else np.dtype(np.float64)
    return x.astype(np.float64, copy=False).reshape(-1), x.shape, dtype


def erf(x) -> np.ndarray:
    """The error function 2/√π ∫₀ˣ exp(-t²) dt, elementwise, to a few ulps.

    >>> float(erf(0.5))
    0.5204998778130465
    """
    x, shape, dtype = _flat64(x)
    with np.errstate(over="ignore", under="ignore", invalid="ignore"):
        small = _small_erf(x)
        y = np.abs(x)
        tail = _erfc_of_abs(y, np.abs(small))
        out = np.copysign((0.5 - tail) + 0.5, x)  # nan stays nan
        np.copyto(out, small, where=y <= _SMALL)
    return out.reshape(shape).astype(dtype, copy=False)


def erfc(x) -> np.ndarray:
    """The complementary error function 1 - erf(x), elementwise, computed without the
    cancellation of 1 - erf(x): a few ulps of relative accuracy in the tail too.

    >>> print(f"{float(erfc(10.0)):.6e}", 1 - float(erf(10.0)))
    2.088488e-45 0.0
    """
    x, shape, dtype = _flat64(x)
    with np.errstate(over="ignore", under="ignore", invalid="ignore"):
        small = _small_erf(x)
        out = _erfc_of_abs(np.abs(x), np.abs(small))
        negative = x < 0
        # erfc(-y) = 2 - erfc(y); for |x| <= 0.46875 that is 1 - erf(x) either way
        np.copyto(out, 2.0 - out, where=negative)
    return out.reshape(shape).astype(dtype, copy=False)


def normal_cdf(x) -> np.ndarray:
    """Φ(x) = P(Z <= x) for a standard normal Z: erfc(-x/√2) / 2, which keeps Φ's tiny
    values far left (Φ(-10) = 7.6e-24) where (1 + erf(x/√2)) / 2 rounds them to 0.

    >>> float(normal_cdf(0.0))
    0.5
    """
    x = np.asarray(x)
    dtype = x.dtype if x.dtype.kind == "f" else np.dtype(np.float64)
    x64 = x.astype(np.float64, copy=False)
    return (0.5 * erfc(-x64 * _SQRT_HALF)).astype(dtype, copy=False)


def normal_pdf(x) -> np.ndarray:
    """φ(x) = exp(-x²/2) / √(2π), the standard normal density.

    >>> round(float(normal_pdf(0.0)), 6)
    0.398942
    """
    x = np.asarray(x)
    dtype = x.dtype if x.dtype.kind == "f" else np.dtype(np.float64)
    x64 = x.astype(np.float64, copy=False)
    with np.errstate(over="ignore", under="ignore"):
        return (np.exp(-0.5 * x64 * x64) * _ONE_OVER_SQRT_2PI).astype(dtype, copy=False)


# -- float32: Φ through Mills' ratio ----------------------------------------------------------
# R(y) = (1 - Φ(y)) / exp(-y²/2) = P(y) / Q(y) on [0, 15], highest power first; Q's
# leading coefficient is 1 (its y⁵ is not listed). P's constant term is half of Q's as
# float32 rounds it, so that Φ(0) is exactly 0.5 in float32 and float64.
_R_P = (0.3989465585260943, 3.9268979453351456, 17.67135069567724, 42.195663575221914,
        48.02755355834961)
_R_Q = (9.843860846098362, 45.28167340119951, 115.79981406928745, 161.03225844027457,
        96.05510711669922)
_F32_TAIL_UP_TO = 4.0  # beyond: the tail again in float64 (x²'s rounding, see above)
_R_TOP = 15.0  # exp(-15²/2) = 1.4e-49: the tail is 0 in float32 from here on


def _polynomial(coefficients, y, monic: bool = False) -> np.ndarray:
    """Horner's Σ c_i·y^(n-i) (highest power first) in y's dtype, in place on one new
    array; ``monic``: with a leading 1·y^(n+1) in front of the coefficients."""
    if monic:
        out, rest = y + coefficients[0], coefficients[1:]
    else:
        out, rest = y * coefficients[0], coefficients[1:]
        out += rest[0]
        rest = rest[1:]
    for c in rest:
        out *= y
        out += c
    return out


def _mills(y) -> np.ndarray:
    """R(y) = (1 - Φ(y)) / exp(-y²/2) for 0 <= y <= 15, in y's dtype."""
    out = _polynomial(_R_P, y)
    out /= _polynomial(_R_Q, y, monic=True)
    return out


def _upper_tail_f32(y) -> tuple[np.ndarray, np.ndarray]:
    """(1 - Φ(y), exp(-y²/2)) for float32 y = |x| (nan and inf included), in float32
    arithmetic where y <= 4 and in float64, rounded to float32, beyond."""
    e = y * y
    e *= -0.5
    np.exp(e, out=e)
    tail = _mills(y)
    tail *= e
    far = np.flatnonzero(~(y <= _F32_TAIL_UP_TO))  # nan too: it stays nan either way
    if far.size:
        y64 = y[far].astype(np.float64)
        e64 = np.exp(-0.5 * y64 * y64)
        e[far] = e64
        tail[far] = e64 * _mills(np.minimum(y64, _R_TOP))
    return tail, e


def _cdf_f32(x) -> tuple[np.ndarray, np.ndarray]:
    """(Φ(x), exp(-x²/2)) for x as a float32 array, in float32 (and in x's shape): Φ is
    the tail t where x < 0 and 1 - t elsewhere, picked by arithmetic (t + [x >= 0]·(1 -
    2t), exact where x < 0) rather than by a mask, which is several times slower on
    mixed signs."""
    x = np.asarray(x, dtype=np.float32)
    if x.ndim != 1:  # 0-d too: NumPy's scalars take no out=
        cdf, e = _cdf_f32(x.reshape(-1))
        return cdf.reshape(x.shape), e.reshape(x.shape)
    with np.errstate(over="ignore", under="ignore", invalid="ignore"):
        tail, e = _upper_tail_f32(np.abs(x))
        cdf = tail * np.float32(-2.0)
        cdf += np.float32(1.0)
        cdf *= x >= 0
        cdf += tail
    return cdf, e


def normal_cdf_f32(x) -> np.ndarray:
    """Φ(x) for a float32 array, computed in float32 (within 10 ulps of the exact value,
    far left too; see the module's docstring); nan gives nan, Φ(-inf) = 0, Φ(inf) = 1.

    >>> normal_cdf_f32([-10.0])[0] == np.float32(7.619853024160527e-24)   # the nearest
    np.True_
    """
    return _cdf_f32(x)[0]


def normal_cdf_and_pdf_f32(x) -> tuple[np.ndarray, np.ndarray]:
    """(Φ(x), φ(x)) for a float32 array, computed in float32, sharing one exp (gelu's
    slope Φ(x) + x·φ(x) needs both).

    >>> [round(float(v[0]), 6) for v in normal_cdf_and_pdf_f32(np.float32([0.0]))]
    [0.5, 0.398942]
    """
    cdf, pdf = _cdf_f32(x)
    pdf *= np.float32(_ONE_OVER_SQRT_2PI)
    return cdf, pdf
