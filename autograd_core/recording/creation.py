"""Making tensors: constants and seeded random numbers.

Randomness always comes from a :class:`Generator`; ``manual_seed`` reseeds the
default one, so a seeded program draws the same numbers every run.
"""

from __future__ import annotations

import numpy as np

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


def zeros(*size, dtype=np.float64, requires_grad: bool = False) -> Tensor:
    """A tensor of zeros: ``zeros(2, 3)``."""
    return _leaf(np.zeros(_size(size), dtype=dtype), requires_grad)


def ones(*size, dtype=np.float64, requires_grad: bool = False) -> Tensor:
    """A tensor of ones: ``ones(2, 3)``."""
    return _leaf(np.ones(_size(size), dtype=dtype), requires_grad)


def zeros_like(t: Tensor, requires_grad: bool = False) -> Tensor:
    """Zeros with ``t``'s shape and dtype."""
    return _leaf(np.zeros_like(t._data), requires_grad)


def ones_like(t: Tensor, requires_grad: bool = False) -> Tensor:
    """Ones with ``t``'s shape and dtype."""
    return _leaf(np.ones_like(t._data), requires_grad)


def arange(*args, dtype=None) -> Tensor:
    """Evenly spaced values, like ``np.arange``."""
    return _leaf(np.arange(*args, dtype=dtype), False)


def randn(*size, generator: Generator | None = None, dtype=np.float64,
          requires_grad: bool = False) -> Tensor:
    """Standard normal samples from ``generator`` (default: the seeded default one)."""
    rng = (generator or default_generator).numpy
    return _leaf(rng.standard_normal(_size(size)).astype(dtype, copy=False), requires_grad)


def rand(*size, generator: Generator | None = None, dtype=np.float64,
         requires_grad: bool = False) -> Tensor:
    """Uniform samples in [0, 1) from ``generator``."""
    rng = (generator or default_generator).numpy
    return _leaf(rng.random(_size(size)).astype(dtype, copy=False), requires_grad)


def randint(low: int, high: int, size: tuple, generator: Generator | None = None) -> Tensor:
    """Integers in [low, high) from ``generator``."""
    rng = (generator or default_generator).numpy
    return _leaf(rng.integers(low, high, size=size), False)
