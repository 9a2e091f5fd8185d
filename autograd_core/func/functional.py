"""PyTorch's ``torch.autograd.functional`` (imported as ``autograd_core.autograd.functional``,
PyTorch's path): derivatives of a function *evaluated at given inputs*, in one call:
``vjp``, ``jvp``, ``jacobian``, ``hessian``, ``hvp``, ``vhp``.

``autograd_core.func`` holds ``torch.func``'s transforms, which take a function and
return a function (``func.hessian(f)(x)``, ``func.jacrev(f)(x)``); these take the inputs
too (``hessian(f, x)``). Both run the same machinery (``func/transforms.py``): these are
its evaluate-at-inputs forms, with ``torch.autograd.functional``'s signatures and results.

``inputs`` is a tensor or a tuple of them; a result per input is a tensor in the first
case and a tuple in the second. ``v`` has exactly the shape of what it multiplies (the
inputs for ``jvp``, ``hvp``, ``vhp``, the outputs for ``vjp``): a mismatch is refused,
never broadcast. ``vectorize`` changes only the speed, so it is accepted and ignored;
``create_graph=True`` and ``strict=True`` are refused with a sentence: to keep a result on
a graph, call these on tensors that require grad (or inside an enclosing transform).

>>> import autograd_core as ag
>>> hessian(lambda t: (t * t * t).sum(), ag.tensor([1.0, 2.0]))  # func.hessian(f)(x)
tensor([[ 6.,  0.],
        [ 0., 12.]])
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from ..errors import transforms as transform_errors
from ..recording.tensor import Tensor
from . import transforms as _transforms

__all__ = ["vjp", "jvp", "jacobian", "hessian", "hvp", "vhp"]


def vjp(func: Callable, inputs, v=None, create_graph: bool = False, strict: bool = False):
    """(func(inputs), vᵀJ): the output and v times the Jacobian (one reverse sweep), as
    ``torch.autograd.functional.vjp``. ``v`` has the output's shape; it may be left out
    when the output has a single element.

    >>> import autograd_core as ag
    >>> vjp(lambda t: t * t, ag.tensor([1.0, 2.0]), ag.tensor([1.0, 1.0]))[1]
    tensor([2., 4.])
    """
    _refuse_options("vjp", create_graph, strict)
    args, single = _inputs(inputs)
    out, pull = _transforms.vjp(func, *args)
    outs = out if isinstance(out, tuple) else (out,)
    vs = _vectors("vjp", v, outs, "outputs")
    grads = pull(vs if isinstance(out, tuple) else vs[0])
    return out, (grads[0] if single else grads)


def jvp(func: Callable, inputs, v=None, create_graph: bool = False, strict: bool = False):
    """(func(inputs), J·v): the output and the Jacobian times v (one forward pass
    carrying v), as ``torch.autograd.functional.jvp``. ``v`` has the inputs' shapes; it
    may be left out when the input is one tensor of a single element.

    >>> import autograd_core as ag
    >>> jvp(lambda t: t * t, ag.tensor([1.0, 2.0]), ag.tensor([1.0, 0.0]))[1]
    tensor([2., 0.])
    """
    _refuse_options("jvp", create_graph, strict)
    args, _ = _inputs(inputs)
    vs = _vectors("jvp", v, args, "inputs")
    return _transforms.jvp(func, args, vs)


def jacobian(func: Callable, inputs, create_graph: bool = False, strict: bool = False,
             vectorize: bool = False, strategy: str = "reverse-mode"):
    """The Jacobian of ``func`` at ``inputs``, as ``torch.autograd.functional.jacobian``:
    ``func.jacrev`` (``strategy="reverse-mode"``, one VJP per output element) or
    ``func.jacfwd`` (``"forward-mode"``, one JVP per input element) evaluated there. Both
    give the same matrix; they differ in cost.

    >>> import autograd_core as ag
    >>> jacobian(lambda t: t.sum(), ag.tensor([1.0, 2.0]), strategy="forward-mode")
    tensor([1., 1.])
    """
    _refuse_options("jacobian", create_graph, strict)
    if strategy not in ("forward-mode", "reverse-mode"):
        raise transform_errors.jacobian_strategy(strategy)
    args, single = _inputs(inputs)
    transform = _transforms.jacfwd if strategy == "forward-mode" else _transforms.jacrev
    return transform(func, argnums=0 if single else tuple(range(len(args))))(*args)


def hessian(func: Callable, inputs, create_graph: bool = False, strict: bool = False,
            vectorize: bool = False, outer_jacobian_strategy: str = "reverse-mode"):
    """The Hessian of a scalar ``func`` at ``inputs``, as
    ``torch.autograd.functional.hessian``: for one tensor, shape ``inputs.shape * 2``, one
    Hessian-vector product (:func:`hvp`) per element; for a tuple, a tuple of tuples of
    blocks (``func.hessian`` over all the inputs).

    >>> import autograd_core as ag
    >>> hessian(lambda t: (t ** 3).sum(), ag.tensor([1.0, 2.0]))
    tensor([[ 6.,  0.],
            [ 0., 12.]])
    """
    _refuse_options("hessian", create_graph, strict)
    if outer_jacobian_strategy not in ("forward-mode", "reverse-mode"):
        raise transform_errors.jacobian_strategy(outer_jacobian_strategy)
    args, single = _inputs(inputs)
    if single:
        return _transforms.hessian_at(func, inputs)
    return _transforms.hessian(func, argnums=tuple(range(len(args))))(*args)


def hvp(func: Callable, inputs, v=None, create_graph: bool = False, strict: bool = False):
    """(func(inputs), H·v), forward over reverse, as ``torch.autograd.functional.hvp``
    (see ``func/transforms.py``'s ``hvp`` for how and what it costs).

    >>> import autograd_core as ag
    >>> hvp(lambda t: (t ** 3).sum(), ag.tensor([1.0, 2.0]), ag.tensor([1.0, 0.0]))[1]
    tensor([6., 0.])
    """
    _refuse_options("hvp", create_graph, strict)
    return _transforms.hvp(func, inputs, _default_v("hvp", v, inputs))


def vhp(func: Callable, inputs, v=None, create_graph: bool = False, strict: bool = False):
    """(func(inputs), vᵀH), reverse over reverse, as ``torch.autograd.functional.vhp``.

    >>> import autograd_core as ag
    >>> vhp(lambda t: (t ** 3).sum(), ag.tensor([1.0, 2.0]), ag.tensor([1.0, 0.0]))[1]
    tensor([6., 0.])
    """
    _refuse_options("vhp", create_graph, strict)
    return _transforms.vhp(func, inputs, _default_v("vhp", v, inputs))


# -- helpers -------------------------------------------------------------------------------
def _refuse_options(transform: str, create_graph: bool, strict: bool) -> None:
    for name, value in (("create_graph", create_graph), ("strict", strict)):
        if value:
            raise transform_errors.functional_unsupported(transform, name)


def _inputs(inputs) -> tuple[tuple, bool]:
    """``inputs`` as a tuple, and whether it was one tensor."""
    single = not isinstance(inputs, tuple | list)
    return ((inputs,) if single else tuple(inputs)), single


def _vectors(transform: str, v, partners, against: str) -> tuple:
    """``v`` as a tuple matching ``partners`` (the inputs or the outputs) shape by shape;
    ones when left out for a single one-element partner, as PyTorch."""
    if v is None:
        first = _transforms._data(partners[0])
        if len(partners) != 1 or first.size != 1:
            shape = first.shape if len(partners) == 1 else (len(partners),)
            raise transform_errors.v_none(transform, f"the {against[:-1]}", shape)
        return (Tensor._wrap(np.ones_like(first)),)
    vs = tuple(v) if isinstance(v, tuple | list) else (v,)
    if len(vs) != len(partners):
        raise transform_errors.primals_tangents(f"{transform} ({against} vs v)", len(partners),
                                                len(vs))
    for index, (p, t) in enumerate(zip(partners, vs)):
        if np.shape(_transforms._data(t)) != np.shape(_transforms._data(p)):
            raise transform_errors.v_shape(transform, index, np.shape(_transforms._data(t)),
                                           np.shape(_transforms._data(p)), against)
    return vs


def _default_v(transform: str, v, inputs):
    """hvp's and vhp's v: as given, or ones for one input of a single element."""
    if v is not None:
        return v
    args, single = _inputs(inputs)
    vs = _vectors(transform, None, args, "inputs")
    return vs[0] if single else vs
