"""Counting the work a program does: ops run and multiply-adds, per phase.

``count_ops()`` is a context manager around an :class:`OpCounter` (an engine
``Observer``) that counts every op the engine runs, in four phases:

* ``forward``:   ops run by the program (recording or not);
* ``recompute``: forward ops re-run inside a checkpoint's backward (extra work that
  checkpointing pays to save memory);
* ``backward``:  backward rules run by the reverse sweep. Under ``create_graph=True`` a
  rule runs as recorded ops; those ops are its backward work, counted once as the rule
  (the same count as without ``create_graph``), not as forward ops;
* ``jvp``:       forward-mode rules run by ``func.jvp`` (tangent propagation).

The cost model (one "multiply-add", MAC, per unit):

=============================  ==================================================
op                             forward cost
=============================  ==================================================
matmul  (m×k) @ (k×n)          m·n·k (times the batch size for batched operands)
linear  x (m×k), W (n×k)       m·n·k (+ m·n for the bias)
conv2d                         output elements × (in channels / groups) × kH × kW
einsum                         the product of the sizes of its distinct letters
                               (output elements × the extent summed over)
reductions (amax, amin too),   input elements (each input element is visited once)
softmax family, pooling,
losses, batch norm
layout ops (reshape, permute,  0 (they move or view values; no arithmetic)
expand, getitem, split, cat,
stack, cast, embedding,
checkpoint)
anything else (elementwise)    output elements
=============================  ==================================================

A backward rule costs, *per input that receives a gradient*, what that input's
share of the forward cost is: the whole product for each operand of matmul,
linear and conv2d (dA = G Bᵀ and dB = Aᵀ G are each an m·n·k product), output
elements for a bias, the forward cost for everything else (an elementwise rule is
one product per element per input). einsum's rule for operand i is itself an einsum
(``ops/einsum.gradient_plan``: g with the other operands, and an identity matrix for
a repeated letter, a vector of ones for a letter only operand i has), priced as any
einsum: for ``"ij,jk->ik"`` that is m·n·k per operand, as matmul's; for a diagonal
``"ii->i"`` of an n×n input it is n·n (the identity's contraction), where the forward
is n. A ``jvp`` rule costs the same per input that carries a tangent, but for einsum:
its jvp contracts each tangent in the forward's own equation, the forward's cost. This
is the textbook accounting under which one reverse pass, or one forward-mode pass,
costs a small constant times the plain forward pass; it ignores memory traffic and the
constant factors of transcendental functions.

>>> import autograd_core as ag
>>> a, b = ag.ones(2, 3, requires_grad=True), ag.ones(3, 4)
>>> with count_ops() as c:
...     (a @ b).sum().backward()
>>> c.forward.macs, c.backward.macs      # 2·4·3 + 8, then 24 (only a needs a grad) + 8
(32, 32)
"""

from __future__ import annotations

import contextlib
import math
from collections.abc import Iterator
from dataclasses import dataclass, field

import numpy as np

from ..ops.einsum import gradient_plan, letter_sizes
from ..recording.node import Observer, observing
from ..sweep.engine import sweep_state

__all__ = ["count_ops", "OpCounter", "PhaseCount", "forward_cost", "input_cost",
           "tangent_cost", "PHASES"]

PHASES = ("forward", "recompute", "backward", "jvp")

LAYOUT_OPS = frozenset({"reshape", "permute", "expand", "getitem", "split", "cat", "stack",
                        "cast", "embedding", "checkpoint"})
REDUCING_OPS = frozenset({"sum", "mean", "max", "min", "amax", "amin", "var", "softmax",
                          "log_softmax",
                          "logsumexp", "max_pool2d", "avg_pool2d", "batch_norm",
                          "batch_norm_eval", "nll_loss", "mse_loss",
                          "binary_cross_entropy_with_logits"})
PRODUCT_OPS = frozenset({"matmul", "linear", "conv2d"})  # input 2, if any, is a bias


def forward_cost(op: str, input_shapes, output_shape, params=None) -> int:
    """Multiply-adds of one forward application of ``op`` (see the module's table);
    ``params``: the op's keyword parameters (einsum's ``equation``).

    >>> forward_cost("matmul", [(8, 3), (3, 5)], (8, 5))
    120
    >>> forward_cost("einsum", [(8, 3), (3, 5)], (8, 5), {"equation": "ij,jk->ik"})
    120
    """
    out = math.prod(output_shape)
    if op in LAYOUT_OPS:
        return 0
    if op == "einsum":
        return _einsum_cost(params["equation"], input_shapes)
    if op in PRODUCT_OPS:
        return _product(op, input_shapes, out) + (out if _has_bias(input_shapes) else 0)
    if op in REDUCING_OPS:
        return math.prod(input_shapes[0])
    return out


