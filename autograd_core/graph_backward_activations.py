"""``create_graph=True`` through the activations (gelu, silu, softplus, leaky_relu, and
normal_cdf): their backward rules written with Tensor ops, registered into
``graph_backward.RULES`` so that second derivatives work.

Each rule multiplies g by the op's slope recomputed from the saved input with recorded
ops, so the slope's own derivative (the second derivative) reaches the input:

* gelu's slope Φ(a) + a·φ(a) holds Φ, which no other op computes: it is recorded as the
  ``normal_cdf`` op (``ops/activations.NormalCdf``), whose own rule is φ(a) = exp(-a²/2)
  / √(2π), made of exp and mul. The set is closed, to any order.
* gelu's tanh approximation, silu and softplus: tanh, sigmoid, mul and add.
* leaky_relu's slope (1 or negative_slope) and softplus's switch to the line above its
  threshold depend on a only through a comparison: constants, as relu's mask is.
"""

from __future__ import annotations

import math

import numpy as np

from .graph_backward import RULES, _constant, _saved
from .op_functions import where
from .ops import activations as act
from .tensor import Tensor

__all__ = ["ACTIVATION_RULES"]

_ONE_OVER_SQRT_2PI = 1.0 / math.sqrt(2.0 * math.pi)


def _normal_pdf(a: Tensor) -> Tensor:
    """φ(a) = exp(-a²/2) / √(2π), as recorded ops."""
    return (a * a * -0.5).exp() * _ONE_OVER_SQRT_2PI


def _gelu(node, g: Tensor) -> tuple:
    """da = g · (Φ(a) + a·φ(a)), Φ recorded as a normal_cdf op."""
    a = _saved(node, "a")
    return (g * (act.NormalCdf.apply(a) + a * _normal_pdf(a)),)


def _gelu_tanh(node, g: Tensor) -> tuple:
    """da = g · (½(1 + t) + ½a(1 - t²)·k(1 + 3κa²)), t = tanh(k(a + κa³)), k = √(2/π)."""
    a = _saved(node, "a")
    k, kappa = act._SQRT_2_OVER_PI, act._KAPPA
    t = ((a + a * a * a * kappa) * k).tanh()
    slope = (1 + t) * 0.5 + a * 0.5 * (1 - t * t) * k * (1 + a * a * (3 * kappa))
    return (g * slope,)


def _silu(node, g: Tensor) -> tuple:
    """da = g · s(1 + a(1 - s)), s = σ(a)."""
    a = _saved(node, "a")
    s = a.sigmoid()
    return (g * s * (1 + a * (1 - s)),)


def _softplus(node, g: Tensor) -> tuple:
    """da = g · σ(βa), and g where βa > threshold (the output is a there). At βa ==
    threshold exactly the slope is σ(βa), held constant: PyTorch's double backward
    differentiates σ only where βa < threshold, and the second derivative has a jump
    there anyway."""
    beta, threshold = node.params["beta"], node.params["threshold"]
    z = node.load("a") * beta
    slope = (_saved(node, "a") * beta).sigmoid()
    held = z >= threshold
    if held.any():
        fixed = np.where(z > threshold, 1.0, act._sigmoid(z))
        slope = where(held, _constant(fixed.astype(slope.dtype)), slope)
    return (g * slope,)


def _leaky_relu(node, g: Tensor) -> tuple:
    """da = g · (1 where a > 0, else negative_slope): a constant factor."""
    factor = np.where(node.load("mask"), 1.0, node.params["negative_slope"])
    return (g * _constant(factor.astype(g.dtype)),)


ACTIVATION_RULES = {
    act.Gelu: _gelu,
    act.GeluTanh: _gelu_tanh,
    act.Silu: _silu,
    act.Softplus: _softplus,
    act.LeakyRelu: _leaky_relu,
    act.NormalCdf: lambda n, g: (g * _normal_pdf(_saved(n, "a")),),
}

RULES.update(ACTIVATION_RULES)
