"""PyTorch's ``torch.autograd`` names, gathered from the engine's layers: so that
``from autograd_core.autograd import Function, grad, gradcheck, detect_anomaly`` reads as
it would with PyTorch. Each name lives where its layer is:

* ``Function`` (the base class of every op, and of your own): ``recording/node.py``;
* ``grad``: ``sweep/grad.py``, on the reverse sweep of ``sweep/engine.py``;
* ``gradcheck``, ``gradgradcheck``, the Jacobians: ``tools/gradcheck.py``;
* ``detect_anomaly``: ``tools/anomaly.py``;
* ``functional`` (``torch.autograd.functional``: ``vjp``, ``jvp``, ``jacobian``,
  ``hessian``, ``hvp``, ``vhp`` evaluated at given inputs): ``autograd/functional.py``.
"""

from ..errors import GradcheckError
from ..recording.node import Function
from ..sweep.grad import grad
from ..tools.anomaly import detect_anomaly
from ..tools.gradcheck import analytic_jacobian, gradcheck, gradgradcheck, numeric_jacobian
from . import functional

__all__ = ["Function", "grad", "gradcheck", "gradgradcheck", "GradcheckError",
           "numeric_jacobian", "analytic_jacobian", "detect_anomaly", "functional"]
