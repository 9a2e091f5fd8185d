"""Forward mode and the functional transforms: ``jvp``, ``vjp``, ``jacfwd``, ``jacrev``,
``grad``, ``grad_and_value``, ``hessian`` (each as ``torch.func``'s: the transforms that
take a function return a function), and the second-order products ``hvp``, ``vhp`` and
``hessian_at``, which evaluate at given inputs as ``torch.autograd.functional``'s do and
are exported under its names by ``autograd_core.autograd.functional``.

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
:class:`~autograd_core.recording.node.Observer` sees each node right after its forward has
run, looks up its inputs' tangents, applies the op's ``jvp`` rule, broadcasts the
result to the output's shape (the mirror image of the reverse sweep's un-broadcast)
and then releases the node's saved tensors, since no backward will ever read them:
forward mode holds no intermediates beyond those the program itself still uses, so
its memory does not grow with depth. (Release waits for the next op, so that other
observers, a nested ``jvp`` included, see the node intact first.)

Composing transforms
--------------------
Transforms nest as in ``torch.func``: ``grad(grad(f))``, ``jacrev(jacrev(f))``,
``jacrev(grad(f))`` and ``jacfwd(jacrev(f))`` (Hessians), ``jvp(grad(f))``
(forward-over-reverse, what ``hvp`` does). A reverse transform (``vjp``, ``jacrev``,
``grad``, ``grad_and_value``, ``vhp``, ``hvp``, ``hessian``) looks at its tensor
arguments:

* none requires grad (or grad mode is off): the fast path. Fresh leaves, one lean
  sweep per row on NumPy arrays, results with no history. Nothing outside sees them.
* some require grad with grad mode on, because an enclosing transform is
  differentiating them (its leaves, or its own pass-through tensors), or the learner
  made them so: the *connected* path. Each such argument passes through an identity
  op (a reshape to its own shape) instead of being copied, so the inner transform
  differentiates w.r.t. tensors that are still on the enclosing graph; its gradients
  come from ``autograd.grad(..., create_graph=True)`` (the sweep recorded as ops) and
  its Jacobian rows are put together with ``stack`` and
  ``reshape``. So the result is itself a function of the enclosing inputs, which the
  enclosing transform then differentiates. During the inner sweep the identity nodes'
  edges are hidden, so the sweep stops there and never walks (or runs hooks on) the
  enclosing graph.

Forward mode composes over reverse mode: a ``jvp`` whose function records a
``create_graph`` sweep needs the saved tensors of the ops that sweep reads, so while a
connected reverse transform runs its function the :class:`TangentCarrier` holds each
node's saved tensors instead of releasing them (``holding``); the sweep's own ops are
released as usual. ``jvp(grad(f), (x,), (v,))`` is then H·v, by one forward pass
carrying v plus one recorded sweep carrying it too.

Limits: reverse mode over forward mode (``jacrev(jacfwd(f))``, ``grad`` of a ``jvp``)
and forward over forward (``jvp`` of a ``jvp``) raise a sentence: tangents are NumPy
arrays computed beside the graph, not recorded ops, so an enclosing transform would see
a constant. Forward over reverse needs the ops a recorded backward runs to have jvp
rules. A tensor ``f`` closes over (rather than takes as an argument) is a
constant to the transform. Ops run under ``no_grad`` inside ``f`` are invisible to
forward mode (their outputs count as constants), as they are to backward.

>>> import autograd_core as ag
>>> x = ag.tensor([1.0, 2.0])
>>> out, tangent = jvp(lambda t: (t * t).sum(), (x,), (ag.tensor([1.0, 0.0]),))
>>> tangent.item()          # d/dx0 of x0² + x1² at x0 = 1
2.0
"""

from __future__ import annotations

import contextlib
import functools
import warnings
import weakref
from collections.abc import Callable, Sequence

import numpy as np

from .. import errors
from ..errors import transforms as transform_errors
from ..ops.api import stack
from ..ops.shape import Reshape
from ..recording.grad_mode import enable_grad, is_grad_enabled
from ..recording.node import Node, Observer, observers, observing
from ..recording.tensor import Tensor
from ..sweep.grad import grad as _reverse_grad

