"""C1, the capstone's first task (lesson 12): a checkpoint plan within a budget.

The capstone's CNN (``make_cnn()``, nine modules, float64) trains on batches of 64. The
learner picks which groups of consecutive modules to checkpoint, ``C1([[i, ..., j], ...])``
(or passes a ``forward(model, x)`` that places ``checkpoint(...)`` calls itself), so that
one training step holds at most ``BUDGET`` bytes for backward at its peak and recomputes
at most ``MAX_EXTRA_WORK`` of a forward pass. The check measures the plan with the engine
(:func:`widgets.lessons.checkpointing.measure_step`: peak bytes, recomputed multiply-adds,
every gradient) on a fresh model and batch, and says, about *that* plan, how far over
budget it is and when its peak happens, which of the modules it re-runs cost the most,
whether its gradients equal the plain run's bit for bit, and what is wrong with a plan it
cannot read. It never names a plan that would fit.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

import autograd_core as ag
from autograd_core import nn
from autograd_core.nn import functional as F
from autograd_core.tools.counting import count_ops

from ... import gate
from ...feedback import words
from ...feedback.result import Result
from ...lessons.checkpointing import (
    C1_EXAMPLE_PLAN,
    CheckpointedStep,
    MeasuredPlan,
    measure_step,
    plan_forward,
    plan_problem,
)
from ...lessons.digits import make_cnn
from .. import learner
from ..exercise import Exercise, register
from ..parts import answers
from ..problems import learner_name, rng

BUDGET = 640_000        # bytes held for backward at the peak of one training step
MAX_EXTRA_WORK = 0.20   # recomputed multiply-adds, as a fraction of one forward pass
BATCH = 64
N_MODULES = 9
EXAMPLE_PLAN = C1_EXAMPLE_PLAN  # the plan lesson 12 measures to show how measuring reads


def _cnn() -> nn.Module:
    """The capstone's CNN, seeded, float64, in training mode (a fresh one every call)."""
    return make_cnn(generator=ag.Generator(0), dtype=ag.float64)


def _plan_batch() -> tuple[ag.Tensor, ag.Tensor]:
    """64 images of 8×8 in [0, 1] and their labels, each in an array of its own. The bytes
    a step keeps depend on the shapes only (a slice would keep its whole parent array), so
    any such batch measures the same."""
    g = rng(120)
    return ag.tensor(g.random((BATCH, 1, 8, 8))), ag.tensor(g.integers(0, 10, BATCH))


@lru_cache(maxsize=4)
def _plain(learner_key: str | None) -> tuple[CheckpointedStep, np.ndarray, dict, dict]:
    """The plain step, its scores, and each module's type and share of the forward's
    multiply-adds (``learner_key`` only keys the cache: the batch depends on it)."""
    x, y = _plan_batch()
    model = _cnn()
    names = [name for name, _ in model.named_children()]
    macs: dict[str, int] = {}
    with count_ops() as work:
        def before(name):
            return lambda module, args: macs.__setitem__(name, -work.forward.macs)

        def after(name):
            return lambda module, args, out: macs.__setitem__(name, macs[name]
                                                              + work.forward.macs)

        handles = [h for name, child in model.named_children()
                   for h in (child.register_forward_pre_hook(before(name)),
                             child.register_forward_hook(after(name)))]
        with ag.no_grad():
            scores = model(x).numpy().copy()
        for handle in handles:
            handle.remove()
    total = sum(macs.values()) or 1
    share = {name: macs[name] / total for name in names}
    kinds = {name: type(child).__name__ for name, child in model.named_children()}
    with gate.quietly():  # C1's own measurement of the plain step
        return measure_step(_cnn(), x, loss=_loss(y)), scores, share, kinds


def _loss(y: ag.Tensor) -> Callable[[ag.Tensor], ag.Tensor]:
    return lambda out: F.cross_entropy(out, y)


def _modules(names) -> str:
    """'module 4' / 'modules 0, 1 and 2' / 'modules 0–3'."""
    names = list(names)
    if len(names) == 1:
        return f"module {names[0]}"
    ints = [int(n) for n in names if n.isdigit()]
    if len(ints) == len(names) and ints == list(range(ints[0], ints[0] + len(ints))):
        return f"modules {ints[0]}–{ints[-1]}"
    return f"modules {', '.join(names[:-1])} and {names[-1]}"


@dataclass(frozen=True)
class PlanRun(MeasuredPlan):
    """One measured training step of a plan: what C1 measures, for exploring."""

    def __repr__(self) -> str:
        rerun = _modules(self.step.recomputed) if self.step.recomputed else "nothing"
        return (f"peak {self.peak:,} bytes held for backward (budget {BUDGET:,}; plain run "
                f"{self.plain.peak:,}), recomputed {self.extra_forward_work:.1%} of a forward "
                f"pass (limit {MAX_EXTRA_WORK:.0%}); re-ran {rerun} during backward")


