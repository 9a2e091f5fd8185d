"""T1–T10, W1, W2: a verdict, a reason, and the learner's own experiment. The reason is a
line of text, quoted back, except for W2, whose reason is a law (``passes(n, m)``) the check
tries at sizes it draws.

Every experiment here is written in the test, independently of the package's reference
experiments: a right one with the right verdict and a reason passes; one that measured the
wrong thing is refused with a sentence naming the problem, before the verdict is looked at; a
wrong verdict on a right experiment is refused without saying the right one; malformed calls
get short sentences; progress records what it should.
"""

import json
import re
from pathlib import Path

import numpy as np
import pytest
from solutions import solution_text
from solutions import words as answer_words

import autograd_core as ag
from autograd_core import nn
from autograd_core.func import jacfwd, jacrev, jvp, vjp
from autograd_core.sweep.engine import backward_steps
from autograd_core.tools.counting import count_ops
from autograd_core.tools.graph import CycleError, capture, topological_order
from widgets import exercises as ex
from widgets.exercises import store
from widgets.exercises.exercise import forget_results
from widgets.exercises.tracking import status as item_status
from widgets.lessons import modes

MAX = 600


@pytest.fixture(autouse=True)
def _own_progress_file(tmp_path, monkeypatch):
    """Progress goes to this test's own file, never to a learner's home directory."""
    monkeypatch.setenv("AUTOGRAD_LESSONS_PROGRESS", str(tmp_path / "progress.json"))
    forget_results()


# The verdicts of shared/question-bank.md (W1: "a graph with a cycle still has such an
# order"; W2: "reverse mode needs fewer passes for one loss of many parameters").
TRUTH = {"T1": True, "T2": False, "T3": False, "T4": False, "T5": False, "T6": False,
         "T7": True, "T8": False, "T9": False, "T10": True, "W1": False, "W2": True}
IDS = list(TRUTH)

REASONS = {
    "T1": "the two Jacobians agree up to rounding", "T2": "which mode needs fewer passes "
    "depends on inputs vs outputs", "T3": "feeding h back records new nodes, so an order "
    "exists", "T4": "the formula swells exponentially while the engine's work grows "
    "linearly", "T5": "the finite-difference error never gets near the exact gradient",
    "T6": "the same sweep ran on the network and on the formula", "T7": "sigmoid keeps its "
    "output and backward fails once it is freed", "T8": "x.grad is the sum of what each use "
    "sends back", "T9": "the seed c multiplies every gradient by c", "T10": "the change is "
    "largest along the gradient", "W1": "no node of a cycle can come first, so there is no "
    "order",
}


def passes(n, m):
    """W2's reason as a law: a jvp gives one column of the m × n Jacobian, a sweep one row."""
    return {"forward": n, "reverse": m}


REASONS["W2"] = passes
RULED = {"W2"}  # the items whose reason is a law, not a line of text
TEXT_IDS = [i for i in IDS if i not in RULED]


# -- right experiments, written here ----------------------------------------------------------


def t1_right(columns_as_rows=False):
    """A learner's T1: R² → R⁴, one JVP per input (a column each), one VJP per output (a row
    each), and the largest entrywise gap, computed here with NumPy."""
    w = ag.tensor(np.arange(8.0).reshape(4, 2) / 10)

    def f(x):
        return ag.sin(w @ x) * x.sum()

    x = ag.tensor([0.3, -0.8])
    columns = [jvp(f, (x,), (ag.tensor(e),))[1].numpy() for e in np.eye(2)]
    _, pull = vjp(f, x)
    rows = [pull(ag.tensor(e))[0].numpy() for e in np.eye(4)]
    forward = np.stack(columns, axis=0 if columns_as_rows else 1)
    reverse = np.stack(rows, axis=0)
    gap = float(np.abs(forward - reverse).max()) if forward.shape == reverse.shape else 0.0
    return {"function": f, "at": x, "forward": forward, "reverse": reverse,
            "largest_difference": gap}


def passes_law(input_shape, output_shape):
    """The law of passes, from the Jacobian's shape: one forward-mode pass per input number
    (a column each), one reverse sweep per output number (a row each)."""
    return int(np.prod(input_shape)), int(np.prod(output_shape))


def fewer_law(input_shape, output_shape):
    by_fwd, by_rev = passes_law(input_shape, output_shape)
    return "forward" if by_fwd < by_rev else "reverse" if by_rev < by_fwd else "same"


