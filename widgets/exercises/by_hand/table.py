"""H1: the gradient of every intermediate of lesson 13's network, checked all at once as a
table, one row per tensor, against the engine's ``.grad``.

H1 is an item of the :class:`~..array_answers.Gradients` kind: the learner writes one NumPy
function of the problem, ``my_h1(p) -> {"d_picked": ..., ..., "d_W1": ...}``, run by hand on
their own batch, then on batches nobody was given (a row right on the learner's batch only
says its numbers must come from ``p``). The table is the kind's answer laid out by row: each
row graded on the learner's own batch (:func:`.grading.check_one`, the mistakes of
:func:`_contexts` named), the kind's verdict on the other batches where that row is right.

A row whose upstream row is wrong says so, and says whether its own step back is right: the
engine's vector-Jacobian product of that one op (``autograd_core.func.vjp``), applied to the
learner's own upstream arrays. H4 shows its parameters in the same table.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping

import numpy as np

import autograd_core as ag
from autograd_core.func import vjp

from ...feedback import words
from ...feedback.context import Mistake
from ...feedback.result import Result
from ...feedback.tolerance import close, tolerance_for
from ..array_answers import NOT_FROM_P, UNSEEN, Gradients, gradients
from ..exercise import Exercise, register
from ..problems import Problem
from .closed_forms import _bn_mistakes
from .grading import _usable, check_one
from .network import BATCH, ROWS, STEPS, Reference, _through_engine, problem, values_of

ANSWERS = tuple(f"d_{r}" for r in ROWS)
_WIDTH = max(map(len, ANSWERS))


def _contexts(ref: Reference) -> dict[str, dict]:
    """What ``check_gradient`` may use, per row, to name a mistake (from engine values)."""
    v, d, n = ref.values, ref.grads, len(ref.values["y"])
    tanh_fix = ("1 − bn_out² (tanh' is 1 − tanh², written with the OUTPUT h = tanh(bn_out), "
                "not with bn_out)")
    ctx: dict[str, dict] = {r: {} for r in ROWS}
    ctx["log_probs"]["mistakes"] = [Mistake(
        np.broadcast_to(d["picked"][:, None], v["log_probs"].shape),
        "Your answer sends d_picked to every class. Only the entry picked for each example "
        "(its label y) reaches the loss: the others get 0 (indexing scatters the gradient "
        "back to the entries it read).", "Start from zeros and fill only [arange(N), y].",
        "scatter")]
    ctx["sum_exp"]["mistakes"] = [Mistake(
        d["log_sum_exp"] * v["sum_exp"], "Your answer multiplies by sum_exp; the derivative "
        "of log(s) is 1/s.", "d/ds log(s) = 1/s.", "log_derivative")]
    ctx["shifted"]["paths"] = {"the path through exps": d["exps"] * v["exps"],
                               "the path through log_probs": d["log_probs"]}
    ctx["W2"]["mistakes"] = [Mistake(
        v["bn_out"].T @ d["logits"], "Your answer uses bn_out, but the input of the second "
        "linear layer is h = tanh(bn_out).", "Which array goes into the second linear layer "
        "in the forward pass?",
        "wrong_input")]
    ctx["bn_out"].update(activation_derivative=1 - v["h"] ** 2, before_activation=d["h"],
                         wrong_derivatives={tanh_fix: 1 - v["bn_out"] ** 2})
    ctx["gamma"]["mistakes"] = [Mistake(
        d["bn_out"].sum(0), "Your answer is d_bn_out summed over the batch, without x_hat: "
        "gamma multiplies x_hat, so each example's term is d_bn_out * x_hat.",
        "d(gamma * x_hat)/d gamma = x_hat.", "missing_factor")]
    ctx["beta"]["mistakes"] = [Mistake(
        (d["bn_out"] * v["x_hat"]).sum(0), "That is gamma's gradient: beta is only added, so "
        "its gradient is d_bn_out summed over the batch.", "d(a + beta)/d beta = 1.",
        "swapped")]
    ctx["x_hat"]["mistakes"] = [Mistake(
        d["bn_out"], "Your answer is missing the factor gamma: bn_out = gamma * x_hat + beta.",
        "d(gamma * x_hat)/d x_hat = gamma.", "missing_factor")]
    ctx["var_eps"]["mistakes"] = [Mistake(
        d["inv_std"] * -0.5 * v["var_eps"] ** -0.5, "Your power rule keeps the exponent: "
        "d/dv v^(-1/2) = -1/2 · v^(-3/2).", "d/dv v^k = k · v^(k-1).", "power_rule")]
    ctx["diff"]["paths"] = {"the path through x_hat": d["x_hat"] * v["inv_std"],
                            "the path through diff_sq": 2 * v["diff"] * d["diff_sq"]}
    ctx["h_pre"]["paths"] = {"the path through diff": d["diff"],
                             "the path through bn_mean": np.broadcast_to(
                                 d["bn_mean"] / n, v["h_pre"].shape)}
    ctx["h_pre"]["mistakes"] = _bn_mistakes(d["bn_out"], v["x_hat"], v["gamma"], v["inv_std"])
    ctx["h_pre"]["naive"] = d["x_hat"] * v["inv_std"]  # through x_hat only
    return ctx


def _const(value):
    return value if np.asarray(value).dtype.kind in "iu" else ag.tensor(value)


def _local_step(row: str, upstream: Mapping[str, np.ndarray], values: Mapping) -> np.ndarray | None:
    """dL/d``row`` from the gradients of the ops that use it (``upstream``, by their names),
    through the engine's own rule for each op (its vector-Jacobian product). None if an
    upstream gradient is missing."""
    total = None
    for step in STEPS:
        if row not in step.inputs:
            continue
        cot = np.float64(1.0) if step.name == "loss" else upstream.get(step.name)
        if cot is None:
            return None

        def one(t, step=step):
            return step.fn(*(t if i == row else _const(values[i]) for i in step.inputs))

        _, pull = vjp(one, ag.tensor(np.array(values[row])))
        g = pull(ag.tensor(np.asarray(cot, dtype=np.float64)))[0].numpy()
        total = g if total is None else total + g
    return total


def _row_message(label: str, shape, status: str, sentences: list[str]) -> str:
    head = " " * (_WIDTH - len(label)) + f"{words.shape(shape):<9} {status}"
    return "\n".join([head, *sentences])


def _with_dependencies(rows: list[str], given: dict, found: dict, ref: Reference) -> list[Result]:
    """The table's rows: each Result as a row (name, shape, status, sentence), with a note
    on rows that build on a wrong one."""
    usable = {r: _usable(given.get(r), ref.grads[r].shape) for r in rows}
    out = []
    for r in rows:
        result, status = found[r]
        label, sentences, diagnosis = f"d_{r}", [], result.diagnosis
        if status not in ("right", "not written yet"):
            sentences.append(result.message)
            ups = [s.name for s in STEPS if r in s.inputs and s.name in found]
            bad = [u for u in ups if found[u][1] not in ("right", "not written yet")]
            if bad and status in ("wrong", "close"):
                names = words.listing(f"d_{u}" for u in bad)
                verb = "is" if len(bad) == 1 else "are"
                mine = _local_step(r, {u: usable[u] for u in ups}, ref.values)
                if mine is not None and usable[r] is not None and close(
                        usable[r], mine, tolerance_for(np.float64)):
                    sentences = [f"Off only because {names} {verb}: your step back from "
                                 f"{'it' if len(bad) == 1 else 'them'} is right."]
                    diagnosis = "upstream"
                else:
                    sentences.append(f"It depends on {names}, which {verb} not right yet: "
                                     "fix that first.")
        shape = ref.grads[r].shape
        out.append(Result(result.ok, _row_message(label, shape, status, sentences), name=label,
                          diagnosis=diagnosis, hint=result._hint))
    return out


def _summary(parts: list[Result], statuses: list[str], what: str) -> Result:
    n = len(parts)
    counts = Counter(statuses)
    if counts["right"] == n:
        return Result(True, f"All {n} {what} right.", parts=parts)
    said = "".join(f"; {counts[s]} {s}" for s in ("close", "wrong", NOT_FROM_YOURS,
                                                    "not an array", "not written yet")
                   if counts[s])
    hints = [f"{p.name}: {p._hint.splitlines()[0]}" for p in parts
             if not p.ok and p.diagnosis != "none" and p._hint][:3]
    diagnosis = "none" if counts["not written yet"] == n else "parts"
    return Result(False, f"{counts['right']} of {n} {what} right{said}.", parts=parts,
                  diagnosis=diagnosis, hint="\n".join(hints))


NOT_FROM_YOURS = "not from p"  # the table's word for a row right on the learner's batch only


def _engine(p: Problem) -> dict[str, np.ndarray]:
    """The engine's gradient of every row on ``p``, by the table's names (``d_W1``)."""
    return {f"d_{r}": g for r, g in _through_engine(values_of(p)).grads.items()}


def _reference_of(p: Problem, right: Mapping) -> Reference:
    return Reference(dict(p), {r: np.asarray(right[f"d_{r}"]) for r in ROWS})


def _context(p: Problem, right: Mapping) -> dict[str, dict]:
    """:func:`_contexts` by the table's names, with the tensor and the batch size."""
    return {f"d_{r}": dict(of=r, batch_size=len(p.y), **c)
            for r, c in _contexts(_reference_of(p, right)).items()}


