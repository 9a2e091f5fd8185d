"""H1: the gradient of every intermediate of lesson 13's network, checked all at once as a
table, one row per tensor, against the engine's ``.grad``.

A row whose upstream row is wrong says so, and says whether its own step back is right: the
engine's vector-Jacobian product of that one op (``autograd_core.func.vjp``), applied to the
learner's own upstream arrays. H4 shows its parameters in the same table.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

import autograd_core as ag
from autograd_core.func import vjp

from ...feedback import words
from ...feedback.context import Mistake
from ...feedback.result import Result
from ...feedback.tolerance import close, tolerance_for
from ..exercise import Exercise, register
from ..parts import answers, named_answers
from .closed_forms import _bn_mistakes
from .grading import _usable, check_one
from .network import BATCH, ROWS, STEPS, Reference, _learner_reference, problem

ANSWERS = tuple(f"d_{r}" for r in ROWS)
_WIDTH = max(map(len, ANSWERS))


def _contexts(ref: Reference) -> dict[str, dict]:
    """What ``check_gradient`` may use, per row, to name a mistake (from engine values)."""
    v, d, n = ref.values, ref.grads, BATCH
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
    said = "".join(f"; {counts[s]} {s}" for s in ("close", "wrong", "not an array",
                                                    "not written yet") if counts[s])
    hints = [f"{p.name}: {p._hint.splitlines()[0]}" for p in parts
             if not p.ok and p.diagnosis != "none" and p._hint][:3]
    diagnosis = "none" if counts["not written yet"] == n else "parts"
    return Result(False, f"{counts['right']} of {n} {what} right{said}.", parts=parts,
                  diagnosis=diagnosis, hint="\n".join(hints))


@dataclass(frozen=True)
class _Given:
    answers: dict
    rows: list[str]


def _h1_answers(answers, named) -> _Given | Result:
    if answers is None and not named:
        return Result(False, "Nothing to check yet: pass your gradients by name "
                             "(H1(d_picked=..., d_W1=...)), or all of them at once with "
                             "H1(globals()).", diagnosis="none")
    if answers is not None and not isinstance(answers, Mapping):
        return Result(False, f"H1 takes your gradients by name (H1(d_W1=...)) or one dict of "
                             f"them (H1(globals())), not {words.short(answers, 40)}.",
                      diagnosis="call")
    if answers is None:
        problem_ = named_answers(named, ANSWERS)
        if problem_ is not None:
            return problem_
        return _Given({a[2:]: v for a, v in named.items()}, [r for r in ROWS
                                                             if f"d_{r}" in named])
    merged = {**answers, **named}
    if not any(a in merged for a in ANSWERS):
        return Result(False, "No gradient found in what you passed: name your arrays d_picked, "
                             "d_log_probs, ..., d_W1 (H1.question lists them all).",
                      diagnosis="none")
    return _Given({a[2:]: merged.get(a) for a in ANSWERS}, list(ROWS))


@answers(*ANSWERS)
def _check_h1(answers: Mapping | None = None, /, **named) -> Result:
    """``H1(d_picked=..., ..., d_W1=...)`` (any of them), or ``H1(globals())`` to check every
    ``d_<name>`` defined: a table, one row per tensor, against the engine's ``.grad``."""
    given = _h1_answers(answers, named)
    if isinstance(given, Result):
        return given
    ref = _learner_reference()
    ctx = _contexts(ref)
    found = {r: check_one(r, given.answers.get(r), ref.grads[r], **ctx[r]) for r in given.rows}
    parts = _with_dependencies(given.rows, given.answers, found, ref)
    return _summary(parts, [found[r][1] for r in given.rows], "gradients")



register(Exercise("H1", "derivation", {"gradients": _check_h1}, problem=problem))