__all__ = ["jvp", "vjp", "jacfwd", "jacrev", "grad", "grad_and_value", "hessian", "hvp", "vhp",
           "hessian_at"]


# -- forward mode ---------------------------------------------------------------------
class TangentCarrier(Observer):
    """Carries a tangent beside every recorded value while ``f`` runs (see module doc).

    One is registered as an observer for each forward-mode pass (each ``jvp``, each
    column of ``jacfwd``): a tool that counts passes looks for it among the observers.

    ``holding`` > 0 while a connected reverse transform runs its function inside this
    pass: the nodes recorded meanwhile keep their saved tensors, since that
    transform's ``create_graph`` sweep will read them (forward over reverse)."""

    holding = 0

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
        if not self.holding:
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
    _refuse_nested_forward(transform, args)
    leaves = [_leaf(transform, i, a, t is not None) for i, (a, t) in enumerate(zip(args, tangents))]
    carrier = TangentCarrier(leaves, tangents)
    with enable_grad(), observing(carrier):
        result = func(*leaves)
    carrier.release_pending()
    outputs, single = _outputs(transform, result)
    out_tangents = tuple(_own(carrier.tangent_of_output(o)) for o in outputs)
    return tuple(o.detach() for o in outputs), out_tangents, single


def _refuse_nested_forward(transform: str, args: Sequence) -> None:
    """Forward mode on tensors an enclosing transform differentiates would hand that
    transform a constant (tangents are NumPy, outputs detached): say so instead."""
    connected = [a for a in args if isinstance(a, Tensor) and a._requires_grad]
    if not connected or not is_grad_enabled():
        return
    for observer in observers:
        if isinstance(observer, TangentCarrier) and any(
                observer.tangent_of(a.grad_fn or a) is not None for a in connected):
            raise transform_errors.forward_over_forward(transform)
    if _running_inputs and any(_reaches(a, _running_inputs) for a in connected):
        raise transform_errors.reverse_over_forward(transform)


def jvp(func: Callable, primals, tangents, *, strict: bool = False, has_aux: bool = False):
    """(func(*primals), J·tangents): the output and its Jacobian-vector product, both
    from ONE forward pass (forward mode).

    ``primals`` and ``tangents`` are tuples of the same length; each tangent has its
    primal's shape. Returns tensors, or tuples of tensors if ``func`` returns a tuple.
    ``func`` may itself be a reverse transform: ``jvp(grad(f), (x,), (v,))`` is H·v.

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


# -- reverse mode: fast or connected ---------------------------------------------------------
# Per reverse transform whose function is running: (ids of its leaves, its identity
# nodes), so that forward mode inside it can tell it is being differentiated.
_running_inputs: list[tuple[set, set]] = []


def _connected(values) -> bool:
    """Whether a transform called with ``values`` must stay on an enclosing graph."""
    return is_grad_enabled() and any(isinstance(v, Tensor) and v._requires_grad
                                     for v in values)


def _prepare(transform: str, args: Sequence, nums, connected: bool, kwargs=None):
    """The arguments ``func`` is called with, and the identity nodes to cut.

    Fast path: fresh leaves (those in ``nums`` require grad). Connected path: a tensor
    that requires grad goes through an identity op (so it stays on the enclosing graph);
    any other argument in ``nums`` becomes a fresh leaf that requires grad."""
    kwargs = dict(kwargs or {})
    if not connected:
        return [_leaf(transform, i, a, i in nums) for i, a in enumerate(args)], kwargs, []
    cut: list[Node] = []

    def through(a, i=None):
        if isinstance(a, Tensor) and a._requires_grad:
            with enable_grad():
                y = Reshape.apply(a, shape=a.shape)
            cut.append(y.grad_fn)
            return y
        return a if i is None else _leaf(transform, i, a, i in nums)

    call = [through(a, i) for i, a in enumerate(args)]
    return call, {k: through(v) for k, v in kwargs.items()}, cut


@contextlib.contextmanager
def _running(call: Sequence, cut: Sequence[Node], connected: bool):
    """Around a reverse transform's call of ``func``: grad mode on; its inputs known to
    forward mode (``_refuse_nested_forward``); an enclosing forward pass holding saves."""
    leaves = {id(x) for x in call if isinstance(x, Tensor) and x._requires_grad
              and x.grad_fn is None}
    carriers = [o for o in observers if isinstance(o, TangentCarrier)] if connected else []
    for carrier in carriers:
        carrier.holding += 1
    _running_inputs.append((leaves, set(cut)))
    try:
        with enable_grad():
            yield
    finally:
        _running_inputs.pop()
        for carrier in carriers:
            carrier.holding -= 1


@contextlib.contextmanager
def _cut_at(cut: Sequence[Node]):
    """Hide the identity nodes' edges for the duration of an inner sweep, so it stops
    at the inner transform's inputs instead of walking the enclosing graph."""
    kept = [node.edges for node in cut]
    for node in cut:
        node.edges = (None,) * len(node.edges)
    try:
        yield
    finally:
        for node, edges in zip(cut, kept):
            node.edges = edges


