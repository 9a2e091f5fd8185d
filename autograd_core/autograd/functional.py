"""PyTorch's ``torch.autograd.functional``: ``vjp``, ``jvp``, ``jacobian``, ``hessian``,
``hvp``, ``vhp``, each evaluated at given inputs in one call. They are written beside the
transforms they run on, in ``func/functional.py``; this is their PyTorch path.

>>> import autograd_core as ag
>>> from autograd_core.autograd.functional import hessian
>>> hessian(lambda t: (t * t * t).sum(), ag.tensor([1.0, 2.0]))
tensor([[ 6.,  0.],
        [ 0., 12.]])
"""

from ..func.functional import hessian, hvp, jacobian, jvp, vhp, vjp

__all__ = ["vjp", "jvp", "jacobian", "hessian", "hvp", "vhp"]
