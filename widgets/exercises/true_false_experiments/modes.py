"""T1, T2, T4 and T5 (lesson 09): forward and reverse mode, and what a derivative costs.

T1: both modes give the same Jacobian; T2: which makes fewer passes depends on the shape;
T4: the engine's work against the written-out derivative; T5: nudging (finite differences)
against the engine's gradient. Also the two helpers every check that re-runs the learner's
function uses (T10's too).

T2, T4 and T5 end in a law the learner writes as a function (the passes of each mode from
the shapes; the engine's rules and the formula's size from the depth; the best step and the
least error of a central difference from |f|, |f'''| and ε). Each check tries the law on what
the learner measured, then on cases it draws when it runs (``_draw``) and measures itself:
shapes the learner has not seen, depths too deep for sympy, functions and precisions of its
own. The law runs without the engine (``predicted``), so it cannot measure the case instead.
"""

from __future__ import annotations

import numpy as np

import autograd_core as ag
from autograd_core.func import grad as nested_grad
from autograd_core.func import jacfwd, jacrev, jvp, vjp
from autograd_core.recording.node import observing
from autograd_core.tools.counting import count_ops

from ... import gate
from ...feedback import words
from .. import learner
from ..true_false import (
    Flaw,
    Watch,
    among,
    count,
    function,
    number,
    numbers,
    predicted,
    same,
)


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
    pushed = [t.ravel() for t in watch.tangents if t.size == outputs]
    if not all(among(column, pushed) for column in by_fwd.T):
        raise Flaw("A column of 'forward' is not a tangent any of your forward-mode passes "
                   "pushed to your function's output: build each column by one jvp.")
    pulled = [g.ravel() for g in watch.totals() if np.size(g) == inputs]
    if not all(among(row, pulled) for row in by_rev):
        raise Flaw("A row of 'reverse' is not a gradient any of your reverse sweeps sent "
                   "back to 'at': build each row by one vjp.")
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


# -- what the checks below draw anew at every call --------------------------------------------

# Shapes, depths and functions a law is tried on: drawn when the check runs, so that no
# number measured beforehand can stand in for the law (the tests may seed it).
_draw = np.random.default_rng()


def _whole(value: object, name: str) -> int:
    """A predicted count: a whole number (an integer-valued float too)."""
    if isinstance(value, bool) or not isinstance(value, int | float | np.integer | np.floating):
        raise Flaw(f"'{name}' should give a count (a whole number); it gave "
                   f"{words.short(value, 40)}.")
    if not np.isfinite(value) or value != round(value) or value < 0:
        raise Flaw(f"'{name}' should give a count (a whole number); it gave "
                   f"{words.short(value, 40)}.")
    return int(round(value))


def _positive(value: object, name: str) -> float:
    """A predicted size: a positive number (an int of any size too)."""
    if isinstance(value, int | np.integer) and not isinstance(value, bool):
        value = float(min(int(value), 10**300))
    if isinstance(value, np.ndarray) and value.size == 1:
        value = value.ravel()[0]
    if isinstance(value, bool) or not isinstance(value, float | np.floating):
        raise Flaw(f"'{name}' should give one positive number; it gave "
                   f"{words.short(value, 40)}.")
    if not value > 0:  # NaN too
        raise Flaw(f"'{name}' should give one positive number; it gave {words.short(value, 40)}.")
    return float(value)


# -- T2: which mode makes fewer passes depends on the shape -----------------------------------


def _passes(f, at: np.ndarray) -> tuple[int, int, int]:
    """(JVP passes of jacfwd, sweeps of jacrev, outputs) of ``f`` at ``at``, counted here."""
    with observing(Watch()) as forward:
        _rerun(lambda: jacfwd(f)(ag.tensor(at)))
    with observing(Watch()) as reverse:
        size = _rerun(lambda: jacrev(f)(ag.tensor(at)).numpy().size)
    return forward.jvp_passes, len(reverse.sweeps), size // max(at.size, 1)


