"""T1, T2, T4 and T5 (lesson 09): forward and reverse mode, and what a derivative costs.

T1: both modes give the same Jacobian; T2: which makes fewer passes depends on the shape;
T4: the engine's work against the written-out derivative; T5: nudging (finite differences)
against the engine's gradient. Also the two helpers every check that re-runs the learner's
function uses (T10's too).
"""

from __future__ import annotations

import numpy as np

import autograd_core as ag
from autograd_core.func import jacfwd, jacrev
from autograd_core.recording.node import observing
from autograd_core.tools.counting import count_ops

from ... import gate
from ...feedback import words
from .. import learner
from ..true_false import Flaw, Watch, among, count, function, number, numbers, same


def _at(value, name: str = "at") -> np.ndarray:
    return numbers(value, name)


def _rerun(fn, *args):
    """The learner's function run again by the check (anything it raises is a sentence)."""
    return learner.call(fn, *args, what=getattr(fn, "__name__", "function"))


# -- T1: forward and reverse mode give the same Jacobian -------------------------------------


def measure_t1(data: dict, watch: Watch) -> bool:
    """The two Jacobians must be what jacfwd and jacrev give for the function at 'at', and both
    modes must have run; True when they agree to rounding."""
    f, at = function(data["function"], "function"), _at(data["at"])
    by_fwd, by_rev = numbers(data["forward"], "forward"), numbers(data["reverse"], "reverse")
    fwd = _rerun(lambda: jacfwd(f)(ag.tensor(at)).numpy())
    rev = _rerun(lambda: jacrev(f)(ag.tensor(at)).numpy())
    if at.size < 2 or rev.size // max(at.size, 1) < 2:
        raise Flaw("Use a function of at least 2 inputs and 2 outputs, so that its Jacobian "
                   "is a matrix and not one row or one column.")
    if not watch.jvp_passes:
        raise Flaw("No forward-mode pass ran during your experiment: build 'forward' with "
                   "jacfwd(function)(at).")
    if not watch.sweeps:
        raise Flaw("No reverse sweep ran during your experiment: build 'reverse' with "
                   "jacrev(function)(at).")
    for name, yours, engine, how in (("forward", by_fwd, fwd, "jacfwd"),
                                     ("reverse", by_rev, rev, "jacrev")):
        if yours.shape != engine.shape:
            raise Flaw(f"'{name}' has shape {words.shape(yours.shape)}, but {how} gives your "
                       f"function's Jacobian at that point the shape {words.shape(engine.shape)}.")
        if not same(yours, engine):
            raise Flaw(f"'{name}' is not the Jacobian {how} gives for your function at 'at': "
                       "return what it built, unchanged.")
    return bool(np.max(np.abs(by_fwd - by_rev)) <= 1e-10 * (1 + np.max(np.abs(by_rev))))


@gate.answers("T1")
def reference_t1() -> dict:
    """One function R³ → R², its Jacobian at one point by forward and by reverse mode."""
    A = ag.tensor([[0.5, -1.0, 0.3], [1.2, 0.4, -0.7]])

    def f(x):                                   # R³ → R²
        return ag.sin(A @ x) * x[1]

    at = ag.tensor([0.2, 0.9, -0.4])
    return {"function": f, "at": at, "forward": jacfwd(f)(at), "reverse": jacrev(f)(at)}


# -- T2: which mode makes fewer passes depends on the shape -----------------------------------


def _passes(f, at: np.ndarray) -> tuple[int, int, int]:
    """(JVP passes of jacfwd, sweeps of jacrev, outputs) of ``f`` at ``at``, counted here."""
    with observing(Watch()) as forward:
        _rerun(lambda: jacfwd(f)(ag.tensor(at)))
    with observing(Watch()) as reverse:
        size = _rerun(lambda: jacrev(f)(ag.tensor(at)).numpy().size)
    return forward.jvp_passes, len(reverse.sweeps), size // max(at.size, 1)


