"""H4 and the lesson's plot: lesson 13's network trained with the learner's own gradients,
beside the same training with the engine's.

``train(my_gradients)`` trains the network twice from the same start on the same seeded
batches, with the engine's gradients and with the learner's, for the lesson's plot and H4.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping
from dataclasses import dataclass

import numpy as np

import autograd_core as ag
from autograd_core import Tensor, optim

from ...feedback import words
from ...feedback.result import Result
from ...figures import DescribedFigure
from .. import learner
from ..exercise import Exercise, register
from ..parts import answers, one_answer
from ..problems import Problem
from .grading import _tensor_sentence, _usable, check_one
from .network import (
    EPS,
    INTERMEDIATES,
    PARAMS,
    ROWS,
    TRAIN_STEPS,
    _digits,
    _forward,
    _frozen,
    _key,
    _learner_reference,
    _setup,
)
from .table import _contexts, _row_message, _summary, _with_dependencies

LEARNING_RATE = 0.1
CURVE_TOLERANCE = 1e-9  # your loss curve against the engine's, relative
H4_PARTS = (*(f"d_{p}" for p in PARAMS), "loss_curve")


def _values_of(t: dict) -> Problem:
    """One batch's forward values as read-only arrays, the argument of your gradients."""
    return Problem("One batch's forward values (as H1.problem()).", x=t["x"].numpy(), y=t["y"],
                   eps=EPS, **{k: t[k].numpy() for k in (*PARAMS, *INTERMEDIATES)},
                   loss=t["loss"].item())


def _read_gradients(out) -> dict | str:
    """``{"W1": array, ...}`` from what the learner's function returned (the five parameters,
    and any intermediate of ``ROWS`` it also returns), or a sentence."""
    if out is None:
        return "your my_gradients returned None"
    if not isinstance(out, Mapping):
        return (f"your my_gradients returned {words.short(out, 40)}; it returns a dict, "
                "{'W1': d_W1, 'gamma': d_gamma, ...}")
    found = {r: out.get(r, out.get(f"d_{r}")) for r in ROWS if r in out or f"d_{r}" in out}
    return {**found, **{p: found.get(p) for p in PARAMS}}


@dataclass
class TrainingRun:
    """Losses of the same network trained twice from the same start on the same batches:
    with the engine's gradients, and with yours (None if yours could not train)."""

    engine: np.ndarray
    yours: np.ndarray | None
    note: str

    def __repr__(self) -> str:
        return self.note

    def gaps(self) -> np.ndarray:
        """Your loss against the engine's at each step both curves have, relative (the
        difference over the engine's loss, or over 1 where that is smaller)."""
        n = min(len(self.yours), len(self.engine))
        engine = self.engine[:n]
        return np.abs(self.yours[:n] - engine) / np.maximum(1, np.abs(engine))

    @property
    def difference(self) -> float:
        """The largest difference between your loss and the engine's at a step, relative
        (over the steps of both; nan without your curve)."""
        return float("nan") if self.yours is None else float(np.max(self.gaps()))

    @property
    def matches(self) -> bool:
        """Whether your curve is the engine's, step by step (relative 1e-9)."""
        if self.yours is None or len(self.yours) != len(self.engine):
            return False
        return bool(np.all(self.gaps() <= CURVE_TOLERANCE))

    def first_difference(self) -> int:
        """The first step where your loss is not the engine's (relative 1e-9); the number
        of steps both curves have if there is none."""
        off = self.gaps() > CURVE_TOLERANCE
        return int(np.argmax(off)) if off.any() else len(off)

    def plot(self) -> DescribedFigure:
        """Both loss curves, one point per step (a matplotlib Figure, no pyplot), with a
        text alternative saying what they show (``fig.alt``, see :meth:`alt`)."""
        from matplotlib.backends.backend_agg import FigureCanvasAgg

        fig = DescribedFigure(figsize=(7, 3), dpi=100)
        FigureCanvasAgg(fig)
        ax = fig.add_subplot()
        steps = np.arange(len(self.engine))
        ax.plot(steps, self.engine, color="C0", lw=3, alpha=0.45,
                label="the engine's gradients (loss.backward())")
        if self.yours is not None:
            ax.plot(steps[:len(self.yours)], self.yours, color="C1", lw=1, ls="--",
                    label="your gradients")
        ax.set_xlabel("training step (one batch of 32 each)")
        ax.set_ylabel("loss on the batch")
        ax.set_title("same start, same batches" + ("" if self.yours is not None
                                                    else ": yours is not trained yet"))
        ax.legend(fontsize=8)
        fig.tight_layout()
        fig.alt = self.alt()
        return fig

    def alt(self) -> str:
        """What :meth:`plot` shows, in words, from the losses: each curve from its first
        step to its last, and how yours compares with the engine's.

        >>> TrainingRun(np.array([2.5, 1.0, 0.5]), None, "").alt()   # doctest: +ELLIPSIS
        "A line chart of the loss at each of 3 training steps, with the engine's gradients \
(loss.backward()) only: it falls from 2.5 to 0.5. Your curve is not drawn: ..."
        """
        chart = f"A line chart of the loss at each of {len(self.engine)} training steps"
        engine = "the engine's gradients (loss.backward())"
        if self.yours is None:
            return (f"{chart}, with {engine} only: it {_course(self.engine)}. Your curve is "
                    "not drawn: your gradients have not trained the network yet.")
        said = (f"{chart}, two curves from the same start on the same batches: with {engine} "
                f"it {_course(self.engine)}; with yours it {_course(self.yours)}.")
        n = min(len(self.yours), len(self.engine))
        if self.matches:
            return f"{said} The two curves are one: " + (
                f"they differ by at most {self.difference:.0e} (relative)." if self.difference
                else "the same loss at every step.")
        first = self.first_difference()
        if first == n:
            return f"{said} Your curve stops at step {n}, on the engine's until then."
        ends = "below" if self.yours[-1] < self.engine[n - 1] else "above"
        return f"{said} Your curve leaves the engine's at step {first} and ends {ends} it."


