"""Spot the error: a short buggy snippet (as text) the learner fixes; the check runs
the learner's fixed function against the engine and names what is still wrong.

S1 (overwrite instead of accumulate), S2 (gradients never reset), S3 (one expanded
formula instead of a graph), S4 (only the output kept, then backward), S5
(the upstream adjoint left out), S6 (two backward passes for two parameters). The
G10 and G12 (in ``backprop_bugs``) have snippets too; every snippet is text in
``texts.toml``, beside its item's question.
"""

from __future__ import annotations

from functools import partial

import numpy as np

import autograd_core as ag
from autograd_core.recording.node import Observer, observing

from .. import gate
from ..feedback import words
from ..feedback.check import check_gradient
from ..feedback.context import Mistake
from ..feedback.result import Result
from ..lessons.report import Report
from . import engine_watch, learner
from .array_answers import NOT_FROM_P, UNSEEN
from .exercise import Exercise, register
from .function_cases import Derivation, deriving, not_closed_form
from .predictions import Fact, predicting
from .problems import rng, unseen
from .true_false import Watch


def _named(fn, default: str) -> str:
    """The name the learner gave their function (``fixed_grads``), for the sentences;
    the snippet's own name for a lambda or anything without one."""
    name = getattr(fn, "__name__", None)
    return name if isinstance(name, str) and name.isidentifier() else default


def _nothing_yet(name: str, wanted: str) -> str:
    """The sentence for a function that returned None: a placeholder, not a mistake."""
    return (f"Your function `{name}` returned None, so there is nothing to check yet: "
            f"make it return {wanted}.")


def _pair(value, what: str, names=("first", "second")) -> tuple:
    """Unpack a function's result into two values, or raise LearnerCodeFailed."""
    if value is None:
        raise learner.LearnerCodeFailed(_nothing_yet(what, f"({names[0]}, {names[1]})"),
                                        TypeError(), "none")
    if not isinstance(value, tuple | list) or len(value) != 2:
        got = type(value).__name__ if not isinstance(value, tuple | list) else \
            f"{len(value)} values"
        raise learner.LearnerCodeFailed(f"Your function `{what}` should return two values "
                                        f"({names[0]}, "
                                        f"{names[1]}), but it returned {got}.", TypeError())
    return tuple(value)


def _and_on_unseen_data(fn, default: str, draw, check_on) -> Result:
    """``check_on(fn, draw())``: the learner's fixed function on the snippet's data; once it
    is right there, on ``UNSEEN`` more sets of data drawn at check time from a secret seed
    (:func:`.problems.unseen`), so that answers worked out beforehand on data a spy noted
    (a table of the engine's gradients) do not pass for a fix. Drawn inside the block, run
    outside it."""
    result = check_on(fn, draw())
    if not result.ok:
        return result
    for _ in range(UNSEEN):
        with unseen():
            data = draw()
        again = check_on(fn, data)
        if not again.ok:
            name = _named(fn, default)
            return Result(False, f"Your `{name}` is right on the snippet's data but not on "
                                 f"other data of the same shapes, drawn at check time: "
                                 f"`{name}` must compute its result from the arrays it is "
                                 "given (numbers worked out elsewhere do not carry over).",
                          diagnosis=NOT_FROM_P,
                          hint="Run your function on data of your own, and compare it "
                               "with the engine's gradients there.")
    return result


# -- S1: overwrite instead of accumulate ------------------------------------------------------


def _s1_data():
    g = rng(21)
    return g.standard_normal(5), g.standard_normal(5)


def _s1_engine(x, y):
    """dL/dx, dL/dy for L = sum((x + y) * tanh(x)), and dL/dx split into its two paths."""
    xt, yt = ag.tensor(x, requires_grad=True), ag.tensor(y, requires_grad=True)
    ((xt + yt) * ag.tanh(xt)).sum().backward()
    paths = []
    for through_a in (True, False):
        xp = ag.tensor(x, requires_grad=True)
        a = xp + ag.tensor(y) if through_a else xp.detach() + ag.tensor(y)
        b = ag.tanh(xp.detach()) if through_a else ag.tanh(xp)
        (a * b).sum().backward()
        paths.append(xp.grad.numpy())
    return xt.grad.numpy(), yt.grad.numpy(), paths