def t2_right(ran=True, wide_outputs=1, passes=passes_law, fewer=fewer_law):
    """A learner's T2: counts on a wide, a tall and a matrix-input function, then the law."""
    a = ag.tensor(np.linspace(-1, 1, 24).reshape(wide_outputs, 24) if wide_outputs > 1
                  else np.linspace(-1, 1, 24))
    b = ag.tensor(np.linspace(0.5, 2, 20))
    calls, sweeps = [0], [0]

    def counting(g):
        def f(x):
            calls[0] += 1
            out = g(x)
            out.register_hook(lambda _: sweeps.__setitem__(0, sweeps[0] + 1))
            return out
        return f

    wide = counting(lambda x: ag.tanh(a @ x) if wide_outputs > 1 else (a * x).sum())
    tall = counting(lambda t: ag.exp(t * b))
    matrix = counting(lambda m: ag.sin(m).sum(axis=1))         # (3, 5) -> (3,)
    counted = []
    for f, at in ((wide, ag.tensor(np.ones(24) / 4)), (tall, ag.tensor([0.2])),
                  (matrix, ag.tensor(np.arange(15.0).reshape(3, 5) / 10))):
        calls[0] = sweeps[0] = 0
        if ran:
            jacfwd(f)(at)
        fwd = calls[0] if ran else at.numel()
        sweeps[0] = 0
        if ran:
            jacrev(f)(at)
        rev = sweeps[0] if ran else f(ag.tensor(at.numpy(), requires_grad=True)).numel()
        counted.append({"function": f, "at": at, "jacfwd_passes": fwd, "jacrev_passes": rev})
    return {"counted": counted, "passes": passes, "fewer": fewer}


def t3_right(sizes_at=None):
    a = ag.tensor(2.0, requires_grad=True)
    y = ag.tensor(0.5, requires_grad=True)
    sizes = []
    for _ in range(4):
        y = ag.tanh(y) * a
        y = ag.tanh(y)
        sizes.append(len(capture(y).ops))
    g = capture(y)
    return {"graph": g, "order": topological_order([t.id for t in g.tensors], g.edges),
            "sizes": sizes if sizes_at is None else sizes_at(sizes)}


def t4_right(depths=(1, 2, 3, 4, 5, 6), made_up=False, **laws):
    """A learner's T4: measured up to depth 6, then each list's law: the rules add the same
    number per level; the sizes, once divided by 2^depth, add about the same amount per level
    (a straight line through the last two). ``laws`` replaces either law."""
    from widgets.lessons import symbolic

    ops, nodes = [], []
    for d in depths:
        x = ag.tensor(0.2, requires_grad=True)
        out = modes.nested(x, d)
        with count_ops() as c:
            out.backward()
        ops.append(c.backward.ops + (1 if made_up else 0))
        nodes.append(symbolic.tree_size(symbolic.derivative(d)))
    step = (ops[-1] - ops[0]) // (depths[-1] - depths[0])
    rest = [n / 2.0 ** d for n, d in zip(nodes, depths)]
    slope = (rest[-1] - rest[-2]) / (depths[-1] - depths[-2])
    return {"depths": list(depths), "backward_ops": ops, "formula_nodes": nodes,
            "ops_at": lambda d: ops[0] + step * (d - depths[0]),
            "nodes_at": lambda d: (rest[-1] + slope * (d - depths[-1])) * 2.0 ** d, **laws}


def best_step_law(f0, f3, eps):
    """Where h²·f3/6 + eps·f0/h has zero slope: h·f3/3 = eps·f0/h²."""
    return (3 * eps * f0 / f3) ** (1 / 3)


def least_error_law(f0, f3, eps):
    h = best_step_law(f0, f3, eps)
    return h * h * f3 / 6 + eps * f0 / h


def t5_right(slope_of=None, **laws):
    def f(t):
        return ag.sin(t) * t

    x0 = 1.3
    x = ag.tensor(x0, requires_grad=True)
    f(x).backward()
    hs = np.logspace(-2, -11, 10)
    slopes = []
    for h in hs:
        with ag.no_grad():
            if slope_of is None:
                slopes.append((f(ag.tensor(x0 + h)).item() - f(ag.tensor(x0)).item()) / h)
            else:
                slopes.append(slope_of(h))
    return {"function": f, "at": x0, "grad": x.grad.item(), "h": list(hs), "slopes": slopes,
            "best_step": best_step_law, "least_error": least_error_law, **laws}


def t6_right(formula_in_a_module=False):
    net = nn.Sequential(nn.Linear(2, 3), nn.Tanh(), nn.Linear(3, 1))
    x = ag.tensor(np.linspace(-1, 1, 10).reshape(5, 2))
    loss = (net(x) ** 2).sum()
    network = [s.node.op.name for s in backward_steps(loss)]
    # the same function written out: nn.Linear computes x @ W.T + b
    W1, b1, W2, b2 = (ag.tensor(p.numpy(), requires_grad=True) for p in net.parameters())
    network_grad = net[0].weight.grad.numpy().copy()
    if formula_in_a_module:
        net.zero_grad()
        formula_loss = (net(x) ** 2).sum()
    else:
        formula_loss = ((ag.tanh(x @ W1.T + b1) @ W2.T + b2) ** 2).sum()
    formula = [s.node.op.name for s in backward_steps(formula_loss)]
    formula_grad = net[0].weight.grad if formula_in_a_module else W1.grad
    return {"network": network, "formula": formula, "network_grad": network_grad,
            "formula_grad": formula_grad}


