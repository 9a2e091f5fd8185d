"""Experiments of lesson 09 (forward vs reverse mode): plain numbers out, no plotting.

* ``nested`` / ``recorded_graph_sizes``: a nested function of depth d and the size of
  the graph the engine records for it (the symbolic side is in :mod:`.symbolic`);
* ``_finite_difference_errors``: error of a finite-difference slope against the exact
  gradient as h shrinks, in float32 and float64: the V-shaped curve;
* ``_jacobian_costs`` / ``_mode_costs``: work of forward-mode vs reverse-mode Jacobians.

The last three measure what T5's and T2's experiments ask a learner to measure, so they
are private (the tests read them): the lesson has the learner build them.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

import autograd_core as ag
from autograd_core.func import jacfwd, jacrev
from autograd_core.recording.tensor import Tensor
from autograd_core.tools import graph
from autograd_core.tools.counting import count_ops

__all__ = ["nested", "recorded_graph_sizes"]


# -- symbolic vs recorded graph (T4, S3) ---------------------------------------------------
NESTED_KINDS = ("reuse", "chain", "logistic")


def nested(x, depth: int, kind: str = "reuse", *, tanh: Callable = ag.tanh, w=0.5, b=0.1):
    """The nested function of the symbolic-vs-automatic experiment, written once for
    any arithmetic: engine tensors (the default ``tanh``) or sympy symbols
    (``tanh=sympy.tanh``).

    * ``"reuse"``: x -> tanh(x*x + x), ``depth`` times; each level uses the previous
      value *twice*, so the formula written out doubles with every level;
    * ``"chain"``: x -> tanh(w*x + b), ``depth`` times (a deep one-unit network);
    * ``"logistic"``: x -> 4x(1 - x), ``depth`` times (the logistic map: each level
      also uses the previous value twice).
    """
    if kind not in NESTED_KINDS:
        raise ValueError(f"nested: kind must be one of {NESTED_KINDS}, got {kind!r}")
    for _ in range(depth):
        if kind == "reuse":
            x = tanh(x * x + x)
        elif kind == "chain":
            x = tanh(w * x + b)
        else:
            x = 4 * x * (1 - x)
    return x


def recorded_graph_sizes(depths: Sequence[int], kind: str = "reuse") -> dict[str, np.ndarray]:
    """Size of the graph the engine records for ``nested(x, d, kind)``, per depth:
    ``{"depth", "ops", "nodes"}`` where nodes = ops + tensors of ``graph.capture``.
    Backward visits each op once, so the gradient costs the same number of steps."""
    ops, nodes = [], []
    for d in depths:
        x = ag.tensor(0.3, requires_grad=True)
        w, b = ag.tensor(0.5, requires_grad=True), ag.tensor(0.1, requires_grad=True)
        g = graph.capture(nested(x, d, kind, w=w, b=b))
        ops.append(len(g.ops))
        nodes.append(len(g.ops) + len(g.tensors))
    return {"depth": np.asarray(depths), "ops": np.asarray(ops), "nodes": np.asarray(nodes)}


# -- finite differences (T5) -----------------------------------------------------------------
def _default_fd_function(t: Tensor) -> Tensor:
    return ag.tanh(t) * t.exp()


def _finite_difference_errors(f: Callable[[Tensor], Tensor] = _default_fd_function,
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
    x = ag.tensor(x0, dtype=np.float64, requires_grad=True)
    f(x).backward()
    exact = float(x.grad.item())
    result = {"h": hs, "exact": np.float64(exact)}
    for dtype in dtypes:
        dtype = np.dtype(dtype)
        errors = []
        for h in hs:
            step = dtype.type(h)
            here = dtype.type(x0)
            with ag.no_grad():
                up = f(ag.tensor(here + step, dtype=dtype)).item()
                down = f(ag.tensor(here - step if scheme == "central" else here,
                                dtype=dtype)).item()
            width = (here + step) - (here - step if scheme == "central" else here)
            slope = dtype.type(up - down) / step / (2 if scheme == "central" else 1)
            errors.append(abs(float(slope) - exact) if width != 0 else abs(exact))
        result[dtype.name] = np.asarray(errors)
    return result


# -- forward vs reverse mode cost (T2, W2) --------------------------------------------------
def _jacobian_costs(func: Callable, x: Tensor) -> dict:
    """Build the Jacobian of ``func`` at ``x`` both ways and count the work:
    ``{"forward": {...}, "reverse": {...}, "max_difference": float}`` where each
    mode has ``passes`` (JVP passes = input elements; VJP passes = output elements),
    ``ops`` and ``macs`` (multiply-adds, see ``counting``)."""
    with count_ops() as fwd:
        j_fwd = jacfwd(func)(x)
    with count_ops() as rev:
        j_rev = jacrev(func)(x)
    with ag.no_grad():
        n_out = func(x).numel()
    return {
        "forward": {"passes": x.numel(), "ops": fwd.total_ops, "macs": fwd.total_macs},
        "reverse": {"passes": n_out, "ops": rev.total_ops, "macs": rev.total_macs},
        "max_difference": float(np.max(np.abs(j_fwd.numpy() - j_rev.numpy()), initial=0.0)),
    }


def _mode_costs(sizes: Sequence[int] = (1, 4, 16, 64), hidden: int = 32,
               seed: int = 0) -> list[dict]:
    """The two textbook cases, at several sizes n:

    * ``"many inputs -> one output"``: f(x) = sum(tanh(W x)), x in Rⁿ (a loss of n
      parameters): reverse mode needs 1 VJP, forward mode n JVPs;
    * ``"one input -> many outputs"``: g(t) = tanh(t·v + c), t a scalar, n outputs:
      forward mode needs 1 JVP, reverse mode n VJPs.

    One row per (case, n) with both modes' multiply-adds and the cheaper mode.
    """
    gen = ag.Generator(seed)
    rows = []
    for n in sizes:
        W = ag.randn(hidden, n, generator=gen)
        v, c = ag.randn(n, generator=gen), ag.randn(n, generator=gen)
        cases = {
            "many inputs -> one output": (lambda x, W=W: ag.tanh(W @ x).sum(),
                                          ag.randn(n, generator=gen)),
            "one input -> many outputs": (lambda t, v=v, c=c: ag.tanh(t * v + c),
                                          ag.randn(1, generator=gen)),
        }
        for case, (fn, x) in cases.items():
            cost = _jacobian_costs(fn, x)
            fwd, rev = cost["forward"]["macs"], cost["reverse"]["macs"]
            rows.append({"case": case, "n": n, "forward macs": fwd, "reverse macs": rev,
                         "forward passes": cost["forward"]["passes"],
                         "reverse passes": cost["reverse"]["passes"],
                         "cheaper": "forward" if fwd < rev else "reverse" if rev < fwd
                         else "tie"})
    return rows


