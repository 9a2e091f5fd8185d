"""The engine experiments that decide the true/false claims T1–T10.

Each function runs the engine and returns a :class:`Report`: a small table, a
sentence, ``supports`` (the truth value the experiment shows) and ``data`` (the raw
numbers, for plots). Notebooks call them as ``exercises.T9.experiment()``.
"""

from __future__ import annotations

import numpy as np

import autograd_core as ag
from autograd_core.autograd import analytic_jacobian, numeric_jacobian
from autograd_core.engine import backward_steps
from autograd_core.func import jacfwd
from autograd_core.graph import CycleError, capture, topological_order

from ..lessons import modes, symbolic
from .problems import rng
from .report import Report


def bound(value: float) -> str:
    """A small difference as a stable upper bound: 5.6e-10 -> '< 1e-9'."""
    if value < 1e-12:
        return "< 1e-12"
    return f"< 1e{int(np.floor(np.log10(value))) + 1}"


def _small_net(x, w, b):
    return ag.tanh(x @ w + b) * ag.exp(-x @ w)


def forward_vs_reverse() -> Report:
    """T1: the Jacobian of one function by forward mode (JVPs), by reverse mode (VJPs)
    and by finite differences."""
    g = rng(31)
    w, b = ag.tensor(g.standard_normal((3, 4))), ag.tensor(g.standard_normal(4))
    x = ag.tensor(g.standard_normal((2, 3)))

    def f(t):
        return _small_net(t, w, b)

    leaf = ag.tensor(x.numpy(), requires_grad=True)
    j_rev = analytic_jacobian(f, (leaf,))[0][0]
    j_num = numeric_jacobian(f, (ag.tensor(x.numpy(), requires_grad=True),))[0][0]
    rows = [("reverse mode vs finite differences", bound(float(np.max(np.abs(j_rev - j_num)))))]
    data = {"reverse": j_rev, "numeric": j_num}
    j_fwd = jacfwd(f)(x).numpy().reshape(j_rev.shape)
    fwd_rev = float(np.max(np.abs(j_fwd - j_rev)))
    data["forward"] = j_fwd
    return Report("f(x) = tanh(x W + b) · exp(−x W): the same Jacobian three ways",
                  "Forward and reverse mode agree to rounding (both apply the same local rules, "
                  "only in another order); finite differences agree only to about 1e-9, their "
                  "own truncation and rounding error.",
                  ("compared", "max |difference|"),
                  [("forward mode vs reverse mode", bound(fwd_rev)), *rows],
                  data=data, supports=fwd_rev < 1e-12)


def mode_costs() -> Report:
    """T2/W2: the work of forward- and reverse-mode Jacobians in the two textbook cases."""
    rows = [(r["case"], r["n"], r["forward passes"], r["reverse passes"], r["forward macs"],
             r["reverse macs"], r["cheaper"]) for r in modes.mode_costs()]
    winners = {r[0]: r[6] for r in rows if r[1] == max(x[1] for x in rows)}
    return Report("Counted work of building a Jacobian, forward vs reverse mode",
                  "Many inputs → one output: reverse mode wins (one pass); one input → many "
                  "outputs: forward mode wins. Neither is always faster.",
                  ("case", "n", "forward passes", "reverse passes", "forward MACs",
                   "reverse MACs", "cheaper"), rows,
                  data={"rows": rows}, supports=len(set(winners.values())) == 1)


def cycles() -> Report:
    """T3/W1: recorded graphs are acyclic by construction; a hand-made cycle has no order."""
    x = ag.tensor([1.0, 2.0], requires_grad=True)
    y = ag.tanh(x * x) + x
    g = capture(y.sum())
    order = topological_order([o.id for o in g.ops] + [t.id for t in g.tensors], g.edges)
    forward_ok = all(order.index(a) < order.index(b) for a, b in g.edges)
    try:
        topological_order(["a", "b", "c"], [("a", "b"), ("b", "c"), ("c", "a")])
        message = "no error"
    except CycleError as exc:
        message = str(exc).split(";")[0]
    return Report("Can a computational graph contain a cycle?",
                  "Recording adds an op only after its inputs exist, so every edge points "
                  "forward and an order always exists; a cycle written by hand has no "
                  f"topological order and is rejected: {message}.",
                  ("graph", "has a topological order"),
                  [("recorded by the engine (tanh(x·x) + x)", forward_ok),
                   ("hand-made a → b → c → a", message == "no error")],
                  data={"recorded_order": order, "cycle_error": message}, supports=False)


