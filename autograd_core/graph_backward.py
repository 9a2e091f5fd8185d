"""The ops' gradient rules written with Tensors, for ``create_graph=True``.

The engine's sweep (``autograd_core.engine``) runs each op's ``backward`` on NumPy
arrays. Under ``create_graph=True`` it runs the same loop with Tensors and, for each
node, the rule here (:data:`RULES`, :func:`recorded_rule`), so every multiply and sum
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
``graph_backward_einsum``. An op without an entry here runs its own ``backward``,
written once for both modes (see ``recorded_numpy``): the rules here are those not
yet written that way.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from .function import Node
from .op_functions import where
from .ops import joining as jn
from .ops import matmul as mm
from .ops import nn_ops as nn
from .ops import reductions as red
from .ops import shape as sh
from .ops import softmax as sm
from .recorded_numpy import RecordedContext
from .tensor import Tensor

__all__ = ["RULES"]


def _saved(node: Node, name: str) -> Tensor:
    """The array ``node`` saved as ``name``, as a Tensor on the graph it came from."""
    return RecordedContext(node).load(name)


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


# op class -> (node, g) -> one gradient per input (None where none is needed), each a
# Tensor computed by recorded ops; the same rules as each op's ``rule`` text.
RULES: dict[type, Callable[[Node, Tensor], tuple]] = {
    red.Max: _extreme,
    red.Min: _extreme,
    sm.LogSumExp: _logsumexp,
    jn.Cat: _pieces,
    jn.Stack: _layers,
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