def _gradients(outputs, wrt, seeds, cut, create_graph: bool = True,
               retain_graph: bool = True) -> tuple[Tensor, ...]:
    """d sum(output·seed)/d wrt as Tensors (zeros where nothing depends on an input),
    with a graph when ``create_graph``; the sweep stops at the identity nodes ``cut``."""
    pairs = [(o, s) for o, s in zip(outputs, seeds) if o._requires_grad]
    if not pairs:
        return tuple(Tensor._wrap(np.zeros_like(x._data)) for x in wrt)
    with _cut_at(cut):
        return _reverse_grad([o for o, _ in pairs], list(wrt), [s for _, s in pairs],
                              retain_graph=retain_graph, create_graph=create_graph,
                              allow_unused=True, materialize_grads=True)


def _reaches(t: Tensor, running: list[tuple[set, set]]) -> bool:
    """Whether ``t`` depends on the inputs of a running reverse transform."""
    leaves = set().union(*(ls for ls, _ in running))
    nodes = set().union(*(ns for _, ns in running))
    if t.grad_fn is None:
        return id(t) in leaves
    stack_, seen = [t.grad_fn], {t.grad_fn}
    while stack_:
        node = stack_.pop()
        if node in nodes:
            return True
        for edge in node.edges:
            if edge.__class__ is Node:
                if edge not in seen:
                    seen.add(edge)
                    stack_.append(edge)
            elif edge is not None and id(edge) in leaves:
                return True
    return False


