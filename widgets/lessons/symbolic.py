"""Symbolic differentiation vs the recorded graph (lesson 09, items T4 and S3), with sympy.

The same nested function (:func:`.modes.nested`) is built twice: on
sympy symbols, where ``sympy.diff`` gives its derivative as one formula, and on
engine tensors, where the engine records a graph. Sizes compared, per depth d:

* ``function_nodes``: nodes of the function itself, written out;
* ``symbolic_nodes``: nodes of the derivative's expression tree *written out*
  (``sympy.preorder_traversal``: a subexpression that occurs twice counts twice, no
  sharing). This is "expand the whole nested function into one formula".
* ``symbolic_ops``: ``sympy.count_ops`` of the same formula (operations rather than
  nodes; skipped, as -1, above 100,000 nodes where it gets slow).
* ``shared_nodes``: distinct subexpressions of the derivative, each counted once:
  the formula with common subexpressions shared, which is what a graph is.
* ``graph_ops`` / ``graph_nodes``: ops, and ops + tensors, of ``graph.capture``;
  backward visits each recorded op once.

Choices: ``sympy.expand`` is off by default: the derivative is measured as
``sympy.diff`` returns it. Expanding distributes products over sums and only makes
the formula bigger, so leaving it off is the comparison most generous to symbolic
differentiation (``expand=True`` is there for small depths). ``tanh`` is a sympy
``Function`` that knows only its derivative, 1 − tanh²: sympy's built-in ``tanh``
tries rewriting rules on its argument, which walk the whole exponentially large
tree (minutes at depth 5) without changing the derivative.

sympy is a lesson dependency, not an engine one, so this lives with the lessons.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import sympy

from .modes import nested, recorded_graph_sizes

__all__ = ["tanh", "function", "derivative", "tree_size", "shared_size", "symbolic_vs_graph"]

MAX_COUNTED = 100_000
# The deepest nesting written out here where each level uses the previous value twice
# ("reuse", "logistic"): sympy takes about 20 s at depth 14 and each level more several times
# as long, so a deeper one is refused with a sentence, not awaited ("chain" stays cheap).
MAX_DEPTH = 14


class tanh(sympy.Function):  # noqa: N801 - reads like the math
    """tanh as sympy sees it here: a function whose derivative is 1 - tanh(a)**2."""

    def fdiff(self, argindex=1):
        return 1 - tanh(self.args[0]) ** 2


def function(depth: int, kind: str = "reuse") -> sympy.Expr:
    """``nested(x, depth, kind)`` as one sympy formula (symbols x, w, b).

    >>> function(2, "logistic")
    16*x*(1 - x)*(-4*x*(1 - x) + 1)
    """
    if depth > MAX_DEPTH and kind != "chain":
        raise ValueError(f"depth {depth} is too deep to write out with sympy (it would take "
                         f"hours; depth {MAX_DEPTH} already takes about 20 s): go up to depth "
                         f"{MAX_DEPTH}, and predict deeper ones from how the size grows")
    x, w, b = sympy.symbols("x w b")
    return nested(x, depth, kind, tanh=tanh, w=w, b=b)


def derivative(depth: int, kind: str = "reuse", expand: bool = False) -> sympy.Expr:
    """d/dx of ``nested(x, depth, kind)`` as one sympy formula (symbols x, w, b).

    >>> derivative(1, "chain")
    w*(1 - tanh(b + w*x)**2)
    """
    d = sympy.diff(function(depth, kind), sympy.Symbol("x"))
    return sympy.expand(d) if expand else d


def tree_size(expr: sympy.Expr) -> int:
    """Nodes of the expression tree written out (repeated subexpressions count again)."""
    return sum(1 for _ in sympy.preorder_traversal(expr))


def shared_size(expr: sympy.Expr) -> int:
    """Distinct subexpressions: the size with common subexpressions shared."""
    return len(set(sympy.preorder_traversal(expr)))


def symbolic_vs_graph(depths: Sequence[int], kind: str = "reuse",
                      expand: bool = False) -> dict[str, np.ndarray]:
    """The sizes listed in the module docstring, one array entry per depth.

    >>> sizes = symbolic_vs_graph([1, 2, 4, 8])
    >>> sizes["symbolic_nodes"].tolist(), sizes["graph_ops"].tolist()
    ([18, 67, 511, 15871], [3, 6, 12, 24])
    """
    functions, symbolic, ops, shared = [], [], [], []
    for d in depths:
        functions.append(tree_size(function(d, kind)))
        expr = derivative(d, kind, expand)
        n = tree_size(expr)
        symbolic.append(n)
        ops.append(sympy.count_ops(expr) if n <= MAX_COUNTED else -1)
        shared.append(shared_size(expr))
    engine = recorded_graph_sizes(depths, kind)
    return {"depth": np.asarray(depths), "function_nodes": np.asarray(functions),
            "symbolic_nodes": np.asarray(symbolic),
            "symbolic_ops": np.asarray(ops), "shared_nodes": np.asarray(shared),
            "graph_ops": engine["ops"], "graph_nodes": engine["nodes"]}
