"""Adadelta, with PyTorch's update formulas (``torch.optim.Adadelta``)."""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np

from .. import errors
from .optimizer import Optimizer

__all__ = ["Adadelta"]


class Adadelta(Optimizer):
    r"""Per parameter p with gradient g, at each ``step()``:

    ::

        g = g + weight_decay * p
        v = rho * v + (1 - rho) * g²                      (v starts at 0)
        d = sqrt(u + eps) / sqrt(v + eps) * g             (u starts at 0)
        u = rho * u + (1 - rho) * d²
        p = p - lr * d

    State: ``square_avg`` (v) and ``acc_delta`` (u) per parameter. The step is scaled by
    the ratio of two running root mean squares, so ``lr=1.0`` (the default) is usual.

    >>> opt = Adadelta(model.parameters(), lr=1.0)    # doctest: +SKIP
    """

    def __init__(self, params: Iterable, lr: float = 1.0, rho: float = 0.9, eps: float = 1e-6,
                 weight_decay: float = 0.0):
        for what, value, ok, expected in (
                ("learning rate", lr, lr >= 0, "a number >= 0"),
                ("rho value", rho, 0 <= rho <= 1, "a number from 0 to 1"),
                ("epsilon value", eps, eps >= 0, "a number >= 0"),
                ("weight_decay value", weight_decay, weight_decay >= 0, "a number >= 0")):
            if not ok:  # also refuses nan
                raise errors.bad_optimizer_option("Adadelta", what, value, expected)
        super().__init__(params, {"lr": lr, "rho": rho, "eps": eps,
                                  "weight_decay": weight_decay})

    def _update(self, param, grad: np.ndarray, group: dict, state: dict) -> None:
        rho, eps = group["rho"], group["eps"]
        if group["weight_decay"]:
            grad = grad + group["weight_decay"] * param._data
        if not state:
            state["step"] = 0
            state["square_avg"] = np.zeros_like(param._data)
            state["acc_delta"] = np.zeros_like(param._data)
        state["step"] += 1
        square_avg, acc_delta = state["square_avg"], state["acc_delta"]
        square_avg *= rho
        square_avg += (1 - rho) * grad * grad
        delta = np.sqrt(acc_delta + eps) / np.sqrt(square_avg + eps) * grad
        acc_delta *= rho
        acc_delta += (1 - rho) * delta * delta
        param.add_(delta, alpha=-group["lr"])
