"""Expression swell: the size of a fully expanded symbolic derivative against the size
of the graph the engine records, for the nested map l_(k+1) = 4 l_k (1 - l_k).

A tiny symbolic differentiator (product and difference rules, no simplification,
no sharing of common subexpressions: what "one big formula" means) counts nodes;
the engine's recorded graph is counted with ``graph.capture``.
"""

from __future__ import annotations

import autograd_core as ag
from autograd_core.graph import capture

from .report import Report

X, ONE, ZERO = ("x",), ("const", 1), ("const", 0)


def logistic(n: int) -> tuple:
    """The expression tree of l_n (subtrees shared in memory, counted as a tree)."""
    l = X
    for _ in range(n):
        l = ("mul", ("mul", ("const", 4), l), ("sub", ONE, l))
    return l


def derivative(e: tuple, memo: dict | None = None) -> tuple:
    """d e / dx by the product and difference rules, without simplifying."""
    memo = {} if memo is None else memo
    key = id(e)
    if key not in memo:
        if e == X:
            memo[key] = ONE
        elif e[0] == "const":
            memo[key] = ZERO
        elif e[0] == "mul":
            a, b = e[1], e[2]
            memo[key] = ("add", ("mul", derivative(a, memo), b), ("mul", a, derivative(b, memo)))
        else:  # "sub"
            memo[key] = ("sub", derivative(e[1], memo), derivative(e[2], memo))
    return memo[key]


def size(e: tuple, memo: dict | None = None) -> int:
    """Number of nodes of the expression written out in full (as a tree)."""
    memo = {} if memo is None else memo
    key = id(e)
    if key not in memo:
        memo[key] = 1 if e[0] in ("x", "const") else 1 + size(e[1], memo) + size(e[2], memo)
    return memo[key]


def recorded_ops(n: int) -> int:
    """How many ops the engine records for l_n."""
    x = ag.tensor(0.3, requires_grad=True)
    l = x
    for _ in range(n):
        l = 4 * l * (1 - l)
    return len(capture(l).ops)


def blowup(depth: int = 10) -> Report:
    """Formula size vs recorded graph size for depths 1..depth."""
    rows = []
    for n in range(1, depth + 1):
        f = logistic(n)
        rows.append((n, size(f), size(derivative(f)), recorded_ops(n)))
    return Report("l_(k+1) = 4 l_k (1 - l_k): one expanded formula vs the recorded graph",
                  "The expanded derivative grows about 3× per level (exponentially); the "
                  "recorded graph grows by 3 ops per level (linearly), and one backward over it "
                  "costs a small constant times the forward.",
                  ("depth n", "nodes in l_n", "nodes in dl_n/dx", "ops recorded"), rows,
                  data={"formula": [r[2] for r in rows], "graph": [r[3] for r in rows]})