def _record(func: Callable, args: Sequence, differentiate: Sequence[bool], transform: str):
    """Run ``func`` with recording on fresh leaves; (leaves, outputs, single)."""
    leaves = [_leaf(transform, i, a, d) for i, (a, d) in enumerate(zip(args, differentiate))]
    with _running(leaves, (), False):
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
    graph recorded once here. Called with connected primals (see the module doc) the
    output and the gradients stay on the enclosing graph.

    >>> import autograd_core as ag
    >>> out, vjp_fn = vjp(lambda t: t * t, ag.tensor([1.0, 2.0]))
    >>> vjp_fn(ag.tensor([1.0, 1.0]))[0]
    tensor([2., 4.])
    """
    if has_aux:
        raise errors.has_aux("vjp")
    connected = _connected(primals)
    if not connected:
        leaves, outputs, single = _record(func, primals, [True] * len(primals), "vjp")
    else:
        leaves, _, cut = _prepare("vjp", primals, range(len(primals)), True)
        with _running(leaves, cut, True):
            result = func(*leaves)
        outputs, single = _outputs("vjp", result)

    def vjp_fn(cotangents):
        cots = (cotangents,) if single else tuple(cotangents)
        if len(cots) != len(outputs):
            raise errors.primals_tangents("vjp_fn (outputs vs cotangents)", len(outputs),
                                          len(cots))
        if not connected:
            return tuple(Tensor._wrap(g) for g in _pull_back(outputs, cots, leaves))
        used = [(o, _cotangent(i, c, o)) for i, (o, c) in enumerate(zip(outputs, cots))
                if c is not None]
        return _gradients([o for o, _ in used], leaves, [c for _, c in used], cut)

    if connected:
        return (outputs[0] if single else outputs), vjp_fn
    detached = tuple(o.detach() for o in outputs)
    return (detached[0] if single else detached), vjp_fn


def _cotangent(index: int, cot, out: Tensor) -> Tensor:
    """A cotangent as a Tensor seed of ``out`` (kept as given if it is one: it may be on
    the graph itself)."""
    t = cot if isinstance(cot, Tensor) else Tensor._wrap(np.asarray(cot, dtype=out.dtype))
    if t.shape != out.shape:
        raise errors.cotangent_shape(index, t.shape, out.shape)
    return t if t.dtype == out.dtype else t.astype(out.dtype)


# -- grad -----------------------------------------------------------------------------------
def grad(func: Callable, argnums: int | tuple[int, ...] = 0, has_aux: bool = False):
    """A function computing the gradient of the scalar ``func`` w.r.t. ``argnums``, as
    ``torch.func.grad``: a tensor (int argnums) or a tuple of them (tuple argnums), each
    its argument's shape. With ``has_aux=True`` ``func`` returns ``(output, aux)`` and
    the result is ``(gradient, aux)``. Keyword arguments are passed to ``func`` and not
    differentiated. Transforms nest: ``grad(grad(f))`` is the second derivative.

    >>> import autograd_core as ag
    >>> grad(lambda t: (t * t).sum())(ag.tensor([1.0, 2.0]))
    tensor([2., 4.])
    >>> grad(grad(ag.sin))(ag.tensor(0.5)).item() == -ag.sin(ag.tensor(0.5)).item()
    True
    """
    @functools.wraps(func)
    def grad_fn(*args, **kwargs):
        gradient, value = _grad_and_value("grad", func, argnums, has_aux, args, kwargs)
        return (gradient, value[1]) if has_aux else gradient

    return grad_fn


def grad_and_value(func: Callable, argnums: int | tuple[int, ...] = 0, has_aux: bool = False):
    """Like :func:`grad`, but the function returns ``(gradient, value)``, the value
    being ``func``'s output (``(output, aux)`` with ``has_aux=True``), as
    ``torch.func.grad_and_value``: one forward pass and one sweep give both.

    >>> import autograd_core as ag
    >>> g, value = grad_and_value(lambda t: (t * t).sum())(ag.tensor([1.0, 2.0]))
    >>> g, value.item()
    (tensor([2., 4.]), 5.0)
    """
    @functools.wraps(func)
    def grad_and_value_fn(*args, **kwargs):
        return _grad_and_value("grad_and_value", func, argnums, has_aux, args, kwargs)

    return grad_and_value_fn


def _grad_and_value(transform: str, func: Callable, argnums, has_aux: bool, args, kwargs):
    nums = _argnums(argnums, len(args))
    connected = _connected((*args, *kwargs.values()))
    call, kw, cut = _prepare(transform, args, nums, connected, kwargs)
    with _running(call, cut, connected):
        result = func(*call, **kw)
    aux = None
    if has_aux:
        if not isinstance(result, tuple | list) or len(result) != 2:
            raise transform_errors.aux_output(transform)
        result, aux = result
    if not isinstance(result, Tensor):
        raise transform_errors.grad_output_type(transform, type(result).__name__)
    if result.ndim != 0:
        raise transform_errors.grad_not_scalar(transform, result.shape)
    wrt = [call[i] for i in nums]
    # (the fast path keeps the graph too: f may use tensors of the learner's own graph)
    grads = _gradients([result], wrt, [None], cut, create_graph=connected)
    if not connected:
        result, aux = result.detach(), _detached(aux)
    gradient = grads[0] if isinstance(argnums, int) else tuple(grads)
    return gradient, ((result, aux) if has_aux else result)


def _detached(value):
    """``aux`` handed back by the fast path: tensors without the transform's history."""
    if isinstance(value, Tensor):
        return value.detach()
    if isinstance(value, tuple | list):
        return type(value)(_detached(v) for v in value)
    if isinstance(value, dict):
        return {k: _detached(v) for k, v in value.items()}
    return value


