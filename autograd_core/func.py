"""Forward mode and the functional transforms: ``jvp``, ``vjp``, ``jacfwd``, ``jacrev``,
``jacobian``. Names and signatures follow ``torch.func``.

Two ways to push derivatives through a program
----------------------------------------------
* **Reverse mode** (``vjp``; what ``backward`` does) runs the program, then sweeps
  back from the output with a *cotangent* u and gets uᵀJ: one pass gives one *row*
  of the Jacobian, e.g. the whole gradient of a scalar loss.
* **Forward mode** (``jvp``) pushes a *tangent* v from the inputs to the output
  together with the values, in the same single forward pass, and gets J v: one pass
  gives one *column* of the Jacobian (how every output moves when the inputs move
  along v).

So the Jacobian of f: Rⁿ → Rᵐ costs n forward-mode passes (``jacfwd``) or m
reverse-mode passes (``jacrev``); ``counting.count_ops`` measures it. Both give the
same numbers, up to rounding.

How the engine carries tangents
-------------------------------
Every op defines its forward-mode rule beside its backward rule, as
``jvp(ctx, *tangents)`` -> the output's tangent; an input without a tangent (a
constant) gets ``None``. The rule reads the same context backward reads:
``ctx.load(name)`` for the values the op saved, ``ctx.params``, ``ctx.input_shapes``.

``jvp`` calls ``f`` once, with recording on, on fresh leaf copies of the primals that
require grad. So every op that touches them is recorded as a node, and the node is
both the ctx its rule reads and the identity its output's tangent is filed under. An
:class:`~autograd_core.function.Observer` sees each node right after its forward has
run, looks up its inputs' tangents, applies the op's ``jvp`` rule, broadcasts the
result to the output's shape (the mirror image of the reverse sweep's un-broadcast)
and then releases the node's saved tensors, since no backward will ever read them:
forward mode holds no intermediates beyond those the program itself still uses, so
its memory does not grow with depth. (Release waits for the next op, so that other
observers, a nested ``jvp`` included, see the node intact first.)

Limits: one level of differentiation (no jvp of a gradient); ops run under
``no_grad`` inside ``f`` are invisible to forward mode (their outputs count as
constants), as they are to backward.

>>> import autograd_core as ag
>>> x = ag.tensor([1.0, 2.0])
>>> out, tangent = jvp(lambda t: (t * t).sum(), (x,), (ag.tensor([1.0, 0.0]),))
>>> tangent.item()          # d/dx0 of x0² + x1² at x0 = 1
2.0
"""

from __future__ import annotations

import functools
import weakref
from collections.abc import Callable, Sequence

import numpy as np

from . import errors
from .function import Node, Observer, observers, observing
from .grad_mode import enable_grad
from .tensor import Tensor

__all__ = ["jvp", "vjp", "jacfwd", "jacrev", "jacobian", "hvp", "hessian"]


# -- forward mode ---------------------------------------------------------------------
class TangentCarrier(Observer):
    """Carries a tangent beside every recorded value while ``f`` runs (see module doc).

    One is registered as an observer for each forward-mode pass (each ``jvp``, each
    column of ``jacfwd``): a tool that counts passes looks for it among the observers."""

    def __init__(self, leaves: Sequence[Tensor], tangents: Sequence[np.ndarray | None]):
        self.leaf_tangents = {id(x): t for x, t in zip(leaves, tangents) if t is not None}
        self.node_tangents: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
        self._to_release: Node | None = None

    def tangent_of(self, edge) -> np.ndarray | None:
        """The tangent of an op input: ``edge`` is a node, a leaf tensor or ``None``."""
        if edge is None:
            return None
        if edge.__class__ is Node:
            return self.node_tangents.get(edge)
        return self.leaf_tangents.get(id(edge))

    def on_forward(self, op, node, arrays, out, params) -> None:
        if node is None:
            return
        self.release_pending()
        tangents = tuple(self.tangent_of(edge) for edge in node.edges)
        if all(t is None for t in tangents):
            return  # not downstream of any primal: a constant for forward mode
        rule = getattr(op, "jvp", None)
        if rule is None:
            raise errors.missing_jvp(op.name)
        out_tangent = rule(node, *tangents)
        if out_tangent is not None and np.dtype(node.output_dtype).kind == "f":
            out_tangent = _fit(out_tangent, node.output_shape, node.output_dtype)
            self.node_tangents[node] = out_tangent
            for observer in observers:
                on_jvp = getattr(observer, "on_jvp", None)
                if on_jvp is not None:
                    on_jvp(op, node, tangents, out_tangent)
        self._to_release = node

    def release_pending(self) -> None:
        if self._to_release is not None:
            self._to_release.release()
            self._to_release = None

    def tangent_of_output(self, output: Tensor) -> np.ndarray:
        """The tangent that reached ``output`` (zeros if it does not depend on the primals)."""
        t = self.tangent_of(output.grad_fn if output.grad_fn is not None else output)
        return np.zeros_like(output._data) if t is None else t


