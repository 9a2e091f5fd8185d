"""Why questions W1–W6, each answered by an engine experiment the learner predicts or
by code the learner writes (W3, W4: an op's local backward rule)."""

from __future__ import annotations

import numpy as np

import autograd_core as ag
from autograd_core.graph import CycleError, topological_order

from ..lessons.graphs import define_by_run
from ..lessons.modes import jacobian_costs
from . import learner
from .backward_check import check_backward
from .exercise import Exercise, register
from .feedback import check_gradient
from .parts import named_answers, one_answer
from .predictions import Fact, check_predictions
from .problems import Problem, rng
from .report import Report
from .result import Result
from .true_false_experiments import cycles

# -- W1: why acyclic -----------------------------------------------------------------------

_W1_EDGES = [("x", "mul"), ("mul", "y"), ("y", "add"), ("add", "z"), ("z", "mul")]


def check_w1(**answers) -> Result:
    """``W1(has_order=...)`` for the graph in the question, or ``W1(has_order=..., edges=[...])``
    for a graph of your own ((from, to) pairs)."""
    problem = named_answers(answers, ("has_order", "edges"))
    if problem is not None:
        return problem
    has_order = answers.get("has_order")
    edges = answers.get("edges", _W1_EDGES)
    try:
        nodes = [n for e in edges for n in e]
        order = topological_order(nodes, edges)
        shows, why = True, f"the engine orders it {order}."
    except CycleError as exc:
        shows, why = False, f"the engine rejects it: {str(exc).split(';')[0]}."
    except (TypeError, ValueError):
        return Result(False, "edges should be a list of (from, to) pairs, e.g. "
                             "[('x', 'mul'), ('mul', 'y')].", diagnosis="type")
    fact = Fact(shows, f"A sweep needs an order in which every node comes after all of its "
                       f"inputs; {why}")
    return check_predictions({"has_order": has_order} if has_order is not None else {},
                             {"has_order": fact})


register(Exercise("W1", "prediction", {"order": check_w1}, experiment=cycles))


# -- W2: why reverse mode for training ---------------------------------------------------------


def training_passes(n_params: int = 64) -> Report:
    """The Jacobian of a scalar loss of ``n_params`` parameters, by both modes, counted."""
    g = rng(52)
    w = ag.tensor(g.standard_normal((16, n_params)))
    x = ag.tensor(g.standard_normal(n_params))
    cost = jacobian_costs(lambda p: ag.tanh(w @ p).sum(), x)
    rows = [(mode, cost[mode]["passes"], cost[mode]["macs"]) for mode in ("forward", "reverse")]
    return Report(f"Gradient of a scalar loss of {n_params} parameters",
                  "Reverse mode: one pass gives all parameters' gradients; forward mode: one "
                  "pass per parameter.", ("mode", "passes", "multiply-adds"), rows,
                  data=cost, supports="reverse")


def check_w2(**predictions) -> Result:
    """``W2(reverse_passes=..., forward_passes=...)`` for a loss of 64 parameters."""
    report = training_passes()
    why = "A scalar loss has one output; a network has many parameters (inputs)."
    facts = {"reverse_passes": Fact(report.data["reverse"]["passes"], why, "number"),
             "forward_passes": Fact(report.data["forward"]["passes"], why, "number")}
    return check_predictions(predictions, facts)


register(Exercise("W2", "prediction", {"passes": check_w2}, experiment=training_passes))


# -- W3: local rules compose ----------------------------------------------------------------


def check_w3(op=None) -> Result:
    """``W3(MySoftplus)``: your op's local rule, alone and inside a bigger function."""
    alone = check_backward(op, "softplus")
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


register(Exercise("W3", "write_backward", {"op": check_w3}))


# -- W4: sigmoid's convenient derivative ------------------------------------------------------


def check_w4(op=None) -> Result:
    """``W4(MySigmoid)``: a sigmoid op whose backward reads only its saved output."""
    return check_backward(op, "sigmoid")


register(Exercise("W4", "write_backward", {"op": check_w4}))


# -- W5: huge upstream, tiny gradient --------------------------------------------------------


def w5_problem() -> Problem:
    """Pre-activations from 0 to deep saturation, and a huge upstream gradient."""
    return Problem("s = sigmoid(z) with G = dL/ds = 1000 everywhere. Find dz = dL/dz.",
                   z=np.array([0.0, 2.0, 5.0, 10.0, 20.0]), G=np.full(5, 1000.0))


@one_answer("dz")
def check_w5(dz) -> Result:
    """``W5(dz=...)`` for ``W5.problem()``."""
    p = w5_problem()
    z = ag.tensor(p.z, requires_grad=True)
    ag.sigmoid(z).backward(p.G)
    s = 1 / (1 + np.exp(-p.z))
    return check_gradient(dz, z.grad, name="dz", of="z", upstream=p.G,
                          activation_derivative=s * (1 - s))


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


register(Exercise("W5", "derivation", {"dz": check_w5}, problem=w5_problem, experiment=vanishing))


# -- W6: no gradient through the branch that did not run ------------------------------------------


def branches() -> Report:
    """Two inputs through Python control flow: two recorded graphs, two sets of gradients."""
    runs = define_by_run()
    rows = [(r.x, " → ".join(r.ops), r.grad_w_pos, r.grad_w_neg) for r in runs]
    return Report("y = w_pos·x if x > 0 else w_neg·x, then tanh once per unit of |x|",
                  "Define-by-run: only the branch that ran is recorded, so the other weight is "
                  "not in the graph and its .grad stays None.",
                  ("x", "ops recorded", "w_pos.grad", "w_neg.grad"), rows, data={"runs": runs})


def check_w6(**predictions) -> Result:
    """``W6(w_neg_grad=..., same_graph=...)`` for the inputs 2.5 and -0.5."""
    runs = branches().data["runs"]
    facts = {
        "w_neg_grad": Fact(runs[0].grad_w_neg, "For x = 2.5 the branch with w_neg never ran, "
                           "so w_neg is not in the recorded graph: its .grad stays None."),
        "same_graph": Fact(runs[0].ops == runs[1].ops, "Each run records what actually ran; "
                           "another input takes another branch and another number of tanh."),
    }
    return check_predictions(predictions, facts)


register(Exercise("W6", "prediction", {"predict": check_w6}, experiment=branches))