def _course(losses: np.ndarray) -> str:
    """'falls from 2.52 to 0.314' (or rises): a curve from its first step to its last."""
    verb = "falls" if losses[-1] < losses[0] else "rises"
    return f"{verb} from {losses[0]:.3g} to {losses[-1]:.3g}"


@functools.lru_cache(maxsize=4)
def _engine_curve(key: int, steps: int, lr: float) -> np.ndarray:
    start, batches = _setup(key, max(steps, TRAIN_STEPS))
    x, y = _digits()
    params = {k: ag.tensor(v.copy(), requires_grad=True) for k, v in start.items()}
    opt = optim.SGD(list(params.values()), lr=lr)
    losses = []
    for rows in batches[:steps]:
        loss = _forward({"x": x[rows], "y": y[rows], **params}, keep=False)["loss"]
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return _frozen(losses)


def train(my_gradients: Callable | None = None, steps: int = TRAIN_STEPS,
          lr: float = LEARNING_RATE) -> TrainingRun:
    """Plain SGD (``p -= lr * grad``) from H1's starting parameters on the same seeded
    batches, once with the engine's gradients and once with ``my_gradients(f)`` (``f``: one
    batch's forward values, like ``H1.problem()``; it returns ``{"W1": ..., "gamma": ...,
    "beta": ..., "W2": ..., "b2": ...}``). Nothing raises: a function that is not written
    yet, or fails, gives a sentence and the engine's curve alone.

    >>> run = train(my_gradients); print(run); run.plot()   # doctest: +SKIP
    """
    key = _key()
    engine = _engine_curve(key, steps, lr)
    if my_gradients is None:
        return TrainingRun(engine, None, _unfinished("my_gradients is None"))
    start, batches = _setup(key, max(steps, TRAIN_STEPS))
    x, y = _digits()
    params = {k: v.copy() for k, v in start.items()}
    losses = []
    for step, rows in enumerate(batches[:steps]):
        with ag.no_grad():
            t = _forward({"x": x[rows], "y": y[rows], **params}, keep=False)
        losses.append(t["loss"].item())
        try:
            grads = _read_gradients(learner.by_hand(my_gradients, _values_of(t),
                                                 what="my_gradients"))
        except learner.LearnerCodeFailed as exc:
            return TrainingRun(engine, None, _unfinished(exc.sentence, step))
        problem_ = grads if isinstance(grads, str) else _bad_gradient(grads, params)
        if problem_:
            return TrainingRun(engine, None, _unfinished(problem_, step))
        for k in PARAMS:
            params[k] = params[k] - lr * grads[k]
    yours = np.array(losses)
    run = TrainingRun(engine, yours, "")
    run.note = (f"{steps} steps of SGD (lr {lr}) from the same start on the same batches. "
                f"Loss at the last step: yours {yours[-1]:.4f}, the engine's {engine[-1]:.4f}; "
                f"the curves differ by at most {run.difference:.0e} (relative): "
                + ("the same curve." if run.matches else "not the same curve."))
    return run


