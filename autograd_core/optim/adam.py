"""Adam (Kingma and Ba, 2015) with PyTorch's update formulas (``torch.optim.Adam``):
moment estimates with bias correction, L2 weight decay added to the gradient or, with
``decoupled_weight_decay=True`` (what ``AdamW`` sets), applied to the parameter itself,
and the AMSGrad variant."""

from __future__ import annotations

import math
from collections.abc import Iterable

import numpy as np

from .. import errors
from .optimizer import Optimizer

__all__ = ["Adam"]


class Adam(Optimizer):
    r"""Per parameter p with gradient g, at step t = 1, 2, ...:

    ::

        g = g + weight_decay * p                   (L2 penalty: the default)
        p = p - lr * weight_decay * p              (instead, if decoupled_weight_decay)
        m = beta1 * m + (1 - beta1) * g            (first moment, m starts at 0)
        v = beta2 * v + (1 - beta2) * g * g        (second moment, v starts at 0)
        v_max = max(v_max, v)                      (amsgrad only; then v_max replaces v below)
        p = p - lr / (1 - beta1^t) * m / (sqrt(v) / sqrt(1 - beta2^t) + eps)

    State per parameter: ``step`` (an int) and two arrays the size of the parameter,
    ``exp_avg`` (m) and ``exp_avg_sq`` (v): twice the parameter memory; with
    ``amsgrad=True`` a third one, ``max_exp_avg_sq`` (v_max).

    >>> opt = Adam(model.parameters(), lr=1e-3)    # doctest: +SKIP
    """

    def __init__(self, params: Iterable, lr: float = 1e-3,
                 betas: tuple[float, float] = (0.9, 0.999), eps: float = 1e-8,
                 weight_decay: float = 0.0, amsgrad: bool = False, *,
                 decoupled_weight_decay: bool = False):
        name = type(self).__name__
        for what, value in (("learning rate", lr), ("epsilon value", eps),
                            ("weight_decay value", weight_decay)):
            if not value >= 0:  # also refuses nan
                raise errors.bad_optimizer_option(name, what, value, "a number >= 0")
        expected = "betas of two numbers in [0, 1), e.g. (0.9, 0.999)"
        for i, beta in enumerate(betas):
            if not 0 <= beta < 1:
                raise errors.bad_optimizer_option(name, f"beta parameter at index {i}", beta,
                                                  expected)
        if len(betas) != 2:
            raise errors.bad_optimizer_option(name, "betas", betas, expected)
        super().__init__(params, {"lr": lr, "betas": tuple(betas), "eps": eps,
                                  "weight_decay": weight_decay, "amsgrad": amsgrad,
                                  "decoupled_weight_decay": decoupled_weight_decay})

    def _update(self, param, grad: np.ndarray, group: dict, state: dict) -> None:
        if not state:
            state.update(step=0, exp_avg=np.zeros_like(param._data),
                         exp_avg_sq=np.zeros_like(param._data))
        beta1, beta2 = group["betas"]
        lr, weight_decay = group["lr"], group["weight_decay"]
        if weight_decay and group["decoupled_weight_decay"]:
            param.mul_(1 - lr * weight_decay)  # shrink p itself, before the Adam step
        elif weight_decay:
            grad = grad + weight_decay * param._data
        state["step"] += 1
        m, v, t = state["exp_avg"], state["exp_avg_sq"], state["step"]
        m *= beta1
        m += (1 - beta1) * grad
        v *= beta2
        v += (1 - beta2) * grad * grad
        if group["amsgrad"]:
            if "max_exp_avg_sq" not in state:  # e.g. amsgrad switched on after a load
                state["max_exp_avg_sq"] = np.zeros_like(v)
            v = np.maximum(state["max_exp_avg_sq"], v, out=state["max_exp_avg_sq"])
        denom = np.sqrt(v) / math.sqrt(1 - beta2 ** t) + group["eps"]
        param.add_(m / denom, alpha=-lr / (1 - beta1 ** t))
