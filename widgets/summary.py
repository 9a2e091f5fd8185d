"""Short text for arrays and byte counts, as the graph and the panels show them.

Small arrays are written out in full; large ones are summarised by shape and a
few statistics, so a label stays one line whatever the tensor's size.

>>> summarize(np.array([1.0, -2.0]))
'[ 1. -2.]'
>>> summarize(np.arange(100.0))
'(100,) min 0 max 99 mean 49.5 norm 573'
>>> format_bytes(1536)
'1.5 KiB'
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping

import numpy as np

from autograd_core.graph import TensorInfo

FULL_MAX = 8  # arrays with at most this many elements are written out in full


def summarize(array, full_max: int = FULL_MAX, precision: int = 4) -> str:
    """One line describing ``array``: its values if small, else shape/min/max/mean/norm."""
    if array is None:
        return "None"
    a = _tidy(np.asarray(array))
    if a.size <= full_max:
        if a.ndim == 0:
            return _number(a.item(), precision)
        text = np.array2string(_rounded(a, precision), precision=precision, suppress_small=True,
                               separator=" ", max_line_width=10_000)
        return " ".join(text.split())
    if a.dtype == bool:
        return f"{_shape(a.shape)} {int(a.sum())} of {a.size} True"
    finite = a[np.isfinite(a)] if a.dtype.kind == "f" else a
    if finite.size == 0:
        return f"{_shape(a.shape)} no finite values"
    f = finite.astype(np.float64)
    stats = " ".join([_shape(a.shape)] + [
        f"{name} {_number(value, precision)}" for name, value in
        (("min", f.min()), ("max", f.max()), ("mean", f.mean()), ("norm", np.linalg.norm(f)))])
    if finite.size < a.size:
        stats += f" ({a.size - finite.size} non-finite)"
    return stats


def full(array, precision: int = 4, max_elements: int = 64) -> str:
    """The values as a NumPy-style block (several lines for a matrix), or a summary
    when there are more than ``max_elements``."""
    a = _tidy(np.asarray(array))
    if a.size > max_elements:
        return summarize(a)
    a = _rounded(a, precision)
    squeezed = a.squeeze()
    if a.ndim >= 3 and squeezed.ndim < a.ndim:  # (1, 16, 1, 1): one line, not sixteen
        return (f"{_shape(a.shape)}, shown without its size-1 axes:\n"
                + np.array2string(squeezed, precision=precision, suppress_small=True,
                                  max_line_width=72))
    return np.array2string(a, precision=precision, suppress_small=True, max_line_width=72)


def for_later(array, max_elements: int = 64):
    """What ``full(array)`` needs, kept cheaply for later: a copy of a small array
    (formatting it is what costs, so it waits until shown), or the summary text of
    a large one (so the array itself can be freed)."""
    a = np.asarray(array)
    return np.array(a) if a.size <= max_elements else summarize(a)


def later_text(kept) -> str:
    """``full`` of what ``for_later`` kept."""
    return kept if isinstance(kept, str) else full(kept)


class Texts(Mapping):
    """key -> ``full`` text of an array, formatted when first read (values are what
    ``for_later`` keeps, or text)."""

    def __init__(self, kept: dict):
        self._kept = kept
        self._text: dict = {}

    def __getitem__(self, key) -> str:
        if key not in self._text:
            self._text[key] = later_text(self._kept[key])
        return self._text[key]

    def __iter__(self) -> Iterator:
        return iter(self._kept)

    def __len__(self) -> int:
        return len(self._kept)


def _tidy(a: np.ndarray) -> np.ndarray:
    """Show -0.0 (e.g. relu's zeros, computed as x * 0) as 0."""
    return a + 0.0 if a.dtype.kind == "f" else a


def _rounded(a: np.ndarray, precision: int) -> np.ndarray:
    """``a`` rounded to the decimals it is printed with, so that a value too small to show
    (-1e-17 from rounding) prints as ``0.``, never ``-0.``, which a learner reads as a bug."""
    return np.round(a, precision) + 0.0 if a.dtype.kind == "f" else a


def format_bytes(n: int) -> str:
    """Bytes in a readable unit: 16 B, 1.5 KiB, 3.0 MiB."""
    size = float(n)
    for unit in ("B", "KiB", "MiB", "GiB"):
        if size < 1024 or unit == "GiB":
            return f"{int(size)} B" if unit == "B" else f"{size:.1f} {unit}"
        size /= 1024
    raise AssertionError("unreachable")


def describe_tensor(t: TensorInfo, dtype: bool = False) -> str:
    """A graph tensor (``autograd_core.graph.TensorInfo``) in a few words: ``t5 'h'
    (2, 1)`` (id, name if any, shape, and with ``dtype=True`` its dtype), or
    ``t2 constant 2.0`` for a number the program wrote."""
    if t.label is not None:
        return f"{t.id} constant {t.label}"
    name = f" '{t.name}'" if t.name else ""
    return f"{t.id}{name} {shape_text(t.shape)}" + (f" {t.dtype}" if dtype else "")


def shape_text(shape) -> str:
    """A shape the way Python prints a tuple: (), (3,), (2, 3)."""
    return _shape(tuple(shape))


def _shape(shape: tuple) -> str:
    return "(" + ", ".join(str(s) for s in shape) + ("," if len(shape) == 1 else "") + ")"


def _number(x, precision: int) -> str:
    if isinstance(x, bool | np.bool_):
        return str(bool(x))
    return f"{float(x):.{precision}g}"
