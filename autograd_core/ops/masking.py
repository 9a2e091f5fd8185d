"""Masking and moving values along axes: masked_fill, tril/triu, cumsum, flip and pad.

Every one of them is linear in its input, so each backward is one line, and most of
them save nothing at all: the shape and the params say everything.

* ``masked_fill`` writes ``value`` where the mask is set: the gradient reaches the
  input where the mask is not set, and a tensor ``value`` gets the rest, summed. Only
  the mask is saved (bool, in its own, possibly broadcast, shape).
* ``tril``/``triu`` zero one triangle: backward zeroes the same triangle of ``g``.
* ``cumsum``: ``out[j]`` adds up ``a[0..j]``, so ``a[i]`` counts in every ``out[j]`` with
  j >= i, and its gradient is the sum of ``g[j]`` for j >= i: a cumsum run backwards.
* ``flip`` reverses the order along some axes: backward flips ``g`` back.
* ``pad`` (constant mode) puts values around the input, or crops it for negative pads:
  backward pads ``g`` with the same pads negated, which crops the padding away (and
  puts zeros where the forward cropped).

The ``check_*`` helpers below validate the public functions' arguments (in
ops/api.py and nn/functional.py) with PyTorch's errors.
"""

from __future__ import annotations

import operator

import numpy as np

from .. import errors
from ..recording import rule
from ..recording.accumulate import accumulated
from ..recording.node import Function
from ..recording.tensor import Tensor
from ._util import normalize_dim


class MaskedFill(Function):
    """f(a, mask, value) = value where mask, else a (mask broadcast against a)"""

    name = "masked_fill"
    rule = "da = where(mask, 0, g)\ndvalue = where(mask, g, 0)   (summed: value is 0-d)"

    @staticmethod
    def forward(ctx, a, mask, value):
        ctx.save(mask=mask)
        # the value takes the input's dtype (a float64 value does not promote float32)
        return np.where(mask, np.asarray(value).astype(np.asarray(a).dtype), a)

    @staticmethod
    def jvp(ctx, ta, tmask, tvalue):
        """dout = where(mask, tvalue, ta)"""
        zero = np.zeros((), dtype=ctx.output_dtype)
        return np.where(ctx.load("mask"), zero if tvalue is None else tvalue,
                        zero if ta is None else ta)


class Tril(Function):
    """f(a) = the lower triangle of a (entries above ``diagonal`` set to 0), over the
    last two dims"""

    name = "tril"
    rule = "da = tril(g, diagonal)"
    _triangle = staticmethod(np.tril)

    @classmethod
    def forward(cls, ctx, a, diagonal=0):
        return cls._triangle(a, diagonal)

    @classmethod
    def jvp(cls, ctx, ta):
        """dout = the same triangle of ta"""
        return cls._triangle(ta, ctx.params["diagonal"])


class Triu(Tril):
    """f(a) = the upper triangle of a (entries below ``diagonal`` set to 0), over the
    last two dims"""

    name = "triu"
    rule = "da = triu(g, diagonal)"
    _triangle = staticmethod(np.triu)


class Cumsum(Function):
    """f(a) = running sums of a along dim: out[j] = a[0] + ... + a[j]"""

    name = "cumsum"
    rule = ("da = flip(cumsum(flip(g, dim), dim), dim) if g.ndim else g   (a[i] is in every "
            "out[j], j >= i: the running sums of g from the end)")

    @staticmethod
    def forward(ctx, a, dim=0):
        if np.ndim(a) == 0:  # one value: its own running sum (NumPy's dtype rules still)
            return np.cumsum(a).reshape(())
        return accumulated(np.cumsum, a, axis=dim)  # float16: added up in float32

    @staticmethod
    def jvp(ctx, ta):
        """dout = cumsum(ta, dim)"""
        return Cumsum.forward(ctx, ta, dim=ctx.params["dim"])


class Flip(Function):
    """f(a) = a with the order of its entries reversed along each of ``dims`` (a copy)"""

    name = "flip"
    rule = "da = flip(g, dims)"

    @staticmethod
    def forward(ctx, a, dims=()):
        return np.flip(a, dims).copy()  # a copy, as PyTorch's flip: not a view of a

    @staticmethod
    def jvp(ctx, ta):
        """dout = flip(ta, dims)"""
        return np.flip(ta, ctx.params["dims"])


def _padded_with_zeros(a, pad) -> np.ndarray:
    """``a`` padded with zeros by ``pad`` (negative pads crop): the rules' ``padded``."""
    return padded(a, pad, 0.0)


# pad's rule pads by name (ops/recorded_numpy.py names the recorded sweep's: the pad op)
rule.PLAIN.padded = _padded_with_zeros


class Pad(Function):
    """f(a) = a with ``value`` put around its last dims, ``pad`` = (left, right) for the
    last dim, then (top, bottom) for the one before, ...; a negative pad crops."""

    name = "pad"
    rule = ("da = padded(g, [-p for p in pad])  (the pads negated: padding is cropped off, "
            "and where a was cropped, zeros)")

    @staticmethod
    def forward(ctx, a, pad=(), value=0.0):
        return padded(a, pad, value)

    @staticmethod
    def jvp(ctx, ta):
        """dout = ta padded the same way, with zeros"""
        return padded(ta, ctx.params["pad"], 0)