def t7_right(second_backward=True, second_input=None, second_g=None):
    z = ag.tensor(np.linspace(-1, 1, 6), requires_grad=True)
    s = ag.sigmoid(z)
    size = sum(saved.nbytes for saved in s.grad_fn.saved.values())
    s.backward(np.ones(6))
    other = ag.tensor(np.linspace(0, 2, 6) if second_input is None else second_input,
                      requires_grad=True)
    ag.sigmoid(other).backward(np.ones(6) if second_g is None else second_g)
    grads = [z.grad.numpy().copy(), other.grad]
    error = None
    try:
        if second_backward:
            s.backward(np.ones(6))
        else:
            s.backward()  # a different error: not a scalar
    except RuntimeError as caught:
        error = caught
    return {"saved_bytes": size, "grads": grads, "error": error}


def t8_right(contributions="separately"):
    value = np.array([1.0, -0.5])
    uses = (ag.exp, lambda t: t * t, lambda t: 5 * t)
    x = ag.tensor(value, requires_grad=True)
    sum(u(x) for u in uses).sum().backward()
    grad = x.grad.numpy().copy()
    parts = []
    for u in uses:
        if contributions == "separately":
            alone = ag.tensor(value, requires_grad=True)
            u(alone).sum().backward()
            parts.append(alone.grad.numpy())
        elif contributions == "accumulated":  # backward into the same x: .grad keeps adding
            u(x).sum().backward()
            parts.append(x.grad.numpy().copy())
        else:  # made up
            parts.append(np.ones(2))
    if contributions == "average":
        grad = grad / 3
    return {"grad": grad, "contributions": parts}


def t9_right(fresh=True, c=-2.0, grad_m="c times the loss"):
    w0 = np.array([[0.3, -0.2], [0.5, 0.1]])
    w = ag.tensor(w0, requires_grad=True)

    def loss(p):
        return (ag.sigmoid(p) ** 2).sum()

    loss(w).backward()
    g1 = w.grad.numpy().copy()
    if fresh:
        w = ag.tensor(w0, requires_grad=True)
    loss(w).backward(gradient=c)
    gc = w.grad.numpy()
    if grad_m == "c times the loss":
        other = ag.tensor(w0, requires_grad=True)
        (c * loss(other)).backward()                      # seed 1, the loss c·L
        g_m = other.grad.numpy()
    elif grad_m == "seeded c":
        g_m = gc                                         # the seed-c run handed in again
    else:
        g_m = c * g1                                     # computed, not measured
    return {"c": c, "grad_1": g1, "grad_c": gc, "grad_M": g_m}


def t10_right(unit=True):
    def loss(w):
        return (w ** 4).sum() + (w[0] * w[1])

    at = np.array([0.6, -0.3])
    w = ag.tensor(at, requires_grad=True)
    loss(w).backward()
    g = w.grad.numpy()
    step = 1e-4

    def change(d):
        with ag.no_grad():
            return loss(ag.tensor(at + step * d)).item() - loss(ag.tensor(at)).item()

    angles = np.linspace(0.3, 6, 4)
    others = [np.array([np.cos(t), np.sin(t)]) * (1 if unit else 2) for t in angles]
    return {"loss": loss, "at": at, "grad": w.grad, "step": step,
            "along_grad": change(g / np.linalg.norm(g)),
            "against_grad": change(-g / np.linalg.norm(g)),
            "others": [(d, change(d)) for d in others]}


def w1_right(edges=(("x", "a"), ("a", "b"), ("b", "c"), ("c", "d"), ("a", "e")),
             closing=("c", "a"), unplaced=None):
    """Kahn's algorithm by hand: with c -> a, a waits for c and c (through b) for a, so the
    cycle a, b, c is never placed, nor d, which c feeds; e waits for a, so neither is e. x
    feeds the cycle and waits for nothing: it is placed."""
    edges = list(edges)
    try:
        result = topological_order(sorted({n for e in edges for n in e}), [*edges, closing])
    except CycleError as error:
        result = error
    return {"edges": edges, "closing_edge": closing, "result": result,
            "unplaced": {"a", "b", "c", "d", "e"} if unplaced is None else unplaced}


