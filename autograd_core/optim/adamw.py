"""AdamW (Loshchilov and Hutter, 2019): Adam with decoupled weight decay, as
``torch.optim.AdamW``. It is ``Adam`` with ``decoupled_weight_decay=True``: the same
code, one flag, and a default ``weight_decay`` of 1e-2."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from .adam import Adam

__all__ = ["AdamW"]


class AdamW(Adam):
    r"""Per parameter p with gradient g, at step t = 1, 2, ...:

    ::

        p = p - lr * weight_decay * p              (decay the weights, not the gradient)
        m = beta1 * m + (1 - beta1) * g
        v = beta2 * v + (1 - beta2) * g * g
        v_max = max(v_max, v)                      (amsgrad only; then v_max replaces v below)
        p = p - lr / (1 - beta1^t) * m / (sqrt(v) / sqrt(1 - beta2^t) + eps)

    Adam's L2 penalty (``Adam(weight_decay=...)``) goes through m and v, so a parameter
    with large gradients is barely decayed; AdamW shrinks every weight by the same
    factor ``1 - lr * weight_decay`` at each step. State: as ``Adam``.

    >>> opt = AdamW(model.parameters(), lr=1e-3, weight_decay=0.01)    # doctest: +SKIP
    """

    def __init__(self, params: Iterable, lr: float = 1e-3,
                 betas: tuple[float, float] = (0.9, 0.999), eps: float = 1e-8,
                 weight_decay: float = 1e-2, amsgrad: bool = False):
        super().__init__(params, lr, betas, eps, weight_decay, amsgrad,
                         decoupled_weight_decay=True)

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        """Restore a ``state_dict``; the weight decay stays decoupled even if the state
        was saved from ``Adam`` (as PyTorch's ``AdamW`` does)."""
        super().load_state_dict(state_dict)
        for group in self.param_groups:
            group["decoupled_weight_decay"] = True
