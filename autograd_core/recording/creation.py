"""Making tensors: constants and seeded random numbers.

Randomness always comes from a :class:`Generator`; ``manual_seed`` reseeds the
default one, so a seeded program draws the same numbers every run.
"""

from __future__ import annotations

import operator

import numpy as np

from .. import errors
from . import default_dtype
from .device import check_device
from .tensor import Tensor


class Generator:
    """A seeded source of random numbers (NumPy's PCG64 underneath).

    >>> g = Generator().manual_seed(0)
    >>> a = randn(2, 3, generator=g)
    """

    def __init__(self, seed: int | None = None):
        self.manual_seed(0 if seed is None else seed)

    def manual_seed(self, seed: int) -> Generator:
        """Restart the stream from ``seed``; returns the generator."""
        self.initial_seed = int(seed)
        self.numpy = np.random.default_rng(self.initial_seed)
        return self


default_generator = Generator(0)


def manual_seed(seed: int) -> Generator:
    """Reseed the default generator (used whenever no ``generator=`` is passed)."""
    return default_generator.manual_seed(seed)


def _size(size) -> tuple:
    if len(size) == 1 and isinstance(size[0], tuple | list):
        return tuple(size[0])
    return tuple(size)


def _leaf(array, requires_grad: bool) -> Tensor:
    t = Tensor._wrap(array)
    if requires_grad:
        t.requires_grad = True
    return t


def zeros(*size, dtype=None, requires_grad: bool = False, device=None) -> Tensor:
    """A tensor of zeros: ``zeros(2, 3)``, in the default dtype unless ``dtype`` says."""
    check_device(device)
    return _leaf(np.zeros(_size(size), dtype=default_dtype.resolve(dtype)), requires_grad)


def ones(*size, dtype=None, requires_grad: bool = False, device=None) -> Tensor:
    """A tensor of ones: ``ones(2, 3)``, in the default dtype unless ``dtype`` says."""
    check_device(device)
    return _leaf(np.ones(_size(size), dtype=default_dtype.resolve(dtype)), requires_grad)


def zeros_like(t: Tensor, requires_grad: bool = False, device=None) -> Tensor:
    """Zeros with ``t``'s shape and dtype."""
    check_device(device)
    return _leaf(np.zeros_like(t._data), requires_grad)


def ones_like(t: Tensor, requires_grad: bool = False, device=None) -> Tensor:
    """Ones with ``t``'s shape and dtype."""
    check_device(device)
    return _leaf(np.ones_like(t._data), requires_grad)


def arange(*args, dtype=None, device=None) -> Tensor:
    """Evenly spaced values, like ``np.arange``; from float bounds or step, in the
    default dtype unless ``dtype`` says (as ``torch.arange``)."""
    check_device(device)
    values = np.arange(*args, dtype=dtype)
    if dtype is None and values.dtype.kind == "f":
        values = values.astype(default_dtype.get_default_dtype(), copy=False)
    return _leaf(values, False)


def randn(*size, generator: Generator | None = None, dtype=None,
          requires_grad: bool = False, device=None) -> Tensor:
    """Standard normal samples from ``generator`` (default: the seeded default one), in
    the default dtype unless ``dtype`` says."""
    check_device(device)
    rng = (generator or default_generator).numpy
    dtype = default_dtype.resolve(dtype)
    return _leaf(rng.standard_normal(_size(size)).astype(dtype, copy=False), requires_grad)


def rand(*size, generator: Generator | None = None, dtype=None,
         requires_grad: bool = False, device=None) -> Tensor:
    """Uniform samples in [0, 1) from ``generator``, in the default dtype unless ``dtype``
    says."""
    check_device(device)
    rng = (generator or default_generator).numpy
    dtype = default_dtype.resolve(dtype)
    return _leaf(rng.random(_size(size)).astype(dtype, copy=False), requires_grad)


def randint(*args, size=None, generator: Generator | None = None, dtype=np.int64,
            requires_grad: bool = False, device=None, low: int | None = None,
            high: int | None = None) -> Tensor:
    """Integers drawn uniformly from [low, high) by ``generator``, as ``torch.randint``:
    ``randint(high, size)`` (low 0) or ``randint(low, high, size)``, size a tuple; int64
    unless ``dtype`` says otherwise. Integers have no gradient."""
    check_device(device)
    args = args + tuple(v for v in (low, high, size) if v is not None)
    if len(args) == 2:
        args = (0, *args)
    if len(args) != 3:
        raise errors.randint_arguments(args, "it takes (high, size) or (low, high, size)")
    low, high, size = args
    try:
        low, high = operator.index(low), operator.index(high)
    except TypeError:
        raise errors.randint_arguments(args, "low and high are ints") from None
    if not isinstance(size, tuple | list) or not all(isinstance(s, int) for s in size):
        raise errors.randint_arguments(args, "size is a tuple of ints")
    if low >= high:
        raise errors.randint_arguments(args, f"the range [{low}, {high}) is empty")
    if requires_grad:
        raise errors.randint_arguments(args, "integers cannot require grad")
    rng = (generator or default_generator).numpy
    return _leaf(rng.integers(low, high, size=tuple(size)).astype(dtype, copy=False), False)


def multinomial(input: Tensor, num_samples: int, replacement: bool = False, *,  # noqa: A002
                generator: Generator | None = None) -> Tensor:
    """Category indices drawn with probability proportional to the weights in ``input``
    (1-D, or 2-D: one draw per row), as ``torch.multinomial``: int64, shape
    ``(num_samples,)`` or ``(rows, num_samples)``. Without ``replacement`` a category is
    drawn at most once per row. Integers have no gradient."""
    weights = np.asarray(input._data if isinstance(input, Tensor) else input, dtype=np.float64)
    if weights.ndim not in (1, 2):
        raise errors.multinomial_input(f"prob_dist must be 1 or 2 dim, got {weights.ndim}")
    if not np.all(np.isfinite(weights)) or np.any(weights < 0):
        raise errors.multinomial_input("probability tensor contains either inf, nan or "
                                       "element < 0")
    rows = weights.reshape(-1, weights.shape[-1])
    totals = rows.sum(axis=1)
    if rows.shape[0] and not np.all(totals > 0):
        raise errors.multinomial_input("invalid multinomial distribution (sum of "
                                       "probabilities <= 0)")
    if isinstance(num_samples, bool) or not isinstance(num_samples, int) or num_samples <= 0:
        raise errors.multinomial_samples(num_samples, rows.shape[1], replacement)
    nonzero = int(np.count_nonzero(rows, axis=1).min()) if rows.shape[0] else 0
    if not replacement and num_samples > nonzero:
        raise errors.multinomial_samples(num_samples, nonzero, replacement)
    rng = (generator or default_generator).numpy
    drawn = np.array([rng.choice(rows.shape[1], size=num_samples, replace=bool(replacement),
                                 p=row / total) for row, total in zip(rows, totals)],
                     dtype=np.int64).reshape(rows.shape[0], num_samples)
    return _leaf(drawn.reshape(weights.shape[:-1] + (num_samples,)), False)


def from_numpy(array: np.ndarray) -> Tensor:
    """A tensor that shares ``array``'s memory, as ``torch.from_numpy``: writing into one
    changes the other. Its dtype is the array's."""
    if not isinstance(array, np.ndarray) or array.dtype.kind not in "biuf":
        raise errors.from_numpy_type(array)
    return _leaf(array, False)