def w2_right(claimed=None):
    rng = np.random.default_rng(5)
    x, t = ag.tensor(rng.standard_normal((6, 3))), ag.tensor(rng.standard_normal(6))
    p0 = rng.standard_normal(12) * 0.3

    def loss(p):
        return ((ag.tanh(x @ p[:9].reshape(3, 3)) @ p[9:] - t) ** 2).sum()

    fwd = [jvp(loss, (ag.tensor(p0),), (ag.tensor(np.eye(12)[k]),))[1].item()
           for k in range(12)]
    p = ag.tensor(p0, requires_grad=True)
    loss(p).backward()
    passes = claimed or (12, 1)
    return {"forward_passes": passes[0], "reverse_passes": passes[1], "forward_grad": fwd,
            "reverse_grad": p.grad}


RIGHT = {"T1": t1_right, "T2": t2_right, "T3": t3_right, "T4": t4_right, "T5": t5_right,
         "T6": t6_right, "T7": t7_right, "T8": t8_right, "T9": t9_right, "T10": t10_right,
         "W1": w1_right, "W2": w2_right}


def said(result) -> str:
    return "\n".join([result.message, *(p.message for p in result.parts)])


def assert_a_sentence(result, label=""):
    assert isinstance(result, ex.Result)
    assert 0 < len(result.message) <= MAX, (label, len(result.message))
    assert result.diagnosis != "check_error", (label, result.message)
    assert "Traceback" not in repr(result) and " at 0x" not in repr(result), label


# -- the protocol ---------------------------------------------------------------------------------


@pytest.mark.parametrize("item", IDS)
def test_a_right_experiment_with_the_right_verdict_and_a_reason_passes(item):
    result = ex.registry()[item](verdict=TRUTH[item], because=REASONS[item],
                                 experiment=RIGHT[item])
    assert result.ok, result.message
    assert result.diagnosis == "correct"
    assert item_status(item) == "solved"


@pytest.mark.parametrize("item", IDS)
def test_a_verdict_flipped_after_a_wrong_one_counts_as_seen(item):
    """A verdict has two values: right after wrong may be a flip, not a reading."""
    check = ex.registry()[item]
    assert not check(verdict=not TRUTH[item], because=REASONS[item],
                     experiment=RIGHT[item]).ok
    result = check(verdict=TRUTH[item], because=REASONS[item], experiment=RIGHT[item])
    assert result.ok and result.diagnosis == "elimination", result.message
    assert item_status(item) == "solved after seeing the solution"


@pytest.mark.parametrize("item", IDS)
def test_a_wrong_verdict_is_sent_back_to_the_measurement_without_the_answer(item):
    result = ex.registry()[item](verdict=not TRUTH[item], because=REASONS[item],
                                 experiment=RIGHT[item])
    assert not result.ok and result.diagnosis == "wrong_verdict"
    text = said(result)
    assert not re.search(r"\b(true|false)\b", text, re.IGNORECASE), text
    assert "claim is" not in text and "your own measurement" in text
    assert_a_sentence(result, item)
    assert item_status(item) == "in progress"


@pytest.mark.parametrize("item", IDS)
def test_the_verdict_may_be_written_as_text(item):
    word = " TRUE " if TRUTH[item] else "false"
    assert ex.registry()[item](word, REASONS[item], RIGHT[item]).ok


@pytest.mark.parametrize("item", IDS)
def test_the_reference_experiment_the_solution_shows_passes(item):
    exercise = ex.registry()[item]
    assert "A reference experiment" in solution_text(exercise)
    assert store.read_item(item)["solution_seen"] is None  # reading it for a tool: not seen
    data = exercise.experiment()  # running it is seeing the solution
    assert store.read_item(item)["solution_seen"]
    assert isinstance(data, dict)
    result = exercise(TRUTH[item], REASONS[item], exercise.experiment)
    assert result.ok and item_status(item) == "solved after seeing the solution"


# -- experiments that measured the wrong thing -----------------------------------------------------


def _t1_made_up():
    data = t1_right()
    data["reverse"] = data["reverse"] + 1e-3
    return data


def _t1_no_forward_mode():
    def f(x):
        return ag.tanh(x[:2]) * x.sum()

    x = ag.tensor([0.1, 0.2, 0.3])
    by_rev = jacrev(f)(x).numpy()
    return {"function": f, "at": x, "forward": by_rev, "reverse": by_rev,
            "largest_difference": 0.0}


def _t2_typed():
    return t2_right(ran=False)


def _t2_miscounted():
    data = t2_right()
    data["counted"][1]["jacrev_passes"] = 1
    return data


def _t2_one_shape():
    data = t2_right()
    return {**data, "counted": [data["counted"][0]] * 2}


