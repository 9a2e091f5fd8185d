"""How close is close enough: the one tolerance definition every feedback check uses.

A hand-derived gradient computed in float64 agrees with the engine to about 1e-12
relative; in float32 to about 1e-6. The tolerance follows the *less* precise of
the two arrays, and its absolute part scales with the size of the reference, so
a gradient of size 1e-8 is not called correct just because every entry is tiny.
A value a learner writes by hand (the stepper's predict box) carries about three
significant digits, so it is held to :data:`HAND_WRITTEN` instead.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class Tolerance:
    """``|a - b| <= atol * scale + rtol * |b|`` elementwise, scale = max |b| (or 1)."""

    rtol: float
    atol: float


_BY_DTYPE = {
    np.dtype(np.float16): Tolerance(rtol=1e-2, atol=1e-3),
    np.dtype(np.float32): Tolerance(rtol=1e-4, atol=1e-6),
    np.dtype(np.float64): Tolerance(rtol=1e-6, atol=1e-9),
}

# Three significant digits, correctly rounded, are right ("0.333" for 1/3, "0.123" for
# 0.12345: at most half a unit of the third digit, 0.5 %); so is "0." for an entry the
# views print as 0 (NumPy's suppress_small: under 1e-4 of the array's largest entry).
HAND_WRITTEN = Tolerance(rtol=5e-3, atol=1e-4)


def tolerance_for(*dtypes, rtol: float | None = None, atol: float | None = None) -> Tolerance:
    """The tolerance for comparing arrays of these dtypes (the least precise wins).

    >>> tolerance_for(np.float64, np.float32)
    Tolerance(rtol=0.0001, atol=1e-06)
    """
    floats = [np.dtype(d) for d in dtypes if d is not None and np.dtype(d).kind == "f"]
    worst = min(floats, key=lambda d: d.itemsize, default=np.dtype(np.float64))
    base = _BY_DTYPE.get(worst, _BY_DTYPE[np.dtype(np.float64)])
    return Tolerance(rtol=base.rtol if rtol is None else rtol,
                     atol=base.atol if atol is None else atol)


def close(a: np.ndarray, b: np.ndarray, tol: Tolerance) -> bool:
    """Whether ``a`` matches the reference ``b`` (same shape; NaN only where b has NaN).

    >>> close(np.array([1.0, 2.0]), np.array([1.0, 2.0 + 1e-12]), tolerance_for(np.float64))
    True
    """
    a = np.asarray(a, dtype=np.float64)
    b = np.asarray(b, dtype=np.float64)
    if a.shape != b.shape:
        return False
    finite = np.isfinite(b)
    if not np.array_equal(np.isnan(a), np.isnan(b)):
        return False
    if not np.array_equal(a[~finite & ~np.isnan(b)], b[~finite & ~np.isnan(b)]):
        return False
    if not np.all(np.isfinite(a[finite])):
        return False
    fa, fb = a[finite], b[finite]
    if fb.size == 0:
        return True
    scale = float(np.max(np.abs(fb))) or 1.0
    return bool(np.all(np.abs(fa - fb) <= tol.atol * scale + tol.rtol * np.abs(fb)))


def mismatches(a: np.ndarray, b: np.ndarray, tol: Tolerance) -> np.ndarray:
    """Boolean mask of the entries of ``a`` that do not match ``b`` (same shapes)."""
    a = np.asarray(a, dtype=np.float64)
    b = np.asarray(b, dtype=np.float64)
    scale = float(np.max(np.abs(b[np.isfinite(b)]), initial=0.0)) or 1.0
    with np.errstate(invalid="ignore"):
        bad = ~(np.abs(a - b) <= tol.atol * scale + tol.rtol * np.abs(b))
    both_nan = np.isnan(a) & np.isnan(b)
    same_inf = np.isinf(a) & (a == b)
    return bad & ~both_nan & ~same_inf