@dataclass(frozen=True)
class PlanTask:
    """C1's problem: the budget, and a way to measure any plan the way the check does."""

    budget: int = BUDGET
    max_extra_work: float = MAX_EXTRA_WORK

    @property
    def plain(self) -> CheckpointedStep:
        """The step without checkpointing (its peak, its gradients)."""
        return _plain(learner_name())[0]

    def model(self) -> nn.Module:
        """A fresh copy of the model the check measures (seeded, float64, training mode)."""
        return _cnn()

    def measure(self, plan) -> PlanRun:
        """One training step of ``plan`` (a list of groups of module indices, or a
        ``forward(model, x)``) on a fresh model and the check's batch, measured. Each
        measurement counts as one of C1's tries (see ``TRIES``; ``measure_step`` counts
        it, from what the step re-ran), but those lesson 12 shows: the plain step, three
        even segments and ``EXAMPLE_PLAN``, whose measurements are there for everyone."""
        forward = plan if callable(plan) else plan_forward(plan)
        x, y = _plan_batch()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            step = measure_step(_cnn(), x, loss=_loss(y), forward=forward)  # C1's try
        return PlanRun(plan, step, self.plain)

    def __repr__(self) -> str:
        return (f"Checkpoint plan for make_cnn() (modules 0–{N_MODULES - 1}, float64) training "
                f"on a batch of {BATCH}: at most {self.budget:,} bytes held for backward at the "
                f"peak (the plain run's peak is {self.plain.peak:,}), at most "
                f"{self.max_extra_work:.0%} of a forward pass recomputed, and gradients "
                "identical to the plain run's. Measure a plan with .measure(plan).")


def _peak_phase(step: CheckpointedStep) -> str:
    if not step.held:
        return "forward"
    return step.phases[int(np.argmax(step.held))]


def _memory_part(step: CheckpointedStep, plain: CheckpointedStep) -> Result:
    peak = step.peak
    if peak <= BUDGET:
        return Result(True, f"Peak {peak:,} bytes held for backward: within the budget of "
                            f"{BUDGET:,} (the plain run's peak is {plain.peak:,}).",
                      name="memory")
    over = peak - BUDGET
    message = (f"Peak {peak:,} bytes held for backward: {over:,} over the budget of "
               f"{BUDGET:,} ({over / BUDGET:.0%} over).")
    if peak > plain.peak:
        message += (f" That is more than the plain run's {plain.peak:,}: a checkpoint keeps "
                    "its segment's whole float64 input, where some modules alone keep far "
                    "less (a ReLU keeps a 1-byte mask).")
    elif _peak_phase(step) == "forward":
        message += (" Your peak comes at the end of the forward pass: what the modules you "
                    "left unchecked keep is already too much.")
    else:
        message += (" Your peak comes during backward, while a checkpointed segment is "
                    "rebuilt: its activations are held again then, beside what the rest of "
                    "the step still keeps.")
    return Result(False, message, name="memory", diagnosis="over_budget",
                  hint="Look at what each op keeps (MemoryView in section 4): where are the "
                       "big arrays, and are they cheap to recompute?")


def _work_part(step: CheckpointedStep, share: dict, kinds: dict) -> Result:
    work = step.extra_forward_work
    if work <= MAX_EXTRA_WORK:
        return Result(True, f"Recomputes {work:.1%} of a forward pass: within the limit of "
                            f"{MAX_EXTRA_WORK:.0%}.", name="recompute")
    costly = max(step.recomputed, key=lambda n: share.get(n, 0.0), default=None)
    message = f"Recomputes {work:.0%} of a forward pass: over the limit of {MAX_EXTRA_WORK:.0%}."
    if costly is not None and share.get(costly, 0.0) > MAX_EXTRA_WORK:
        message += (f" Module {costly} ({kinds.get(costly, 'module')}) alone does "
                    f"{share[costly]:.0%} of the forward pass's multiply-adds, and your plan "
                    "re-runs it.")
    return Result(False, message, name="recompute", diagnosis="too_much_work",
                  hint="Count each module's multiply-adds (count_ops around one module's "
                       "forward): a checkpoint pays for the work of every module inside it.")