def _t2_shapes() -> list[tuple[tuple, tuple]]:
    """(input shape, output shape) pairs drawn now: a matrix in and a few numbers out, a few
    in and a matrix out, as many in as out in other shapes, and a vector in and one number
    out."""
    def r(lo, hi):
        return int(_draw.integers(lo, hi + 1))

    p, q = r(2, 4), r(2, 4)
    return [((r(2, 5), r(2, 5)), (r(1, 3),)), ([(), (1,), (2,), (3,)][r(0, 3)], (r(2, 4), r(2, 4))),
            ((p, q), (p * q,)), ((r(2, 6),), ())]


def _engine_passes(ins: tuple, outs: tuple) -> tuple[int, int]:
    """The passes jacfwd and jacrev make on tanh(A x) from shape ``ins`` to ``outs``."""
    n, m = int(np.prod(ins)), int(np.prod(outs))
    A = ag.tensor(_draw.standard_normal((m, n)))

    def f(x):
        return ag.tanh(A @ x.reshape(n)).reshape(outs)

    fwd, rev, _ = _passes(f, _draw.standard_normal(ins))
    return fwd, rev


def _where(ins: tuple, outs: tuple) -> str:
    return f"for input shape {words.shape(ins)} → output shape {words.shape(outs)}"


def _one_count(got: int, right: int, shape: tuple, mode: str, where: str) -> None:
    """A :class:`Flaw` naming how one predicted count of passes is wrong."""
    if got == right:
        return
    what = (("pass", "input", "passes") if mode == "jacfwd" else ("sweep", "output", "sweeps"))
    if got == 1:
        raise Flaw(f"'passes' gives {mode} one {what[0]} {where}, but one {what[0]} fills one "
                   f"{'column' if mode == 'jacfwd' else 'row'} of the Jacobian: how many has "
                   "it there?")
    if len(shape) > 1 and got in (shape[0], len(shape)):
        raise Flaw(f"'passes' gives {mode} a count {where} that follows the length of the "
                   f"{what[1]} shape, not the numbers in it: one {what[0]} handles one "
                   f"{what[1]} number.")
    if got == right + 1:
        extra = (" (the run that records the function is not a sweep)" if mode == "jacrev"
                 else "")
        raise Flaw(f"'passes' gives {mode} one more {what[0]} {where} than the engine makes"
                   f"{extra}.")
    if got == right - 1:
        raise Flaw(f"'passes' gives {mode} one {what[0]} fewer {where} than the engine makes.")
    raise Flaw(f"'passes' gives {mode} a count {where} that is not the number of "
               f"{what[2]} it makes: which part of the Jacobian does one {what[0]} fill, and "
               "how many such parts has it?")


def _check_passes(passes, ins: tuple, outs: tuple, right: tuple[int, int], where: str) -> None:
    got = predicted(passes, ins, outs, name="passes")
    if not (isinstance(got, tuple | list) and len(got) == 2):
        raise Flaw(f"'passes' should return two counts, (jacfwd passes, jacrev passes); {where} "
                   f"it returned {words.short(got, 40)}.")
    got = (_whole(got[0], "passes"), _whole(got[1], "passes"))
    if got == right[::-1] and right[0] != right[1]:
        raise Flaw(f"'passes' gives the two counts the wrong way round {where}: does one "
                   "forward-mode pass move an input or weigh an output, and which part of the "
                   "Jacobian does it fill?")
    _one_count(got[0], right[0], ins, "jacfwd", where)
    _one_count(got[1], right[1], outs, "jacrev", where)


_MODES = {"jacfwd": "jacfwd", "forward": "jacfwd", "jacrev": "jacrev", "reverse": "jacrev",
          "same": "same", "tie": "same", "either": "same"}