def expression_swell(depth: int = 10) -> Report:
    """T4/S3: the logistic map l_(k+1) = 4 l_k (1 - l_k), differentiated by sympy into one
    formula written out, against the graph the engine records, for depths 1..depth."""
    sizes = symbolic.symbolic_vs_graph(range(1, depth + 1), "logistic")
    rows = list(zip(*(sizes[k].tolist() for k in
                      ("depth", "function_nodes", "symbolic_nodes", "graph_ops"))))
    return Report("l_(k+1) = 4 l_k (1 - l_k): one expanded formula vs the recorded graph",
                  "The derivative written out grows about 2.5× per level (exponentially); the "
                  "recorded graph grows by 3 ops per level (linearly), and one backward over it "
                  "costs a small constant times the forward.",
                  ("depth n", "nodes in l_n", "nodes in dl_n/dx", "ops recorded"), rows,
                  data={"formula": sizes["symbolic_nodes"].tolist(),
                        "graph": sizes["graph_ops"].tolist()}, supports=False)


def finite_differences() -> Report:
    """T5: error of a central-difference slope against the engine's exact gradient, vs h."""
    data = modes.finite_difference_errors(hs=np.logspace(-1, -13, 13))
    rows = [(f"{h:.0e}", f"{e32:.1e}", f"{e64:.1e}") for h, e32, e64 in
            zip(data["h"], data["float32"], data["float64"])]
    best = float(data["h"][int(np.argmin(data["float64"]))])
    return Report("Central difference (f(x+h) − f(x−h)) / 2h against the exact gradient",
                  f"The error falls as h shrinks (truncation) and rises again below h ≈ {best:.0e} "
                  "in float64 (rounding): a nudge-and-measure slope is never exact; the "
                  "engine's gradient applies each op's exact local derivative.",
                  ("h", "error float32", "error float64"), rows, data=data, supports=False)


def same_sweep() -> Report:
    """T6: the same reverse sweep on a network loss and on a formula that is no network."""
    g = rng(36)
    x, t = ag.tensor(g.standard_normal((4, 3))), ag.tensor(g.standard_normal((4, 2)))
    programs = (
        ("a network's loss", lambda w: ((ag.tanh(x @ w) - t) ** 2).mean(),
         (g.standard_normal((3, 2)),)),
        ("a * b + exp(a) / (1 + b²)", lambda a, b: a * b + ag.exp(a) / (1 + b * b),
         (np.array(0.7), np.array(-1.2))),
    )
    rows = []
    for label, program, values in programs:
        leaves = [ag.tensor(v, requires_grad=True) for v in values]
        steps = list(backward_steps(program(*leaves)))
        numeric = numeric_jacobian(program, [ag.tensor(v, requires_grad=True) for v in values])
        ok = all(np.allclose(leaf.grad.numpy().ravel(), n.ravel(), rtol=1e-5, atol=1e-7)
                 for leaf, n in zip(leaves, numeric[0]))
        rows.append((label, len(steps), " → ".join(s.node.op.name for s in steps), ok))
    return Report("One algorithm: the same reverse sweep on a network and on a plain formula",
                  "backward_steps walks both graphs the same way (reverse topological order, "
                  "each op's local rule, accumulate); backprop is reverse-mode AD applied to a "
                  "network's loss.",
                  ("function", "steps", "ops visited", "matches finite differences"), rows,
                  supports=False)


