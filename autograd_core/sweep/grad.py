"""``grad``: the gradients of outputs with respect to chosen inputs, returned rather
than accumulated into ``.grad`` (``torch.autograd.grad``). It runs the same reverse sweep
as ``Tensor.backward`` (``engine.gradients``), from several outputs at once.
"""

from __future__ import annotations

import numpy as np

from .. import errors
from ..recording.tensor import Tensor
from .engine import gradients

__all__ = ["grad"]


def grad(outputs, inputs, grad_outputs=None, retain_graph: bool | None = None,
         create_graph: bool = False, allow_unused: bool | None = None,
         materialize_grads: bool = False) -> tuple[Tensor | None, ...]:
    """The gradients of ``outputs`` with respect to ``inputs``, returned rather than
    accumulated: no ``.grad`` anywhere changes (``torch.autograd.grad``).

    With several outputs it is the gradient of ``sum(output_k * grad_outputs[k])``, from
    one reverse sweep. ``grad_outputs`` may be left out (or hold None) for a scalar
    output. An input no output depends on is an error unless ``allow_unused=True``;
    then its gradient is None, or zeros with ``materialize_grads=True``. The saved
    tensors are released unless ``retain_graph=True``. With ``create_graph=True`` the
    sweep itself is recorded as ops, even inside ``no_grad()``: the gradients have a
    graph and can be differentiated again, and the graph is kept unless
    ``retain_graph=False`` is given (as in PyTorch).

    >>> x = tensor([1.0, 2.0], requires_grad=True)
    >>> grad((x * x).sum(), x)
    (tensor([2., 4.]),)
    """
    if allow_unused is None:
        allow_unused = materialize_grads
    outputs = tensor_tuple(outputs)
    inputs = tensor_tuple(inputs)
    if not inputs:
        raise errors.grad_no_inputs()
    if grad_outputs is None:
        grad_outputs = [None] * len(outputs)
    else:
        grad_outputs = list(tensor_tuple(grad_outputs, allow_none=True))
    if len(grad_outputs) != len(outputs):
        raise errors.grad_count(len(outputs), len(grad_outputs))
    for i, x in enumerate(inputs):
        if not x.requires_grad:
            raise errors.grad_input_not_requiring(i)
    if retain_graph is None:
        retain_graph = create_graph
    found = gradients(outputs, grad_outputs, inputs, bool(retain_graph), create_graph)
    result = []
    for i, (x, g) in enumerate(zip(inputs, found, strict=True)):
        if g is None and not allow_unused:
            raise errors.grad_input_unused(i)
        if g is None and materialize_grads:
            g = np.zeros_like(x._data)
        result.append(g if g is None or isinstance(g, Tensor) else Tensor._wrap(g))
    return tuple(result)


def tensor_tuple(values, allow_none: bool = False) -> tuple:
    """A Tensor or a sequence of them as a tuple (None entries kept where allowed)."""
    if isinstance(values, Tensor) or (allow_none and values is None):
        return (values,)
    return tuple(values)