def input_cost(op: str, input_shapes, output_shape, index: int, params=None) -> int:
    """Multiply-adds of the backward rule's product for input ``index``.

    >>> input_cost("linear", [(8, 3), (5, 3), (5,)], (8, 5), 2)     # the bias: 8·5
    40
    >>> input_cost("einsum", [(3, 3)], (3,), 0, {"equation": "ii->i"})   # 'i,iA->iA'
    9
    """
    if op == "einsum":
        plan, constants = gradient_plan(params["equation"], index, input_shapes)
        others = [s for k, s in enumerate(input_shapes) if k != index]
        constant_shapes = [(n, n) if kind == "eye" else (n,) for kind, n in constants]
        return _einsum_cost(plan, [output_shape, *others, *constant_shapes])
    if op not in PRODUCT_OPS:
        return forward_cost(op, input_shapes, output_shape, params)
    out = math.prod(output_shape)
    return out if index == 2 else _product(op, input_shapes, out)


def tangent_cost(op: str, input_shapes, output_shape, index: int, params=None) -> int:
    """Multiply-adds of the jvp rule's product for the tangent of input ``index``: the
    backward's (:func:`input_cost`), but einsum's, which contracts the tangent in the
    forward's own equation and so costs the forward's.

    >>> tangent_cost("einsum", [(3, 3)], (3,), 0, {"equation": "ii->i"})
    3
    """
    if op == "einsum":
        return forward_cost(op, input_shapes, output_shape, params)
    return input_cost(op, input_shapes, output_shape, index, params)


def _einsum_cost(equation: str, shapes) -> int:
    """The product of the sizes of a canonical equation's distinct letters (size-1 dims
    broadcast): output elements times the extent summed over, one multiply-add each."""
    subscripts = equation.split("->")[0].split(",")
    return math.prod(letter_sizes(subscripts, shapes).values())


def _product(op: str, input_shapes, out: int) -> int:
    """m·n·k of a matmul-like op: output elements times the length of each dot product."""
    if op == "matmul":
        a = input_shapes[0]
        return out * (a[-1] if len(a) else 1)
    if op == "linear":
        return out * input_shapes[1][-1]
    return out * math.prod(input_shapes[1][1:])  # conv2d: (out, in / groups, kH, kW)


def _has_bias(input_shapes) -> bool:
    return len(input_shapes) > 2 and len(input_shapes[2]) > 0


@dataclass
class PhaseCount:
    """Ops run and multiply-adds in one phase, with a breakdown by op name."""

    ops: int = 0
    macs: int = 0
    by_op: dict = field(default_factory=dict)

    def add(self, op: str, macs: int) -> None:
        self.ops += 1
        self.macs += macs
        ops, total = self.by_op.get(op, (0, 0))
        self.by_op[op] = (ops + 1, total + macs)


class OpCounter(Observer):
    """Counts ops and multiply-adds per phase: ``.forward``, ``.recompute``,
    ``.backward``, ``.jvp`` (each a :class:`PhaseCount`)."""

    def __init__(self):
        self.forward = PhaseCount()
        self.recompute = PhaseCount()
        self.backward = PhaseCount()
        self.jvp = PhaseCount()

    def on_forward(self, op, node, arrays, out, params) -> None:
        if sweep_state.recording:  # a recorded backward rule: counted in on_backward
            return
        phase = self.recompute if sweep_state.recomputing else self.forward
        phase.add(op.name, forward_cost(op.name, [np.shape(a) for a in arrays], np.shape(out),
                                        params))

    def on_backward(self, node, grad_output, grads) -> None:
        name, shapes, out = node.op.name, node.input_shapes, node.output_shape
        self.backward.add(name, sum(input_cost(name, shapes, out, i, node.params)
                                    for i, (e, g) in enumerate(zip(node.edges, grads))
                                    if e is not None and g is not None))

    def on_jvp(self, op, node, tangents, out_tangent) -> None:
        name, shapes, out = op.name, node.input_shapes, node.output_shape
        self.jvp.add(name, sum(tangent_cost(name, shapes, out, i, node.params)
                               for i, t in enumerate(tangents) if t is not None))

    @property
    def total_ops(self) -> int:
        return sum(getattr(self, p).ops for p in PHASES)

    @property
    def total_macs(self) -> int:
        return sum(getattr(self, p).macs for p in PHASES)

    def rows(self) -> list[tuple[str, int, int]]:
        """(phase, ops, multiply-adds) for each phase, then the total."""
        rows = [(p, getattr(self, p).ops, getattr(self, p).macs) for p in PHASES]
        return rows + [("total", self.total_ops, self.total_macs)]

    def __str__(self) -> str:
        lines = [f"{'phase':<10} {'ops':>8} {'multiply-adds':>15}"]
        lines += [f"{p:<10} {n:>8} {m:>15,}" for p, n, m in self.rows()]
        return "\n".join(lines)

    def __repr__(self) -> str:
        parts = ", ".join(f"{p}={n} ops/{m} MACs" for p, n, m in self.rows())
        return f"OpCounter({parts})"


@contextlib.contextmanager
def count_ops() -> Iterator[OpCounter]:
    """Count the ops and multiply-adds run inside the block, per phase.

    >>> with count_ops() as counts:         # doctest: +SKIP
    ...     loss = model(x).sum(); loss.backward()
    >>> print(counts)                       # doctest: +SKIP
    """
    counter = OpCounter()
    with observing(counter):
        yield counter
