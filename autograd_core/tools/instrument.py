"""Instrument a forward pass before guessing: one batch, a table per module boundary.

``instrument(model, x)`` puts a forward hook on every module of ``model``, runs one
batch, removes the hooks, and returns a table with one row per module call, in the
order the calls *finished* (a child before its parent): module path, type, output
shape, min / max / mean / std of the finite output values, and how many values
were not finite. ``first_nonfinite`` names the first module whose output had a NaN
or an inf: where to start looking. ``first_nonfinite_op`` goes one level down, to the
op that turned finite inputs into a non-finite output, with the user's line.

With ``loss_fn``, the batch is also backpropagated and each row gets the norm of
the gradient that reached that module's output (a tensor hook), which is how
vanishing gradients show up, layer by layer. Parameters' ``.grad`` are left as
they were.

>>> import autograd_core as ag
>>> from autograd_core import nn
>>> model = nn.Sequential(nn.Linear(3, 2), nn.Tanh())
>>> report = instrument(model, ag.randn(4, 3, dtype=ag.float32))
>>> [row.path for row in report.rows]          # print(report) shows the table
['0', '1', '']
>>> print(report.first_nonfinite)
None
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from ..recording.grad_mode import enable_grad, no_grad
from ..recording.node import Observer, observing
from ..recording.tensor import Tensor
from .anomaly import user_frames

__all__ = ["instrument", "Instrumentation", "ModuleStats", "NonFiniteOp", "array_stats"]


@dataclass(frozen=True)
class ModuleStats:
    """What one module call returned. Statistics are over the finite values (NaN if
    there are none); ``nonfinite`` counts NaNs and infs."""

    path: str
    module: str
    shape: tuple
    min: float
    max: float
    mean: float
    std: float
    nonfinite: int
    grad_norm: float | None = None


@dataclass(frozen=True)
class NonFiniteOp:
    """The first op whose inputs were all finite and whose output was not."""

    op: str
    module: str | None
    nonfinite: int
    trace: list = field(default_factory=list, repr=False)

    def __str__(self) -> str:
        place = f" in module {self.module!r}" if self.module is not None else ""
        lines = "".join(self.trace).rstrip("\n")
        return (f"op {self.op!r}{place} made {self.nonfinite} non-finite value(s) from "
                f"finite inputs" + (f", at:\n{lines}" if lines else "."))


def array_stats(a: np.ndarray) -> tuple[float, float, float, float, int]:
    """(min, max, mean, std, non-finite count) of an array, over its finite values."""
    a = np.asarray(a, dtype=np.float64) if np.asarray(a).dtype.kind in "biuf" else a
    finite = np.isfinite(a)
    bad = int(a.size - np.count_nonzero(finite))
    values = a[finite]
    if values.size == 0:
        return math.nan, math.nan, math.nan, math.nan, bad
    return (float(values.min()), float(values.max()), float(values.mean()),
            float(values.std()), bad)


@dataclass
class Instrumentation:
    """The table ``instrument`` returns: ``rows`` (one :class:`ModuleStats` per module
    call) plus where the first non-finite values appeared."""

    rows: list[ModuleStats]
    first_nonfinite_op: NonFiniteOp | None = None

    @property
    def first_nonfinite(self) -> str | None:
        """Path of the first module (in finishing order) whose output was not all finite."""
        return next((r.path for r in self.rows if r.nonfinite), None)

    def row(self, path: str) -> ModuleStats:
        """The (first) row of the module at ``path``."""
        return next(r for r in self.rows if r.path == path)

    _COLUMNS = ("module", "type", "output shape", "min", "max", "mean", "std", "non-finite",
                "grad norm")

    def _cells(self, r: ModuleStats) -> tuple[str, ...]:
        return (r.path or "(model)", r.module, str(r.shape), *(f"{v:.4g}" for v in
                (r.min, r.max, r.mean, r.std)), str(r.nonfinite),
                "" if r.grad_norm is None else f"{r.grad_norm:.4g}")

    def __str__(self) -> str:
        table = [self._COLUMNS] + [self._cells(r) for r in self.rows]
        widths = [max(len(row[i]) for row in table) for i in range(len(self._COLUMNS))]
        lines = ["  ".join(c.ljust(w) for c, w in zip(row, widths)).rstrip() for row in table]
        if self.first_nonfinite is not None:
            lines.append(f"first non-finite output: module {self.first_nonfinite!r}")
        if self.first_nonfinite_op is not None:
            lines.append(str(self.first_nonfinite_op))
        return "\n".join(lines)

    def _repr_html_(self) -> str:
        head = "".join(f"<th>{c}</th>" for c in self._COLUMNS)
        body = "".join(
            "<tr" + (" style='color:#b00'" if r.nonfinite else "") + ">"
            + "".join(f"<td>{c}</td>" for c in self._cells(r)) + "</tr>" for r in self.rows)
        return f"<table><tr>{head}</tr>{body}</table>"


class _FirstNonFiniteOp(Observer):
    def __init__(self, module_stack: list[str]):
        self.module_stack = module_stack
        self.found: NonFiniteOp | None = None

    def on_forward(self, op, node, arrays, out, params) -> None:
        if self.found is not None:
            return
        out = np.asarray(out)
        if out.dtype.kind not in "fc" or np.isfinite(out).all():
            return
        for a in arrays:
            a = np.asarray(a)
            if a.dtype.kind in "fc" and not np.isfinite(a).all():
                return  # it only passed on a non-finite input: not where it started
        module = self.module_stack[-1] if self.module_stack else None
        self.found = NonFiniteOp(op.name, module, int(out.size - np.isfinite(out).sum()),
                                 user_frames().format())


def instrument(model, *inputs, loss_fn: Callable | None = None) -> Instrumentation:
    """Run one batch through ``model`` with a hook at every module boundary and return
    the :class:`Instrumentation` table (see the module docstring).

    Without ``loss_fn`` nothing is recorded (``no_grad``); with it, ``loss_fn(output)``
    is backpropagated and each row gets the norm of the gradient at that module's
    output.
    """
    named = list(model.named_modules())
    pending: list[dict] = []
    stack: list[str] = []
    handles = []

    def pre_hook(path):
        def hook(module, args):
            stack.append(path)
        return hook

    def post_hook(path):
        def hook(module, args, output):
            stack.pop()
            if isinstance(output, Tensor):
                row = dict(path=path, module=type(module).__name__, shape=output.shape,
                           stats=array_stats(output._data), grad_norm=None)
                pending.append(row)
                if loss_fn is not None and output.requires_grad:
                    output.register_hook(lambda g, row=row: row.update(
                        grad_norm=float(np.linalg.norm(g._data))))
        return hook

    for path, module in named:
        handles.append(module.register_forward_pre_hook(pre_hook(path)))
        handles.append(module.register_forward_hook(post_hook(path)))
    finder = _FirstNonFiniteOp(stack)
    params = list(model.parameters()) if hasattr(model, "parameters") else []
    saved_grads = [p.grad for p in params]
    try:
        with observing(finder):
            if loss_fn is None:
                with no_grad():
                    model(*inputs)
            else:
                with enable_grad():
                    loss_fn(model(*inputs)).backward()
    finally:
        for handle in handles:
            handle.remove()
        for p, g in zip(params, saved_grads):
            p.grad = g
    rows = [ModuleStats(r["path"], r["module"], r["shape"], *r["stats"], r["grad_norm"])
            for r in pending]
    return Instrumentation(rows, finder.found)
