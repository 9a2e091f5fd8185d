"""Layer 4, transforms of functions (PyTorch's ``torch.func``): ``jvp``, ``vjp``, ``jacfwd``,
``jacrev``, ``hessian``, ``hvp``, ``vhp``, ``grad``, ``grad_and_value``
(``transforms.py``), and gradient checkpointing (``checkpoint.py``, also reachable as
``autograd_core.utils.checkpoint``, PyTorch's path).

>>> from autograd_core.func import jacrev, jvp
"""

from .transforms import (
    grad,
    grad_and_value,
    hessian,
    hvp,
    jacfwd,
    jacobian,
    jacrev,
    jvp,
    vhp,
    vjp,
)

__all__ = ["jvp", "vjp", "jacfwd", "jacrev", "jacobian", "grad", "grad_and_value", "hvp", "vhp",
           "hessian"]