def _check_s1(fn=None) -> Result:
    """``S1(grads)``: your fixed ``grads(x, y) -> (x_bar, y_bar)``."""
    return _and_on_unseen_data(fn, "grads", _s1_data, _s1_on)


def _s1_on(fn, data) -> Result:
    x, y = data
    dx, dy, paths = _s1_engine(x, y)
    try:
        name = _named(fn, "grads")
        x_bar, y_bar = _pair(learner.by_hand(fn, x.copy(), y.copy(), what=name), name,
                             ("x_bar", "y_bar"))
    except learner.LearnerCodeFailed as exc:
        return learner.failed(exc)
    alias = Mistake(dx, "Your y_bar equals x_bar: `x_bar = a_bar` made both names the same "
                    "array, so `x_bar += ...` changed y_bar too.", "Write x_bar = x_bar + ... "
                    "(a new array) instead of +=, or copy a_bar first.", "aliased")
    parts = [check_gradient(x_bar, dx, name="x_bar", of="x",
                            paths={"the path through a = x + y": paths[0],
                                   "the path through b = tanh(x)": paths[1]}),
             check_gradient(y_bar, dy, name="y_bar", of="y", mistakes=[alias])]
    measured = not_closed_form((x_bar, y_bar), (dx, dy), name, "x_bar")
    if all(part.ok for part in parts) and measured is not None:
        return measured  # a measurement of the slopes, not a fixed sweep
    return Result.combine(parts)


register(Exercise("S1", "spot_error", {"fixed": _check_s1}))


# -- S2: gradients never reset, and micro-batches added as they come ------------------------
#
# Each training step's batch is too big to run at once, so it runs in micro-batches and
# backward adds their gradients up in w.grad: accumulation is what the step wants, inside a
# step, and what breaks it across steps. The snippet never resets .grad between steps and
# adds the micro-batches' mean losses as they are. The check runs the learner's function with
# micro-batches that do not divide the batch, and watches that it sweeps each micro-batch on
# its own and never runs an op on more rows than a micro-batch holds.

S2_STEPS, S2_ROWS, S2_MICRO = 3, 10, (4, 3)  # steps, rows per batch, micro-batch sizes tried


def _s2_steps():
    """Three steps' batches (x: 10 × 2, t: 10) and the starting weight w (2,)."""
    g = rng(222)
    return [(g.standard_normal((S2_ROWS, 2)), g.standard_normal(S2_ROWS))
            for _ in range(S2_STEPS)], g.standard_normal(2)


def _batch_grad(w0, x, t) -> np.ndarray:
    """The gradient of the mean squared error of (x, t) at w0, by the engine."""
    w = ag.tensor(w0, requires_grad=True)
    ((ag.tensor(x) @ w - ag.tensor(t)) ** 2).mean().backward()
    return w.grad.numpy()


def _micro_grads(w0, x, t, micro: int) -> list[tuple[int, np.ndarray]]:
    """(rows, the gradient of that micro-batch's mean loss) for each micro-batch of a step,
    by the engine."""
    found = []
    for start in range(0, len(x), micro):
        xs, ts = x[start:start + micro], t[start:start + micro]
        found.append((len(xs), _batch_grad(w0, xs, ts)))
    return found