def _check_fewer(fewer, ins: tuple, outs: tuple, right: tuple[int, int], where: str) -> str:
    said = predicted(fewer, ins, outs, name="fewer")
    mode = _MODES.get(said.strip().lower()) if isinstance(said, str) else None
    if mode is None:
        raise Flaw(f"'fewer' should return \"jacfwd\", \"jacrev\" or \"same\"; {where} it "
                   f"returned {words.short(said, 40)}.")
    fwd, rev = right
    if mode != ("jacfwd" if fwd < rev else "jacrev" if rev < fwd else "same"):
        raise Flaw(f"'fewer' {where} is not the mode your own 'passes' gives fewer passes "
                   "there (or \"same\" when they tie): compare the two counts.")
    return mode


def measure_t2(data: dict, watch: Watch) -> bool:
    """The passes the experiment counted on functions of its own (each what jacfwd / jacrev
    make, counted here, and made while it ran); then the learner's laws ``passes`` and
    ``fewer``, right on what they counted and on shapes drawn now (the engine counted here on
    each); True when their ``fewer`` never gives forward mode fewer passes."""
    counted = data["counted"]
    if not (isinstance(counted, list | tuple) and len(counted) >= 2):
        raise Flaw("'counted' should be a list of at least two functions you counted, each "
                   "{\"function\": f, \"at\": x, \"jacfwd_passes\": ..., \"jacrev_passes\": "
                   "...}.")
    claimed, seen = {"jacfwd": 0, "jacrev": 0}, []
    for k, case in enumerate(counted):
        name = f"counted[{k}]"
        if not isinstance(case, dict) or not {"function", "at", "jacfwd_passes",
                                              "jacrev_passes"} <= set(case):
            raise Flaw(f"{name} should be a dict with the keys 'function', 'at', "
                       "'jacfwd_passes' and 'jacrev_passes'.")
        f, at = function(case["function"], f"{name} function"), _at(case["at"], f"{name} at")
        by_fwd = count(case["jacfwd_passes"], f"{name} jacfwd_passes")
        by_rev = count(case["jacrev_passes"], f"{name} jacrev_passes")
        fwd, rev, outputs = _passes(f, at)
        if by_fwd != fwd:
            raise Flaw(f"The 'jacfwd_passes' of {name} is not the number of passes jacfwd "
                       "makes on it: count the runs of your function while jacfwd builds the "
                       "Jacobian (one per pass).")
        if by_rev != rev:
            raise Flaw(f"The 'jacrev_passes' of {name} is not the number of reverse sweeps "
                       "jacrev makes on it: count them with a hook on the output (it runs "
                       "once per sweep).")
        claimed["jacfwd"] += by_fwd
        claimed["jacrev"] += by_rev
        out_shape = _rerun(lambda f=f, at=at: tuple(f(ag.tensor(at, requires_grad=True)).shape))
        seen.append((tuple(at.shape), out_shape, (fwd, rev), f"for your {name}"))
    if len({right for _, _, right, _ in seen}) < 2:
        raise Flaw("All the functions in 'counted' make the same passes: count functions of "
                   "other shapes (more inputs than outputs, and more outputs than inputs).")
    if watch.jvp_passes < claimed["jacfwd"] or len(watch.sweeps) < claimed["jacrev"]:
        raise Flaw("Your experiment reports more passes than the engine made while it ran: "
                   "run jacfwd and jacrev on your functions and count what they do.")
    passes, fewer = data["passes"], data["fewer"]
    drawn = [(ins, outs, _engine_passes(ins, outs), _where(ins, outs)) for ins, outs in
             _t2_shapes()]
    for ins, outs, right, where in seen + drawn:
        _check_passes(passes, ins, outs, right, where)
    modes = [_check_fewer(fewer, ins, outs, right, where) for ins, outs, right, where
             in seen + drawn]
    return "jacfwd" not in modes


