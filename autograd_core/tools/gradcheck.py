"""Checking gradients: the engine's analytic Jacobian against central differences.

``gradcheck`` builds the whole Jacobian of ``fn`` twice: once with the engine (one
backward per output element) and once numerically, nudging each input element by
±eps and measuring the change of every output, (f(x + eps) - f(x - eps)) / 2eps.
Run it in float64: in float32 the rounding error of the difference swamps it (as
PyTorch does, a float32 input gets a warning and the check runs anyway). Inputs that
are not tensors (a Python number, a flag) are passed to ``fn`` unchanged and not
checked, as in PyTorch.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Sequence

import numpy as np

from .. import errors
from ..errors import GradcheckError
from ..recording.grad_mode import enable_grad, is_grad_enabled, no_grad
from ..recording.tensor import Tensor
from ..sweep.grad import grad, tensor_tuple

__all__ = ["gradcheck", "gradgradcheck", "GradcheckError", "numeric_jacobian",
           "analytic_jacobian"]


def _size(x) -> int:
    """Elements of an input: a non-tensor input is a constant with no column."""
    return x.numel() if isinstance(x, Tensor) else 0


def _outputs(fn, inputs) -> list[Tensor]:
    out = fn(*inputs)
    return list(out) if isinstance(out, tuple | list) else [out]


def analytic_jacobian(fn: Callable, inputs: Sequence[Tensor]) -> list[list[np.ndarray]]:
    """``J[o][i]``: d output o / d input i from the engine, shape (out.size, in.size)."""
    outputs = _outputs(fn, inputs)
    jac = []
    for out in outputs:
        rows = [np.zeros((out.numel(), _size(x))) for x in inputs]
        if out.requires_grad:
            for k in range(out.numel()):
                for x in inputs:
                    if isinstance(x, Tensor):
                        x.grad = None
                seed = np.zeros(out.shape, dtype=out.dtype)
                seed.flat[k] = 1
                out.backward(seed, retain_graph=True)
                for i, x in enumerate(inputs):
                    if isinstance(x, Tensor) and x.grad is not None:
                        rows[i][k] = x.grad._data.ravel()
        jac.append(rows)
    for x in inputs:
        if isinstance(x, Tensor):
            x.grad = None
    return jac


def numeric_jacobian(fn: Callable, inputs: Sequence[Tensor], eps: float = 1e-6):
    """``J[o][i]`` by central differences (the inputs are restored afterwards)."""
    with no_grad():
        sizes = [o.numel() for o in _outputs(fn, inputs)]
        jac = [[np.zeros((n, _size(x))) for x in inputs] for n in sizes]
        for i, x in enumerate(inputs):
            if not isinstance(x, Tensor):
                continue
            data = x._data  # nudged in place, element by element, whatever its strides
            for k, index in enumerate(np.ndindex(data.shape)):
                original = data[index]
                data[index] = original + eps
                plus = [o._data.astype(np.float64).ravel() for o in _outputs(fn, inputs)]
                data[index] = original - eps
                minus = [o._data.astype(np.float64).ravel() for o in _outputs(fn, inputs)]
                data[index] = original
                for o in range(len(sizes)):
                    jac[o][i][:, k] = (plus[o] - minus[o]) / (2 * eps)
    return jac


def gradcheck(fn: Callable, inputs, eps: float = 1e-6, atol: float = 1e-5,
              rtol: float = 1e-3, raise_exception: bool = True) -> bool:
    """True if the engine's gradients of ``fn`` at ``inputs`` match finite differences.

    On a mismatch it raises ``GradcheckError`` naming the worst element: which
    input, which index, the analytic and the numeric value.

    >>> x = tensor([1.0, 2.0], requires_grad=True)
    >>> gradcheck(lambda t: (t * t).sum(), (x,))
    True
    """
    inputs = tuple(inputs) if isinstance(inputs, tuple | list) else (inputs,)
    checked = [x for x in inputs if isinstance(x, Tensor) and x.requires_grad]
    if not checked:
        raise errors.gradcheck_nothing()
    low_precision = {i: x.dtype for i, x in enumerate(inputs)
                     if isinstance(x, Tensor) and x.requires_grad and x.dtype != np.float64}
    for i, dtype in low_precision.items():
        warnings.warn(errors.gradcheck_dtype(i, dtype), stacklevel=2)
    analytic = analytic_jacobian(fn, inputs)
    numeric = numeric_jacobian(fn, inputs, eps)
    worst = None
    for o, (a_rows, n_rows) in enumerate(zip(analytic, numeric, strict=True)):
        for i, (a, n) in enumerate(zip(a_rows, n_rows, strict=True)):
            if not isinstance(inputs[i], Tensor) or not inputs[i].requires_grad:
                continue
            excess = np.abs(a - n) - (atol + rtol * np.abs(n))
            if excess.size and excess.max() > 0:
                k = np.unravel_index(np.argmax(excess), excess.shape)
                if worst is None or excess[k] > worst[0]:
                    worst = (excess[k], o, i, k, a[k], n[k])
    if worst is None:
        return True
    _, o, i, (row, col), a, n = worst
    index = np.unravel_index(col, inputs[i].shape) if inputs[i].shape else ()
    if raise_exception:
        raise errors.gradcheck_mismatch(o, i, tuple(int(v) for v in index), row, a, n,
                                        low_precision)
    return False


def gradgradcheck(fn: Callable, inputs, grad_outputs=None, eps: float = 1e-6,
                  atol: float = 1e-5, rtol: float = 1e-3, raise_exception: bool = True,
                  seed: int = 0) -> bool:
    """True if the engine's second derivatives of ``fn`` at ``inputs`` match finite
    differences of its first (``torch.autograd.gradgradcheck``): ``gradcheck`` of
    x -> d<v, fn(x)>/dx, differentiated through the recorded sweep
    (``create_graph=True``) and differenced through the lean one. ``grad_outputs`` (v, one
    per output) defaults to random values drawn with ``seed``.

    >>> x = tensor([1.0, 2.0], requires_grad=True, dtype="float64")
    >>> gradgradcheck(lambda t: (t * t * t).sum(), (x,))
    True
    """
    inputs = tuple(inputs) if isinstance(inputs, tuple | list) else (inputs,)
    outputs = _outputs(fn, inputs)
    if grad_outputs is None:
        rng = np.random.default_rng(seed)
        grad_outputs = [Tensor._wrap(rng.standard_normal(o.shape).astype(o.dtype))
                        for o in outputs]
    grad_outputs = list(tensor_tuple(grad_outputs))
    checked = [k for k, x in enumerate(inputs) if isinstance(x, Tensor) and x.requires_grad]

    def first_derivatives(*values):
        # The analytic side differentiates the recorded sweep (create_graph=True); the
        # finite differences (called under no_grad) difference the lean sweep's first
        # derivatives, on fresh leaves: so a recorded rule that disagrees with the op's
        # own backward fails here too.
        recorded = is_grad_enabled()
        values = [v if recorded or k not in checked else v.detach().requires_grad_()
                  for k, v in enumerate(values)]
        with enable_grad():
            pairs = [(o, v) for o, v in zip(_outputs(fn, values), grad_outputs, strict=True)
                     if o.requires_grad]
            return grad([o for o, _ in pairs], [values[k] for k in checked],
                        [v for _, v in pairs], create_graph=recorded, allow_unused=True,
                        materialize_grads=True, retain_graph=recorded or len(pairs) > 1)

    return gradcheck(first_derivatives, inputs, eps, atol, rtol, raise_exception)
