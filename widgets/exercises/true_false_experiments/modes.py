"""T1, T2, T4 and T5 (lesson 09): forward and reverse mode, and what a derivative costs.

T1: both modes give the same Jacobian; T2: which makes fewer passes depends on the shape;
T4: the engine's work against the written-out derivative; T5: nudging (finite differences)
against the engine's gradient. Also the two helpers every check that re-runs the learner's
function uses (T10's too).
"""

from __future__ import annotations

import numpy as np

import autograd_core as ag
from autograd_core.func import jacfwd, jacrev, jvp, vjp
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


def _oriented(name: str, yours: np.ndarray, engine: np.ndarray, by: str, what: str) -> None:
    """A :class:`Flaw` unless ``yours`` is the Jacobian ``engine`` (a transposed one named)."""
    if yours.shape == engine.T.shape and yours.shape != engine.shape:
        raise Flaw(f"'{name}' is the Jacobian turned on its side: one {by} gives one {what} "
                   "of the Jacobian, which has one row per output and one column per input.")
    if yours.shape != engine.shape:
        raise Flaw(f"'{name}' has shape {words.shape(yours.shape)}, but your function's "
                   f"Jacobian at that point has the shape {words.shape(engine.shape)}: one "
                   "row per output, one column per input.")
    if not same(yours, engine):
        raise Flaw(f"'{name}' is not your function's Jacobian at 'at': one {by} along a one-hot "
                   f"vector gives one {what}; check which vector you passed for each.")


def measure_t1(data: dict, watch: Watch) -> bool:
    """Both Jacobians built pass by pass (one JVP per input, one VJP per output, counted by
    the Watch) must be the function's Jacobian at 'at' (computed here by jacrev), and
    'largest_difference' their largest entrywise gap; True when that is rounding."""
    f, at = function(data["function"], "function"), _at(data["at"])
    by_fwd, by_rev = numbers(data["forward"], "forward"), numbers(data["reverse"], "reverse")
    gap = number(data["largest_difference"], "largest_difference")
    engine = _rerun(lambda: jacrev(f)(ag.tensor(at)).numpy())
    if at.ndim != 1 or engine.ndim != 2:
        raise Flaw("Use a function from a vector to a vector, so that its Jacobian is a "
                   "matrix (one row per output, one column per input).")
    outputs, inputs = engine.shape
    if inputs < 2 or outputs < 2 or inputs == outputs:
        raise Flaw("Use a function with at least 2 inputs and 2 outputs, and not as many "
                   "outputs as inputs, so that rows and columns cannot be mixed up.")
    if watch.jvp_passes < inputs:
        raise Flaw(f"Build 'forward' by forward mode, one jvp per input: your function has "
                   f"{inputs} inputs, and the engine saw {watch.jvp_passes} forward-mode "
                   "passes during your experiment.")
    if len(watch.sweeps) < outputs:
        raise Flaw(f"Build 'reverse' by reverse mode, one vjp per output: your function has "
                   f"{outputs} outputs, and the engine saw {len(watch.sweeps)} reverse "
                   "sweeps during your experiment.")
    _oriented("forward", by_fwd, engine, "JVP", "column")
    _oriented("reverse", by_rev, engine, "VJP", "row")
    measured = float(np.max(np.abs(by_fwd - by_rev)))
    if abs(gap - measured) > 1e-6 * measured:
        raise Flaw("'largest_difference' is not the largest |forward − reverse| over the "
                   "entries of your two matrices: compute it from them.")
    return bool(measured <= 1e-10 * (1 + np.max(np.abs(by_rev))))


@gate.answers("T1")
def _reference_t1() -> dict:
    """One function R³ → R², its Jacobian at one point column by column (one JVP per input)
    and row by row (one VJP per output), and their largest difference."""
    A = ag.tensor([[0.5, -1.0, 0.3], [1.2, 0.4, -0.7]])

    def f(x):                                   # R³ → R²
        return ag.sin(A @ x) * x[1]

    at = ag.tensor([0.2, 0.9, -0.4])
    eye3, eye2 = np.eye(3), np.eye(2)
    columns = [jvp(f, (at,), (ag.tensor(eye3[i]),))[1].numpy() for i in range(3)]
    _, pull = vjp(f, at)
    rows = [pull(ag.tensor(eye2[j]))[0].numpy() for j in range(2)]
    forward, reverse = np.stack(columns, axis=1), np.stack(rows, axis=0)
    return {"function": f, "at": at, "forward": forward, "reverse": reverse,
            "largest_difference": np.abs(forward - reverse).max()}


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
def _reference_t2() -> dict:
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


def _is_formula_size(depths: list[int], nodes: list[int], kind: str) -> bool:
    """Are ``nodes`` the written-out derivative sizes of ``modes.nested`` of ``kind``?"""
    try:
        from ...lessons import symbolic
    except ImportError as error:  # sympy is a lesson dependency
        raise Flaw(f"The check needs sympy to count formula nodes ({error}): pip install "
                   "sympy.") from None

    def size(d):
        return symbolic.tree_size(symbolic.derivative(d, kind))

    return size(depths[0]) == nodes[0] and [size(d) for d in depths] == nodes


T4_PREDICTED = 9  # the depth the learner predicts from shallower measurements


def _formula_kind(depths: list[int], nodes: list[int]) -> str | None:
    """Which of ``modes.nested``'s kinds ``nodes`` are the written-out derivative sizes of."""
    from ...lessons.modes import NESTED_KINDS

    return next((kind for kind in NESTED_KINDS if _is_formula_size(depths, nodes, kind)), None)


