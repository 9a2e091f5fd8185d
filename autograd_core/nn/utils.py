"""``nn.utils``: what a training loop does to gradients between ``backward`` and
``step``. ``clip_grad_norm_`` rescales every gradient by one factor so that their
norm, taken together as one long vector, is at most ``max_norm``.
"""

from __future__ import annotations

import math
from collections.abc import Iterable

import numpy as np

from .. import errors
from ..recording.tensor import Tensor

__all__ = ["clip_grad_norm_"]


def clip_grad_norm_(parameters: Tensor | Iterable[Tensor], max_norm: float,
                    norm_type: float = 2.0, error_if_nonfinite: bool = False,
                    foreach: bool | None = None) -> Tensor:
    """Scale the gradients of ``parameters`` in place so that their total norm is at most
    ``max_norm``, as ``torch.nn.utils.clip_grad_norm_``; returns the total norm before
    clipping (a 0-d tensor).

    The total norm is the ``norm_type``-norm of the per-parameter norms (the norm of all
    gradients as one vector); ``norm_type=inf`` is the largest magnitude. Every gradient
    is multiplied by ``min(1, max_norm / (total + 1e-6))``. Parameters without a
    gradient are skipped; with none, the norm is 0. A nan or inf total raises with
    ``error_if_nonfinite=True`` (else the gradients are scaled by it, as in PyTorch).
    ``foreach`` is accepted and ignored.
    """
    if isinstance(parameters, Tensor):
        parameters = [parameters]
    grads = [p.grad for p in parameters if p.grad is not None]
    if isinstance(norm_type, bool) or not isinstance(norm_type, int | float) \
            or not norm_type > 0:
        raise errors.bad_norm_type(norm_type)
    norm_type = float(norm_type)
    if not grads:
        return Tensor._wrap(np.array(0.0, dtype=np.float32))
    if math.isinf(norm_type):
        norms = [np.max(np.abs(g._data), initial=0) for g in grads]
        total = np.max(np.stack(norms))
    else:
        norms = [np.sum(np.abs(g._data) ** norm_type) ** (1 / norm_type) for g in grads]
        total = np.sum(np.stack(norms) ** norm_type) ** (1 / norm_type)
    total = np.asarray(total, dtype=np.result_type(*(g.dtype for g in grads)))
    if error_if_nonfinite and not np.isfinite(total):
        raise errors.nonfinite_norm(norm_type)
    scale = np.minimum(float(max_norm) / (total + 1e-6), 1.0)
    for g in grads:  # in place, as PyTorch's mul_: the same .grad tensors, rescaled
        if g._data.flags.writeable:
            np.multiply(g._data, scale.astype(g.dtype), out=g._data)
        else:  # a read-only view the sweep handed over: new memory, same tensor
            g._data = g._data * scale.astype(g.dtype)
        g._version[0] += 1
    return Tensor._wrap(total)