def _t2_swapped():
    return t2_right(passes=lambda i, o: passes_law(i, o)[::-1])


def _t3_one_op():
    h = ag.tensor(1.0, requires_grad=True)
    g = capture(h * 2)
    return {"graph": g, "order": topological_order([o.id for o in g.ops], g.edges),
            "sizes": [1, 1, 1]}


def _t3_made_up_order():
    data = t3_right()
    return {**data, "order": list(reversed(data["order"]))}


def _t3_same_size():
    """The misconception's numbers: the record stops growing once the loop "closes"."""
    return t3_right(sizes_at=lambda sizes: [sizes[-1]] * len(sizes))


def _t3_two_passes():
    return t3_right(sizes_at=lambda sizes: sizes[-2:])


def _t3_made_up_sizes():
    return t3_right(sizes_at=lambda sizes: [s + 1 for s in sizes[:-1]] + sizes[-1:])


def _t4_made_up_ops():
    return t4_right(made_up=True)


def _t4_shallow():
    return t4_right(depths=(1, 2, 3))


def _t4_made_up_formula():
    data = t4_right()
    return {**data, "formula_nodes": [n * 2 for n in data["formula_nodes"]]}


def _t4_doubling():
    return t4_right(nodes_at=lambda d: 3007 * 2.0 ** (d - 6))


def _t5_not_a_nudge():
    return t5_right(slope_of=lambda h: 1.0)


def _t5_made_up_grad():
    return {**t5_right(), "grad": 0.5}


def _t5_one_sided_step():
    return t5_right(best_step=lambda f0, f3, eps: (eps * f0 / f3) ** 0.5)


def _t6_typed():
    return {**t6_right(), "network": ["linear", "tanh"], "formula": ["exp", "mul"]}


def _t6_formula_in_a_network():
    return t6_right(formula_in_a_module=True)


def _t7_other_error():
    return t7_right(second_backward=False)


def _t7_no_error():
    return {**t7_right(), "error": None}


def _t7_made_up_bytes():
    return {**t7_right(), "saved_bytes": 1000}


def _t7_same_input():
    return t7_right(second_input=np.linspace(-1, 1, 6))


def _t7_other_upstream():
    return t7_right(second_g=np.full(6, 2.0))


def _t7_made_up_grads():
    data = t7_right()
    return {**data, "grads": [data["grads"][0], np.ones(6)]}


def _t7_one_gradient():
    data = t7_right()
    return {**data, "grads": data["grads"][:1]}


def _t8_made_up():
    return t8_right("made up")


def _t8_average():
    return t8_right("average")


def _t8_accumulated():
    return t8_right("accumulated")


def _t8_other_point():
    data = t8_right()
    x = ag.tensor([0.3, 0.3], requires_grad=True)
    (ag.exp(x) + x * x + 5 * x).sum().backward()
    return {**data, "grad": x.grad}


def _t8_whole():
    data = t8_right()
    return {**data, "contributions": [data["grad"]] * 3}


def _t8_no_backward():
    return {"grad": np.ones(2), "contributions": [np.ones(2)] * 3}


def _t9_not_fresh():
    return t9_right(fresh=False)


def _t9_seed_one():
    return t9_right(c=1.0)


def _t9_other_seed():
    return {**t9_right(), "c": 4.0}


def _t10_not_unit():
    return t10_right(unit=False)


def _t10_made_up():
    return {**t10_right(), "along_grad": 1.0}


def _t10_big_step():
    return {**t10_right(), "step": 0.5}


def _w1_forward_edge():
    """An added edge that points the way the graph runs closes no cycle."""
    return w1_right(closing=("a", "c"))


def _w1_cycle_in_edges():
    return w1_right(edges=(("a", "b"), ("b", "a")), closing=("a", "b"))


def _w1_typed_result():
    return {**w1_right(), "result": ["a", "b", "c", "d"]}


def _w1_only_the_cycle():
    return w1_right(unplaced={"a", "b", "c"})


def _w1_everything():
    return w1_right(unplaced={"x", "a", "b", "c", "d", "e"})


def _w1_nothing_after_the_cycle():
    """The cycle feeds no node off it: 'only the cycle, or more?' has nothing to decide."""
    return w1_right(edges=(("x", "a"), ("a", "b"), ("b", "c")), unplaced={"a", "b", "c"})


def _w1_nothing_before_the_cycle():
    """Every node waits for the cycle: 'unplaced' has nothing to leave out."""
    return w1_right(edges=(("a", "b"), ("b", "c"), ("c", "d")), unplaced={"a", "b", "c", "d"})


def _w2_miscounted():
    return w2_right(claimed=(1, 12))


def _w2_other_gradient():
    return {**w2_right(), "forward_grad": list(np.ones(12))}