def _bad_gradient(grads: dict, params: dict) -> str:
    """A sentence if a gradient cannot update its parameter ('' if all can)."""
    missing = [f"d_{k}" for k in PARAMS if grads[k] is None]
    if missing:
        return f"{words.listing(missing)} {'is' if len(missing) == 1 else 'are'} still None"
    for k in PARAMS:
        if isinstance(grads[k], Tensor):
            return _tensor_sentence(f"d_{k}")[:-1]
        a = _usable(grads[k], params[k].shape)
        if a is None:
            return f"d_{k} is not a finite array of {k}'s shape {words.shape(params[k].shape)}"
        grads[k] = a
    return ""


def _unfinished(why: str, step: int | None = None) -> str:
    at = "" if not step else f" (at step {step})"
    why = why[:1].lower() + why[1:]
    return (f"Your loss curve is not drawn: {why.rstrip('.')}{at}. Finish exercise H4 above "
            "(it uses your bn_backward and ce_backward from H2 and H3), then run this cell "
            "again. The plot shows the engine's curve alone for now.")


@answers(*H4_PARTS)
@one_answer("my_gradients")
def _check_h4(my_gradients: Callable) -> Result:
    """``H4(my_gradients)``: the five parameter gradients your function returns for the
    lesson's batch (and any intermediate's it returns too, by name: ``"h"``, ...), then your
    whole loss curve against the engine's."""
    if my_gradients is None or not callable(my_gradients):
        try:
            learner.by_hand(my_gradients, what="my_gradients")
        except learner.LearnerCodeFailed as exc:
            return learner.failed(exc)
    ref = _learner_reference()
    with ag.no_grad():
        t = _forward({k: ref.values[k] for k in ("x", "y", *PARAMS)}, keep=False)
    try:
        out = learner.by_hand(my_gradients, _values_of(t), what="my_gradients")
    except learner.LearnerCodeFailed as exc:
        return learner.failed(exc)
    grads = _read_gradients(out)
    if isinstance(grads, str):
        return Result(False, grads[:1].upper() + grads[1:] + ".",
                      diagnosis="none" if out is None else "type")
    ctx = _contexts(ref)
    rows = [r for r in ROWS if r in grads]
    found = {r: check_one(r, grads[r], ref.grads[r], **ctx[r]) for r in rows}
    parts = _with_dependencies(rows, grads, found, ref)
    statuses = [found[r][1] for r in rows]
    if all(found[p][1] == "right" for p in PARAMS):
        run = train(my_gradients)
        curve = Result(run.matches, _row_message("loss_curve", (TRAIN_STEPS,), "right" if
                                                 run.matches else "wrong", [] if run.matches
                                                 else [_departure(run)]), name="loss_curve",
                       diagnosis="correct" if run.matches else "curve")
        statuses.append("right" if run.matches else "wrong")
    else:
        curve = Result(False, _row_message("loss_curve", (TRAIN_STEPS,), "not written yet",
                                           ["Trained once all five gradients are right."]),
                       name="loss_curve", diagnosis="none")
        statuses.append("not written yet")
    return _summary([*parts, curve], statuses, "parts")


def _departure(run: TrainingRun) -> str:
    if run.yours is None:
        return run.note
    return (f"Your curve leaves the engine's at step {run.first_difference()}: your gradients "
            "are right on the lesson's batch but not on that step's. Is something of the "
            "first batch (its labels, its size, an array from H1) built into your function?")



register(Exercise("H4", "derivation", {"train": _check_h4}))
