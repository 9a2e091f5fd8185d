"""Stochastic gradient descent, with PyTorch's momentum, dampening, Nesterov and
weight decay (the same update formulas as ``torch.optim.SGD``)."""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np

from .. import errors
from .optimizer import Optimizer

__all__ = ["SGD"]


class SGD(Optimizer):
    r"""Per parameter p with gradient g, at each ``step()``:

    ::

        g = g + weight_decay * p
        b = g                                      (first step)
        b = momentum * b + (1 - dampening) * g     (later steps)
        g = g + momentum * b   if nesterov   else   b       (only when momentum != 0)
        p = p - lr * g

    State: one momentum buffer ``b`` per parameter when ``momentum != 0``, else none.

    >>> opt = SGD(model.parameters(), lr=0.1, momentum=0.9)    # doctest: +SKIP
    """

    def __init__(self, params: Iterable, lr: float, momentum: float = 0.0,
                 weight_decay: float = 0.0, dampening: float = 0.0, nesterov: bool = False):
        for what, value in (("learning rate", lr), ("momentum value", momentum),
                            ("weight_decay value", weight_decay)):
            if not value >= 0:  # also refuses nan
                raise errors.bad_optimizer_option("SGD", what, value, "a number >= 0")
        if nesterov and (momentum <= 0 or dampening != 0):
            raise errors.nesterov_options("SGD")
        super().__init__(params, {"lr": lr, "momentum": momentum, "weight_decay": weight_decay,
                                  "dampening": dampening, "nesterov": nesterov})

    def _update(self, param, grad: np.ndarray, group: dict, state: dict) -> None:
        if group["weight_decay"]:
            grad = grad + group["weight_decay"] * param._data
        momentum = group["momentum"]
        if momentum:
            buf = state.get("momentum_buffer")
            if buf is None:
                buf = state["momentum_buffer"] = np.array(grad, copy=True)
            else:
                buf *= momentum
                buf += (1 - group["dampening"]) * grad
            grad = grad + momentum * buf if group["nesterov"] else buf
        param.add_(grad, alpha=-group["lr"])