def _s2_mistakes(steps, w0, micro: int) -> list[tuple[np.ndarray, list[Mistake]]]:
    """Each step's right gradient, and the named wrong ones: worked out here from the
    micro-batches' own gradients (the batch mean weighs each micro-batch by its rows)."""
    ways = {"right": [], "sum_of_means": [], "mean_of_means": [], "last_only": []}
    for x, t in steps:
        parts = _micro_grads(w0, x, t, micro)
        ways["right"].append(sum(n / len(x) * g for n, g in parts))
        ways["sum_of_means"].append(sum(g for _, g in parts))
        ways["mean_of_means"].append(sum(g for _, g in parts) / len(parts))
        ways["last_only"].append(parts[-1][1] * parts[-1][0] / len(x))
    says = {
        "sum_of_means": "you added each micro-batch's mean loss as it is, but the whole "
                        "batch's mean is not the sum of its parts' means: what share of the "
                        "batch is each micro-batch?",
        "mean_of_means": "you weighed every micro-batch the same, but the last one is "
                         "smaller: what share of the whole batch's mean is each one's?",
        "last_only": "only the last micro-batch's part is left: a reset inside the "
                     "micro-batch loop throws away what the others added.",
    }
    shares = ("Work out the mean of ten numbers from the means of groups of 4, 4 and 2 "
              "of them, in NumPy if you like.")
    nudge = {"sum_of_means": shares, "mean_of_means": shares,
             "last_only": "Look at where in the loops w.grad starts again from nothing.",
             "not_reset": "Print w.grad just before each step's first backward."}
    found = []
    for k in range(len(steps)):
        where = f"Step {k + 1} (micro-batches of {micro})"
        mistakes = [Mistake(ways[code][k], f"{where}: {said}", nudge[code], code)
                    for code, said in says.items()]
        if k:  # .grad kept from the steps before, with each way of adding a step up
            for code in ("right", "sum_of_means", "mean_of_means"):
                also = "" if code == "right" else f" Also, {says[code]}"
                mistakes.append(Mistake(
                    sum(ways[code][: k + 1]), f"{where} still holds the gradients of the steps "
                    "before it: backward adds into .grad, so what does w.grad hold when a "
                    f"step's first micro-batch starts?{also}", nudge["not_reset"],
                    "not_reset" + ("" if code == "right" else f"+{code}")))
        found.append((ways["right"][k], mistakes))
    return found


class _Rows(Observer):
    """The most rows any op's output had while the learner's function ran."""

    def __init__(self):
        self.most = 0

    def on_forward(self, op, node, arrays, out, params) -> None:
        shape = np.shape(out)
        if shape:
            self.most = max(self.most, int(shape[0]))


def _check_s2(fn=None) -> Result:
    """``S2(step_gradients)``: your fixed ``step_gradients(w, steps, micro) -> list``, one
    gradient per step, each step's batch run in micro-batches of at most ``micro`` rows."""
    return _and_on_unseen_data(fn, "step_gradients", _s2_steps, _s2_on)