def pad_widths(ndim: int, pad) -> list[tuple[int, int]]:
    """(before, after) for every axis, from PyTorch's pad order (last dim first)."""
    widths = [(0, 0)] * ndim
    for i in range(len(pad) // 2):
        widths[ndim - 1 - i] = (pad[2 * i], pad[2 * i + 1])
    return widths


def padded(a, pad, value) -> np.ndarray:
    """``a`` padded with ``value`` (negative pads crop), as a new array of a's dtype."""
    a = np.asarray(a)
    widths = pad_widths(a.ndim, pad)
    shape = tuple(s + lo + hi for s, (lo, hi) in zip(a.shape, widths, strict=True))
    out = np.full(shape, value, dtype=a.dtype)
    # what is kept of each axis: its elements minus the cropped ones (checked >= 0)
    kept = [s + min(lo, 0) + min(hi, 0) for s, (lo, hi) in zip(a.shape, widths, strict=True)]
    if all(k > 0 for k in kept):
        source = tuple(slice(max(-lo, 0), max(-lo, 0) + k) for (lo, _), k in zip(widths, kept))
        target = tuple(slice(max(lo, 0), max(lo, 0) + k) for (lo, _), k in zip(widths, kept))
        out[target] = a[source]
    return out


# -- the public functions' arguments ------------------------------------------------------
def check_int(op: str, name: str, position: int, value) -> int:
    """An int argument (a dim, a diagonal), or PyTorch's TypeError."""
    if isinstance(value, bool | np.bool_):
        raise errors.int_argument(op, name, position, value)
    try:
        return operator.index(value)
    except TypeError:
        raise errors.int_argument(op, name, position, value) from None


def check_ints(op: str, name: str, position: int, values) -> tuple[int, ...]:
    """A tuple (or list) of ints (flip's dims, pad's pad), or PyTorch's TypeError."""
    if not isinstance(values, tuple | list) or not all(
            isinstance(v, int | np.integer) and not isinstance(v, bool | np.bool_)
            for v in values):
        raise errors.int_tuple_argument(op, name, position, values)
    return tuple(int(v) for v in values)


def check_mask(mask) -> np.ndarray | Tensor:
    """masked_fill's mask: a boolean Tensor (kept, so the graph view names it) or array."""
    if isinstance(mask, Tensor):
        data = mask._data
    elif isinstance(mask, np.ndarray | np.bool_ | bool | list | tuple):
        mask = data = np.asarray(mask)
    else:
        raise errors.not_a_tensor_argument("masked_fill", "mask", mask)
    if data.dtype != np.bool_:
        raise errors.mask_dtype(data.dtype)
    return mask


def check_fill_value(op: str, value, dtype):
    """A fill value: a number, or a 0-d tensor (masked_fill keeps a Tensor, so that a
    value that requires grad gets its gradient), that ``dtype`` can hold."""
    if isinstance(value, Tensor | np.ndarray):
        data = value._data if isinstance(value, Tensor) else value
        if data.ndim != 0:  # pad takes a float: PyTorch refuses such a tensor by its type
            raise (errors.fill_value_dims(data.ndim) if op == "masked_fill"
                   else errors.fill_value_type(op, value))
        number = data.item()
    elif isinstance(value, int | float | np.number | np.bool_):
        number = value.item() if isinstance(value, np.generic) else value
    else:
        raise errors.fill_value_type(op, value)
    _check_fits(number, dtype)
    return value


def _check_fits(number, dtype) -> None:
    """PyTorch refuses a value the output's dtype cannot hold (inf is held by floats)."""
    dtype = np.dtype(dtype)
    if dtype.kind == "f":
        fits = not np.isfinite(number) or abs(number) <= np.finfo(dtype).max
    elif dtype.kind in "iu":
        fits = bool(np.isfinite(number)) and np.iinfo(dtype).min <= number <= np.iinfo(dtype).max
    else:
        fits = True
    if not fits:
        raise errors.fill_value_overflow(number, dtype)


def check_triangle(op: str, a: Tensor, diagonal) -> int:
    """tril/triu's diagonal, for an input that has a last two dims."""
    diagonal = check_int(op, "diagonal", 2, diagonal)
    if a.ndim < 2:
        raise errors.triangle_rank(op, a.shape)
    return diagonal


def check_flip_dims(dims, ndim: int) -> tuple[int, ...]:
    """flip's dims as non-negative axes (none for a 0-d input), each named once."""
    axes = []
    for d in check_ints("flip", "dims", 2, dims):
        axis = normalize_dim(d, ndim)
        if axis in axes:
            raise errors.repeated_flip_dim(axis)
        axes.append(axis)
    return tuple(axes) if ndim else ()


def check_pad(pad, mode: str, shape: tuple) -> tuple[int, ...]:
    """F.pad's pad tuple, checked as PyTorch checks it (pairs, not more pairs than dims,
    crops that leave a non-negative size); only mode='constant' is implemented."""
    if mode != "constant":
        raise errors.pad_mode(mode)
    pad = check_ints("pad", "pad", 2, pad)
    if len(pad) % 2:
        raise errors.pad_odd_length(pad)
    if len(pad) > 2 * len(shape):
        raise errors.pad_too_long(len(pad), len(shape))
    for axis, (size, (lo, hi)) in enumerate(zip(shape, pad_widths(len(shape), pad))):
        if size + min(lo, 0) + min(hi, 0) < 0:
            raise errors.pad_crops_too_much(axis, size, lo, hi)
    return pad