# -- Jacobians ----------------------------------------------------------------------------
def jacrev(func: Callable, argnums: int | tuple[int, ...] = 0, *, has_aux: bool = False):
    """A function computing the Jacobian of ``func`` w.r.t. ``argnums`` by reverse mode:
    one forward pass, then one VJP (reverse sweep) per output element.

    The Jacobian of an output of shape S w.r.t. an input of shape T has shape S + T.
    Transforms nest: ``jacrev(jacrev(f))`` and ``jacrev(grad(f))`` are Hessians.

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
        if _connected(args):
            return _connected_jacrev(func, args, nums, argnums)
        leaves, outputs, single = _record(func, args, [i in nums for i in range(len(args))],
                                          "jacrev")
        chosen = [leaves[i] for i in nums]
        jac = [[np.zeros(o.shape + x.shape, dtype=np.result_type(o.dtype, x.dtype))
                for x in chosen] for o in outputs]
        for o, out in enumerate(outputs):
            for k in range(out.numel()):
                cots = [None] * len(outputs)
                cots[o] = _basis(out._data, k)
                for i, grad_ in enumerate(_pull_back(outputs, cots, chosen)):
                    jac[o][i].reshape(out.numel(), grad_.size)[k] = grad_.ravel()
        return _structure(jac, argnums, single)

    return jacobian_fn


def _connected_jacrev(func: Callable, args, nums, argnums):
    """jacrev on the enclosing graph: rows from create_graph sweeps, joined by stack."""
    call, _, cut = _prepare("jacrev", args, nums, True)
    with _running(call, cut, True):
        result = func(*call)
    outputs, single = _outputs("jacrev", result)
    chosen = [call[i] for i in nums]
    jac = []
    for out in outputs:
        rows: list[list[Tensor]] = [[] for _ in chosen]
        for k in range(out.numel()):
            seed = Tensor._wrap(_basis(out._data, k))
            for i, row in enumerate(_gradients([out], chosen, [seed], cut)):
                rows[i].append(row)
        jac.append([_joined(r, out.shape + x.shape, np.result_type(out.dtype, x.dtype))
                    for r, x in zip(rows, chosen)])
    return _structure(jac, argnums, single)


def _joined(rows: Sequence[Tensor], shape: tuple, dtype) -> Tensor:
    """Rows of a Jacobian (Tensors, possibly on a graph) as one Tensor of ``shape``."""
    if not rows:
        return Tensor._wrap(np.zeros(shape, dtype=dtype))
    jac = stack([r.reshape(-1) for r in rows]).reshape(shape)
    return jac if jac.dtype == dtype else jac.astype(dtype)


def jacfwd(func: Callable, argnums: int | tuple[int, ...] = 0, *, has_aux: bool = False,
           randomness: str = "error"):
    """A function computing the Jacobian of ``func`` w.r.t. ``argnums`` by forward mode:
    one JVP pass (a forward pass carrying a tangent) per input element.
    ``jacfwd(jacrev(f))`` is the Hessian (forward over reverse).

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