def sigmoid_reads_output() -> Report:
    """T7/W4: sigmoid's backward reads its saved output; without it backward cannot run."""
    x = ag.tensor([-2.0, 0.0, 3.0], requires_grad=True)
    y = ag.sigmoid(x)
    (step,) = list(backward_steps(y, np.ones(3), retain_graph=True))
    saved = list(y.grad_fn.saved)
    y.grad_fn.release()  # what backward does to saved tensors when it is done
    try:
        y.backward(np.ones(3))
        error = "no error"
    except RuntimeError as exc:
        error = str(exc).split(". ")[0]
    return Report("What sigmoid's backward needs from the forward pass",
                  "Backward reads the saved forward value σ(x) (σ' = σ(1 − σ)); once it is "
                  f"released, backward fails: {error}.",
                  ("question", "engine"),
                  [("saved by sigmoid's forward", ", ".join(saved)),
                   ("read by its backward", ", ".join(step.reads)),
                   ("backward after release", error)], supports=True)


def fan_out() -> Report:
    """T8/E5: a value feeding three ops gets the sum of their adjoints."""
    value = np.array([0.5, -1.5, 2.0])

    def contribution(k=None):
        x = ag.tensor(value, requires_grad=True)
        uses = [x * 3.0, ag.tanh(x), x ** 2]
        parts = [u if k is None or i == k else u.detach() for i, u in enumerate(uses)]
        steps = list(backward_steps((parts[0] + parts[1] + parts[2]).sum()))
        return x.grad.numpy(), sum(s.accumulated for st in steps for s in st.sent)

    total, accumulated = contribution()
    each = [contribution(k)[0] for k in range(3)]
    rows = [(f"through {name}", *c) for name, c in zip(("3x", "tanh(x)", "x²"), each)]
    rows += [("sum of the three", *sum(each)), ("average of the three", *(sum(each) / 3)),
             ("engine: x.grad", *total)]
    return Report("x feeds three ops: what does x get?",
                  f"x.grad equals the sum of the three contributions ({accumulated} "
                  "accumulations in the sweep), not their average.",
                  ("", "x[0]", "x[1]", "x[2]"), rows,
                  data={"contributions": each, "grad": total},
                  supports=not np.allclose(total, sum(each) / 3))


def seeding() -> Report:
    """T9: seeding the output adjoint with c scales every gradient by c."""
    g = rng(39)
    w0, b0 = g.standard_normal((3, 2)), g.standard_normal(2)
    x = ag.tensor(g.standard_normal((4, 3)))
    grads = {}
    for c in (1.0, 2.0, -0.5, 10.0):
        w, b = ag.tensor(w0, requires_grad=True), ag.tensor(b0, requires_grad=True)
        ag.tanh(x @ w + b).sum().backward(np.array(c))
        grads[c] = (w.grad.numpy(), b.grad.numpy())
    rows = [(c, float(np.mean(grads[c][0] / grads[1.0][0])),
             float(np.mean(grads[c][1] / grads[1.0][1]))) for c in grads]
    return Report("loss.backward(gradient=c): every gradient scales by c",
                  "The seed is dL/dL = 1; any other seed c differentiates c·L instead, so "
                  "every gradient is c times larger. 1 is not arbitrary.",
                  ("seed c", "dW(c) / dW(1)", "db(c) / db(1)"), rows, data=grads,
                  supports=False)


def steepest_ascent(eps: float = 1e-3) -> Report:
    """T10: a small step along +grad raises the loss most; −grad lowers it most."""
    g = rng(40)
    w0 = g.standard_normal(4)
    target = g.standard_normal(4)

    def loss(w):
        with ag.no_grad():
            return ((ag.tanh(ag.tensor(w)) - ag.tensor(target)) ** 2).sum().item()

    w = ag.tensor(w0, requires_grad=True)
    ((ag.tanh(w) - ag.tensor(target)) ** 2).sum().backward()
    unit = w.grad.numpy() / np.linalg.norm(w.grad.numpy())
    directions = {"+grad / |grad|": unit, "−grad / |grad|": -unit}
    for k in range(3):
        d = g.standard_normal(4)
        directions[f"random unit direction {k + 1}"] = d / np.linalg.norm(d)
    base = loss(w0)
    rows = [(name, (loss(w0 + eps * d) - base) / eps) for name, d in directions.items()]
    return Report(f"Change of the loss after a step of length {eps} (divided by the length)",
                  "+grad raises the loss the most (by about |grad|), −grad lowers it the most; "
                  "every other unit direction changes it less.",
                  ("direction", "ΔL / step"), rows,
                  data={"norm": float(np.linalg.norm(w.grad.numpy()))}, supports=True)
