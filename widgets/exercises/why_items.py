"""Why questions W1–W6, each answered by an engine experiment: one the learner writes to
settle a claim (W1, W2: the true/false protocol of ``true_false``), one the learner predicts
(W5, W6), or code the learner writes (W3, W4: an op's local backward rule)."""

from __future__ import annotations

import numpy as np

import autograd_core as ag
from autograd_core.func import jvp
from autograd_core.tools.graph import CycleError, topological_order

from .. import gate
from ..feedback import words
from ..feedback.check import check_gradient
from ..feedback.context import Mistake
from ..feedback.result import Result
from ..lessons.graphs import _branchy_program, branches
from ..lessons.report import Report
from . import engine_watch, learner
from .array_answers import Gradients, gradients
from .backward_check import SPEC_ITEMS, _check_backward
from .exercise import Exercise, register
from .parts import answers
from .predictions import Fact, check_fact, predicting
from .problems import Problem, rng
from .true_false import (
    Claim,
    Flaw,
    Law,
    Rule,
    Unfinished,
    Watch,
    among,
    count,
    numbers,
    raised,
    register_claim,
    same,
)

# -- W1: why acyclic (the true/false protocol: a verdict, a reason, your experiment) ----------


def _pairs(value, name: str) -> list[tuple]:
    """(from, to) pairs of hashable node names, or a Flaw."""
    try:
        pairs = [tuple(e) for e in value]
        ok = bool(pairs) and all(len(e) == 2 for e in pairs)
        hash(tuple(n for e in pairs for n in e))
    except TypeError:
        ok = False
    if not ok:
        raise Flaw(f"'{name}' should be a list of (from, to) pairs of node names, e.g. "
                   "[('x', 'mul'), ('mul', 'y')].")
    return pairs


def _never_placed(edges: list[tuple]) -> set:
    """The nodes Kahn's algorithm never places: each waits, directly or through others, for
    an input that is never placed. Worked out here, apart from topological_order."""
    waiting: dict = {}
    for a, b in edges:
        waiting.setdefault(a, 0)
        waiting[b] = waiting.get(b, 0) + 1
    ready = [n for n, w in waiting.items() if w == 0]
    placed = set()
    while ready:
        n = ready.pop()
        placed.add(n)
        for a, b in edges:
            if a == n:
                waiting[b] -= 1
                if waiting[b] == 0:
                    ready.append(b)
    return set(waiting) - placed


def _on_a_cycle(edges: list[tuple]) -> set:
    """The nodes that lie on a cycle (each reaches itself)."""
    after: dict = {}
    for a, b in edges:
        after.setdefault(a, set()).add(b)

    def reach(n) -> set:
        seen, todo = set(), [n]
        while todo:
            for m in after.get(todo.pop(), ()):
                if m not in seen:
                    seen.add(m)
                    todo.append(m)
        return seen

    return {n for n in after if n in reach(n)}


def _names(value, name: str) -> set:
    if isinstance(value, str) or not isinstance(value, list | tuple | set | frozenset):
        raise Flaw(f"'{name}' should be a list or set of node names; it is "
                   f"{words.short(value, 40)}.")
    try:
        names = set(value)
    except TypeError:
        raise Flaw(f"'{name}' should hold node names (text); it holds something else.") from None
    if Ellipsis in names:
        raise Unfinished(f"Fill in the experiment first: '{name}' still holds a placeholder "
                         "(...).")
    return names


