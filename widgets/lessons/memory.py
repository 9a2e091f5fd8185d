"""Helpers for the memory lesson (notebooks/04_memory.ipynb): what each op saved, in
words; dropping every saved tensor as if only the output had been kept; and weak
references that tell whether the saved arrays of a graph are still alive.

They only read what the engine recorded (``graph.capture`` and the nodes' saved
tensors); nothing here computes a gradient.

>>> import autograd_core as ag
>>> x = ag.tensor([0.5, -1.0], requires_grad=True)
>>> y = ag.tanh(x).sum()
>>> print(saved_table(y).rows[0][:4])
('op0', 'tanh', 'out', '(2,)')
"""

from __future__ import annotations

import weakref
from dataclasses import dataclass

import numpy as np

import autograd_core as ag
from autograd_core import nn, optim
from autograd_core.recording.tensor import Tensor
from autograd_core.sweep.engine import reverse_topological
from autograd_core.tools.graph import (
    Graph,
    OpInfo,
    SavedInfo,
    backward_steps,
    capture,
    saved_bytes,
)
from autograd_core.tools.memory import owner, saved_arrays, training_step_memory

from .. import gate
from ..summary import format_bytes, shape_text
from .report import Report

__all__ = ["saved_table", "saved_role", "release_saved", "SavedWatch", "watch_saved"]

# Input names of ops whose inputs have roles worth naming (the others: "input 0", ...).
_INPUT_ROLES = {"linear": ("input", "weight", "bias"), "matmul": ("a", "b")}


def saved_role(graph: Graph, op: OpInfo, saved: SavedInfo) -> str:
    """What a saved tensor is, in words: ``"its input x"``, ``"its weight W2"``,
    ``"its own output"`` or ``"an array it made (bool)"``."""
    if saved.tensor is None:
        return f"an array it made ({saved.dtype})"
    if saved.tensor == op.output:
        return "its own output"
    index = op.inputs.index(saved.tensor)
    roles = _INPUT_ROLES.get(op.op)
    role = roles[index] if roles and index < len(roles) else f"input {index}"
    name = graph.tensor(saved.tensor).name
    return f"its {role}" + (f" {name}" if name else f" ({saved.tensor})")


def saved_table(output: Tensor) -> Report:
    """One row per op of the graph behind ``output``: what it saved for backward, as
    what, and how many bytes (an op that saved nothing gets a row saying so).

    >>> import autograd_core as ag
    >>> a = ag.tensor([1.0, 2.0], requires_grad=True)
    >>> [row[2] for row in saved_table((a + a).sum()).rows]
    ['nothing', 'nothing']
    """
    graph = capture(output)
    rows = []
    for op in graph.ops:
        if not op.saved:
            rows.append((op.id, op.op, "nothing", "", "", "", "0 B"))
        for s in op.saved:
            rows.append((op.id, op.op, s.name, shape_text(s.shape), s.dtype,
                         saved_role(graph, op, s), format_bytes(s.nbytes)))
    total = saved_bytes(output)
    return Report("What each op saved for its backward",
                  f"Held for backward: {format_bytes(total)} ({total:,} bytes; each "
                  "buffer counts once, however many ops or views saved it).",
                  ("op", "name", "saved", "shape", "dtype", "what it is", "bytes"), rows,
                  data={"total": total})


def release_saved(output: Tensor) -> list[str]:
    """Drop every tensor saved behind ``output``, as a program would that "kept only
    the output to save memory". Returns what was dropped (``"op1 tanh: out"``).
    A backward from ``output`` afterwards fails with the engine's clear error.
    """
    if output.grad_fn is None:
        return []
    graph = capture(output)
    dropped = []
    for node in reverse_topological(output.grad_fn):
        op_id = graph.id_of(node)
        dropped += [f"{op_id} {node.op.name}: {name}" for name in node.release()]
    return sorted(dropped, key=lambda d: int(d.split()[0][2:]))


@dataclass
class SavedWatch:
    """Weak references to saved arrays: they tell whether an array is still alive
    without keeping it alive. ``alive`` counts the survivors, ``alive_bytes`` sums
    their sizes."""

    refs: list

    @property
    def watched(self) -> int:
        return len(self.refs)

    @property
    def alive(self) -> int:
        return sum(r() is not None for r in self.refs)

    @property
    def alive_bytes(self) -> int:
        return sum(a.nbytes for a in (r() for r in self.refs) if a is not None)

    def add(self, other: SavedWatch) -> None:
        """Watch ``other``'s arrays too."""
        self.refs += other.refs


