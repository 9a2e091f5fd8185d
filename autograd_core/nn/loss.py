"""The loss modules: ``CrossEntropyLoss``, ``NLLLoss`` and ``MSELoss``, each a
:class:`Module` that holds its options and calls the function of the same name in
``nn.functional`` (``criterion = nn.CrossEntropyLoss(); loss = criterion(logits, y)``).

Class weights (PyTorch's ``weight=``) are not supported; passing them gets a sentence.
"""

from __future__ import annotations

from .. import errors
from ..recording.tensor import Tensor
from . import functional as F
from .module import Module

__all__ = ["CrossEntropyLoss", "NLLLoss", "MSELoss"]


class _Loss(Module):
    def __init__(self, reduction: str = "mean"):
        super().__init__()
        F._check_reduction(reduction)
        self.reduction = reduction


class _ClassLoss(_Loss):
    def __init__(self, weight=None, ignore_index: int = -100, reduction: str = "mean"):
        if weight is not None:
            raise errors.loss_class_weights(type(self).__name__)
        super().__init__(reduction)
        self.ignore_index = ignore_index


class CrossEntropyLoss(_ClassLoss):
    """``F.cross_entropy`` of logits (N, C) or (N, C, d...) and class indices."""

    def __init__(self, weight=None, ignore_index: int = -100, reduction: str = "mean",
                 label_smoothing: float = 0.0):
        super().__init__(weight, ignore_index, reduction)
        self.label_smoothing = label_smoothing

    def forward(self, input: Tensor, target) -> Tensor:
        return F.cross_entropy(input, target, reduction=self.reduction,
                               ignore_index=self.ignore_index,
                               label_smoothing=self.label_smoothing)


class NLLLoss(_ClassLoss):
    """``F.nll_loss`` of log-probabilities (N, C) and class indices."""

    def forward(self, input: Tensor, target) -> Tensor:
        return F.nll_loss(input, target, reduction=self.reduction,
                          ignore_index=self.ignore_index)


class MSELoss(_Loss):
    """``F.mse_loss``: the mean (or sum) of squared differences, same shapes."""

    def forward(self, input: Tensor, target) -> Tensor:
        return F.mse_loss(input, target, reduction=self.reduction)