def measure_w1(data: dict, watch: Watch) -> bool:
    """An acyclic graph, one edge that closes a cycle in it, what topological_order said once
    it was added, and the nodes no order could place; the verdict it supports: a cyclic
    graph has no order."""
    edges = _pairs(data["edges"], "edges")
    nodes = [n for e in edges for n in e]
    try:
        topological_order(nodes, edges)
    except CycleError:
        raise Flaw("'edges' already has a cycle: start from a graph without one (a graph the "
                   "engine recorded, say), and put the edge that closes a cycle in "
                   "'closing_edge'.") from None
    (closing,) = _pairs([data["closing_edge"]], "closing_edge")
    if not set(closing) <= set(nodes):
        raise Flaw("'closing_edge' should join two nodes of your 'edges'.")
    cyclic = [*edges, closing]
    try:
        topological_order(nodes, cyclic)
        message = None
    except CycleError as error:
        message = str(error)
    if message is None:
        raise Flaw(f"Your closing edge {closing[0]} -> {closing[1]} makes no cycle: it points "
                   "the way the graph already runs. Which way must an edge point to lead back "
                   "to where a path started?")
    # "only the cycle, or more?" must have something to decide: a node the cycle feeds that
    # is not on it, and a node some order can still place
    stuck, cycle = _never_placed(cyclic), _on_a_cycle(cyclic)
    if stuck == cycle:
        raise Flaw("With your closing edge, every node that waits lies on the cycle itself, "
                   "so your graph cannot tell whether more than the cycle is left unplaced: "
                   "choose edges (or a closing edge) so that the cycle feeds some node that "
                   "is not on it.")
    if stuck == set(nodes):
        raise Flaw("With your closing edge every node waits for the cycle, so your graph "
                   "cannot tell which nodes an order can still place: choose edges (or a "
                   "closing edge) so that some node does not depend on the cycle.")
    result = data["result"]
    if isinstance(result, list | tuple):
        raise Flaw("'result' is an order, but topological_order finds none once your closing "
                   "edge is in: ask it about 'edges' plus 'closing_edge'.")
    if str(raised(result, "result")) != message:
        raise Flaw("'result' is not the error topological_order raises for your edges with the "
                   "closing edge: ask it about those, and catch what it raises.")
    unplaced = _names(data["unplaced"], "unplaced")
    if unplaced != stuck:
        if unplaced == cycle:
            raise Flaw("'unplaced' holds the nodes of the cycle, but not every node that can "
                       "never be placed: can a node fed by the cycle ever come after all of "
                       "the nodes that feed it?")
        if unplaced > stuck:
            raise Flaw("'unplaced' holds nodes an order can still place: which nodes wait, "
                       "directly or through others, for a node of the cycle?")
        raise Flaw("'unplaced' is not the set of nodes no order can place: go through Kahn's "
                   "algorithm by hand on your edges with the closing edge.")
    return False  # the claim "a graph with a cycle still has such an order"


@gate.answers("W1")
def _reference_w1() -> dict:
    """A small recorded-style graph, the edge that closes a cycle, what topological_order
    says, and the nodes no order can place."""
    edges = [("x", "mul"), ("mul", "y"), ("y", "add"), ("add", "z"), ("z", "out")]
    closing_edge = ("z", "mul")                  # from a later node back to an earlier one
    try:
        result = topological_order([n for e in edges for n in e], [*edges, closing_edge])
    except CycleError as error:
        result = error
    unplaced = {"mul", "y", "add", "z", "out"}   # the cycle, and what it feeds
    return {"edges": edges, "closing_edge": closing_edge, "result": result,
            "unplaced": unplaced}


# a loop over the subsets of a small graph's nodes could find 'unplaced': past 12 wrong
# checks, a right one counts as found by search
register_claim(Claim("W1", ("edges", "closing_edge", "result", "unplaced"), measure_w1,
                     _reference_w1, tries=12))


# -- W2: why reverse mode for training (the same protocol) -------------------------------------


def measure_w2(data: dict, watch: Watch) -> bool:
    """Both gradients and both pass counts must be what the engine did while the experiment
    ran; the verdict it supports: reverse mode needs fewer passes."""
    by_fwd, by_rev = count(data["forward_passes"], "forward_passes"), count(
        data["reverse_passes"], "reverse_passes")
    fwd = numbers(data["forward_grad"], "forward_grad").ravel()
    rev = numbers(data["reverse_grad"], "reverse_grad")
    if rev.size < 8:
        raise Flaw("Use a loss of at least 8 parameters, so that the two modes can differ.")
    if by_fwd != watch.jvp_passes:
        raise Flaw("'forward_passes' is not the number of forward-mode passes the engine made "
                   "during your experiment: one per jvp call.")
    if by_rev != len(watch.sweeps):
        raise Flaw("'reverse_passes' is not the number of reverse sweeps the engine made during "
                   "your experiment: one per backward call.")
    if not among(rev, watch.totals()):
        raise Flaw("'reverse_grad' is not a gradient your backward sent to the parameters: "
                   "return theta.grad.")
    if not same(fwd, rev.ravel(), rtol=1e-8):
        raise Flaw("'forward_grad' is not the same gradient as 'reverse_grad': one jvp with the "
                   "one-hot tangent e_k gives the k-th entry, one entry per parameter.")
    return by_rev < by_fwd


