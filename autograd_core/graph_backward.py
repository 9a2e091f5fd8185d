"""``create_graph=True``: the reverse sweep run as recorded ops, so that the gradients it
returns have a graph of their own and can be differentiated again.

The lean sweep (``autograd_core.engine``) runs each op's ``backward`` on NumPy arrays
and records nothing. This one walks the same nodes in the same order, but each op's
gradient rule is written here with Tensors (:data:`RULES`), so every multiply and sum
of the backward pass is itself an op of a new graph. The arrays an op saved come back
as Tensors *attached to the graph they came from*: an input the op saved is that
input (a leaf itself, or a Tensor whose ``grad_fn`` is the node that made it), the
output is a Tensor of the node itself, and an array the op made (relu's mask) is a
constant. Differentiating a gradient therefore reaches the original leaves through
both the forward graph and the backward graph: second derivatives, Hessian-vector
products (Pearlmutter 1994), gradient penalties.

The rules of the CNN ops (conv2d, pooling, batch norm) and var are in
``graph_backward_cnn``, which adds them to :data:`RULES`, and those of the activations
(gelu, silu, softplus, leaky_relu) in ``graph_backward_activations``. Layer norm's and
RMS norm's are in ``graph_backward_norms``; einsum's, amax's and amin's in
``graph_backward_einsum``. An op without a Tensor rule
raises a sentence naming it; the lean sweep keeps its speed, since it never comes
through this module.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from . import errors
from .engine import _seed, _walk, broadcast_axes
from .function import Function, Node
from .op_functions import where
from .ops import elementwise as ew
from .ops import indexing as ix
from .ops import joining as jn
from .ops import matmul as mm
from .ops import nn_ops as nn
from .ops import reductions as red
from .ops import shape as sh
from .ops import softmax as sm
from .tensor import Tensor

__all__ = ["RULES", "backward_with_graph", "gradients_with_graph", "supported_ops",
           "sweep_with_graph"]


def _saved(node: Node, name: str) -> Tensor:
    """The array ``node`` saved as ``name``, as a Tensor on the graph it came from."""
    saved = node.saved[name]
    array = node.load(name)
    source = saved.source
    if source is not None and source[0] == "input":
        edge = node.edges[source[1]]
        if isinstance(edge, Tensor):  # a leaf that requires grad: the leaf itself
            return edge
        return Tensor._wrap(array, edge)  # edge: the node that made it, or None
    if source is not None and source[0] == "output":
        return Tensor._wrap(array, node)
    return Tensor._wrap(np.asarray(array))  # made by the op: a constant


def sum_to_shape(grad: Tensor, shape: tuple) -> Tensor:
    """``engine.sum_to`` as recorded ops: a broadcast gradient summed to ``shape``."""
    if grad.shape == shape:
        return grad
    axes = broadcast_axes(grad.shape, shape)
    return grad.sum(axis=axes, keepdims=True).reshape(shape)


def _reduced(node: Node, g: Tensor) -> Tensor:
    """A reduction's ``g`` with its reduced axes kept (size 1), broadcast to the input."""
    shape = node.input_shapes[0]
    axis = node.params.get("axis")
    axes = range(len(shape)) if axis is None else (axis if isinstance(axis, tuple) else (axis,))
    axes = {a % len(shape) for a in axes} if shape else set()
    kept = tuple(1 if i in axes else s for i, s in enumerate(shape))
    return g.reshape(kept).expand(*shape) if shape else g


def _linear(node: Node, g: Tensor) -> tuple:
    needs = node.needs_input_grad
    dx = g @ _saved(node, "weight") if needs[0] else None
    dw = None
    if needs[1]:
        x = _saved(node, "input")
        dw = g.reshape(-1, g.shape[-1]).T @ x.reshape(-1, x.shape[-1])
    db = g if len(needs) > 2 and needs[2] else None
    return dx, dw, db


def _pow(node: Node, g: Tensor) -> tuple:
    """da = g * b * a**(b - 1), db = g * a**b * log(a), as recorded ops; where the
    lean rule gives 0 (b == 0 for da; a == 0 and b >= 0 for db) the factor is 0."""
    needs = node.needs_input_grad
    a_array, b_array = node.load("a"), node.load("b")
    a, b = _saved(node, "a"), _saved(node, "b")
    da = db = None
    if needs[0]:
        da = g * where(_constant(b_array == 0), 0.0, b * a ** (b - 1))
    if needs[1]:
        zero = _constant((a_array == 0) & (b_array >= 0))
        safe = where(zero, 1.0, a)  # log(1) = 0 where the slope is 0 anyway
        db = g * where(zero, 0.0, a ** b * safe.log())
    return da, db