@gate.answers("T2")
def _reference_t2() -> dict:
    """The passes of jacfwd and jacrev on a wide, a tall and a matrix-input function; the
    law they follow, and the mode with fewer passes."""
    gen = ag.Generator(2)
    W = ag.randn(16, 32, generator=gen)
    v, c = ag.randn(32, generator=gen), ag.randn(32, generator=gen)
    runs, sweeps = [], []

    def counted(f):                             # f, counting its runs and reverse sweeps
        def run(x):
            runs.append(1)
            out = f(x)
            out.register_hook(lambda g: sweeps.append(1))   # once per reverse sweep
            return out
        return run

    functions = [(counted(lambda x: ag.tanh(W @ x).sum()), ag.randn(32, generator=gen)),
                 (counted(lambda t: ag.tanh(t * v + c)), ag.randn(1, generator=gen)),
                 (counted(lambda m: ag.tanh(m @ v[:4])), ag.randn(3, 4, generator=gen))]
    result = []
    for f, at in functions:
        runs.clear()
        jacfwd(f)(at)
        forward_passes = len(runs)               # one run per forward-mode pass
        sweeps.clear()
        jacrev(f)(at)
        result.append({"function": f, "at": at, "jacfwd_passes": forward_passes,
                       "jacrev_passes": len(sweeps)})

    def passes(input_shape, output_shape):      # one pass per input number, one sweep
        return int(np.prod(input_shape)), int(np.prod(output_shape))   # per output number

    def fewer(input_shape, output_shape):
        by_fwd, by_rev = passes(input_shape, output_shape)
        return "jacfwd" if by_fwd < by_rev else "jacrev" if by_rev < by_fwd else "same"

    return {"counted": result, "passes": passes, "fewer": fewer}


# -- T4: the engine's work against the written-out derivative ---------------------------------

T4_DEEPEST = 14  # the deepest measurement: symbolic.MAX_DEPTH (sympy takes about 20 s there)
T4_OPS_DEPTHS = (100, 2000)  # where the check tries 'ops_at' (the engine counts it there)
T4_NODES_DEPTHS = (40, 60)  # where the check tries 'nodes_at': far beyond sympy's reach
T4_FACTOR = 1.5  # how far 'nodes_at' may be from the formula's size


def _formula_nodes(depth: int) -> int:
    """Nodes of sympy's derivative of ``modes.nested(x, depth)`` written out, without sympy:
    (15d + 4)·2^(d−1) − 1 (the tests hold it against sympy itself, depth by depth)."""
    return (15 * depth + 4) * 2 ** (depth - 1) - 1


def _engine_ops(depth: int) -> int:
    """Backward rules the engine runs for ``modes.nested`` at ``depth`` (counted here)."""
    from ...lessons import modes

    x = ag.tensor(0.3, requires_grad=True)
    with count_ops() as counts:
        modes.nested(x, depth).backward()
    return counts.backward.ops


def _growth_slip(nodes_at, depth: int) -> str:
    """How a law that misses the formula's size at ``depth`` grows, in a sentence's end."""
    a, b, c = (_positive(predicted(nodes_at, d, name="nodes_at"), "nodes_at")
               for d in (depth, depth + 1, depth + 2))
    first, second = b / a, c / b
    if first <= 1:
        return "does not grow with the depth"
    if abs(first - second) <= 1e-6 * first:
        if abs(first - 2) <= 1e-6:
            return ("doubles with every level, but the factors you measured are above 2 and "
                    "shrink only slowly toward 2: divide your sizes by 2**depth and look at how "
                    "what is left grows")
        return ("grows by the same factor at every level, but the factor you measured "
                "shrinks from one depth to the next: find the law behind that shrinking")
    if first < 1.3:
        return ("adds about the same number of nodes per level (or ever fewer): by what "
                "factor did the formula grow from one depth to the next?")
    return "follows another growth than your measurements show"


def _check_nodes_at(nodes_at, depth: int, right: int, where: str) -> None:
    got = _positive(predicted(nodes_at, depth, name="nodes_at"), "nodes_at")
    if right / T4_FACTOR <= got <= right * T4_FACTOR:
        return
    how = _growth_slip(nodes_at, depth)
    side = "too large" if got > right else "too small"
    raise Flaw(f"Your 'nodes_at' is {side} by more than a factor {T4_FACTOR:g} {where}: it "
               f"{how}.")