@gate.answers("W2")
def _reference_w2() -> dict:
    """A 48-parameter loss: its gradient by 48 jvps and by one backward, with the passes."""
    gen = ag.Generator(30)
    data, target = ag.randn(32, 4, generator=gen), ag.randn(32, 1, generator=gen)
    theta0 = ag.randn(48, generator=gen) * 0.5

    def loss_of(theta):                        # a 4-8-1 tanh network, its 48 parameters
        W1, b1, w2 = theta[:32].reshape(4, 8), theta[32:40], theta[40:].reshape(8, 1)
        return ((ag.tanh(data @ W1 + b1) @ w2 - target) ** 2).mean()

    forward_grad = [jvp(loss_of, (theta0,), (ag.tensor(np.eye(48)[k]),))[1].item()
                    for k in range(48)]        # one pass per parameter
    theta = ag.tensor(theta0.numpy(), requires_grad=True)
    loss_of(theta).backward()                  # one pass for all of them
    return {"forward_passes": 48, "reverse_passes": 1, "forward_grad": forward_grad,
            "reverse_grad": theta.grad}


def _w2_sizes(g: np.random.Generator) -> list[tuple[int, int]]:
    """Sizes (n parameters, m outputs) drawn at each check: one loss of many parameters
    (more than the lesson's 48), more parameters than outputs, more outputs than
    parameters."""
    return [(int(g.integers(60, 400)), 1), (int(g.integers(40, 200)), int(g.integers(2, 30))),
            (int(g.integers(1, 8)), int(g.integers(20, 200)))]


W2_RULE = Rule(
    "passes(n, m)", "the passes each mode makes for the whole Jacobian of m outputs with "
                    "respect to n parameters",
    right={"forward": Law(lambda n, m: n), "reverse": Law(lambda n, m: m)},
    counts={"forward": "the number of jvp passes forward mode makes",
            "reverse": "the number of sweeps reverse mode makes"},
    draw=_w2_sizes,
    wrong={"forward": (
        Law(lambda n, m: m, "Your forward count follows the outputs: one jvp pushes one "
                            "direction in the parameters forward (one column of the "
                            "Jacobian). How many columns has it?", "per_output"),
        Law(lambda n, m: 1, "Your forward count is 1 whatever the sizes: one jvp gives the "
                            "loss's change along one tangent only.", "one_pass")),
        "reverse": (
        Law(lambda n, m: 1, "Your reverse count is 1 whatever m is: one sweep from an output "
                            "gives that output's gradient, one row of the Jacobian. How many "
                            "rows are there?", "one_sweep"),
        Law(lambda n, m: n, "Your reverse count grows with the parameters: one sweep back from "
                            "an output reaches every parameter at once.", "per_parameter"),
        Law(lambda n, m: m + 1, "You counted the forward pass that records the graph as a "
                                "sweep too: count the sweeps back, one per backward, as your "
                                "experiment did.", "forward_counted"))},
    hint="A jvp gives one column of the Jacobian, a backward one row; an m × n Jacobian has "
         "how many of each?")


register_claim(Claim("W2", ("forward_passes", "reverse_passes", "forward_grad",
                             "reverse_grad"), measure_w2, _reference_w2, W2_RULE))


# -- W3: local rules compose ----------------------------------------------------------------


def _check_w3(op=None) -> Result:
    """``W3(MySoftplus)``: your op's local rule, alone and inside a bigger function."""
    alone = _check_backward(op, "softplus")
    if not alone.ok:
        return alone
    g = rng(53)
    x0, w0, t = g.standard_normal((4, 3)), g.standard_normal((3, 2)), g.standard_normal((4, 2))
    w, w_ref = ag.tensor(w0, requires_grad=True), ag.tensor(w0, requires_grad=True)
    try:
        learner.call(lambda: (op.apply(ag.tensor(x0) @ w) * ag.tensor(t)).sum().backward(),
                     what=op.__name__)
    except learner.LearnerCodeFailed as exc:
        return learner.failed(exc)
    (ag.log(1 + ag.exp(ag.tensor(x0) @ w_ref)) * ag.tensor(t)).sum().backward()
    composed = check_gradient(w.grad, w_ref.grad, name="inside sum(softplus(x @ w) * t)",
                              of="w")
    if composed.ok:
        composed.message = ("Your local rule, chained by the engine with matmul's and mul's, "
                            "gives the right dL/dw: no formula for the whole function needed.")
    return Result.combine([*alone.parts, composed])