def _fit(t, shape: tuple, dtype) -> np.ndarray:
    """A rule's result as a tangent of the output: broadcast to its shape, its dtype."""
    t = np.asarray(t)
    if t.shape != shape:
        t = np.broadcast_to(t, shape)
    return t if t.dtype == dtype else t.astype(dtype)


def _push_forward(func: Callable, args: Sequence, tangents: Sequence, transform: str):
    """Run ``func(*args)`` once, carrying ``tangents`` (``None`` = no tangent).
    Returns (outputs, their tangents, whether func returned a single tensor)."""
    leaves = [_leaf(transform, i, a, t is not None) for i, (a, t) in enumerate(zip(args, tangents))]
    carrier = TangentCarrier(leaves, tangents)
    with enable_grad(), observing(carrier):
        result = func(*leaves)
    carrier.release_pending()
    outputs, single = _outputs(transform, result)
    out_tangents = tuple(_own(carrier.tangent_of_output(o)) for o in outputs)
    return tuple(o.detach() for o in outputs), out_tangents, single


def jvp(func: Callable, primals, tangents, *, strict: bool = False, has_aux: bool = False):
    """(func(*primals), J·tangents): the output and its Jacobian-vector product, both
    from ONE forward pass (forward mode).

    ``primals`` and ``tangents`` are tuples of the same length; each tangent has its
    primal's shape. Returns tensors, or tuples of tensors if ``func`` returns a tuple.

    >>> import autograd_core as ag
    >>> _, t = jvp(ag.exp, (ag.tensor(0.0),), (ag.tensor(3.0),))
    >>> t.item()                # exp'(0) * 3
    3.0
    """
    if has_aux:
        raise errors.has_aux("jvp")
    primals, tangents = _as_tuple(primals), _as_tuple(tangents)
    if len(primals) != len(tangents):
        raise errors.primals_tangents("jvp", len(primals), len(tangents))
    arrays = [_tangent_array(i, p, t) for i, (p, t) in enumerate(zip(primals, tangents))]
    outputs, out_tangents, single = _push_forward(func, primals, arrays, "jvp")
    wrapped = tuple(Tensor._wrap(t) for t in out_tangents)
    return (outputs[0], wrapped[0]) if single else (outputs, wrapped)


# -- reverse mode ---------------------------------------------------------------------
def _record(func: Callable, args: Sequence, differentiate: Sequence[bool], transform: str):
    """Run ``func`` with recording on fresh leaves; (leaves, outputs, single)."""
    leaves = [_leaf(transform, i, a, d) for i, (a, d) in enumerate(zip(args, differentiate))]
    with enable_grad():
        result = func(*leaves)
    outputs, single = _outputs(transform, result)
    return leaves, outputs, single


def _pull_back(outputs, cotangents, leaves) -> tuple[np.ndarray, ...]:
    """One reverse sweep per output with a cotangent; the gradient of each leaf
    (zeros for a leaf no output depends on). The graph is kept for the next call."""
    for leaf in leaves:
        leaf.grad = None
    for index, (out, cot) in enumerate(zip(outputs, cotangents)):
        if cot is None or not out.requires_grad:
            continue
        cot = np.asarray(cot._data if isinstance(cot, Tensor) else cot, dtype=out.dtype)
        if cot.shape != out.shape:
            raise errors.cotangent_shape(index, cot.shape, out.shape)
        out.backward(cot, retain_graph=True)
    grads = tuple(np.zeros_like(x._data) if x.grad is None else x.grad._data for x in leaves)
    for leaf in leaves:
        leaf.grad = None
    return grads


def vjp(func: Callable, *primals, has_aux: bool = False):
    """(func(*primals), vjp_fn): the output, and a function that maps a cotangent u
    (the output's shape) to uᵀJ, one gradient per primal (reverse mode).

    ``vjp_fn`` can be called many times: each call is one reverse sweep over the
    graph recorded once here.

    >>> import autograd_core as ag
    >>> out, vjp_fn = vjp(lambda t: t * t, ag.tensor([1.0, 2.0]))
    >>> vjp_fn(ag.tensor([1.0, 1.0]))[0]
    tensor([2., 4.])
    """
    if has_aux:
        raise errors.has_aux("vjp")
    leaves, outputs, single = _record(func, primals, [True] * len(primals), "vjp")

    def vjp_fn(cotangents):
        cots = (cotangents,) if single else tuple(cotangents)
        if len(cots) != len(outputs):
            raise errors.primals_tangents("vjp_fn (outputs vs cotangents)", len(outputs),
                                          len(cots))
        return tuple(Tensor._wrap(g) for g in _pull_back(outputs, cots, leaves))

    detached = tuple(o.detach() for o in outputs)
    return (detached[0] if single else detached), vjp_fn