def _multiplies(law, depth: int, name: str) -> bool:
    """Whether ``law`` grows by multiplying from ``depth`` on: its steps to depth + 1 and
    depth + 2 grow by more than half again."""
    a, b, c = (_positive(predicted(law, d, name=name), name) for d in (depth, depth + 1,
                                                                       depth + 2))
    return b > a and (c - b) > 1.5 * (b - a)


def _check_ops_at(ops_at, depth: int, right: int, where: str) -> None:
    value = predicted(ops_at, depth, name="ops_at")
    huge = (isinstance(value, int | float | np.integer | np.floating)
            and not isinstance(value, bool) and (not np.isfinite(value) or value > 100 * right))
    if huge or (value != right and _multiplies(ops_at, depth, "ops_at")):
        raise Flaw("Your 'ops_at' grows the engine's count the way the formula grows: look "
                   "at how many rules each level of nesting added in your measurements.")
    got = _whole(value, "ops_at")
    if got != right:
        raise Flaw(f"Your 'ops_at' is not what the engine runs {where} (it is "
                   f"{'too many' if got > right else 'too few'}): how many backward rules did "
                   "each level of nesting add in your measurements, and how many at the "
                   "first?")


def measure_t4(data: dict, watch: Watch) -> bool:
    """Backward rule counts of the experiment's own sweeps and the written-out derivative's
    sizes at depths up to 14; then the learner's laws ``ops_at(depth)`` and
    ``nodes_at(depth)``, right on what they measured and at depths drawn now, too deep for
    sympy: the engine's count exactly (it runs here), the formula's within a factor 1.5 (of
    its size, known without sympy). Then False: the work does not follow the formula."""
    depths, ops, nodes = data["depths"], data["backward_ops"], data["formula_nodes"]
    if not (isinstance(depths, list | tuple) and all(
            isinstance(d, int) and not isinstance(d, bool) and 1 <= d <= T4_DEEPEST
            for d in depths) and list(depths) == sorted(set(depths)) and len(depths) >= 3):
        raise Flaw(f"'depths' should be at least 3 increasing nesting depths between 1 and "
                   f"{T4_DEEPEST}, e.g. [1, 2, 3, 4, 5, 6, 7].")
    if depths[-1] < 5:
        raise Flaw("Your depths stop too early to tell how the two sizes grow: go up to depth "
                   "5 or more.")
    if not (isinstance(ops, list | tuple) and isinstance(nodes, list | tuple)
            and len(ops) == len(nodes) == len(depths)):
        raise Flaw("'backward_ops' and 'formula_nodes' should each have one entry per depth.")
    ops = [count(o, "backward_ops") for o in ops]
    nodes = [count(n, "formula_nodes") for n in nodes]
    swept = iter([len(s.visited) for s in watch.sweeps])
    if not all(any(o == s for s in swept) for o in ops):
        raise Flaw("'backward_ops' are not the numbers of backward rules the engine ran in your "
                   "experiment's backward passes: count them with count_ops() around "
                   "backward, one pass per depth.")
    if nodes != [_formula_nodes(d) for d in depths]:
        raise Flaw("'formula_nodes' are not the sizes of the derivative of modes.nested(x, "
                   "depth) written out: symbolic.tree_size(symbolic.derivative(depth)) at "
                   "each depth.")
    if len(set(ops)) < 2:
        raise Flaw("Your backward passes all ran the same number of rules: differentiate the "
                   "nested function at each depth.")
    ops_at, nodes_at = data["ops_at"], data["nodes_at"]
    for d, o, n in zip(depths, ops, nodes):
        where = f"at depth {d}, which you measured"
        _check_ops_at(ops_at, d, o, where)
        _check_nodes_at(nodes_at, d, n, where)
    deep = int(_draw.integers(*T4_OPS_DEPTHS))
    _check_ops_at(ops_at, deep, _rerun(lambda: _engine_ops(deep)), f"at depth {deep}")
    deep = int(_draw.integers(*T4_NODES_DEPTHS))
    _check_nodes_at(nodes_at, deep, _formula_nodes(deep), f"at depth {deep}")
    return False  # the engine's work follows the recorded graph, not the formula