register(Exercise("W3", "write_backward", {"op": _check_w3}))
SPEC_ITEMS["softplus"] = "W3"  # W3 checks the op alone on softplus, then composed


# -- W4: sigmoid's convenient derivative ------------------------------------------------------


def _check_w4(op=None) -> Result:
    """``W4(MySigmoid)``: a sigmoid op whose backward reads only its saved output."""
    return _check_backward(op, "sigmoid")


register(Exercise("W4", "write_backward", {"op": _check_w4}))
SPEC_ITEMS["sigmoid"] = "W4"


# -- W5: huge upstream, tiny gradient --------------------------------------------------------


# The bands the pre-activations are drawn from: near 0, then ever deeper into saturation.
W5_BANDS = ((0.0, 0.5), (1.5, 3.0), (4.0, 7.0), (9.0, 13.0), (16.0, 22.0))


def w5_problem(z=None, G=None) -> Problem:  # noqa: N803 - G is the question's name for it
    """Five pre-activations, one drawn from each band from 0 to deep saturation, and a huge
    upstream gradient; or other points ``z`` and upstream gradient ``G`` (a lesson
    demonstrates a mistake on other data, so that its feedback says nothing about the
    learner's own)."""
    if z is None:
        g = rng(5)
        points = np.array([g.uniform(lo, hi) for lo, hi in W5_BANDS])
    else:
        points = np.array(z, dtype=np.float64).ravel()
    upstream = np.broadcast_to(np.asarray(1000.0 if G is None else G, dtype=np.float64),
                               points.shape).copy()
    if z is None and G is None:
        what = ("s = sigmoid(z) at 5 points z from about 0 to deep saturation, with G = dL/ds "
                "= 1000 everywhere. Find dz = dL/dz.")
    else:
        what = "s = sigmoid(z) with the upstream gradient G = dL/ds. Find dz = dL/dz."
    return Problem(what, z=points, G=upstream)


W5_SATURATED = 4.0  # the pre-activation of every layer of the deep question's chain
W5_UPSTREAM = 1000.0
W5_FLOOR = 1e-6


def _saturated_chain_gradient(depth: int, z: float = W5_SATURATED,
                             upstream: float = W5_UPSTREAM) -> float:
    """The gradient that reaches the bottom of ``depth`` sigmoid layers in a chain, each
    layer's pre-activation ``z`` (a bias sets it), when ``upstream`` arrives at the top:
    by the engine's own backward."""
    bottom = ag.tensor(z, requires_grad=True)
    h, shift = ag.sigmoid(bottom), z - 1 / (1 + np.exp(-z))
    for _ in range(depth - 1):
        h = ag.sigmoid(h + shift)  # the next layer's input is again z
    h.backward(ag.tensor(upstream))
    return float(bottom.grad.numpy())


def _w5_layers() -> int:
    """How many saturated sigmoid layers bring the huge upstream gradient below the floor."""
    return next(d for d in range(1, 100) if abs(_saturated_chain_gradient(d)) < W5_FLOOR)


def _w5_engine(p: Problem) -> dict:
    z = ag.tensor(p.z, requires_grad=True)
    ag.sigmoid(z).backward(ag.tensor(p.G))
    return {"dz": z.grad}


def _w5_context(p: Problem, right) -> dict:
    s = 1 / (1 + np.exp(-p.z))
    return {"dz": dict(of="z", upstream=p.G, activation_derivative=s * (1 - s))}


_check_w5 = gradients(Gradients(
    "W5", ("dz",), w5_problem, _w5_engine, _w5_context, options={"z": None, "G": None}),
    """``W5(my_w5)``: your ``my_w5(p) -> {"dz": ...}`` on ``W5.problem()`` and on problems
    drawn at check time; ``z=..., G=...`` run it on ``W5.problem(z=..., G=...)``.""")


@answers("layers")
def _check_w5_layers(layers=None) -> Result:
    """``W5.run("layers", layers=...)``: how many sigmoid layers in a chain, each at the
    pre-activation z = 4, bring an upstream gradient of 1000 at the top below 10⁻⁶ at the
    bottom."""
    return check_fact("layers", layers, Fact(
        _w5_layers(), "Each saturated layer multiplies the gradient by σ'(4), about "
        "0.018: count the layers until 1000 times that product falls below 10⁻⁶.", "number"))