def _nll_loss(node: Node, g: Tensor) -> tuple:
    """dlog_probs = -q · (each sample's share of g), q the target distribution (one-hot,
    smoothed, 0 for ignored samples): the same q as NLLLoss.backward."""
    target = node.load("target")
    shape = node.input_shapes[0]
    reduction = node.params.get("reduction", "mean")
    ignore_index = node.params.get("ignore_index", -100)
    q = nn.target_distribution(target, shape, g.dtype, ignore_index,
                               node.params.get("label_smoothing", 0.0))
    share = g / max(nn.counted(target, ignore_index), 1) if reduction == "mean" else g
    if reduction == "none":
        share = share.reshape(target.shape[0], 1, *target.shape[1:])
    return share * Tensor._wrap(0.0 - q), None


def _matmul(node: Node, g: Tensor) -> tuple:
    """da = g @ bᵀ, db = aᵀ @ g, a 1-D operand taken as a row (a) or a column (b), as
    NumPy's matmul does, and its gradient reshaped back (batch axes: summed later)."""
    needs = node.needs_input_grad
    a_vector, b_vector = len(node.input_shapes[0]) == 1, len(node.input_shapes[1]) == 1
    shape = list(g.shape)
    if a_vector:
        shape.insert(len(shape) - (0 if b_vector else 1), 1)
    if b_vector:
        shape.append(1)
    g = g.reshape(tuple(shape))
    da = db = None
    if needs[0]:
        b = _saved(node, "b")
        b = b.reshape(-1, 1) if b_vector else b
        da = g @ b.transpose(-2, -1)
        if a_vector:
            da = da.reshape(da.shape[:-2] + da.shape[-1:])
    if needs[1]:
        a = _saved(node, "a")
        a = a.reshape(1, -1) if a_vector else a
        db = a.transpose(-2, -1) @ g
        if b_vector:
            db = db.reshape(db.shape[:-1])
    return da, db


def _constant(array) -> Tensor:
    return Tensor._wrap(np.asarray(array))


def _pair_weights(node: Node) -> tuple[np.ndarray, np.ndarray]:
    """maximum / minimum: each side's share of g (1 where it wins, ½ at a tie)."""
    a, b = node.load("a"), node.load("b")
    loses, tie = node.op._loses, 0.5 * (a == b)
    return 1 - loses(a, b) - tie, 1 - loses(b, a) - tie


def _extreme(node: Node, g: Tensor) -> tuple:
    """max / min over an axis: the winners share g (1 / number of ties each)."""
    mask = node.load("mask")
    share = mask / mask.sum(axis=node.params.get("axis"), keepdims=True)
    return (_reduced(node, g) * _constant(share.astype(g.dtype)),)


def _logsumexp(node: Node, g: Tensor) -> tuple:
    """da = g * exp(a - out), out recomputed from a so that it stays on the graph."""
    a, dim = _saved(node, "a"), node.params["dim"]
    out = a.logsumexp(tuple(range(a.ndim)) if dim is None else dim, keepdim=True)
    return (g.reshape(out.shape) * (a - out).exp(),)


def _pieces(node: Node, g: Tensor) -> tuple:
    """cat: each input's rows of g along dim."""
    dim = node.params["dim"] % len(node.input_shapes[0])
    pieces, start = [], 0
    for shape in node.input_shapes:
        key = (slice(None),) * dim + (slice(start, start + shape[dim]),)
        pieces.append(g[key])
        start += shape[dim]
    return tuple(pieces)


def _layers(node: Node, g: Tensor) -> tuple:
    """stack: each input's slice of g at its index along dim."""
    dim = node.params["dim"] % (len(node.input_shapes[0]) + 1)
    return tuple(g[(slice(None),) * dim + (i,)] for i in range(len(node.input_shapes)))


class IndexBackward(Function):
    """getitem's backward as an op: zeros in the input's shape with g added at ``key``
    (repeated indices add up). Its own backward is the getitem again."""

    name = "getitem_backward"
    rule = "dg = da[key]"

    @staticmethod
    def forward(ctx, g, key=None, shape=()):
        da = np.zeros(shape, dtype=g.dtype)
        if ix.is_advanced(key):
            split = ix.torch_order(key, da.ndim)
            target, at = (da, key) if split is None else (da[split[0]], split[1])
            np.add.at(target, at, g)
        else:
            da[key] = g
        return da

    @staticmethod
    def backward(ctx, g):
        return (ix._take(g, ctx.params["key"]),)

    @staticmethod
    def jvp(ctx, tg):
        """dout = the tangent of g scattered the same way (the op is linear in g)"""
        return IndexBackward.forward(ctx, tg, key=ctx.params["key"], shape=ctx.params["shape"])