# -- second derivatives ---------------------------------------------------------------------
def hvp(func: Callable, inputs, v):
    """(func(inputs), H·v): the Hessian of a scalar ``func`` at ``inputs`` (a tensor or
    a tuple of them) times ``v`` (each of its input's shape), as
    ``torch.autograd.functional.hvp`` (exported as ``autograd_core.autograd.functional.hvp``).

    Forward over reverse: ``jvp`` of the gradient, the gradient's sweep recorded as ops
    (``create_graph=True``) inside a forward pass that carries v. It costs one forward
    pass and one recorded sweep, each with its tangent rules (about two gradients),
    never the n gradients of the whole Hessian (Pearlmutter 1994); memory is one
    gradient's (the recorded sweep's own ops are released as the tangent passes them).
    The directional derivative of the gradient along v is H·v exactly; :func:`vhp`
    (reverse over reverse) gives vᵀH, the same numbers since H is symmetric.

    Called with connected ``inputs`` or ``v`` (inside an enclosing transform, see the
    module doc) it runs reverse over reverse instead, both sweeps recorded, so that the
    result stays on the enclosing graph (forward mode cannot be differentiated).

    >>> import autograd_core as ag
    >>> hvp(lambda t: (t ** 3).sum(), ag.tensor([1.0, 2.0]), ag.tensor([1.0, 0.0]))[1]
    tensor([6., 0.])
    """
    args, vs, single = _inputs_and_vectors("hvp", inputs, v)
    if _connected((*args, *vs)):
        return _reverse_over_reverse("hvp", func, args, vs, single)
    tangents = [_fit(_data(t), _shape_of(x), _data(x).dtype) for t, x in zip(vs, args)]
    value = []

    def gradient(*xs):  # xs: jvp's leaves, so grad below takes the connected path
        call, _, cut = _prepare("hvp", xs, range(len(xs)), True)
        with _running(call, cut, True):
            out = _scalar_output("hvp", func(*call))
        value.append(out.detach())
        return _gradients([out], call, [None], cut)

    _, products, _ = _push_forward(gradient, args, tangents, "hvp")
    products = tuple(Tensor._wrap(p) for p in products)
    return value[0], (products[0] if single else products)


def vhp(func: Callable, inputs, v):
    """(func(inputs), vᵀH): ``v`` times the Hessian of a scalar ``func`` at ``inputs``
    (a tensor or a tuple of them), as ``torch.autograd.functional.vhp`` (exported as
    ``autograd_core.autograd.functional.vhp``).

    Reverse over reverse: the gradient's sweep is recorded as ops
    (``create_graph=True``), then swept once more with ``v`` as its seed, which gives
    vᵀH directly: two sweeps, the second over the forward graph *and* the recorded one,
    so it keeps both graphs' saved tensors at once (more memory than :func:`hvp`'s
    forward over reverse, about the same work). H is symmetric, so vᵀH = H·v.

    >>> import autograd_core as ag
    >>> vhp(lambda t: (t ** 3).sum(), ag.tensor([1.0, 2.0]), ag.tensor([1.0, 0.0]))[1]
    tensor([6., 0.])
    """
    args, vs, single = _inputs_and_vectors("vhp", inputs, v)
    return _reverse_over_reverse("vhp", func, args, vs, single)


def _inputs_and_vectors(transform: str, inputs, v) -> tuple[tuple, tuple, bool]:
    """hvp's and vhp's ``inputs`` and ``v`` as tuples of the same length, and whether
    ``inputs`` was one tensor (then the product is one tensor too)."""
    single = not isinstance(inputs, tuple | list)
    args, vs = (inputs,) if single else tuple(inputs), _as_tuple(v)
    if len(vs) != len(args):
        raise errors.primals_tangents(f"{transform} (inputs vs v)", len(args), len(vs))
    for index, (x, v_) in enumerate(zip(args, vs)):
        if _shape_of(v_) != _shape_of(x):  # as PyTorch: refused, never broadcast
            raise transform_errors.v_shape(transform, index, _shape_of(v_), _shape_of(x))
    return args, vs, single


def _reverse_over_reverse(transform: str, func: Callable, args, vs, single: bool):
    """(func(args), vᵀH) by two sweeps, the first recorded; both recorded (and the
    output kept on the graph) when connected."""
    connected = _connected((*args, *vs))
    call, _, cut = _prepare(transform, args, range(len(args)), connected)
    with _running(call, cut, connected):  # (the first sweep too: the second reads it)
        out = _scalar_output(transform, func(*call))
        firsts = _gradients([out], call, [None], cut)
    seeds = [_seed_like(t, x) for t, x in zip(vs, call)]
    seconds = _gradients(firsts, call, seeds, cut, create_graph=connected,
                         retain_graph=connected)
    return (out if connected else out.detach()), (seconds[0] if single else tuple(seconds))


def _scalar_output(transform: str, result) -> Tensor:
    outputs, _ = _outputs(transform, result)
    if len(outputs) != 1 or outputs[0].numel() != 1:
        raise errors.hvp_not_scalar([tuple(o.shape) for o in outputs], transform)
    return outputs[0]