FLAWED = [
    ("T1", _t1_made_up, "not your function's Jacobian"),
    ("T1", _t1_no_forward_mode, "one jvp per input"),
    ("T2", _t2_typed, "more passes than the engine made"),
    ("T2", _t2_miscounted, "not the number of reverse sweeps"),
    ("T2", _t2_one_shape, "make the same passes"),
    ("T2", _t2_swapped, "wrong way round"),
    ("T3", _t3_one_op, "records 1 op"),
    ("T3", _t3_made_up_order, "not an order of your graph"),
    ("T3", _t3_same_size, "not the op counts capture gives"),
    ("T3", _t3_two_passes, "at least three passes"),
    ("T3", _t3_made_up_sizes, "not the op counts capture gives"),
    ("T4", _t4_made_up_ops, "not the numbers of backward rules"),
    ("T4", _t4_shallow, "stop too early"),
    ("T4", _t4_made_up_formula, "not the sizes of the derivative"),
    ("T4", _t4_doubling, "doubles with every level"),
    ("T5", _t5_not_a_nudge, "not a finite difference"),
    ("T5", _t5_made_up_grad, "not the engine's gradient"),
    ("T5", _t5_one_sided_step, "square root of ε"),
    ("T6", _t6_typed, "not the list of ops any reverse sweep"),
    ("T6", _t6_formula_in_a_network, "ran through a network's modules"),
    ("T7", _t7_other_error, "not about released saved tensors"),
    ("T7", _t7_no_error, "no error was caught"),
    ("T7", _t7_made_up_bytes, "not what an op of your experiment saved"),
    ("T7", _t7_same_input, "at the same input"),
    ("T7", _t7_other_upstream, "different upstream gradients"),
    ("T7", _t7_made_up_grads, "grads[1] is not a gradient"),
    ("T7", _t7_one_gradient, "should be two gradients"),
    ("T8", _t8_made_up, "not a gradient the engine sent"),
    ("T8", _t8_average, "not the .grad"),
    ("T8", _t8_accumulated, "Contribution 1 is not a gradient the engine sent"),
    ("T8", _t8_other_point, "do not add up to anything the engine computed"),
    ("T8", _t8_whole, "is the whole gradient"),
    ("T8", _t8_no_backward, "None of your backward passes"),
    ("T9", _t9_not_fresh, "backward adds into .grad"),
    ("T9", _t9_seed_one, "other than 0 and 1"),
    ("T9", _t9_other_seed, "None of your backward passes started from the seed 4"),
    ("T10", _t10_not_unit, "unit vector"),
    ("T10", _t10_made_up, "not how much your loss changes"),
    ("T10", _t10_big_step, "should be small"),
    ("W1", _w1_forward_edge, "makes no cycle"),
    ("W1", _w1_cycle_in_edges, "already has a cycle"),
    ("W1", _w1_typed_result, "'result' is an order"),
    ("W1", _w1_only_the_cycle, "holds the nodes of the cycle, but not every node"),
    ("W1", _w1_everything, "holds nodes an order can still place"),
    ("W1", _w1_nothing_after_the_cycle, "every node that waits lies on the cycle itself"),
    ("W1", _w1_nothing_before_the_cycle, "every node waits for the cycle"),
    ("W2", _w2_miscounted, "not the number of forward-mode passes"),
    ("W2", _w2_other_gradient, "not the same gradient"),
]


@pytest.mark.parametrize("item, experiment, words", FLAWED,
                         ids=[f"{i}-{e.__name__.strip('_')}" for i, e, _ in FLAWED])
def test_an_experiment_that_measured_the_wrong_thing_is_named_before_the_verdict(
        item, experiment, words):
    result = ex.registry()[item](verdict=TRUTH[item], because=REASONS[item],
                                 experiment=experiment)
    assert not result.ok and result.diagnosis == "experiment"
    assert words in result.message, result.message
    assert "verdict is looked at once" in result.message
    assert_a_sentence(result, experiment.__name__)


def test_every_item_has_a_flawed_experiment_in_the_table():
    assert {i for i, _, _ in FLAWED} == set(IDS)


# -- malformed calls, placeholders, old letter picks ----------------------------------------------


def _raises():
    return 1 / 0


MALFORMED = {
    "experiment not callable": dict(experiment=3),
    "experiment raises": dict(experiment=_raises),
    "experiment returns None": dict(experiment=lambda: None),
    "experiment returns text": dict(experiment=lambda: "done"),
    "experiment returns a list": dict(experiment=lambda: [1, 2]),
    "experiment returns an empty dict": dict(experiment=dict),
    "experiment takes an argument": dict(experiment=lambda x: x),
    "experiment returns a huge array": dict(experiment=lambda: {"grad": np.zeros(10**7)}),
}