def _scatter(node: Node, g: Tensor) -> tuple:
    key = node.params["key"]
    if ix.is_advanced(key):
        key = ix._saved_key(node, key)
    return (IndexBackward.apply(g, key=key, shape=node.input_shapes[0]),)


# op class -> (node, g) -> one gradient per input (None where none is needed), each a
# Tensor computed by recorded ops; the same rules as each op's ``rule`` text.
RULES: dict[type, Callable[[Node, Tensor], tuple]] = {
    ew.Add: lambda n, g: (g, g),
    ew.Sub: lambda n, g: (g, -g),
    ew.Mul: lambda n, g: (g * _saved(n, "b") if n.needs_input_grad[0] else None,
                          g * _saved(n, "a") if n.needs_input_grad[1] else None),
    ew.Div: lambda n, g: (g / _saved(n, "b") if n.needs_input_grad[0] else None,
                          -g * _saved(n, "a") / _saved(n, "b") ** 2
                          if n.needs_input_grad[1] else None),
    ew.Pow: _pow,
    ew.Neg: lambda n, g: (-g,),
    ew.Exp: lambda n, g: (g * _saved(n, "out"),),
    ew.Log: lambda n, g: (g / _saved(n, "a"),),
    ew.Sqrt: lambda n, g: (g / (2 * _saved(n, "out")),),
    ew.Sin: lambda n, g: (g * _saved(n, "a").cos(),),
    ew.Cos: lambda n, g: (-g * _saved(n, "a").sin(),),
    ew.Tanh: lambda n, g: (g * (1 - _saved(n, "out") ** 2),),
    ew.Sigmoid: lambda n, g: (g * _saved(n, "out") * (1 - _saved(n, "out")),),
    ew.Relu: lambda n, g: (g * _saved(n, "mask").astype(g.dtype),),
    ew.Clip: lambda n, g: (g * _saved(n, "mask").astype(g.dtype),),
    ew.Abs: lambda n, g: (g * _constant(np.nan_to_num(np.sign(n.load("a")))),),
    ew.Where: lambda n, g: (None, g * _saved(n, "cond").astype(g.dtype),
                            g * (1 - _saved(n, "cond").astype(g.dtype))),
    ew.Maximum: lambda n, g: tuple(g * _constant(w) for w in _pair_weights(n)),
    ew.Minimum: lambda n, g: tuple(g * _constant(w) for w in _pair_weights(n)),
    red.Max: _extreme,
    red.Min: _extreme,
    sm.LogSumExp: _logsumexp,
    jn.Cat: _pieces,
    jn.Stack: _layers,
    ix.GetItem: _scatter,
    ix.Narrow: _scatter,
    IndexBackward: lambda n, g: (g[n.params["key"]],),
    mm.MatMul: _matmul,
    nn.Linear: _linear,
    nn.NLLLoss: _nll_loss,
    nn.SmoothedNLLLoss: _nll_loss,
    red.Sum: lambda n, g: (_reduced(n, g),),
    red.Mean: lambda n, g: (_reduced(n, g) / (int(np.prod(n.input_shapes[0]))
                                              // max(g.numel(), 1)),),
    sh.Reshape: lambda n, g: (g.reshape(n.input_shapes[0]),),
    sh.Permute: lambda n, g: (g.permute(*np.argsort(n.params["axes"]).tolist()),),
    sh.Expand: lambda n, g: (g,),
    sm.Softmax: lambda n, g: (_saved(n, "out") * (g - (g * _saved(n, "out")).sum(
        n.params["dim"], keepdim=True)),),
    sm.LogSoftmax: lambda n, g: (g - _saved(n, "out").exp() * g.sum(
        n.params["dim"], keepdim=True),),
}


def supported_ops() -> list[str]:
    """The names of the ops whose backward can be recorded (``create_graph=True``)."""
    return sorted(op.name for op in RULES)


def _rule(node: Node) -> Callable[[Node, Tensor], tuple]:
    rule = RULES.get(node.op)  # node.op is the op's class
    if rule is None:
        raise errors.create_graph_op(node.op.name, supported_ops())
    return rule


def _run_hooks(hooks: list, grad: Tensor) -> Tensor:
    """``engine._run_hooks`` on a Tensor gradient: each hook may return a Tensor that
    replaces it (same shape and dtype), which then stays on the recorded graph."""
    for hook in tuple(hooks):  # a hook may remove itself
        result = hook(grad)
        if result is None:
            continue
        if not isinstance(result, Tensor):
            raise errors.hook_returned(hook, result)
        if result.shape != grad.shape:
            raise errors.hook_changed(hook, "size", grad.shape, result.shape)
        if result.dtype != grad.dtype:
            raise errors.hook_changed(hook, "type", grad.dtype, result.dtype)
        grad = result
    return grad


def sweep_with_graph(seeds: dict, capture: dict | None = None) -> None:
    """The reverse sweep from ``seeds`` (node -> its seed gradient, a Tensor), every
    gradient computed by recorded ops. Each leaf's total goes into its ``.grad`` (a
    Tensor with a graph, as PyTorch's ``backward(create_graph=True)`` leaves it), or,
    with ``capture`` (node or leaf -> None), into ``capture`` and no ``.grad`` is
    touched (``autograd.grad``). Hooks see, and may replace, the Tensor gradients."""
    nodes, _ = _walk(*seeds)
    buffers: dict = dict(seeds)
    for node in nodes:
        upstream = buffers.pop(node, None)
        if upstream is None:
            continue
        if node.hooks:
            upstream = _run_hooks(node.hooks, upstream)
        if capture is not None and node in capture:
            capture[node] = upstream
        elif capture is None and node.retains_grad and node.output is not None:
            out = node.output
            out.grad = upstream if out.grad is None else out.grad + upstream
        grads = _rule(node)(node, upstream)
        for i, edge in enumerate(node.edges):
            grad = grads[i] if i < len(grads) else None
            if edge is None or grad is None:
                continue
            if not isinstance(grad, Tensor):
                grad = Tensor._wrap(np.asarray(grad))
            grad = sum_to_shape(grad, node.input_shapes[i])
            if grad.dtype != node.input_dtypes[i]:
                grad = grad.astype(node.input_dtypes[i])
            held = buffers.get(edge)
            buffers[edge] = grad if held is None else held + grad
    for leaf in [t for t in buffers if not isinstance(t, Node)]:
        total = buffers.pop(leaf)
        if leaf._hooks:
            total = _run_hooks(leaf._hooks, total)
        if capture is not None:
            capture[leaf] = total
        else:
            leaf.grad = total if leaf.grad is None else leaf.grad + total


def _seed_tensor(out: Tensor, given, index: int) -> Tensor:
    """The seed of one output: a Tensor ``grad_output`` as given (it may itself require
    grad: double backward differentiates through it), else the engine's seed wrapped."""
    if isinstance(given, Tensor):
        if given.shape != out.shape:
            raise errors.grad_output_shape(index, given.shape, out.shape)
        return given
    return Tensor._wrap(_seed(out, given))


def gradients_with_graph(outputs, grad_outputs, inputs) -> list[Tensor | None]:
    """``engine.gradients`` with every gradient a Tensor computed by recorded ops
    (``autograd.grad(..., create_graph=True)``)."""
    capture = {x.grad_fn or x: None for x in inputs}
    roots: dict = {}
    leaf_outputs = []
    for index, (out, given) in enumerate(zip(outputs, grad_outputs, strict=True)):
        if not out.requires_grad:
            raise errors.no_grad_fn()
        seed = _seed_tensor(out, given, index)
        if out.grad_fn is None:
            leaf_outputs.append((out, seed))
        else:
            held = roots.get(out.grad_fn)
            roots[out.grad_fn] = seed if held is None else held + seed
    if roots:
        sweep_with_graph(roots, capture)
    for out, seed in leaf_outputs:
        held = capture.get(out)
        capture[out] = seed if held is None else held + seed
    return [capture[x.grad_fn or x] for x in inputs]


def backward_with_graph(output: Tensor, gradient=None) -> None:
    """``output.backward(gradient, create_graph=True)``: every leaf's ``.grad`` gets a
    Tensor with a graph (added to what it held), so it can be differentiated again."""
    if not output.requires_grad:
        raise errors.no_grad_fn()
    seed = _seed_tensor(output, gradient, 0)
    if output.grad_fn is None:
        output.grad = seed if output.grad is None else output.grad + seed
        return
    sweep_with_graph({output.grad_fn: seed})


# The CNN ops' rules (conv2d, pooling, batch norm, var) live in their own module, which
# adds them to RULES when it is imported (here, after everything it uses is defined).
# So do the activations' (gelu, silu, softplus, leaky_relu).
from . import graph_backward_activations as _activations  # noqa: E402, F401
from . import graph_backward_cnn as _cnn  # noqa: E402, F401

# And einsum's (an einsum again), amax's and amin's.
from . import graph_backward_einsum as _einsum  # noqa: E402, F401

# And those of masked_fill, tril/triu, cumsum, flip, pad, gather and scatter_add.
from . import graph_backward_masking as _masking  # noqa: E402, F401

# And layer norm's and RMS norm's.
from . import graph_backward_norms as _norms  # noqa: E402, F401
