"""Layer 4, transforms of functions (PyTorch's ``torch.func``): ``jvp``, ``vjp``, ``jacfwd``,
``jacrev``, ``hessian``, ``grad``, ``grad_and_value`` (``transforms.py``), and gradient
checkpointing (``checkpoint.py``, also reachable as ``autograd_core.utils.checkpoint``,
PyTorch's path). As in torch.func, a transform that takes a function returns a function:
``hessian(f)(x)``, ``jacrev(f)(x)``, ``grad(f)(x)``. The forms that evaluate at given
inputs in one call (``torch.autograd.functional``'s ``jacobian``, ``hessian``, ``hvp``,
``vhp``, ``vjp``, ``jvp``) are written in ``functional.py`` and reached by PyTorch's path,
``autograd_core.autograd.functional``.

>>> from autograd_core.func import jacrev, jvp
"""

import warnings

from ..errors import transforms as transform_errors
from . import functional
from .transforms import grad, grad_and_value, hessian, jacfwd, jacrev, jvp, vjp

__all__ = ["jvp", "vjp", "jacfwd", "jacrev", "grad", "grad_and_value", "hessian"]

_MOVED = ("hvp", "vhp", "jacobian")  # torch.autograd.functional's, not torch.func's


def __getattr__(name: str):
    """``func.hvp``, ``func.vhp``, ``func.jacobian``: the old paths of
    ``autograd.functional``'s functions, kept working with a DeprecationWarning."""
    if name in _MOVED:
        warnings.warn(transform_errors.moved_to_functional(name), DeprecationWarning,
                      stacklevel=2)
        return getattr(functional, name)
    raise transform_errors.no_func_attribute(name)
