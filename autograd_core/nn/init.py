"""Initialising parameters in place, with PyTorch's formulas and a seeded generator.

Every function fills an existing tensor (without recording) and returns it. The
random ones draw from ``generator``, or from the engine's default generator
(reseeded by ``autograd_core.manual_seed``), so a seeded program always starts from
the same weights. The numbers differ from PyTorch's (another random stream); the
distributions are the same.

>>> import autograd_core as ag
>>> w = kaiming_uniform_(ag.zeros(4, 3), a=5 ** 0.5, generator=ag.Generator(0))
>>> bool((w.numpy() ** 2).max() <= 1 / 3)   # bound 1/sqrt(fan_in) = 1/sqrt(3)
True
"""

from __future__ import annotations

import math

import numpy as np

from .. import errors
from ..recording import creation
from ..recording.grad_mode import no_grad
from ..recording.tensor import Tensor

__all__ = ["calculate_fan_in_and_fan_out", "calculate_gain", "uniform_", "normal_",
           "kaiming_uniform_", "kaiming_normal_", "xavier_uniform_", "zeros_", "ones_",
           "constant_"]


def calculate_fan_in_and_fan_out(shape: tuple) -> tuple[int, int]:
    """(fan_in, fan_out) of a weight: (in, out) times the kernel size for convolutions.

    >>> calculate_fan_in_and_fan_out((8, 3, 5, 5))
    (75, 200)
    """
    if len(shape) < 2:
        raise errors.fan_needs_matrix(shape)
    receptive = math.prod(shape[2:])
    return shape[1] * receptive, shape[0] * receptive


def calculate_gain(nonlinearity: str, param: float | None = None) -> float:
    """The gain of PyTorch's table: 1 for linear/sigmoid, 5/3 tanh, sqrt(2) relu,
    sqrt(2 / (1 + a^2)) leaky_relu with slope ``a`` (default 0.01)."""
    if nonlinearity in ("linear", "conv2d", "sigmoid"):
        return 1.0
    if nonlinearity == "tanh":
        return 5.0 / 3
    if nonlinearity == "relu":
        return math.sqrt(2.0)
    if nonlinearity == "leaky_relu":
        slope = 0.01 if param is None else param
        return math.sqrt(2.0 / (1 + slope ** 2))
    raise errors.unknown_nonlinearity(nonlinearity)


def _fill(tensor: Tensor, values) -> Tensor:
    with no_grad():
        tensor.copy_(values)
    return tensor


def _rng(generator):
    return (generator or creation.default_generator).numpy


def uniform_(tensor: Tensor, a: float = 0.0, b: float = 1.0, generator=None) -> Tensor:
    """Fill with samples of U(a, b)."""
    return _fill(tensor, _rng(generator).uniform(a, b, tensor.shape))


def normal_(tensor: Tensor, mean: float = 0.0, std: float = 1.0, generator=None) -> Tensor:
    """Fill with samples of N(mean, std^2)."""
    return _fill(tensor, _rng(generator).normal(mean, std, tensor.shape))


def kaiming_uniform_(tensor: Tensor, a: float = 0.0, mode: str = "fan_in",
                     nonlinearity: str = "leaky_relu", generator=None) -> Tensor:
    """Fill with U(-bound, bound), bound = gain * sqrt(3 / fan) (He et al., 2015).

    Linear and Conv2d use ``a=sqrt(5)``, which makes bound = 1 / sqrt(fan_in).
    """
    bound = calculate_gain(nonlinearity, a) * math.sqrt(3.0 / _fan(tensor, mode))
    return uniform_(tensor, -bound, bound, generator)


def kaiming_normal_(tensor: Tensor, a: float = 0.0, mode: str = "fan_in",
                    nonlinearity: str = "leaky_relu", generator=None) -> Tensor:
    """Fill with N(0, std²), std = gain / sqrt(fan) (He et al., 2015); torchvision's
    ResNets start their convolutions so, with ``mode="fan_out", nonlinearity="relu"``."""
    std = calculate_gain(nonlinearity, a) / math.sqrt(_fan(tensor, mode))
    return normal_(tensor, 0.0, std, generator)


def _fan(tensor: Tensor, mode: str) -> int:
    if mode not in ("fan_in", "fan_out"):
        raise errors.init_mode(mode)
    fan_in, fan_out = calculate_fan_in_and_fan_out(tensor.shape)
    return fan_in if mode == "fan_in" else fan_out


def xavier_uniform_(tensor: Tensor, gain: float = 1.0, generator=None) -> Tensor:
    """Fill with U(-bound, bound), bound = gain * sqrt(6 / (fan_in + fan_out)) (Glorot &
    Bengio, 2010). MultiheadAttention's in_proj_weight starts so, as in PyTorch."""
    fan_in, fan_out = calculate_fan_in_and_fan_out(tensor.shape)
    bound = gain * math.sqrt(6.0 / (fan_in + fan_out))
    return uniform_(tensor, -bound, bound, generator)


def constant_(tensor: Tensor, value: float) -> Tensor:
    """Fill with ``value``."""
    return _fill(tensor, np.full(tensor.shape, value))


def zeros_(tensor: Tensor) -> Tensor:
    """Fill with 0."""
    return constant_(tensor, 0.0)


def ones_(tensor: Tensor) -> Tensor:
    """Fill with 1."""
    return constant_(tensor, 1.0)
