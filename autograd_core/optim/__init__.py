"""Optimizers: they read each parameter's ``.grad`` and update the parameter in place.

>>> import autograd_core as ag
>>> from autograd_core import nn, optim
>>> model = nn.Linear(3, 1)
>>> opt = optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
>>> loss = model(ag.ones(4, 3, dtype=ag.float32)).sum()
>>> opt.zero_grad(); loss.backward(); opt.step()
"""

from . import lr_scheduler
from .adadelta import Adadelta
from .adam import Adam
from .adamw import AdamW
from .optimizer import Optimizer
from .sgd import SGD

__all__ = ["Optimizer", "SGD", "Adam", "AdamW", "Adadelta", "lr_scheduler"]