def measure_t2(data: dict, watch: Watch) -> bool:
    """Each pass count must be what jacfwd / jacrev make on that function (counted here) and the
    experiment must have made them; True when reverse mode fewer on both."""
    claimed, fewer_reverse = {"jacfwd": 0, "jacrev": 0}, []
    for name, wide in (("wide", True), ("tall", False)):
        case = data[name]
        if not isinstance(case, dict) or not {"function", "at", "jacfwd_passes",
                                              "jacrev_passes"} <= set(case):
            raise Flaw(f"'{name}' should be a dict with the keys 'function', 'at', "
                       "'jacfwd_passes' and 'jacrev_passes'.")
        f, at = function(case["function"], f"{name} function"), _at(case["at"], f"{name} at")
        by_fwd = count(case["jacfwd_passes"], f"{name} jacfwd_passes")
        by_rev = count(case["jacrev_passes"], f"{name} jacrev_passes")
        fwd, rev, outputs = _passes(f, at)
        if wide and not at.size > outputs:
            raise Flaw("Your 'wide' function should take more inputs than it returns outputs "
                       "(e.g. 32 inputs -> 1 output).")
        if not wide and not outputs > at.size:
            raise Flaw("Your 'tall' function should return more outputs than it takes inputs "
                       "(e.g. 1 input -> 32 outputs).")
        if by_fwd != fwd:
            raise Flaw(f"'jacfwd_passes' of '{name}' is not the number of passes jacfwd makes "
                       "on it: count the runs of your function while jacfwd builds the "
                       "Jacobian (one per pass).")
        if by_rev != rev:
            raise Flaw(f"'jacrev_passes' of '{name}' is not the number of reverse sweeps "
                       "jacrev makes on it: count them with a hook on the output (it runs "
                       "once per sweep).")
        claimed["jacfwd"] += by_fwd
        claimed["jacrev"] += by_rev
        fewer_reverse.append(by_rev < by_fwd)
    if watch.jvp_passes < claimed["jacfwd"] or len(watch.sweeps) < claimed["jacrev"]:
        raise Flaw("Your experiment reports more passes than the engine made while it ran: "
                   "run jacfwd and jacrev on both functions and count what they do.")
    return all(fewer_reverse)


@gate.answers("T2")
def reference_t2() -> dict:
    """A wide and a tall function; the runs during jacfwd and the sweeps during jacrev."""
    gen = ag.Generator(2)
    n = 32
    W = ag.randn(16, n, generator=gen)
    v, c = ag.randn(n, generator=gen), ag.randn(n, generator=gen)
    runs, sweeps = [], []

    def counted(f):                             # f, counting its runs and reverse sweeps
        def run(x):
            runs.append(1)
            out = f(x)
            out.register_hook(lambda g: sweeps.append(1))   # once per reverse sweep
            return out
        return run

    wide = counted(lambda x: ag.tanh(W @ x).sum())      # n inputs -> 1 output
    tall = counted(lambda t: ag.tanh(t * v + c))        # 1 input -> n outputs
    result = {}
    for name, f, at in (("wide", wide, ag.randn(n, generator=gen)),
                        ("tall", tall, ag.randn(1, generator=gen))):
        runs.clear()
        jacfwd(f)(at)
        forward_passes = len(runs)
        sweeps.clear()
        jacrev(f)(at)
        result[name] = {"function": f, "at": at, "jacfwd_passes": forward_passes,
                        "jacrev_passes": len(sweeps)}
    return result



# -- T4: the engine's work against the written-out derivative ---------------------------------


def _is_formula_size(depths: list[int], nodes: list[int]) -> bool:
    """Are ``nodes`` the written-out derivative sizes of ``modes.nested`` (of some kind)?"""
    try:
        from ...lessons import symbolic
    except ImportError as error:  # sympy is a lesson dependency
        raise Flaw(f"The check needs sympy to count formula nodes ({error}): pip install "
                   "sympy.") from None
    from ...lessons.modes import NESTED_KINDS

    def size(d, kind):
        return symbolic.tree_size(symbolic.derivative(d, kind))

    return any(size(depths[0], kind) == nodes[0]
               and [size(d, kind) for d in depths] == nodes for kind in NESTED_KINDS)


def measure_t4(data: dict, watch: Watch) -> bool:
    """Backward rule counts of the experiment's own sweeps, written-out sizes of sympy's
    derivative, deep enough to compare; then False: the work does not follow the formula."""
    depths, ops, nodes = data["depths"], data["backward_ops"], data["formula_nodes"]
    if not (isinstance(depths, list | tuple) and all(isinstance(d, int) and 1 <= d <= 9
                                                     for d in depths)
            and list(depths) == sorted(set(depths)) and len(depths) >= 3):
        raise Flaw("'depths' should be at least 3 increasing nesting depths between 1 and 9, "
                   "e.g. [1, 2, 3, 4, 5, 6].")
    if depths[-1] < 5:
        raise Flaw("Your depths stop too early to tell how the two sizes grow: go up to depth "
                   "5 or more.")
    if not (isinstance(ops, list | tuple) and isinstance(nodes, list | tuple)
            and len(ops) == len(nodes) == len(depths)):
        raise Flaw("'backward_ops' and 'formula_nodes' should each have one entry per depth.")
    ops = [count(o, "backward_ops") for o in ops]
    nodes = [count(n, "formula_nodes") for n in nodes]
    swept = iter([len(s.visited) for s in watch.sweeps])
    if not all(any(o == seen for seen in swept) for o in ops):
        raise Flaw("'backward_ops' are not the numbers of backward rules the engine ran in your "
                   "experiment's backward passes: count them with count_ops() around "
                   "backward, one pass per depth.")
    if not _is_formula_size(list(depths), nodes):
        raise Flaw("'formula_nodes' are not the sizes of the derivative of modes.nested written "
                   "out: symbolic.tree_size(symbolic.derivative(depth)) at each depth.")
    if len(set(ops)) < 2:
        raise Flaw("Your backward passes all ran the same number of rules: differentiate the "
                   "nested function at each depth.")
    growth_formula, growth_engine = nodes[-1] / nodes[0], ops[-1] / ops[0]
    if growth_formula < 4 * growth_engine:
        raise Flaw("Your depths are too close together to tell how the two sizes grow: "
                   "measure up to depth 6 or more.")
    return False  # the engine's work follows the graph, not the formula