# -- Jacobians ----------------------------------------------------------------------------
def jacrev(func: Callable, argnums: int | tuple[int, ...] = 0, *, has_aux: bool = False):
    """A function computing the Jacobian of ``func`` w.r.t. ``argnums`` by reverse mode:
    one forward pass, then one VJP (reverse sweep) per output element.

    The Jacobian of an output of shape S w.r.t. an input of shape T has shape S + T.

    >>> import autograd_core as ag
    >>> jacrev(lambda t: t * t)(ag.tensor([1.0, 2.0]))
    tensor([[2., 0.],
            [0., 4.]])
    """
    if has_aux:
        raise errors.has_aux("jacrev")

    @functools.wraps(func)
    def jacobian_fn(*args):
        nums = _argnums(argnums, len(args))
        leaves, outputs, single = _record(func, args, [i in nums for i in range(len(args))],
                                          "jacrev")
        chosen = [leaves[i] for i in nums]
        jac = [[np.zeros(o.shape + x.shape, dtype=np.result_type(o.dtype, x.dtype))
                for x in chosen] for o in outputs]
        for o, out in enumerate(outputs):
            for k in range(out.numel()):
                cots = [None] * len(outputs)
                cots[o] = _basis(out._data, k)
                for i, grad in enumerate(_pull_back(outputs, cots, chosen)):
                    jac[o][i].reshape(out.numel(), grad.size)[k] = grad.ravel()
        return _structure(jac, argnums, single)

    return jacobian_fn


def jacfwd(func: Callable, argnums: int | tuple[int, ...] = 0, *, has_aux: bool = False,
           randomness: str = "error"):
    """A function computing the Jacobian of ``func`` w.r.t. ``argnums`` by forward mode:
    one JVP pass (a forward pass carrying a tangent) per input element.

    For a scalar output the Jacobian is the gradient, built one column (one pass) at
    a time:

    >>> import autograd_core as ag
    >>> jacfwd(lambda t: (t * t).sum())(ag.tensor([1.0, 2.0]))
    tensor([2., 4.])
    """
    if has_aux:
        raise errors.has_aux("jacfwd")

    @functools.wraps(func)
    def jacobian_fn(*args):
        nums = _argnums(argnums, len(args))
        jac = None
        for i, n in enumerate(nums):
            x = _leaf("jacfwd", n, args[n], True)
            for k in range(x.numel()):
                tangents = [None] * len(args)
                tangents[n] = _basis(x._data, k)
                outputs, out_tangents, single = _push_forward(func, args, tangents, "jacfwd")
                if jac is None:
                    jac = [[np.zeros(o.shape + _shape_of(args[m]),
                                     dtype=np.result_type(o.dtype, x.dtype)) for m in nums]
                           for o in outputs]
                for o, t in enumerate(out_tangents):
                    jac[o][i].reshape(t.size, x.numel())[:, k] = t.ravel()
        if jac is None:  # every differentiated input is empty: no pass ran
            outputs, _, single = _push_forward(func, args, [None] * len(args), "jacfwd")
            jac = [[np.zeros(o.shape + _shape_of(args[m])) for m in nums] for o in outputs]
        return _structure(jac, argnums, single)

    return jacobian_fn


def jacobian(func: Callable, inputs, mode: str = "reverse"):
    """The Jacobian of ``func`` at ``inputs`` (a tensor, or a tuple of them), built from
    repeated JVPs (``mode='forward'``) or repeated VJPs (``mode='reverse'``).

    Both modes give the same matrix; they differ in cost: forward mode makes one pass
    per input element, reverse mode one per output element.

    >>> import autograd_core as ag
    >>> jacobian(lambda t: t.sum(), ag.tensor([1.0, 2.0]), mode="forward")
    tensor([1., 1.])
    """
    if mode not in ("forward", "reverse"):
        raise errors.jacobian_mode(mode)
    single = not isinstance(inputs, tuple | list)
    args = (inputs,) if single else tuple(inputs)
    transform = jacfwd if mode == "forward" else jacrev
    return transform(func, argnums=0 if single else tuple(range(len(args))))(*args)