def _s2_on(fn, data) -> Result:
    steps, w0 = data
    name = _named(fn, "step_gradients")
    results = []
    for micro in S2_MICRO:
        w = ag.tensor(w0, requires_grad=True)
        tensors = [(ag.tensor(x), ag.tensor(t)) for x, t in steps]
        with observing(Watch()) as watch, observing(_Rows()) as rows:
            try:
                grads = learner.call(fn, w, tensors, micro, what=name)
            except learner.LearnerCodeFailed as exc:
                return learner.failed(exc)
        if grads is None:
            return Result(False, _nothing_yet(name, "a list with one gradient per step"),
                          diagnosis="none")
        if not isinstance(grads, list | tuple) or len(grads) != len(steps):
            size = f" of length {len(grads)}" if hasattr(grads, "__len__") else ""
            return Result(False, f"{name} should return a list of {len(steps)} gradients, "
                                 f"one per step; it returned {type(grads).__name__}{size}.",
                          diagnosis="type")
        if rows.most > micro:
            return Result(False, f"With micro-batches of {micro}, your function ran an op on "
                                 f"{rows.most} rows at once: memory holds one micro-batch "
                                 "at a time, so every op of a step runs on one "
                                 "micro-batch's rows.", diagnosis="whole_batch")
        wanted = len(steps) * -(-S2_ROWS // micro)
        if len(watch.sweeps) != wanted:
            ran = f"{len(watch.sweeps)} backward sweep" + ("s" * (len(watch.sweeps) != 1))
            return Result(False, f"With micro-batches of {micro}, your function ran "
                                 f"{ran if watch.sweeps else 'no backward sweep'} for its "
                                 f"{wanted} micro-batches: sweep each micro-batch's loss once, "
                                 "as soon as it is computed (its graph is then freed), so "
                                 "that only one micro-batch's graph is ever kept.",
                          diagnosis="sweeps_per_micro_batch")
        for k, (given, (right, mistakes)) in enumerate(zip(grads, _s2_mistakes(steps, w0,
                                                                               micro))):
            results.append(check_gradient(given, right, of="w", mistakes=mistakes,
                                          name=f"step {k + 1}, micro-batches of {micro}"))
    return Result.combine(results)


@gate.answers("S2")
def loss_curves(steps: int = 12, lr: float = 0.1) -> Report:
    """SGD on the same data with and without resetting .grad between steps."""
    batches, w0 = _s2_steps()
    x = np.concatenate([b[0] for b in batches])
    t = np.concatenate([b[1] for b in batches])
    curves = {}
    for reset in (True, False):
        w = ag.tensor(w0, requires_grad=True)
        losses = []
        for _ in range(steps):
            if reset:
                w.grad = None
            loss = ((ag.tensor(x) @ w - ag.tensor(t)) ** 2).mean()
            loss.backward()
            losses.append(loss.item())
            with ag.no_grad():
                w.sub_(w.grad * lr)
        curves["reset" if reset else "never reset"] = losses
    rows = [(i + 1, curves["reset"][i], curves["never reset"][i]) for i in range(steps)]
    return Report("SGD with and without resetting .grad", "Without a reset each step uses the "
                  "sum of all past gradients: the steps grow and the loss stops following the "
                  "gradient (it oscillates or diverges).", ("step", "loss (reset)",
                                                            "loss (never reset)"),
                  rows, data=curves)


register(Exercise("S2", "spot_error", {"fixed": _check_s2}, experiment=loss_curves))


# -- S3: "I expanded the whole nested function into one formula" -------------------------------
#
# The snippet's formula holds for one depth only, and the formula written out doubles with
# every level (T4 measured it). The learner does what the recorded graph makes possible: keep
# the value each level computed and multiply the levels' local derivatives along them, by
# hand, for whatever n it is given. The check draws depths and points when it runs, so no
# formula written out for one depth, nor a table of answers, stands in for the derivation.


def _nested_grad(x, n: int) -> np.ndarray:
    """d l_n / dx at each point of x, by the engine (modes.nested, "logistic")."""
    from ..lessons.modes import nested

    xt = ag.tensor(np.array(x, dtype=np.float64), requires_grad=True)
    nested(xt, n, "logistic").sum().backward()
    return xt.grad.numpy()


def _local(v: np.ndarray) -> np.ndarray:
    """One level's local derivative, d(4 v (1 - v))/dv, at the level's input v."""
    return 4 * (1 - 2 * v)


def _levels(x: np.ndarray, n: int) -> list[np.ndarray]:
    """l_0 = x, l_1, ..., l_n."""
    values = [x]
    for _ in range(n):
        values.append(4 * values[-1] * (1 - values[-1]))
    return values


def _s3_mistakes(x: np.ndarray, n: int) -> list[Mistake]:
    """d l_n / dx worked out with one thing wrong, each named."""
    ls = _levels(x, n)
    inputs, outputs = ls[:-1], ls[1:]
    formulas = []  # a formula for depth 2 first: at depth 3 it is also one level too few
    snippet = 16 * (1 - 2 * x) * (1 - 8 * x + 4 * x ** 2)
    if n == 2:
        formulas.append(Mistake(snippet, "Your function is the snippet's formula, expanded by "
                                "hand for depth 2, and it is off at depth 2 itself: expanding "
                                "by hand slips.", "Differentiate level by level instead of "
                                "expanding.", "expansion_slip"))
    else:  # the snippet's formula, and the same formula without its slip
        for formula in (snippet, 16 * (1 - 2 * x) * (1 - 8 * x + 8 * x ** 2)):
            formulas.append(Mistake(formula, "Your function is a formula for depth 2, used at "
                                    "another depth: a formula written out for one depth says "
                                    "nothing about the next.",
                                    "Your function gets n: let n levels run.", "fixed_depth"))
    mistakes = formulas + [
        Mistake(np.prod([_local(x)] * n, axis=0), "Your levels' local derivatives are all "
                "taken at x: each level's factor belongs at the value that level received, "
                "l_k, which changes from level to level.",
                "Carry the value l_k along the loop as well as the product.", "local_at_x"),
        Mistake(np.prod([_local(v) for v in outputs], axis=0), "Your factors are taken one "
                "level late, at each level's output l_(k+1) instead of its input l_k.",
                "The local derivative of l_(k+1) = f(l_k) is f'(l_k).", "local_at_output"),
        Mistake(np.sum([_local(v) for v in inputs], axis=0), "Your function adds the levels' "
                "local derivatives: along a chain of functions the chain rule multiplies them.",
                "d l_2/dx = (d l_2/d l_1)(d l_1/dx).", "sum_not_product"),
        Mistake(ls[-1], "Your function returns l_n, the value, not its derivative.",
                "What does each level contribute to the slope?", "value"),
    ]
    for m in (n - 1, n + 1):
        if m >= 1:
            mistakes.append(Mistake(np.prod([_local(v) for v in _levels(x, m)[:-1]],
                                            axis=0),
                                    f"Your function differentiates one level too "
                                    f"{'few' if m < n else 'many'}: l_n is n levels deep, "
                                    "one local factor per level.",
                                    "Count the factors your loop multiplies.", "levels_off"))
    mistakes.append(Mistake(np.prod([1 - 2 * v for v in inputs], axis=0), "Your levels' "
                            "local derivative has lost the map's constant factor: "
                            "differentiate 4 l (1 - l) again.",
                            "Expand 4 l (1 - l) and differentiate it.", "missing_factor"))
    mistakes.append(Mistake(np.prod([-_local(v) for v in inputs], axis=0), "Your levels' "
                            "local derivative has the wrong sign.",
                            "Differentiate 4 l (1 - l) again.", "sign"))
    return mistakes


def _s3_case(seed: int, depths: tuple[int, ...] | None):
    """One case: 5 points in (0.05, 0.95) and one of ``depths`` drawn from ``rng(seed)``
    (the lesson's x = 0.1, 0.3, 0.7 at depth 2 for None); an odd depth among the cases, so
    that a local derivative of the wrong sign shows. Depths stay at most 8: the map is
    chaotic, and deeper, rounding alone moves two right answers apart by more than 1e-11."""
    if depths is None:
        x, n = np.array([0.1, 0.3, 0.7]), 2
    else:
        g = rng(seed)
        x, n = g.uniform(0.05, 0.95, 5), int(g.choice(depths))
    return (x, n), _nested_grad(x, n), {"mistakes": _s3_mistakes(x, n)}


def _s3_compare(out, expected, ctx) -> Result:
    return check_gradient(out, expected, name="derivative", reference="the engine's d l_n / dx",
                          **ctx)


_check_s3 = deriving(Derivation("derivative", (
    ("x = 0.1, 0.3, 0.7 at depth n = 2", lambda: _s3_case(0, None)),
    ("points and a depth of 3 or 5 drawn now", lambda: _s3_case(31, (3, 5))),
    ("points and a depth between 6 and 8 drawn now", lambda: _s3_case(32, (6, 7, 8)))),
    _s3_compare, right="one local factor per level, taken at the value that level received, "
    "multiplied along: n steps of work for depth n, where the formula written out doubles with "
    "every level.", probe="Is a depth, or a formula for one depth, built into it?"),
    """``S3(derivative)``: your ``derivative(x, n)``, in plain NumPy (no engine, no sympy),
    returns d l_n / dx at each point of the array x, for l_0 = x and l_(k+1) = 4 l_k (1 - l_k);
    checked at the lesson's depth 2 and at depths and points drawn when it runs.""")
register(Exercise("S3", "spot_error", {"fixed": _check_s3}))


# -- S4: "I kept only the output to save memory, then ran backward" ----------------------------
#
# The snippet drops every saved tensor once the forward pass has run, and its backward fails.
# Keeping everything (the plain forward pass, or a graph kept with retain_graph) gives the right
# gradients but does not save the memory the program was after. The honest fix keeps only what
# the intermediates can be made again from, and recomputes them when backward needs them: the
# check asks for right gradients AND a loss that, until backward, holds no intermediate.


def _s4_data():
    g = rng(24)
    return g.standard_normal((16, 8)), g.standard_normal((8, 8)), g.standard_normal((8, 1))


def _s4_block(x, w1, w2):
    return ag.sigmoid(ag.tanh(x @ w1) @ w2)


def _s4_engine(x, w1_0, w2_0):
    """The plain run: dL/dw1, dL/dw2, and the bytes of intermediates its loss holds."""
    from autograd_core.tools.memory import activation_bytes

    xt = ag.tensor(x)
    w1, w2 = ag.tensor(w1_0, requires_grad=True), ag.tensor(w2_0, requires_grad=True)
    loss = _s4_block(xt, w1, w2).sum()
    held = activation_bytes(loss, exclude=[xt, w1, w2])
    loss.backward()
    return w1.grad.numpy(), w2.grad.numpy(), held


def _check_s4(fn=None) -> Result:
    """``S4(loss_for_backward)``: your fixed ``loss_for_backward(w1, w2, x) -> loss``. The
    check measures what your loss holds for backward besides x, w1 and w2, then runs
    ``loss.backward()`` and compares the gradients of w1 and w2 with the engine's."""
    from autograd_core.tools.memory import activation_bytes

    x, w1_0, w2_0 = _s4_data()
    g1, g2, plain_held = _s4_engine(x, w1_0, w2_0)
    xt = ag.tensor(x)
    w1, w2 = ag.tensor(w1_0, requires_grad=True), ag.tensor(w2_0, requires_grad=True)
    try:
        loss = learner.call(fn, w1, w2, xt, what=_named(fn, "loss_for_backward"))
    except learner.LearnerCodeFailed as exc:
        return learner.failed(exc)
    if loss is None:
        return Result(False, _nothing_yet(_named(fn, "loss_for_backward"),
                                          "the loss (not yet backpropagated)"),
                      diagnosis="none")
    if not isinstance(loss, ag.Tensor) or loss.numel() != 1:
        what = (f"a tensor of shape {tuple(loss.shape)}" if isinstance(loss, ag.Tensor)
                else type(loss).__name__)
        return Result(False, f"loss_for_backward should return the loss, one number as an engine "
                             f"tensor, ready for loss.backward(); it returned {what}.",
                      diagnosis="type")
    if loss.grad_fn is None:
        return Result(False, "Your loss has no recorded graph (was it computed under no_grad?), "
                             "so backward has nothing to go back through and w1 and w2 get no "
                             "gradient.", diagnosis="no_graph",
                      hint="The loss must come from a recording forward pass; the question is "
                           "only what that pass keeps until backward.")
    held = activation_bytes(loss, exclude=[xt, w1, w2])
    try:
        learner.call(loss.backward, what="loss.backward")
    except learner.LearnerCodeFailed as exc:
        if isinstance(exc.error, RuntimeError) and "second time" in str(exc.error):
            return Result(False, "The backward fails: the saved tensors it needs were dropped "
                                 "after the forward pass, and nothing makes them again.",
                          diagnosis="freed",
                          hint="Backward has to read those values. If the program does not "
                               "keep them, from what could they be made again, and when?")
        return learner.failed(exc)
    parts = [check_gradient(t.grad, g, name=f"d{name}", of=name) if t.grad is not None else
             Result(False, f"{name} got no gradient: backward from your loss never reached it.",
                    name=f"d{name}", diagnosis="no_gradient")
             for name, t, g in (("w1", w1, g1), ("w2", w2, g2))]
    if held:
        compared = ("as many as the plain forward pass" if held >= plain_held
                    else f"the plain forward pass holds {plain_held:,}")
        parts.append(Result(False, f"Until backward, your loss held {held:,} bytes of "
                                   f"intermediates besides x, w1 and w2 ({compared}): memory "
                                   "kept, not saved. Keep only what they can be made from.",
                            name="memory", diagnosis="keeps_intermediates",
                            hint="Holding the whole graph (the plain forward pass, or "
                                 "retain_graph) is what the program wanted to avoid. What does "
                                 "backward need to have kept, at the least, to get the "
                                 "intermediates back when it reaches them?"))
    else:
        parts.append(Result(True, "Until backward, your loss held no intermediate: only x, w1 "
                                  f"and w2, which the program holds anyway (the plain forward "
                                  f"pass holds {plain_held:,} bytes of intermediates).",
                            name="memory"))
    return Result.combine(parts)


register(Exercise("S4", "spot_error", {"fixed": _check_s4}))


# -- S5: the upstream adjoint left out ---------------------------------------------------------


def _s5_problem():
    g = rng(25)
    return {k: g.standard_normal(4) for k in ("w", "x", "b", "t")}


def _check_s5(fn=None) -> Result:
    """``S5(grad_w)``: your fixed ``grad_w(w, x, b, t)`` for z = w*x + b, L = ½Σ(z - t)²."""
    return _and_on_unseen_data(fn, "grad_w", _s5_problem, _s5_on)


def _s5_on(fn, p) -> Result:
    w = ag.tensor(p["w"], requires_grad=True)
    z = w * ag.tensor(p["x"]) + ag.tensor(p["b"])
    z.retain_grad()
    (0.5 * ((z - ag.tensor(p["t"])) ** 2).sum()).backward()
    try:
        got = learner.by_hand(fn, *(p[k].copy() for k in ("w", "x", "b", "t")),
                              what=_named(fn, "grad_w"))
    except learner.LearnerCodeFailed as exc:
        return learner.failed(exc)
    result = check_gradient(got, w.grad, name="dL/dw", of="w", upstream=z.grad)
    measured = not_closed_form(got, w.grad.numpy(), _named(fn, "grad_w"), "dL/dw")
    return measured if result.ok and measured is not None else result


register(Exercise("S5", "spot_error", {"fixed": _check_s5}))


# -- S6: two backward passes ------------------------------------------------------------------
#
# A shared layer and two heads, L = La + Lb. The snippet sweeps back from each head's loss in
# turn (the first with retain_graph, so the second can go through the shared layer again):
# its gradients are right, and the shared layer's rules run twice. The learner predicts what
# each of its sweeps reaches and how much of the work both do, then writes one sweep.

S6_LEAVES = ("w1", "wa", "wb", "x")  # the names a prediction of reached leaves is made of


def _s6_data():
    g = rng(26)
    return (g.standard_normal((4, 3)), g.standard_normal((3, 2)), g.standard_normal((3, 2)),
            g.standard_normal((5, 4)))


def _s6_losses(w1, wa, wb, x):
    """The two heads' losses on a shared layer h = tanh(x @ w1)."""
    h = ag.tanh(x @ w1)
    return ((h @ wa) ** 2).sum(), ag.tanh(h @ wb).sum()


def _s6_leaves():
    w1, wa, wb, x = _s6_data()
    return {"w1": ag.tensor(w1, requires_grad=True), "wa": ag.tensor(wa, requires_grad=True),
            "wb": ag.tensor(wb, requires_grad=True), "x": ag.tensor(x)}


def _s6_facts() -> dict[str, Fact]:
    """What the snippet's two sweeps do, measured on the engine: the leaves each one sends a
    gradient to, and how many ops' backward rules both of them run."""
    leaves = _s6_leaves()
    la, lb = _s6_losses(*leaves.values())
    with observing(Watch()) as watch:
        la.backward(retain_graph=True)
        lb.backward()
    first, second = watch.sweeps
    names = {id(t): name for name, t in leaves.items()}
    reached = [frozenset(names[id(t)] for t in sweep.leaves()) for sweep in (first, second)]
    say = {"names": S6_LEAVES, "extra": "{n} of your leaves {is} not reached by that sweep",
             "missing": "{n} of the leaves it reaches {is} missing"}
    return {
        "pass_1_reaches": Fact(reached[0], "A sweep from La goes back through head a and the "
                               "shared layer: it reaches wa and w1, never wb.", "set", say),
        "pass_2_reaches": Fact(reached[1], "A sweep from Lb goes back through head b and the "
                               "shared layer: it reaches wb and w1, never wa.", "set", say),
        "rules_run_twice": Fact(len(set(first.visited) & set(second.visited)), "Both sweeps "
                                "go back through the shared layer h = tanh(x @ w1): its tanh "
                                "and its matmul run their rules once per sweep.", "number",
                                what="a number of ops"),
    }


def _check_s6(fn=None) -> Result:
    """``S6(gradients)``: your fixed ``gradients(w1, wa, wb, x) -> (dw1, dwa, dwb)``, for
    L = La + Lb, with no backward rule run twice (each parameter sent its gradient once)."""
    reference = _s6_leaves()
    la, lb = _s6_losses(*reference.values())
    (la + lb).backward()
    right = [reference[k].grad.numpy() for k in ("w1", "wa", "wb")]
    leaves = _s6_leaves()
    try:
        name = _named(fn, "gradients")
        with observing(Watch()) as watch:
            got = learner.call(fn, *leaves.values(), what=name)
        if got is None:
            raise learner.LearnerCodeFailed(_nothing_yet(name, "(dw1, dwa, dwb)"), TypeError(),
                                            "none")
        if not isinstance(got, tuple | list) or len(got) != 3:
            raise learner.LearnerCodeFailed(f"Your function `{name}` should return three "
                                            "values (dw1, dwa, dwb), but it returned "
                                            f"{words.short(got, 40)}.", TypeError())
    except learner.LearnerCodeFailed as exc:
        return learner.failed(exc)
    parts = [check_gradient(g, r, name=f"d{k}", of=k)
             for g, r, k in zip(got, right, ("w1", "wa", "wb"))]
    # each parameter is used once: in one sweep after one forward pass it is sent a gradient
    # once; more means a sweep went back over the shared layer again, or it ran twice
    sent = [sum(1 for sweep in watch.sweeps for t, _ in sweep.sent if t is leaves[k])
            for k in ("w1", "wa", "wb")]
    if not watch.sweeps:
        parts.append(Result(False, "Your function ran no backward sweep: the gradients are "
                                   "the engine's to fill in, in one sweep.", name="passes",
                            diagnosis="no_sweep"))
    elif max(sent) > 1:
        parts.append(Result(False, "Your function went back through part of the graph more "
                                   "than once (or ran part of it twice): some backward rules "
                                   "ran again, work a single sweep does once.", name="passes",
                            diagnosis="extra_passes",
                            hint="From which tensor does one sweep start so that it reaches "
                                 "every parameter, through both heads?"))
    else:
        parts.append(Result(True, "One sweep: every backward rule ran once.", name="passes"))
    return Result.combine(parts)


register(Exercise("S6", "spot_error", {"fixed": _check_s6, "predict": predicting(_s6_facts)}))


def _s6_head(which: int):
    """One head's loss on the snippet's data: a sweep from it is one of the snippet's two."""
    return _s6_losses(*_s6_leaves().values())[which]


for _which in (0, 1):  # the snippet's sweeps, run by the learner, show what "predict" asks
    engine_watch.asks_about("S6", partial(_s6_head, _which), check="predict")