@gate.answers("T4")
def _reference_t4() -> dict:
    """Backward rules run and written-out derivative size at nesting depths 1 to 7, and the
    law each follows: the rules add the same number per level; the formula's size divided by
    2^depth adds the same amount per level."""
    from widgets.lessons import modes, symbolic

    depths = [1, 2, 3, 4, 5, 6, 7]
    backward_ops, formula_nodes = [], []
    for d in depths:
        x = ag.tensor(0.3, requires_grad=True)
        with count_ops() as counts:
            modes.nested(x, d).backward()
        backward_ops.append(counts.backward.ops)
        formula_nodes.append(symbolic.tree_size(symbolic.derivative(d)))
    per_level = backward_ops[-1] - backward_ops[-2]           # the same at every level
    first = backward_ops[0] - per_level * depths[0]           # what depth 0 would run
    left = [n / 2 ** d for n, d in zip(formula_nodes, depths)]  # the doubling divided out
    step = left[-1] - left[-2]                                 # ... leaves a straight line

    def ops_at(depth):
        return first + per_level * depth

    def nodes_at(depth):
        return (left[-1] + step * (depth - depths[-1])) * 2 ** depth

    return {"depths": depths, "backward_ops": backward_ops, "formula_nodes": formula_nodes,
            "ops_at": ops_at, "nodes_at": nodes_at}


# -- T5: nudging against the engine's gradient -----------------------------------------------

T5_FACTOR = 6  # how far a predicted best step or least error may be from the measured one
_POWERS = {"best_step": (1 / 3, -1 / 3, 1 / 3), "least_error": (2 / 3, 1 / 3, 2 / 3)}
_ARGUMENTS = ("|f(x0)|", "|f'''(x0)|", "ε")


def _t5_cases() -> list[tuple[float, float, type]]:
    """(a, c, dtype) drawn now, for f(x) = a·exp(c·x) at x0 = 0: a steep function in float64,
    a flat one in float64, and two in float32."""
    def u(lo, hi):
        return float(_draw.uniform(lo, hi))

    return [(10 ** u(-3, -2), u(8, 12), np.float64), (10 ** u(2, 3), u(0.01, 0.02), np.float64),
            (10 ** u(-1, 1), u(0.5, 2), np.float32), (10 ** u(-1, 1), u(4, 8), np.float32)]


def _best_nudge(a: float, c: float, dtype) -> tuple[float, float]:
    """Where the central difference of a·exp(c·x) at 0, in ``dtype``, is best, measured: for
    each step h on a grid (8 a decade), the worst error over 16 steps just above h (rounding
    differs from step to step); the step with the least, and that error."""
    t = np.dtype(dtype).type
    top, bottom = (-1, -14) if dtype == np.float64 else (-0.5, -6.5)
    grid = 10.0 ** np.arange(top, bottom, -0.125)
    steps = (grid[:, None] * (1 + np.linspace(0, 0.4, 16))).astype(dtype)
    slopes = (t(a) * np.exp(t(c) * steps) - t(a) * np.exp(-t(c) * steps)) / (t(2) * steps)
    worst = np.abs(slopes.astype(np.float64) - a * c).max(axis=1)
    k = int(worst.argmin())
    return float(grid[k]), float(worst[k])