# -- second derivatives ---------------------------------------------------------------------
def hvp(func: Callable, inputs, v):
    """(func(inputs), H·v): the Hessian of a scalar ``func`` at ``inputs`` (a tensor or
    a tuple of them) times ``v`` (matching ``inputs``), as
    ``torch.autograd.functional.hvp``. The gradient's sweep is recorded as ops
    (``create_graph=True``) and differentiated once more with ``v`` as its seed: the
    cost of about two gradients, never the n gradients of the whole Hessian
    (Pearlmutter 1994).

    >>> import autograd_core as ag
    >>> hvp(lambda t: (t ** 3).sum(), ag.tensor([1.0, 2.0]), ag.tensor([1.0, 0.0]))[1]
    tensor([6., 0.])
    """
    from .autograd import grad

    single = not isinstance(inputs, tuple | list)
    args, vs = (inputs,) if single else tuple(inputs), _as_tuple(v)
    if len(vs) != len(args):
        raise errors.primals_tangents("hvp (inputs vs v)", len(args), len(vs))
    leaves, outputs, _ = _record(func, args, [True] * len(args), "hvp")
    out = outputs[0]
    if len(outputs) != 1 or out.numel() != 1:
        raise errors.hvp_not_scalar([tuple(o.shape) for o in outputs])
    firsts = grad(out, leaves, create_graph=True, allow_unused=True, materialize_grads=True)
    seeds = [Tensor._wrap(_fit(t, x.shape, x.dtype)) for t, x in zip(vs, leaves)]
    pairs = [(g, s) for g, s in zip(firsts, seeds) if g.requires_grad]
    if pairs:
        seconds = grad([g for g, _ in pairs], leaves, [s for _, s in pairs],
                       allow_unused=True, materialize_grads=True)
    else:  # the gradient is constant: the Hessian is zero
        seconds = tuple(Tensor._wrap(np.zeros_like(x._data)) for x in leaves)
    product = seconds[0] if single else tuple(seconds)
    return out.detach(), product


def hessian(func: Callable, inputs):
    """The Hessian of a scalar ``func`` at ``inputs`` (one tensor), shape
    ``inputs.shape + inputs.shape``: one Hessian-vector product per element, as
    ``torch.autograd.functional.hessian``.

    >>> import autograd_core as ag
    >>> hessian(lambda t: (t * t * t).sum(), ag.tensor([1.0, 2.0]))
    tensor([[ 6.,  0.],
            [ 0., 12.]])
    """
    x = _data(inputs)
    rows = [hvp(func, inputs, Tensor._wrap(_basis(x, k)))[1]._data.ravel()
            for k in range(x.size)]
    return Tensor._wrap(np.array(rows).reshape(x.shape + x.shape))


# -- helpers -------------------------------------------------------------------------------
def _as_tuple(x) -> tuple:
    return tuple(x) if isinstance(x, tuple | list) else (x,)


def _data(x) -> np.ndarray:
    return x._data if isinstance(x, Tensor) else np.asarray(x)


def _shape_of(x) -> tuple:
    return _data(x).shape


def _leaf(transform: str, index: int, x, requires_grad: bool) -> Tensor:
    """A fresh leaf with ``x``'s values (shared memory, no history)."""
    data = _data(x)
    if requires_grad and data.dtype.kind != "f":
        raise errors.non_float_primal(transform, index, data.dtype)
    leaf = Tensor._wrap(data)
    leaf._requires_grad = requires_grad
    return leaf


def _tangent_array(index: int, primal, tangent) -> np.ndarray:
    p, t = _data(primal), _data(tangent)
    if t.dtype.kind not in "fc" and p.dtype.kind == "f":  # as PyTorch: refused, not cast
        raise errors.non_float_tangent("jvp", index, t.dtype)
    if t.shape != p.shape:
        raise errors.tangent_shape("jvp", index, t.shape, p.shape)
    return t.astype(p.dtype, copy=False)


def _outputs(transform: str, result) -> tuple[tuple[Tensor, ...], bool]:
    if isinstance(result, Tensor):
        return (result,), True
    if isinstance(result, tuple | list) and all(isinstance(r, Tensor) for r in result):
        return tuple(result), False
    raise errors.function_output(transform, type(result).__name__)


def _own(t: np.ndarray) -> np.ndarray:
    """A tangent handed to the user: its own writeable memory."""
    return t if t.flags.writeable and t.base is None else np.array(t)


def _basis(like: np.ndarray, k: int) -> np.ndarray:
    """The k-th unit vector in the shape of ``like``."""
    e = np.zeros(like.shape, dtype=like.dtype)
    e.flat[k] = 1
    return e


def _argnums(argnums, n_args: int) -> tuple[int, ...]:
    nums = (argnums,) if isinstance(argnums, int) else tuple(argnums)
    for a in nums:
        if not -n_args <= a < n_args:
            raise errors.argnums_range(a, n_args)
    return tuple(a % n_args for a in nums)


def _structure(jac, argnums, single: bool):
    """jac[output][input] arranged like torch.func: per output, a tensor (int argnums)
    or a tuple of tensors (tuple argnums); a tuple over outputs if func returned one."""
    per_output = [
        Tensor._wrap(rows[0]) if isinstance(argnums, int) else
        tuple(Tensor._wrap(r) for r in rows)
        for rows in jac
    ]
    return per_output[0] if single else tuple(per_output)