def _gradient_part(step: CheckpointedStep, plain: CheckpointedStep) -> Result:
    names = [name for name, _ in _cnn().named_parameters()]
    owner = [n.split(".")[0] for n in names]
    missing = sorted({o for o, g in zip(owner, step.grads) if g is None}, key=int)
    if missing:
        return Result(False, f"No gradient reached the parameters of {_modules(missing)}: your "
                             "forward cut them off the graph (no_grad, detach, or a checkpoint "
                             "of a function that only closes over the modules, which the engine "
                             "warns about).", name="gradients", diagnosis="no_gradient",
                      hint="Checkpoint the modules themselves, checkpoint(model[i:j], h), so "
                           "their parameters become the checkpoint's inputs.")
    differ = sorted({o for o, a, b in zip(owner, step.grads, plain.grads)
                     if not np.array_equal(a, b)}, key=int)
    if differ:
        return Result(False, f"The gradients of {_modules(differ)} differ from the plain run's, "
                             f"by up to {words.number(step.grad_difference(plain))}. "
                             "Recomputation repeats the same ops on the same values, so it gives "
                             "the same bits; a difference means your forward computed something "
                             "else along the way.", name="gradients", diagnosis="gradients_differ",
                      hint="Run every module once, in order, in training mode; put only "
                           "checkpoint(...) around groups of them.")
    return Result(True, f"Gradients identical to the plain run's, bit for bit, for all "
                        f"{len(names)} parameters.", name="gradients")


def _read_plan(plan) -> tuple[Callable | None, Result | None]:
    """The forward a plan stands for, or the Result that says why there is none."""
    if plan is None or plan is Ellipsis:
        return None, Result(False, "plan is still a placeholder, so there is nothing to check "
                                   "yet: replace it with your plan, a list of groups of "
                                   "consecutive module indices such as [[7, 8]].",
                            diagnosis="none")
    if callable(plan) and not isinstance(plan, type):
        return plan, None
    problem = plan_problem(plan, N_MODULES)
    if problem is not None:
        return None, Result(False, problem, diagnosis="format",
                            hint="Write the plan as a list of lists of module indices, in the "
                                 "model's order: [[first, ..., last], ...].")
    return plan_forward(plan), None


def _nothing_checkpointed(step: CheckpointedStep) -> Result:
    return Result(False, f"Your plan checkpoints nothing: no module ran again during backward, "
                         f"so this is the plain run, peak {step.peak:,} bytes against a budget "
                         f"of {BUDGET:,}.", diagnosis="no_checkpoint",
                  hint="Name at least one group of consecutive modules to checkpoint, e.g. "
                       "[[7, 8]], and measure what it changes.")


def _scores_problem(out, scores: np.ndarray) -> Result | None:
    """A sentence if the forward's output is not the model's scores."""
    if not isinstance(out, ag.Tensor):
        return Result(False, f"Your forward returned {words.a_type(out)}, not a tensor: it "
                             f"must return the model's output, the ({BATCH}, 10) class scores.",
                      diagnosis="type")
    if out.shape != scores.shape:
        return Result(False, f"Your forward returned shape {words.shape(out.shape)}; the model's "
                             f"output is {words.shape(scores.shape)}: run all {N_MODULES} "
                             "modules, in order.", diagnosis="shape")
    gap = np.abs(np.asarray(out.numpy(), dtype=np.float64) - scores)
    if not np.all(np.isfinite(gap)) or gap.max() > 1e-9:
        return Result(False, "Your forward's scores are not the model's: run each of its "
                             f"{N_MODULES} modules once, in order, in training mode. "
                             "Checkpointing changes what is kept, not what is computed.",
                      diagnosis="forward_values")
    return None


@answers("memory", "recompute", "gradients")
def _check_c1(plan=None) -> Result:
    """``C1(plan)``: a list of groups of consecutive module indices to checkpoint (or your
    own ``forward(model, x)``), measured on one training step of the capstone's CNN.

    >>> _check_c1([[7, 8]]).parts[0].name                  # doctest: +SKIP
    'memory'
    """
    forward, problem = _read_plan(plan)
    if problem is not None:
        return problem
    plain, scores, share, kinds = _plain(learner_name())
    x, y = _plan_batch()
    what = getattr(plan, "__name__", "forward") if callable(plan) else ""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the sentences below say what a warning would
        try:
            with ag.no_grad():
                out = learner.call(forward, _cnn(), x, what=what)
        except learner.LearnerCodeFailed as exc:
            return learner.failed(exc)
        wrong = _scores_problem(out, scores)
        if wrong is not None:
            return wrong
        try:
            with gate.quietly():  # C1's own check records its result
                step = learner.call(measure_step, _cnn(), x, loss=_loss(y),
                                    forward=forward, what=what)
        except learner.LearnerCodeFailed as exc:
            return learner.failed(exc)
    gradients = _gradient_part(step, plain)
    if not step.recomputed and step.recompute_macs == 0 and gradients.ok:
        return _nothing_checkpointed(step)
    return Result.combine([_memory_part(step, plain), _work_part(step, share, kinds), gradients])



# Plans measured or checked before one fits: a few to reason from the measurements; all
# 45 one-group plans, looped over, are a search.
TRIES = 8
register(Exercise("C1", "prediction", {"plan": _check_c1}, problem=PlanTask, tries=TRIES))