@gate.answers("T4")
def reference_t4() -> dict:
    """Backward rules run and written-out derivative size, at nesting depths 1 to 6."""
    from widgets.lessons import modes, symbolic

    depths = [1, 2, 3, 4, 5, 6]
    backward_ops, formula_nodes = [], []
    for d in depths:
        x = ag.tensor(0.3, requires_grad=True)
        with count_ops() as counts:
            modes.nested(x, d).backward()
        backward_ops.append(counts.backward.ops)
        formula_nodes.append(symbolic.tree_size(symbolic.derivative(d)))
    return {"depths": depths, "backward_ops": backward_ops, "formula_nodes": formula_nodes}



# -- T5: nudging against the engine's gradient -----------------------------------------------


def measure_t5(data: dict, watch: Watch) -> bool:
    """The engine's gradient and finite differences of the same function at the same point;
    supported: some nudge reproduces the gradient."""
    f, x0 = function(data["function"], "function"), number(data["at"], "at")
    grad, hs = number(data["grad"], "grad"), numbers(data["h"], "h").ravel()
    slopes = numbers(data["slopes"], "slopes").ravel()
    if hs.size < 5 or slopes.size != hs.size or (hs <= 0).any():
        raise Flaw("Measure at 5 or more positive steps h, one slope per step.")
    if hs.max() / hs.min() < 1e5:
        raise Flaw("Spread your steps over many orders of magnitude (e.g. 1e-1 down to "
                   "1e-12): a few nearby h cannot show how the error behaves.")
    leaf = ag.tensor(x0, requires_grad=True)
    _rerun(lambda: f(leaf).backward())
    if not same(np.float64(grad), leaf.grad.numpy(), rtol=1e-10):
        raise Flaw("'grad' is not the engine's gradient of your function at 'at': return "
                   "x.grad after backward.")
    if not among(np.float64(grad), watch.totals()):
        raise Flaw("No backward pass of your experiment computed 'grad': get it from the "
                   "engine, with backward, inside the experiment.")

    def value(x):
        with ag.no_grad():
            return float(_rerun(lambda: f(ag.tensor(x)).item()))

    base = abs(value(x0)) + 1
    for h, slope in zip(hs, slopes):
        central = (value(x0 + h) - value(x0 - h)) / (2 * h)
        one_sided = (value(x0 + h) - value(x0)) / h
        tol = 1e-8 * (1 + abs(central)) + 1e-14 * base / h
        if min(abs(slope - central), abs(slope - one_sided)) > tol:
            raise Flaw(f"Your slope at h = {h:.0e} is not a finite difference of your function "
                       "at 'at': (f(x0 + h) - f(x0 - h)) / (2h).")
    errors = np.abs(slopes - grad)
    return bool(errors.min() <= 1e-14 * (1 + abs(grad)))  # some nudge gives the gradient?


@gate.answers("T5")
def reference_t5() -> dict:
    """The engine's gradient of tanh(x)·exp(x) at 0.7, and central differences from h = 1e-1 to
    1e-12."""
    def f(t):
        return ag.tanh(t) * ag.exp(t)

    x0 = 0.7
    x = ag.tensor(x0, requires_grad=True)
    f(x).backward()
    hs = [10.0 ** -k for k in range(1, 13)]
    slopes = []
    for h in hs:
        with ag.no_grad():                      # nudges only: nothing recorded
            slopes.append((f(ag.tensor(x0 + h)).item() - f(ag.tensor(x0 - h)).item()) / (2 * h))
    return {"function": f, "at": x0, "grad": x.grad, "h": hs, "slopes": slopes}

