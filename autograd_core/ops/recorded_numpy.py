"""The rules' names as the engine's own ops: what a rule computes with under
``create_graph=True``.

An op's backward is its rule, compiled once (``recording/rule.py``). The compiled code
reads its functions from ``ctx.rule_names`` and its arrays with ``ctx.load``:

* in ``backward()``, ``ctx`` is the node: ``rule.PLAIN`` (NumPy's functions, and the
  few the ops add: ``sigmoid``, ``scatter``, ``conv2d_input_grad``, ...) on NumPy
  arrays, and nothing is recorded;
* under ``create_graph=True``, ``ctx`` is a :class:`RecordedContext`: ``g`` is a Tensor,
  ``ctx.load`` returns Tensors *attached to the graph they came from* (an input the op
  saved is that input, its output is the node's own output, an array the op made, such
  as relu's mask, is a constant; an input it did not save is rebuilt by its stand-in
  and put on the input's edge), and ``rule.RECORDED``, filled in here, has the same
  names running the engine's ops. So the very same lines record every multiply and sum
  of the backward pass, and the gradient they return can be differentiated again.

Operators (``g * b``, ``-g``, ``g / (2 * out)``) and the methods both kinds share
(``.astype``, ``.reshape``, indexing) need no name. :func:`constant` is for values with
no derivative of their own (a sign, a mask), so they are computed on arrays in both
modes.
"""

from __future__ import annotations

import numpy as np

from ..recording import rule
from ..recording.node import Node
from ..recording.tensor import Tensor
from . import api as F
from ._util import constant
from .activations import NormalCdf
from .conv import Conv2d, Conv2dInputGrad, Conv2dWeightGrad, input_grad_of, weight_grad_of
from .einsum import Einsum
from .indexing import GetItem, IndexBackward
from .linalg import Inv, Solve
from .masking import Pad
from .nn_ops import one_hot, target_distribution
from .pooling import AvgPool2d, AvgPool2dBackward, MaxPool2dBackward, MaxPool2dGather
from .scatter import Gather, ScatterAdd, padded_to
from .sorting import Roll


def where(condition, x, y) -> Tensor:
    """``np.where`` as the engine's op: ``condition`` is a constant mask (one value for
    all: the side it picks, with no op, where ``rule.one_side`` allows)."""
    side = rule.one_side(condition, x, y)
    return F.where(constant(condition), x, y) if side is None else side


def transpose(a, axes) -> Tensor:
    """``np.transpose(a, axes)`` as the engine's op."""
    return F.permute(a, *[int(axis) for axis in axes])


def broadcast_to(a, shape: tuple) -> Tensor:
    """``np.broadcast_to`` as the engine's op."""
    return F.expand(a, *shape)


class RecordedContext:
    """What an op's backward sees as ``ctx`` under ``create_graph=True``: its node, with
    ``load`` giving Tensors on the graph and the rules' names as recorded ops (see the
    docstring)."""

    __slots__ = ("node",)
    recorded = True
    rule_names = rule.RECORDED  # a compiled rule's functions: filled in below

    def __init__(self, node: Node):
        self.node = node

    def __getattr__(self, name: str):
        return getattr(self.node, name)

    def input_on_graph(self, i: int, rebuilt) -> Tensor:
        """Input ``i`` of an op that did not save it, as a Tensor whose gradient reaches
        it: a leaf input is itself; a computed one is ``rebuilt()``, its value rebuilt
        from what the op saved (up to a shift the op does not see), put on the node that
        made it."""
        edge = self.node.edges[i]
        if isinstance(edge, Tensor):  # a leaf that requires grad
            return edge
        return Tensor._wrap(rebuilt(), edge)  # edge: the node that made the input, or None

    def load(self, name: str) -> Tensor:
        """The array the op saved as ``name``, as a Tensor on the graph it came from; or
        an input the op did not save, rebuilt by its stand-in (recording/rule.py)."""
        node = self.node
        if name not in node.saved and name in node.op.stand_ins:
            recipe = node.op.stand_ins[name]
            if name not in node.op.rule_inputs:  # a param rebuilt (getitem's key)
                return recipe(node)
            return self.input_on_graph(node.op.rule_inputs.index(name), lambda: recipe(node))
        array = node.load(name)
        source = node.saved[name].source
        if source is not None and source[0] == "input":
            edge = node.edges[source[1]]
            if isinstance(edge, Tensor):  # a leaf that requires grad: the leaf itself
                return edge
            return Tensor._wrap(array, edge)  # edge: the node that made it, or None
        if source is not None and source[0] == "output":  # (or it with axes kept)
            output = Tensor._wrap(np.reshape(array, node.output_shape), node)
            return output if output.shape == np.shape(array) else output.reshape(array.shape)
        return Tensor._wrap(np.asarray(array))  # made by the op: a constant



# -- the names a compiled rule calls (recording/rule.py), as recorded ops ---------------
def _on_tensors(numpy_function, engine_function):
    """``engine_function`` when an argument is a Tensor (a value on the recorded graph),
    else ``numpy_function``: a rule computes on its params and numbers (``sqrt(2 * pi)``,
    ``argsort(axes)``) with NumPy in both sweeps."""
    def function(*args, **kwargs):
        for a in args:
            if isinstance(a, Tensor):
                return engine_function(*args, **kwargs)
        return numpy_function(*args, **kwargs)
    function.__name__ = numpy_function.__name__
    return function