@pytest.mark.parametrize("item", IDS)
@pytest.mark.parametrize("label", MALFORMED)
def test_a_malformed_experiment_gets_a_sentence(item, label):
    result = ex.registry()[item](verdict=TRUTH[item], because=REASONS[item], **MALFORMED[label])
    assert not result.ok
    assert_a_sentence(result, f"{item} {label}")


@pytest.mark.parametrize("item", TEXT_IDS)
@pytest.mark.parametrize("verdict, because, words, code", [
    ("maybe", "x", "True or False", "call"),
    (0.5, "x", "True or False", "call"),
    (..., "x", "state your verdict", "none"),
    (None, "x", "state your verdict", "none"),
    ("right", "x" * 10_000, "one line", "reason_format"),
    ("right", "line one\nline two and more", "one line", "reason_format"),
    ("right", 42, "text in quotes", "reason_format"),
])
def test_verdict_and_reason_problems_get_a_sentence(item, verdict, because, words, code):
    verdict = TRUTH[item] if verdict == "right" else verdict
    result = ex.registry()[item](verdict=verdict, because=because, experiment=RIGHT[item])
    assert not result.ok and result.diagnosis == code
    assert words in result.message, result.message
    assert_a_sentence(result)
    assert not re.search(r"claim is (true|false)", result.message, re.IGNORECASE)


@pytest.mark.parametrize("item", IDS)
def test_an_old_letter_pick_is_told_what_the_item_wants_now(item):
    result = ex.registry()[item](False, "b")
    assert not result.ok and result.diagnosis == "call"
    assert "experiment" in result.message and "letter" in result.message
    assert item_status(item) == "not started"


def _skeleton():
    """What a lesson's exercise cell holds before the learner works on it."""
    x = ag.tensor([1.0, 2.0], requires_grad=True)
    y = (x * x).sum()  # noqa: F841 - the learner would go on from here
    ...
    return {"grad": ..., "contributions": [..., ..., ...], "c": ..., "grad_1": ...,
            "grad_c": ..., "grad_M": ..., "network_grad": ..., "formula_grad": ...,
            "function": ..., "at": ..., "forward": ..., "reverse": ...,
            "wide": ..., "tall": ..., "graph": ..., "order": ..., "depths": ...,
            "backward_ops": ..., "formula_nodes": ..., "h": ..., "slopes": ...,
            "network": ..., "formula": ..., "saved_bytes": ..., "error": ..., "loss": ...,
            "step": ..., "along_grad": ..., "against_grad": ..., "others": ...,
            "edges": ..., "result": ..., "sizes": ..., "grads": ..., "closing_edge": ...,
            "unplaced": ..., "forward_passes": ..., "reverse_passes": ...,
            "forward_grad": ..., "reverse_grad": ..., "largest_difference": ...,
            "ops_at": ..., "nodes_at": ..., "counted": ..., "passes": ..., "fewer": ...,
            "best_step": ..., "least_error": ...}


def _skeleton_using_a_placeholder():
    h = ...
    return {"graph": capture(h)}


@pytest.mark.parametrize("item", IDS)
@pytest.mark.parametrize("experiment", [None, ..., _skeleton, _skeleton_using_a_placeholder])
def test_placeholders_ask_to_fill_in_the_experiment_and_record_nothing(item, experiment):
    result = ex.registry()[item](verdict=..., because="...", experiment=experiment)
    assert not result.ok and result.diagnosis == "none"
    assert result.message.startswith("Fill in the experiment first"), result.message
    assert item_status(item) == "not started"


@pytest.mark.parametrize("item", IDS)
def test_a_demonstration_is_refused_and_records_nothing(item):
    """A true-or-false item has no problem but the learner's: a demonstration would tell a
    verdict right or wrong unrecorded, so it is refused."""
    shown = ex.registry()[item].demo(verdict=TRUTH[item], because=REASONS[item],
                                     experiment=RIGHT[item])
    assert not shown.ok and shown.diagnosis == "demo_refused"
    assert "demonstration" in repr(shown) and f"{item}(...)" in shown.message
    assert item_status(item) == "not started"


def test_solved_only_when_the_verdict_follows_from_a_measurement_of_the_claim():
    ex.T8(verdict=False, because=REASONS["T8"], experiment=_t8_average)  # made-up numbers
    assert item_status("T8") == "in progress"
    ex.T8(verdict=False, experiment=t8_right)  # the reason is not graded
    assert item_status("T8") == "solved"