def _table(result: Result, p: Problem, answers: Mapping) -> Result:
    """The kind's ``result`` as the table: each row graded on the learner's own batch, and,
    where it is right there, the kind's verdict on the batches drawn at check time."""
    right = _engine(p)
    ref = _reference_of(p, right)
    ctx = _contexts(ref)
    verdicts = {q.name: q for q in result.parts or (result,)}
    rows = [r for r in ROWS if f"d_{r}" in answers]
    found = {}
    for r in rows:
        own, status = check_one(r, answers[f"d_{r}"], ref.grads[r], batch_size=len(p.y),
                                **ctx[r])
        verdict = verdicts.get(f"d_{r}")
        if own.ok and verdict is not None and not verdict.ok:
            own = Result(False, verdict.message, name=own.name, diagnosis=verdict.diagnosis,
                         hint=verdict._hint)
            status = NOT_FROM_YOURS if verdict.diagnosis == NOT_FROM_P else "wrong"
        found[r] = (own, status)
    given = {r: answers[f"d_{r}"] for r in rows}
    parts = _with_dependencies(rows, given, found, ref)
    table = _summary(parts, [found[r][1] for r in rows], "gradients")
    if table.ok:
        table.message = (f"All {len(rows)} gradients right, on your batch and on "
                         f"{UNSEEN} batches drawn at check time.")
    return table


_check_h1 = gradients(Gradients(
    "H1", ANSWERS, problem, _engine, _context, options={"batch": BATCH}, present=_table),
    """``H1(my_h1)``: your ``my_h1(p) -> {"d_picked": ..., ..., "d_W1": ...}`` (every
    ``d_<name>``, by the table's names) on ``H1.problem()``, then on batches drawn at check
    time: a table, one row per tensor, against the engine's ``.grad``. ``batch=`` runs it
    on ``H1.problem(batch=...)``.""")


register(Exercise("H1", "derivation", {"gradients": _check_h1}, problem=problem))