def _seed_like(v, x: Tensor) -> Tensor:
    """``v`` (of x's shape, checked by ``_inputs_and_vectors``) as a seed for the gradient
    w.r.t. ``x``: kept if it is a Tensor of x's dtype (it may be on the graph), else cast."""
    if isinstance(v, Tensor) and v.shape == x.shape and v.dtype == x.dtype:
        return v
    return Tensor._wrap(_fit(_data(v), x.shape, x.dtype))


def hessian(func: Callable, argnums: int | tuple[int, ...] = 0):
    """A function computing the Hessian of ``func`` w.r.t. ``argnums``, as
    ``torch.func.hessian``: ``jacfwd(jacrev(func, argnums), argnums)``, forward over
    reverse, one forward pass carrying a tangent through a recorded sweep per input
    element. For an output of shape S and an input of shape T it has shape S + T + T
    (a tuple of tuples for tuple argnums). Called with connected arguments (inside an
    enclosing transform, see the module doc) it runs ``jacrev(jacrev(...))`` instead,
    so the result stays on the enclosing graph. To evaluate at given inputs in one call,
    as ``torch.autograd.functional.hessian``, use
    ``autograd_core.autograd.functional.hessian(func, inputs)``.

    >>> import autograd_core as ag
    >>> hessian(lambda t: (t * t * t).sum())(ag.tensor([1.0, 2.0]))
    tensor([[ 6.,  0.],
            [ 0., 12.]])
    """
    if isinstance(argnums, Tensor | np.ndarray):  # the old form hessian(func, inputs)
        warnings.warn(transform_errors.hessian_evaluates(), DeprecationWarning, stacklevel=2)
        return hessian_at(func, argnums)

    @functools.wraps(func)
    def hessian_fn(*args):
        inner = jacrev if _connected(args) else jacfwd
        return inner(jacrev(func, argnums), argnums)(*args)

    return hessian_fn


def hessian_at(func: Callable, inputs):
    """The Hessian of a scalar ``func`` at ``inputs`` (one tensor), shape
    ``inputs.shape + inputs.shape``: one Hessian-vector product (:func:`hvp`, forward
    over reverse) per element. ``torch.autograd.functional.hessian``'s form, exported as
    ``autograd_core.autograd.functional.hessian``. Connected inputs: the rows stay on the
    graph.

    >>> import autograd_core as ag
    >>> hessian_at(lambda t: (t * t * t).sum(), ag.tensor([1.0, 2.0]))
    tensor([[ 6.,  0.],
            [ 0., 12.]])
    """
    x = _data(inputs)
    rows = [hvp(func, inputs, Tensor._wrap(_basis(x, k)))[1] for k in range(x.size)]
    if _connected((inputs,)):
        return _joined(rows, x.shape + x.shape, x.dtype)
    return Tensor._wrap(np.array([r._data.ravel() for r in rows]).reshape(x.shape + x.shape))


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
    if isinstance(argnums, int):
        nums = (argnums,)
    elif isinstance(argnums, tuple) and all(isinstance(a, int) for a in argnums):
        nums = argnums
    else:
        raise transform_errors.argnums_type(argnums)
    if not nums:
        raise transform_errors.argnums_empty()
    for a in nums:
        if not -n_args <= a < n_args:
            raise errors.argnums_range(a, n_args)
    normal = tuple(a % n_args for a in nums)
    if len(set(normal)) != len(normal):
        raise transform_errors.argnums_unique(argnums)
    return normal


def _structure(jac, argnums, single: bool):
    """jac[output][input] arranged like torch.func: per output, a tensor (int argnums)
    or a tuple of tensors (tuple argnums); a tuple over outputs if func returned one."""
    per_output = [
        _as_tensor(rows[0]) if isinstance(argnums, int) else
        tuple(_as_tensor(r) for r in rows)
        for rows in jac
    ]
    return per_output[0] if single else tuple(per_output)


def _as_tensor(value) -> Tensor:
    return value if isinstance(value, Tensor) else Tensor._wrap(value)