def _check_power(law, name: str, f0: float, f3: float, eps: float) -> None:
    """A :class:`Flaw` when ``law`` does not scale with |f|, |f'''| and ε as the balance of
    the two errors says (each probed over a factor 10^6)."""
    base = _positive(predicted(law, f0, f3, eps, name=name), name)
    for i in (2, 1, 0):  # ε first: its power tells the slips apart best
        want, args = _POWERS[name][i], [f0, f3, eps]
        args[i] *= 1e6
        power = np.log(_positive(predicted(law, *args, name=name), name) / base) / np.log(1e6)
        if abs(power - want) <= 0.05:
            continue
        what = _ARGUMENTS[i]
        if abs(power) <= 0.05:
            raise Flaw(f"Your '{name}' does not change with {what}: where do the two errors "
                       f"(truncation ≈ h²·|f'''|/6, rounding ≈ ε·|f|/h) depend on it?")
        if name == "best_step" and i == 2 and abs(power - 0.5) <= 0.05:
            raise Flaw("Your 'best_step' grows like the square root of ε: that is where a "
                       "one-sided difference is best, whose truncation error falls like h; the "
                       "central difference's falls like h².")
        if name == "least_error" and i == 2 and abs(power - 1) <= 0.05:
            raise Flaw("Your 'least_error' shrinks like ε itself, as if some step left rounding "
                       "alone: at the best step, how large is the truncation error next to the "
                       "rounding error?")
        raise Flaw(f"Your '{name}' grows like {what} to the power {power:.2f}, which is not "
                   "what balancing truncation (≈ h²·|f'''|/6) against rounding (≈ ε·|f|/h) "
                   "gives: find the h where their sum is least, then the sum there.")


def _check_laws(best_step, least_error) -> None:
    for k, (a, c, dtype) in enumerate(_t5_cases()):
        f0, f3, eps = a, a * c ** 3, float(np.finfo(dtype).eps)
        if k == 0:
            _check_power(best_step, "best_step", f0, f3, eps)
            _check_power(least_error, "least_error", f0, f3, eps)
        step, error = _best_nudge(a, c, dtype)
        where = (f"for f(x) = {a:.3g}·exp({c:.3g}·x) at x0 = 0 in {np.dtype(dtype).name} "
                 "(measured there)")
        for name, law, measured in (("best_step", best_step, step),
                                    ("least_error", least_error, error)):
            got = _positive(predicted(law, f0, f3, eps, name=name), name)
            if not measured / T5_FACTOR <= got <= measured * T5_FACTOR:
                side = "too large" if got > measured else "too small"
                raise Flaw(f"Your '{name}' is {side} by more than a factor {T5_FACTOR} {where}, "
                           "though it scales the right way: check the constants of your "
                           "balance (the 6 of h²·|f'''|/6, and where the sum is least).")


def measure_t5(data: dict, watch: Watch) -> bool:
    """The engine's gradient and finite differences of the same function at the same point,
    re-measured here; then the learner's laws ``best_step(|f|, |f'''|, ε)`` and
    ``least_error(...)``, which must scale as the balance of truncation and rounding says and
    agree with where the central difference is best on functions and precisions drawn now
    (measured here); supported: the least error they predict for the learner's own function
    is as small as the engine's agreement with the exact derivative (rounding)."""
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
    f3 = nested_grad(nested_grad(nested_grad(f)))  # f''', by the engine
    third = abs(float(_rerun(lambda: f3(ag.tensor(x0)).item())))
    if third <= 1e-6 * (1 + abs(value(x0))):
        raise Flaw("Your function's third derivative is about zero at 'at', so nothing limits "
                   "how large a step may be: pick a function and point where it is not.")
    _check_laws(data["best_step"], data["least_error"])
    eps = float(np.finfo(np.float64).eps)
    least = _positive(predicted(data["least_error"], abs(value(x0)), third, eps,
                                name="least_error"), "least_error")
    return bool(least <= 10 * eps * (1 + abs(grad)))  # as close as the engine's own rounding?


@gate.answers("T5")
def _reference_t5() -> dict:
    """The engine's gradient of tanh(x)·exp(x) at 0.7, central differences from h = 1e-1 to
    1e-12; and where the central difference is best, from the balance of its two errors."""
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

    # error(h) ≈ h²·f3/6 (truncation) + eps·f0/h (rounding): least where its slope is zero
    def best_step(f0, f3, eps):
        return (3 * eps * f0 / f3) ** (1 / 3)

    def least_error(f0, f3, eps):
        h = best_step(f0, f3, eps)
        return h * h * f3 / 6 + eps * f0 / h

    return {"function": f, "at": x0, "grad": x.grad, "h": hs, "slopes": slopes,
            "best_step": best_step, "least_error": least_error}