def _t8_averaged_loss():
    """The misconception built into the experiment: a loss that averages the three uses,
    and each use's gradient taken alone, unscaled. Its numbers say 'the average'."""
    value = np.array([1.0, -0.5])
    uses = (ag.exp, lambda t: t * t, lambda t: 5 * t)
    x = ag.tensor(value, requires_grad=True)
    (sum(u(x) for u in uses) / 3).sum().backward()
    parts = []
    for u in uses:
        alone = ag.tensor(value, requires_grad=True)
        u(alone).sum().backward()
        parts.append(alone.grad.numpy())
    return {"grad": x.grad.numpy(), "contributions": parts}


@pytest.mark.parametrize("verdict", [True, False])
def test_an_averaged_loss_certifies_no_verdict(verdict):
    """T8's averaged loss measures the average: it is named as what it measures, and no
    verdict (least of all True, the misconception) is accepted with it."""
    result = ex.T8(verdict=verdict, because="the average of the adjoints",
                   experiment=_t8_averaged_loss)
    assert not result.ok and result.diagnosis == "experiment"
    assert "averages" in result.message and "Right" not in result.message
    assert item_status("T8") != "solved"


def test_the_hint_skeleton_and_solution_come_in_steps():
    t8 = ex.T8
    assert t8.hint and t8.skeleton and "..." in t8.skeleton
    assert store.read_item("T8")["solution_seen"] is None
    assert "sum" in t8.solution  # the last step, recorded
    assert store.read_item("T8")["solution_seen"]


@pytest.mark.parametrize("item", IDS)
def test_the_question_names_every_key_and_gives_nothing_away(item):
    exercise = ex.registry()[item]
    claim = next(c for c in _claims() if c.id == item)
    question = str(exercise.question)
    assert all(f'"{key}"' in question for key in claim.keys)
    words = answer_words(item)
    for text in (question, words["hint"], words["skeleton"], words["reread"]):
        assert not re.search(r"\b(true|false)\b\.", text, re.IGNORECASE), text
        assert words["settled"] not in text and words["solution"][:40] not in text


def _claims():
    from widgets.exercises.true_false_experiments import _CLAIMS
    from widgets.exercises.why_items import measure_w1, measure_w2

    extra = [c for c in ex.registry().values() if c.id in ("W1", "W2")]
    assert extra and measure_w1 and measure_w2
    from widgets.exercises.true_false import Claim

    return [*_CLAIMS, Claim("W1", ("edges", "closing_edge", "result", "unplaced"), measure_w1,
                           w1_right),
            Claim("W2", ("forward_passes", "reverse_passes", "forward_grad", "reverse_grad"),
                  measure_w2, w2_right)]


# -- the lessons ship unanswered ----------------------------------------------------------------

LESSONS = {"T1": "09", "T2": "09", "T3": "02", "T4": "09", "T5": "09", "T6": "03", "T7": "04",
           "T8": "03", "T9": "03", "T10": "03", "W1": "02", "W2": "09"}
NOTEBOOKS = Path(__file__).resolve().parents[2] / "notebooks"


@pytest.mark.parametrize("item", list(LESSONS))
def test_the_lesson_asks_for_an_experiment_and_shows_no_verdict(item):
    path = next(NOTEBOOKS.glob(f"{LESSONS[item]}_*.ipynb"))
    nb = json.loads(path.read_text())
    sources = "\n".join("".join(c["source"]) for c in nb["cells"])
    outputs = json.dumps([c.get("outputs", []) for c in nb["cells"]], ensure_ascii=False)
    words = answer_words(item)
    for text in (words["settled"], words["solution"].split(".")[1].strip()):
        assert text not in sources and text not in outputs, text
    cells = [c for c in nb["cells"] if "exercise" in c.get("metadata", {}).get("tags", [])
             and re.search(rf"\b{item}\(", "".join(c["source"]))]
    assert len(cells) == 1, f"{path.name}: one exercise cell runs {item}'s check"
    cell = cells[0]
    assert "experiment=" in "".join(cell["source"])
    shown = "".join("".join(o.get("text", "")) + "".join(o.get("data", {}).get("text/plain", ""))
                    for o in cell["outputs"])
    assert "Fill in the experiment first" in shown and "Traceback" not in shown
    assert f"{item}.experiment()" not in sources


@pytest.mark.parametrize("item", TEXT_IDS)
@pytest.mark.parametrize("because", ["", None, "   ", "yes", "cats can code"])
def test_a_right_verdict_needs_no_graded_reason_and_quotes_one_back(item, because):
    """The verdict must follow from the learner's measurement; the reason is theirs to set
    beside the engine's account, never a gate that any words pass."""
    result = ex.registry()[item](verdict=TRUTH[item], because=because, experiment=RIGHT[item])
    assert result.ok, result
    if isinstance(because, str) and because.strip():
        assert f"\u201c{because.strip()}\u201d" in result.message
    else:
        assert "not graded" in result.message