def watch_saved(output: Tensor, exclude=()) -> SavedWatch:
    """Weak references to the arrays saved behind ``output``, except the memory of the
    tensors in ``exclude`` (pass the parameters and the input: they stay alive anyway).

    >>> import autograd_core as ag
    >>> x = ag.tensor([0.5, -1.0], requires_grad=True)
    >>> y = ag.tanh(ag.tanh(x)).sum()
    >>> watch = watch_saved(y)
    >>> watch.alive
    2
    >>> del y
    >>> watch.alive
    0
    """
    skip = {id(owner(t)) for t in exclude}
    nodes = reverse_topological(output.grad_fn) if output.grad_fn is not None else []
    arrays = {id(a): a for a in saved_arrays(nodes) if id(owner(a)) not in skip}
    return SavedWatch([weakref.ref(a) for a in arrays.values()])


@gate.answers("L7")
def memory_breakdown() -> Report:
    """One training step's memory by kind (parameters, gradients, optimizer, activations)."""
    gen = ag.Generator(77)
    rows = []
    for depth in (2, 4, 8):
        layers = []
        for _ in range(depth):
            layers += [nn.Linear(32, 32, dtype=ag.float32, generator=gen), nn.Tanh()]
        model = nn.Sequential(*layers)  # float32 throughout: 4 bytes a value
        x, t = (ag.randn(64, 32, generator=gen, dtype=ag.float32) for _ in range(2))
        optimizer = optim.Adam(model.parameters())
        m = training_step_memory(model, nn.functional.mse_loss, x, t, optimizer)
        rows.append((depth, m.parameters, m.gradients, m.optimizer_state, m.activations))
    return Report("Memory of one training step (bytes), float32 Linear+Tanh layers of width 32, "
                  "batch 64",
                  "Retained activations grow with depth and batch; with a batch of 64 they "
                  "dominate.", ("layers", "parameters", "gradients", "optimizer state",
                                "retained activations"), rows)


@gate.answers("G11")
def what_g11_ops_saved() -> None:
    """Print what the engine's linear, tanh, relu and add saved in a ``linear → tanh → linear``
    network whose every input requires a gradient, and the rule each backward runs (the
    comparison lesson 04 shows once G11 is solved)."""
    g = ag.Generator(4)
    x = ag.randn(5, 4, generator=g, requires_grad=True).named("x")
    w1 = ag.randn(8, 4, generator=g, requires_grad=True).named("W1")
    b1 = ag.randn(8, generator=g, requires_grad=True).named("b1")
    w2 = ag.randn(8, 8, generator=g, requires_grad=True).named("W2")
    h = ag.tanh(nn.functional.linear(x, w1, b1)).named("h")
    out = h + ag.relu(nn.functional.linear(h, w2))
    rules = [f"{op.id} {op.op:<6} " + ";  ".join(op.rule.splitlines())
             for op in capture(out).ops]
    print("\n".join([str(saved_table(out)), "", *rules]))


@gate.answers("W4")
def engine_sigmoid_beside(my_op) -> None:
    """Print the engine's sigmoid (its rule, what it saved, what its backward read) and whether
    the learner's op ``my_op`` (a ``Function``) gives the same gradient (the comparison
    lesson 04 shows once W4 is solved)."""
    z = ag.tensor([-2.0, 0.0, 3.0], requires_grad=True)
    s = ag.sigmoid(z)
    lines = [f"rule (from the op's definition): {capture(s).ops[0].rule}", str(saved_table(s))]
    (step,) = backward_steps(s, np.ones(3))  # upstream gradient: ones
    lines.append(f"\nbackward read: {list(step.reads)}")
    mine = ag.tensor([-2.0, 0.0, 3.0], requires_grad=True)
    try:
        my_op.apply(mine).backward(np.ones(3))
        lines.append("your op's gradient equals the engine's: "
                     f"{np.allclose(mine.grad.numpy(), z.grad.numpy())}")
    except Exception as error:  # the learner's op is not written yet, or does not run
        lines.append(f"your op does not run yet ({type(error).__name__}): write it above, "
                     "then run this cell again")
    print("\n".join(lines))