def _engine_ops(depth: int, kind: str) -> int:
    """Backward rules the engine runs for ``modes.nested`` at ``depth`` (counted here)."""
    from ...lessons import modes

    x = ag.tensor(0.3, requires_grad=True)
    with count_ops() as counts:
        modes.nested(x, depth, kind).backward()
    return counts.backward.ops


def measure_t4(data: dict, watch: Watch) -> bool:
    """Backward rule counts of the experiment's own sweeps and sympy's written-out sizes up
    to depth 5–7, then both predicted at depth 9 without measuring it: the engine's count
    exactly (it grows by the same number of rules per level), the formula's within a factor
    1.5 (it multiplies). Then False: the work does not follow the formula."""
    depths, ops, nodes = data["depths"], data["backward_ops"], data["formula_nodes"]
    if not (isinstance(depths, list | tuple) and all(isinstance(d, int) and 1 <= d <= 9
                                                     for d in depths)
            and list(depths) == sorted(set(depths)) and len(depths) >= 3):
        raise Flaw("'depths' should be at least 3 increasing nesting depths between 1 and 7, "
                   "e.g. [1, 2, 3, 4, 5, 6].")
    if depths[-1] < 5:
        raise Flaw("Your depths stop too early to tell how the two sizes grow: go up to depth "
                   "5 or more.")
    if depths[-1] >= T4_PREDICTED - 1:
        raise Flaw(f"Measure up to depth 7 at most: depth {T4_PREDICTED} is the one you "
                   "predict from your measurements.")
    if not (isinstance(ops, list | tuple) and isinstance(nodes, list | tuple)
            and len(ops) == len(nodes) == len(depths)):
        raise Flaw("'backward_ops' and 'formula_nodes' should each have one entry per depth.")
    ops = [count(o, "backward_ops") for o in ops]
    nodes = [count(n, "formula_nodes") for n in nodes]
    seen = [len(s.visited) for s in watch.sweeps]
    swept = iter(seen)
    if not all(any(o == s for s in swept) for o in ops):
        raise Flaw("'backward_ops' are not the numbers of backward rules the engine ran in your "
                   "experiment's backward passes: count them with count_ops() around "
                   "backward, one pass per depth.")
    kind = _formula_kind(list(depths), nodes)
    if kind is None:
        raise Flaw("'formula_nodes' are not the sizes of the derivative of modes.nested written "
                   "out: symbolic.tree_size(symbolic.derivative(depth)) at each depth.")
    if len(set(ops)) < 2:
        raise Flaw("Your backward passes all ran the same number of rules: differentiate the "
                   "nested function at each depth.")
    _check_predicted(data, kind, seen, ops, nodes, list(depths))
    return False  # the engine's work follows the graph, not the formula


def _check_predicted(data: dict, kind: str, seen: list[int], ops: list[int], nodes: list[int],
                     depths: list[int]) -> None:
    """'ops_at_9' and 'nodes_at_9': predictions at depth 9 from the measured depths."""
    from ...lessons import symbolic

    at = T4_PREDICTED
    ops_at, nodes_at = count(data["ops_at_9"], "ops_at_9"), number(data["nodes_at_9"],
                                                                   "nodes_at_9")
    true_ops = _rerun(lambda: _engine_ops(at, kind))
    true_nodes = symbolic.tree_size(symbolic.derivative(at, kind))
    if true_ops in seen and at not in depths:
        raise Flaw(f"Your experiment ran a backward pass at depth {at}: predict 'ops_at_9' "
                   "from the depths you measured, without running it.")
    if ops_at != true_ops:
        step = (ops[-1] - ops[0]) / (depths[-1] - depths[0])
        if ops_at > ops[-1] + 2 * step * (at - depths[-1]):
            raise Flaw("Your 'ops_at_9' grows the engine's count the way the formula grows: "
                       "look at how many rules each level of nesting added in your "
                       "measurements.")
        raise Flaw("Your 'ops_at_9' is not what the engine runs at depth 9: how many backward "
                   "rules did each level of nesting add in your measurements?")
    linear = nodes[-1] + (nodes[-1] - nodes[-2]) * (at - depths[-1])
    if not true_nodes / 1.5 <= nodes_at <= true_nodes * 1.5:
        if nodes_at <= 1.2 * linear:
            raise Flaw("Your 'nodes_at_9' adds about the same number of nodes per level: "
                       "by what factor did the formula grow from one depth to the next?")
        raise Flaw("Your 'nodes_at_9' is more than a factor 1.5 away from the size of the "
                   "formula at depth 9: extend the growth your measurements show, level by "
                   "level.")


@gate.answers("T4")
def _reference_t4() -> dict:
    """Backward rules run and written-out derivative size at nesting depths 1 to 6, and both
    predicted at depth 9: the rules add 3 per level, the formula multiplies by its last
    measured factor per level."""
    from widgets.lessons import modes, symbolic

    depths = [1, 2, 3, 4, 5, 6]
    backward_ops, formula_nodes = [], []
    for d in depths:
        x = ag.tensor(0.3, requires_grad=True)
        with count_ops() as counts:
            modes.nested(x, d).backward()
        backward_ops.append(counts.backward.ops)
        formula_nodes.append(symbolic.tree_size(symbolic.derivative(d)))
    per_level = backward_ops[-1] - backward_ops[-2]           # the same at every level
    factor = formula_nodes[-1] / formula_nodes[-2]            # the last growth factor
    return {"depths": depths, "backward_ops": backward_ops, "formula_nodes": formula_nodes,
            "ops_at_9": backward_ops[-1] + 3 * per_level,
            "nodes_at_9": formula_nodes[-1] * factor ** 3}



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
def _reference_t5() -> dict:
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