def _on_values(numpy_function):
    """``numpy_function`` on the values of its Tensor arguments (a target, a mask): what
    it computes has no derivative, so it is a constant of the recorded sweep."""
    def function(*args, **kwargs):
        return numpy_function(*(constant(a) if isinstance(a, Tensor) else a for a in args),
                              **kwargs)
    function.__name__ = numpy_function.__name__
    return function


def _constant_key(key):
    """An index (embedding's indices, a Tensor constant of the recorded sweep) or a key
    with index arrays, as arrays."""
    if isinstance(key, tuple):
        return tuple(constant(part) if isinstance(part, Tensor) else part for part in key)
    return constant(key) if isinstance(key, Tensor) else key


def _rule_padded(x, pads):
    """``x`` padded with zeros (negative pads crop), as the engine's pad op."""
    return Pad.apply(x, pad=tuple(pads), value=0.0)


def _rule_conv2d(x, weight, stride, padding, dilation, groups):
    """conv2d as the engine's op."""
    return Conv2d.apply(x, weight, stride=stride, padding=padding, dilation=dilation,
                        groups=groups)


def _rule_conv2d_input_grad(g, weight, input_shape, stride, padding, dilation, groups):
    """conv2d's input gradient as the engine's op (``conv.input_grad_of``'s batching)."""
    return input_grad_of(g, weight, input_shape, stride, padding, dilation, groups,
                         compute=lambda g, w, shape, s, p, d, k: Conv2dInputGrad.apply(
                             g, w, input_shape=shape, stride=s, padding=p, dilation=d,
                             groups=k))


def _rule_conv2d_weight_grad(x, g, weight_shape, stride, padding, dilation, groups):
    """conv2d's weight gradient as the engine's op (``conv.weight_grad_of``'s batching)."""
    return weight_grad_of(x, g, weight_shape, stride, padding, dilation, groups,
                          compute=lambda x, g, shape, s, p, d, k: Conv2dWeightGrad.apply(
                              x, g, weight_shape=shape, stride=s, padding=p, dilation=d,
                              groups=k))


def _rule_flip(x, dims):
    """``np.flip(x, dims)``, ``dims`` one axis or several, as the engine's op."""
    return F.flip(x, (dims,) if isinstance(dims, int | np.integer) else dims)


def _rule_roll(x, shifts, dims):
    """``np.roll(x, shifts, dims)`` as the engine's op (``shifts`` one int or several)."""
    return Roll.apply(x, shifts=shifts if dims is None else tuple(int(s) for s in shifts),
                      dims=dims)


def _rule_sign(x):
    """A sign has no derivative of its own: a constant, computed on the values."""
    return np.sign(constant(x))


for _name, _engine in dict(exp=F.exp, log=F.log, sin=F.sin, cos=F.cos, tanh=F.tanh,
                           sqrt=F.sqrt, where=where, sign=_rule_sign,
                           sum=lambda a, axis=None: F.sum(a, axis=axis, keepdims=True),
                           mean=lambda a, axis=None: F.mean(a, axis=axis, keepdims=True),
                           broadcast_to=broadcast_to, transpose=transpose,
                           tril=F.tril, triu=F.triu, flip=_rule_flip, cumsum=F.cumsum,
                           roll=_rule_roll,
                           sigmoid=F.sigmoid, normal_cdf=NormalCdf.apply,
                           pick=lambda x, key: GetItem.apply(x, key=key),
                           scatter=lambda values, key, shape: IndexBackward.apply(
                               values, key=_constant_key(key), shape=shape),
                           mT=lambda x: F.transpose(x, -2, -1), padded=_rule_padded,
                           padded_to=lambda x, shape: padded_to(x, shape, pad=_rule_padded),
                           gather=lambda a, dim, index: Gather.apply(
                               a, constant(index), dim=dim),
                           scatter_add=lambda a, dim, index, src: ScatterAdd.apply(
                               a, constant(index), src, dim=dim),
                           max_pool2d_backward=lambda g, argmax, shape, k, s, p:
                               MaxPool2dBackward.apply(g, argmax=constant(argmax),
                                                       input_shape=tuple(shape),
                                                       kernel_size=k, stride=s, padding=p),
                           max_pool2d_gather=lambda x, argmax, k, s, p: MaxPool2dGather.apply(
                               x, argmax=constant(argmax), kernel_size=k, stride=s, padding=p),
                           avg_pool2d_backward=lambda g, shape, k, s, p: AvgPool2dBackward.apply(
                               g, input_shape=tuple(shape), kernel_size=k, stride=s, padding=p),
                           avg_pool2d=lambda x, k, s, p: AvgPool2d.apply(
                               x, kernel_size=k, stride=s, padding=p),
                           conv2d=_rule_conv2d, conv2d_input_grad=_rule_conv2d_input_grad,
                           conv2d_weight_grad=_rule_conv2d_weight_grad,
                           einsum=lambda equation, *arrays: Einsum.apply(
                               *arrays, equation=equation),
                           inv=Inv.apply, solve=Solve.apply).items():
    setattr(rule.RECORDED, _name, _on_tensors(getattr(rule.PLAIN, _name), _engine))
for _function in (np.count_nonzero, one_hot, target_distribution):  # of a target's values
    setattr(rule.RECORDED, _function.__name__, _on_values(_function))
for _name in ("pi", "e", "inf", "nan", "argsort", "negative", "arange", "nan_to_num", "zeros",
              "eye"):
    setattr(rule.RECORDED, _name, getattr(np, _name))
rule.RECORDED.rows = rule.rows  # a reshape: Tensors have it too
for _name in ("select", "narrow", "offset", "gradient_plan", "constant_arrays"):  # as is
    setattr(rule.RECORDED, _name, getattr(rule.PLAIN, _name))