@gate.answers("W5")
def vanishing(depth: int = 8) -> Report:
    """Gradient norm reaching each layer of a deep sigmoid network."""
    g = rng(55)
    h = ag.tensor(g.standard_normal((16, 8)), requires_grad=True)
    outs = []
    for _ in range(depth):
        h = ag.sigmoid(h @ ag.tensor(g.standard_normal((8, 8))))
        h.retain_grad()
        outs.append(h)
    h.sum().backward()
    rows = [(k + 1, float(np.linalg.norm(o.grad.numpy()))) for k, o in enumerate(outs)]
    return Report(f"|dL/dh| at each of {depth} sigmoid layers (layer 1 is nearest the input)",
                  "Each layer multiplies the gradient by σ' ≤ 1/4 (times the weights), so it "
                  "shrinks layer by layer on the way back: vanishing gradients.",
                  ("layer", "gradient norm"), rows, data={"norms": [r[1] for r in rows]})


register(Exercise("W5", "derivation", {"gradients": _check_w5, "layers": _check_w5_layers},
                  problem=w5_problem, experiment=vanishing))


# -- W6: no gradient through the branch that did not run ------------------------------------------

W6_WEIGHTS = {"w_pos": 1.5, "w_neg": -2.0}  # the weights lessons.graphs' runs start from


def _w6_mistakes(x: float, weight: float) -> list[Mistake]:
    """The named slips of d y / d weight for y = tanh applied k times to weight·x (k tanh,
    at least one), computed here from the chain rule, not from the engine."""
    k = max(1, int(abs(x)))
    values = [weight * x]
    for _ in range(k):
        values.append(np.tanh(values[-1]))
    slopes = [1 - np.tanh(v) ** 2 for v in values[:-1]]  # tanh' at each tanh's input

    def m(value: float, says: str, code: str) -> Mistake:
        return Mistake(np.array(float(value)), says, "", code)

    found = [m(x, f"For x = {x} you stopped at the multiplication: each tanh after it "
                  "multiplies the gradient by its own slope.", "no_tanh_slope"),
             m(weight * np.prod(slopes), f"For x = {x} that is the gradient with respect to x; "
                                         "the question asks for the weight's.", "wrt_x")]
    if k > 1:
        found += [m(x * slopes[0], f"For x = {x} you took one tanh's slope; how many tanh ran "
                                   "for this input?", "one_tanh"),
                  m(x * slopes[-1] ** k, f"For x = {x} you used one tanh's slope for every "
                                         "tanh; each is taken at its own input.", "same_slope")]
    else:
        twice = x * slopes[0] * (1 - np.tanh(values[1]) ** 2)  # a second tanh that never ran
        found.append(m(twice, f"For x = {x} you ran tanh more often than the loop does: how "
                              "many whole units has |x|, and what is the least?", "tanh_count"))
    return found


def _w6_facts() -> dict[str, Fact]:
    """What the engine shows, one fact per prediction of ``W6(w_pos_grad=..., w_neg_grad=...,
    w_neg_grad_negative=...)``: the weights' gradients after backward for x = 2.5, and
    w_neg's for x = -0.5."""
    with gate.quietly():  # W6's own check
        positive, negative = branches().data["runs"]
    return {
        "w_pos_grad": Fact(positive.grad_w_pos, "For x = 2.5 the w_pos branch ran, then tanh "
                           "twice: the chain rule multiplies x by both tanh's slopes.", "number",
                           {"mistakes": _w6_mistakes(2.5, W6_WEIGHTS["w_pos"])}),
        "w_neg_grad": Fact(positive.grad_w_neg, "For x = 2.5 the branch with w_neg never ran, "
                           "so w_neg is not in the recorded graph: its .grad stays None.",
                           choices=(None, 0.0), what="a number, or the Python value .grad "
                           "holds when no gradient was computed (a value, not text)"),
        "w_neg_grad_negative": Fact(negative.grad_w_neg, "For x = -0.5 the other branch ran, "
                                    "then tanh once: another graph, with w_neg in it.",
                                    "number",
                                    {"mistakes": _w6_mistakes(-0.5, W6_WEIGHTS["w_neg"])}),
    }


register(Exercise("W6", "prediction", {"predict": predicting(_w6_facts)}, experiment=branches))
engine_watch.asks_about("W6", _branchy_program)  # its sweep for x = 2.5 shows the gradients
