"""Small experiments on the engine that the lessons run and plot.

Each function returns plain numbers or arrays (no plotting here):

* ``nested`` / ``recorded_graph_sizes``: a nested function of depth d and the size of
  the graph the engine records for it (the symbolic side is in
  ``widgets.experiments_symbolic``, which needs sympy);
* ``finite_difference_errors``: error of a finite-difference slope against the exact
  gradient as h shrinks, in float32 and float64: the V-shaped curve;
* ``define_by_run``: Python control flow records a different graph per input, and the
  branch that did not run gets no gradient;
* ``summation_order``: adding the same float32 numbers in another order changes the
  last bits;
* ``jacobian_costs`` / ``mode_costs``: work of forward-mode vs reverse-mode Jacobians;
* ``checkpoint_costs``: saved bytes and recomputed work of checkpointing vs depth.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from . import creation, graph, nn
from .counting import count_ops
from .func import jacfwd, jacrev
from .grad_mode import no_grad
from .memory import track_saved_bytes
from .op_functions import tanh
from .tensor import Tensor, tensor
from .utils.checkpoint import checkpoint_sequential, sqrt_segments

__all__ = ["nested", "recorded_graph_sizes", "finite_difference_errors", "define_by_run",
           "DefineByRun", "summation_order", "SummationOrder", "jacobian_costs",
           "mode_costs", "checkpoint_costs", "CheckpointCost", "SwishBlock"]


# -- symbolic vs recorded graph (T4, S3) ---------------------------------------------------
NESTED_KINDS = ("reuse", "chain")


def nested(x, depth: int, kind: str = "reuse", *, tanh: Callable = tanh, w=0.5, b=0.1):
    """The nested function of the symbolic-vs-automatic experiment, written once for
    any arithmetic: engine tensors (the default ``tanh``) or sympy symbols
    (``tanh=sympy.tanh``).

    * ``"reuse"``: x -> tanh(x*x + x), ``depth`` times; each level uses the previous
      value *twice*, so the formula written out doubles with every level;
    * ``"chain"``: x -> tanh(w*x + b), ``depth`` times (a deep one-unit network).
    """
    if kind not in NESTED_KINDS:
        raise ValueError(f"nested: kind must be one of {NESTED_KINDS}, got {kind!r}")
    for _ in range(depth):
        x = tanh(x * x + x) if kind == "reuse" else tanh(w * x + b)
    return x


def recorded_graph_sizes(depths: Sequence[int], kind: str = "reuse") -> dict[str, np.ndarray]:
    """Size of the graph the engine records for ``nested(x, d, kind)``, per depth:
    ``{"depth", "ops", "nodes"}`` where nodes = ops + tensors of ``graph.capture``.
    Backward visits each op once, so the gradient costs the same number of steps."""
    ops, nodes = [], []
    for d in depths:
        x = tensor(0.3, requires_grad=True)
        w, b = tensor(0.5, requires_grad=True), tensor(0.1, requires_grad=True)
        g = graph.capture(nested(x, d, kind, w=w, b=b))
        ops.append(len(g.ops))
        nodes.append(len(g.ops) + len(g.tensors))
    return {"depth": np.asarray(depths), "ops": np.asarray(ops), "nodes": np.asarray(nodes)}


# -- finite differences (T5) -----------------------------------------------------------------
def _default_fd_function(t: Tensor) -> Tensor:
    return tanh(t) * t.exp()


def finite_difference_errors(f: Callable[[Tensor], Tensor] = _default_fd_function,
                             x0: float = 0.7, hs: Sequence[float] | None = None,
                             dtypes: Sequence = (np.float32, np.float64),
                             scheme: str = "central") -> dict[str, np.ndarray]:
    """|finite-difference slope − exact gradient| of a scalar function at ``x0`` for
    each step ``h``, computed in each dtype; the exact gradient comes from the
    engine's backward in float64.

    Large h: truncation error (∝ h² central, ∝ h forward). Small h: rounding error
    (∝ eps / h), since f(x+h) and f(x−h) agree in almost all their digits. The sum
    is a V on a log-log plot, whose bottom sits higher and further right in float32.

    Returns ``{"h": hs, "float32": errors, "float64": errors, "exact": gradient}``.
    """
    if scheme not in ("central", "forward"):
        raise ValueError(f"scheme must be 'central' or 'forward', got {scheme!r}")
    hs = np.logspace(-1, -12, 23) if hs is None else np.asarray(hs, dtype=np.float64)
    x = tensor(x0, dtype=np.float64, requires_grad=True)
    f(x).backward()
    exact = float(x.grad.item())
    result = {"h": hs, "exact": np.float64(exact)}
    for dtype in dtypes:
        dtype = np.dtype(dtype)
        errors = []
        for h in hs:
            step = dtype.type(h)
            here = dtype.type(x0)
            with no_grad():
                up = f(tensor(here + step, dtype=dtype)).item()
                down = f(tensor(here - step if scheme == "central" else here,
                                dtype=dtype)).item()
            width = (here + step) - (here - step if scheme == "central" else here)
            slope = dtype.type(up - down) / step / (2 if scheme == "central" else 1)
            errors.append(abs(float(slope) - exact) if width != 0 else abs(exact))
        result[dtype.name] = np.asarray(errors)
    return result


# -- define-by-run (W6, L3) --------------------------------------------------------------------
@dataclass(frozen=True)
class DefineByRun:
    """One run of ``branchy``: the input, the ops recorded, and the weights' gradients
    (``None`` for the weight of the branch that did not run)."""

    x: float
    ops: tuple[str, ...]
    grad_w_pos: float | None
    grad_w_neg: float | None


def branchy(x: Tensor, w_pos: Tensor, w_neg: Tensor) -> Tensor:
    """Ordinary Python deciding what runs: positive inputs are scaled by ``w_pos``,
    the others by ``w_neg``; then tanh is applied once per whole unit of |x| (at
    least once)."""
    y = w_pos * x if x.item() > 0 else w_neg * x
    for _ in range(max(1, int(abs(x.item())))):
        y = y.tanh()
    return y


def define_by_run(xs: Sequence[float] = (2.5, -0.5)) -> list[DefineByRun]:
    """Run ``branchy`` on each input with fresh weights, recording; return what was
    recorded and which weights got a gradient."""
    runs = []
    for value in xs:
        x = tensor(float(value))
        w_pos, w_neg = tensor(1.5, requires_grad=True), tensor(-2.0, requires_grad=True)
        y = branchy(x, w_pos, w_neg)
        ops = tuple(op.op for op in graph.capture(y).ops)
        y.backward()
        runs.append(DefineByRun(float(value), ops,
                                None if w_pos.grad is None else w_pos.grad.item(),
                                None if w_neg.grad is None else w_neg.grad.item()))
    return runs


# -- floating-point summation order (L6) ------------------------------------------------------
@dataclass(frozen=True)
class SummationOrder:
    """The same float32 numbers summed in several orders; ``exact`` is their exact sum
    (math.fsum in float64) for reference."""

    values: dict
    exact: float

    @property
    def difference(self) -> float:
        """In-order sum minus reversed sum: not 0, though the numbers are the same."""
        return float(self.values["in order"]) - float(self.values["reversed"])

    @property
    def ulps(self) -> int:
        """How many float32 steps apart the in-order and reversed sums are."""
        a, b = np.float32(self.values["in order"]), np.float32(self.values["reversed"])
        return abs(int(a.view(np.int32)) - int(b.view(np.int32)))


def summation_order(n: int = 10_000, seed: int = 0) -> SummationOrder:
    """Sum ``n`` seeded float32 numbers front to back, back to front, sorted, and
    pairwise (NumPy's ``sum``). Float addition rounds after every step, so it is not
    associative: each order rounds differently and the last bits differ.

    >>> s = summation_order()
    >>> s.difference != 0
    True
    """
    rng = creation.Generator(seed).numpy
    numbers = rng.standard_normal(n).astype(np.float32)
    def sequential(a):  # cumsum adds one number at a time, left to right
        return np.cumsum(a, dtype=np.float32)[-1]

    values = {
        "in order": sequential(numbers),
        "reversed": sequential(numbers[::-1]),
        "sorted": sequential(np.sort(numbers)),
        "pairwise (np.sum)": np.sum(numbers, dtype=np.float32),
    }
    return SummationOrder(values, math.fsum(numbers.astype(np.float64)))


# -- forward vs reverse mode cost (T2, W2) --------------------------------------------------
def jacobian_costs(func: Callable, x: Tensor) -> dict:
    """Build the Jacobian of ``func`` at ``x`` both ways and count the work:
    ``{"forward": {...}, "reverse": {...}, "max_difference": float}`` where each
    mode has ``passes`` (JVP passes = input elements; VJP passes = output elements),
    ``ops`` and ``macs`` (multiply-adds, see ``counting``)."""
    with count_ops() as fwd:
        j_fwd = jacfwd(func)(x)
    with count_ops() as rev:
        j_rev = jacrev(func)(x)
    with no_grad():
        n_out = func(x).numel()
    return {
        "forward": {"passes": x.numel(), "ops": fwd.total_ops, "macs": fwd.total_macs},
        "reverse": {"passes": n_out, "ops": rev.total_ops, "macs": rev.total_macs},
        "max_difference": float(np.max(np.abs(j_fwd._data - j_rev._data), initial=0.0)),
    }


def mode_costs(sizes: Sequence[int] = (1, 4, 16, 64), hidden: int = 32,
               seed: int = 0) -> list[dict]:
    """The two textbook cases, at several sizes n:

    * ``"many inputs -> one output"``: f(x) = sum(tanh(W x)), x in Rⁿ (a loss of n
      parameters): reverse mode needs 1 VJP, forward mode n JVPs;
    * ``"one input -> many outputs"``: g(t) = tanh(t·v + c), t a scalar, n outputs:
      forward mode needs 1 JVP, reverse mode n VJPs.

    One row per (case, n) with both modes' multiply-adds and the cheaper mode.
    """
    gen = creation.Generator(seed)
    rows = []
    for n in sizes:
        W = creation.randn(hidden, n, generator=gen)
        v, c = creation.randn(n, generator=gen), creation.randn(n, generator=gen)
        cases = {
            "many inputs -> one output": (lambda x, W=W: tanh(W @ x).sum(),
                                          creation.randn(n, generator=gen)),
            "one input -> many outputs": (lambda t, v=v, c=c: tanh(t * v + c),
                                          creation.randn(1, generator=gen)),
        }
        for case, (fn, x) in cases.items():
            cost = jacobian_costs(fn, x)
            fwd, rev = cost["forward"]["macs"], cost["reverse"]["macs"]
            rows.append({"case": case, "n": n, "forward macs": fwd, "reverse macs": rev,
                         "forward passes": cost["forward"]["passes"],
                         "reverse passes": cost["reverse"]["passes"],
                         "cheaper": "forward" if fwd < rev else "reverse" if rev < fwd
                         else "tie"})
    return rows


# -- checkpointing: memory against recomputation (L8, S4) ---------------------------------------
@dataclass(frozen=True)
class CheckpointCost:
    """One (depth, strategy) measurement of ``checkpoint_costs``."""

    depth: int
    strategy: str
    segments: int
    peak_saved_bytes: int
    forward_macs: int
    recompute_macs: int
    backward_macs: int
    max_grad_difference: float

    @property
    def extra_work(self) -> float:
        """Recomputed forward work as a fraction of the forward pass."""
        return self.recompute_macs / self.forward_macs if self.forward_macs else 0.0


CHECKPOINT_STRATEGIES = ("none", "sqrt", "every")


class SwishBlock(nn.Module):
    """One layer of the checkpointing experiment: h = Linear(x), out = h·σ(h).

    It keeps three activations for backward (its input, h and σ(h)), as most layers
    of a real network keep several. (With Linear + Tanh, tanh's saved output *is*
    the next Linear's saved input, so a layer keeps one distinct array and
    checkpointing every layer would save nothing.)
    """

    def __init__(self, width: int, generator: creation.Generator | None = None):
        super().__init__()
        self.linear = nn.Linear(width, width, generator=generator)

    def forward(self, x: Tensor) -> Tensor:
        h = self.linear(x)
        return h * h.sigmoid()


def checkpoint_costs(depths: Sequence[int] = (4, 9, 16, 25, 36), width: int = 64,
                     batch: int = 32, seed: int = 0) -> list[CheckpointCost]:
    """For an MLP of ``depth`` :class:`SwishBlock` layers, run forward and backward with no
    checkpointing, with about √depth segments, and with every block but the last
    checkpointed; measure the peak bytes saved for backward (parameters and input
    excluded), the forward and recomputed multiply-adds, and how far the gradients
    are from the plain run's (they should be identical)."""
    results = []
    for depth in depths:
        reference = None
        for strategy in CHECKPOINT_STRATEGIES:
            gen = creation.Generator(seed)
            model = nn.Sequential(*[SwishBlock(width, gen) for _ in range(depth)])
            x = creation.randn(batch, width, generator=gen, dtype=np.float32)
            params = list(model.parameters())
            segments = {"none": 1, "sqrt": sqrt_segments(depth), "every": depth}[strategy]
            with count_ops() as work, track_saved_bytes(exclude=[*params, x]) as saved:
                out = model(x) if strategy == "none" else \
                    checkpoint_sequential(model, segments, x)
                out.sum().backward()
            grads = [p.grad._data for p in params]
            if reference is None:
                reference = grads
            diff = max(float(np.max(np.abs(g - r))) for g, r in zip(grads, reference))
            results.append(CheckpointCost(depth, strategy, segments, saved.peak,
                                          work.forward.macs, work.recompute.macs,
                                          work.backward.macs, diff))
    return results
