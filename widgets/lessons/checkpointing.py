"""Measurements for the checkpointing lessons (10, and the capstone's last section).

One measurement, :func:`measure_step`, serves every table and plot: one training step
(forward, loss, backward) of an ``nn.Sequential`` split into checkpointed segments (or
run by a forward function of your own that places the checkpoints), watched by the
engine's own observers. It returns a :class:`CheckpointedStep`: the bytes saved for
backward after every op event (the curve), its peak, the bytes the finished forward
pass keeps, the multiply-adds per phase, the gradients, and which of the model's
modules ran again during backward.

Built on it:

* :class:`SwishBlock` and :func:`swish_stack`: the layers lesson 10 measures;
* :func:`checkpointed_step`: one step of a Swish stack with ``k`` segments;
* :func:`checkpoint_costs`: no checkpointing vs √n segments vs every layer, per depth;
* :func:`plan_forward`: a forward pass that checkpoints the groups of modules a plan
  names (``[[0, 1], [5]]``: modules 0–1 as one segment, module 5 as another), for the
  capstone's task C1; :func:`plan_problem` says in a sentence what is wrong with a plan.

Plain data out, no plotting: the notebooks draw the pictures.

>>> run = checkpointed_step(depth=9, segments=3)
>>> run.recompute_macs > 0, run.peak < checkpointed_step(depth=9, segments=1).peak
(True, True)
"""

from __future__ import annotations

import importlib
import sys
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import numpy as np

import autograd_core as ag
from autograd_core import nn
from autograd_core.func.checkpoint import checkpoint, checkpoint_sequential, sqrt_segments
from autograd_core.recording.node import Node, Observer, observing
from autograd_core.recording.tensor import Tensor
from autograd_core.sweep.engine import sweep_state
from autograd_core.tools.counting import count_ops
from autograd_core.tools.memory import SavedBytesTracker, activation_bytes

from .. import gate
from .report import Report

__all__ = ["SwishBlock", "swish_stack", "HeldBytes", "CheckpointedStep", "measure_step",
           "checkpointed_step", "CheckpointCost", "checkpoint_costs", "STRATEGIES",
           "plan_forward", "plan_problem", "StepSeen", "MEASURES", "measured_items"]


class SwishBlock(nn.Module):
    """One layer of the checkpointing experiment: h = Linear(x), out = h·σ(h).

    Its weights are float32 (PyTorch's default dtype; the engine's is float64), so the
    lesson's byte counts are 4 per value. It keeps three activations for backward (its
    input, h and σ(h)), as most layers
    of a real network keep several. (With Linear + Tanh, tanh's saved output *is*
    the next Linear's saved input, so a layer keeps one distinct array and
    checkpointing every layer would save nothing.)
    """

    def __init__(self, width: int, generator: ag.Generator | None = None):
        super().__init__()
        self.linear = nn.Linear(width, width, dtype=ag.float32, generator=generator)

    def forward(self, x: Tensor) -> Tensor:
        h = self.linear(x)
        return h * h.sigmoid()


def swish_stack(depth: int, width: int = 64, seed: int = 0) -> nn.Sequential:
    """``depth`` SwishBlock layers of ``width`` units (float32 inputs work), seeded."""
    gen = ag.Generator(seed)
    return nn.Sequential(*[SwishBlock(width, gen) for _ in range(depth)])


class HeldBytes(SavedBytesTracker):
    """A ``SavedBytesTracker`` that also keeps the series: ``held[i]`` is the number of
    bytes saved for backward after event ``i``, and ``phases[i]`` says what the event
    was: ``"forward"`` (an op recorded by the program), ``"backward"`` (a backward
    step) or ``"recompute"`` (a forward op re-run during backward by a checkpoint)."""

    def __init__(self, exclude=()):
        super().__init__(exclude)
        self.held: list[int] = []
        self.phases: list[str] = []

    def on_forward(self, op, node, arrays, out, params) -> None:
        super().on_forward(op, node, arrays, out, params)
        if node is not None:
            in_backward = "backward" in self.phases
            self._record("recompute" if in_backward else "forward")

    def on_backward(self, node, grad_output, grads) -> None:
        super().on_backward(node, grad_output, grads)
        self._record("backward")

    def _record(self, phase: str) -> None:
        self.held.append(self.current)
        self.phases.append(phase)


@dataclass(frozen=True)
class CheckpointedStep:
    """What one forward + backward of :func:`measure_step` measured."""

    segments: int
    held: tuple[int, ...]
    phases: tuple[str, ...]
    peak: int
    kept_after_forward: int
    forward_macs: int
    recompute_macs: int
    backward_macs: int
    grads: tuple[np.ndarray | None, ...]  # one per parameter; None: no gradient reached it
    recomputed: tuple[str, ...]  # names of the model's modules re-run during backward

    @property
    def extra_forward_work(self) -> float:
        """Recomputed multiply-adds as a fraction of the forward pass's."""
        return self.recompute_macs / self.forward_macs if self.forward_macs else 0.0

    @property
    def total_macs(self) -> int:
        """Forward, recomputed and backward multiply-adds together."""
        return self.forward_macs + self.recompute_macs + self.backward_macs

    def grad_difference(self, other: CheckpointedStep) -> float:
        """Largest absolute difference between this step's gradients and ``other``'s (a
        parameter no gradient reached counts as a gradient of zeros)."""
        return max((float(np.max(np.abs(_or_zeros(a, b) - _or_zeros(b, a)), initial=0.0))
                    for a, b in zip(self.grads, other.grads)), default=0.0)

    def same_gradients(self, other: CheckpointedStep) -> bool:
        """True if every gradient equals ``other``'s bit for bit (and reached the same
        parameters)."""
        return len(self.grads) == len(other.grads) and all(
            (a is None and b is None) or (a is not None and b is not None
                                          and np.array_equal(a, b))
            for a, b in zip(self.grads, other.grads))


def _or_zeros(a: np.ndarray | None, like: np.ndarray | None) -> np.ndarray:
    if a is not None:
        return a
    return np.zeros_like(like) if like is not None else np.zeros(())


@dataclass(frozen=True)
class MeasuredPlan:
    """One measured step of a checkpointing plan, beside the plain step it is judged
    against: what a plan exercise measures, for a learner exploring plans."""

    plan: object
    step: CheckpointedStep
    plain: CheckpointedStep

    @property
    def peak(self) -> int:
        return self.step.peak

    @property
    def extra_forward_work(self) -> float:
        return self.step.extra_forward_work

    @property
    def grads(self) -> tuple:
        return self.step.grads

    def same_gradients(self, other: CheckpointedStep | MeasuredPlan | None = None) -> bool:
        """True if every gradient equals ``other``'s (default: the plain run's) bit for bit."""
        other = self.plain if other is None else other
        return self.step.same_gradients(getattr(other, "step", other))


def _sum(out: Tensor) -> Tensor:
    return out.sum()


def measure_step(model: nn.Sequential, x: Tensor, segments: int = 1,
                 loss: Callable[[Tensor], Tensor] = _sum, *,
                 forward: Callable[[nn.Module, Tensor], Tensor] | None = None
                 ) -> CheckpointedStep:
    """Forward ``model`` on ``x`` split into ``segments`` consecutive segments by
    ``checkpoint_sequential`` (every segment but the last is checkpointed;
    ``segments=1`` is the plain run), apply ``loss``, then backward.

    ``forward(model, x)``, if given, runs the forward pass instead (your own placement
    of ``checkpoint(...)`` calls); ``segments`` is then ignored and reported as 0.

    The parameters and the input batch are left out of the byte counts: they are
    alive whether or not anything is recorded. Each parameter's ``.grad`` is reset
    first, so the gradients returned are this step's alone. ``recomputed`` names the
    model's own modules (``model.named_children()``) that ran again during backward:
    the ones a checkpoint rebuilt.

    What the step measured may be what an item asks (a plan for the capstone's CNN, C1;
    for the memory lesson's GPT, A3): that is read from what the engine ran, never from
    how the model or the plan was built (see :class:`StepSeen` and :data:`MEASURES`). A
    measurement the lessons show everyone (the plain step, the plans they measure) is
    free; any other counts as one of the item's tries.

    >>> measure_step(swish_stack(4), ag.randn(2, 64), segments=1).recompute_macs
    0
    """
    # a check measuring quietly may call a learner's forward: what that runs is the learner's
    by_learner = not sys._getframe(1).f_code.co_filename.startswith(_PACKAGE)
    params = list(model.parameters())
    for p in params:
        p.grad = None
    tracker = HeldBytes(exclude=[*params, x])
    watch = _WhatRan()
    phase = ["forward"]
    recomputed: list[str] = []

    def hook(name):
        def pre(module, args):
            if phase[0] == "backward" and name not in recomputed:
                recomputed.append(name)
        return pre

    handles = [child.register_forward_pre_hook(hook(name))
               for name, child in model.named_children()]
    try:
        with count_ops() as work, observing(tracker), observing(watch):
            if forward is not None:
                out = forward(model, x)
            else:
                out = model(x) if segments == 1 else checkpoint_sequential(model, segments, x)
            value = loss(out)
            kept = activation_bytes(value, exclude=[*params, x])
            phase[0] = "backward"
            value.backward()
    finally:
        for handle in handles:
            handle.remove()
    for item, gives in measured_items(watch.seen(model)):
        gate.measured(item, gives, by_learner=by_learner)
    order = [name for name, _ in model.named_children()]
    return CheckpointedStep(0 if forward is not None else segments, tuple(tracker.held),
                            tuple(tracker.phases), tracker.peak, kept, work.forward.macs,
                            work.recompute.macs, work.backward.macs,
                            tuple(None if p.grad is None else p.grad.numpy().copy()
                                  for p in params),
                            tuple(sorted(recomputed, key=order.index)))


_PACKAGE = str(Path(__file__).resolve().parent.parent)  # widgets/: the lessons' own code
_NOT_WORK = frozenset({"cast"})  # ops a recomputation is not told by (a dtype's, only)


@dataclass(frozen=True)
class StepSeen:
    """What the engine ran in one measured step, as far as an item's answer goes.

    ``shapes``: how many parameters of each shape the step ran: the model's, and every
    leaf its backward sent a gradient to, whatever module (or closure) holds it;
    ``reached``: those its backward sent a gradient to. ``recomputed``: what the
    checkpoints re-ran during backward, one tuple per recomputation, each op as (its
    name, its output's shape without the batch axis); () if nothing was. None of them
    depends on class names, a plan's attributes, the dtype or the batch size: only on the
    layers run and the ops the engine really re-ran."""

    model: object
    shapes: Counter
    reached: Counter
    recomputed: tuple

    def runs(self, layout: Counter) -> bool:
        """Whether the step ran parameters of every shape of ``layout``, as many."""
        return _within(layout, self.shapes)

    def is_one_of(self, layout: Counter, shown: frozenset) -> bool:
        """Whether the step was one ``shown``: it re-ran what one of them re-runs (() for
        the plain step) and sent a gradient to every parameter of ``layout``, as they do.
        (A segment cut off the graph re-runs nothing, but it is no plain step.)"""
        return self.recomputed in shown and _within(layout, self.reached)


def _within(layout: Counter, found: Counter) -> bool:
    return all(found[shape] >= n for shape, n in layout.items())


class _WhatRan(Observer):
    """Notes, while a step runs, the leaves its backward reaches and the ops each
    recomputation re-runs (the engine's ``recomputing`` phase, as ``count_ops`` counts
    it)."""

    def __init__(self):
        self.leaves: dict[int, tuple] = {}
        self.segments: list[tuple] = []
        self._open: list[tuple] = []

    def on_forward(self, op, node, arrays, out, params) -> None:
        if sweep_state.recomputing and op.name not in _NOT_WORK:
            shape = getattr(out, "shape", None)
            shapes = tuple(shape)[1:] if shape is not None else tuple(
                tuple(getattr(o, "shape", ()))[1:] for o in out)
            self._open.append((op.name, shapes))

    def on_backward(self, node, grad_output, grads) -> None:
        if self._open:  # a recomputation ends where its segment's backward begins
            self.segments.append(tuple(self._open))
            self._open = []
        for edge, grad in zip(node.edges, grads):
            if edge is not None and grad is not None and edge.__class__ is not Node:
                self.leaves[id(edge)] = tuple(edge.shape)

    def seen(self, model) -> StepSeen:
        segments = [*self.segments, tuple(self._open)] if self._open else self.segments
        shapes = dict(self.leaves)
        try:
            shapes.update((id(p), tuple(p.shape)) for p in model.parameters())
        except Exception:  # noqa: BLE001 - a learner's odd model: its leaves still count
            pass
        return StepSeen(model, Counter(shapes.values()), Counter(self.leaves.values()),
                        tuple(segments))


def recomputation_of(model, x, forward) -> tuple:
    """What ``forward(model, x)``'s checkpoints re-run during backward
    (``StepSeen.recomputed``), with nothing measured or recorded: how the lessons know
    their own plans when a learner measures one of them again."""
    watch = _WhatRan()
    with ag.enable_grad(), observing(watch):
        forward(model, x).sum().backward()
    return watch.seen(model).recomputed


def layout_of(model) -> Counter:
    """How many parameters of each shape ``model`` has (what :meth:`StepSeen.trains`
    looks for)."""
    return Counter(tuple(p.shape) for p in model.parameters())


# C1 asks for a checkpoint plan for the capstone's CNN: a measured step that trained its
# layers (in any dtype, on any batch, in any module: the bytes scale) is one of C1's
# tries, but what lesson 12 measures for everyone to read (the plain step, three even
# segments, its example plan).
C1_EXAMPLE_PLAN = [[7, 8]]
C1_SHOWN_SEGMENTS = (1, 3)


@cache
def _capstone_layout() -> Counter:
    """The capstone CNN's parameter layout."""
    from .digits import make_cnn

    return layout_of(make_cnn())


@cache
def _capstone_shown() -> frozenset:
    """What the plans lesson 12 measures for everyone recompute."""
    from .digits import make_cnn

    def shown():
        x = ag.tensor(np.zeros((2, 1, 8, 8)))
        model = make_cnn(generator=ag.Generator(0), dtype=ag.float64)
        yield recomputation_of(model, x, plan_forward(C1_EXAMPLE_PLAN))
        for segments in C1_SHOWN_SEGMENTS:  # 1: the plain step, which re-runs nothing
            yield recomputation_of(model, x, lambda m, t, k=segments: checkpoint_sequential(
                m, k, t) if k > 1 else m(t))

    return frozenset(shown())


def _plans_the_capstone(seen: StepSeen) -> tuple[str, str] | None:
    """C1's try: a step that ran the capstone CNN's layers, but as lesson 12's own
    measurements do."""
    layout = _capstone_layout()
    if not seen.runs(layout):
        return None
    return None if seen.is_one_of(layout, _capstone_shown()) else ("C1", "try")


def _measures_the_swish_stack(seen: StepSeen) -> tuple[str, str] | None:
    """L8's answer shown: a step of lesson 10's swish stack measured (as
    :func:`checkpointed_step` measures it)."""
    modules = getattr(seen.model, "modules", None)
    return ("L8", "solution") if callable(modules) and any(
        isinstance(m, SwishBlock) for m in modules()) else None


# What a measure_step measures for an item: StepSeen -> (item, "try" | "solution") or None,
# one rule per item (A3's joins from .transformer, the lesson module of its GPT).
MEASURES: list[Callable[[StepSeen], tuple[str, str] | None]] = [_plans_the_capstone,
                                                                 _measures_the_swish_stack]
_RULE_MODULES = ("widgets.lessons.transformer",)


def measured_items(seen: StepSeen) -> list[tuple[str, str]]:
    """The items (and what each is given) a :func:`measure_step` that ran as ``seen``
    answers."""
    for module in _RULE_MODULES:  # every item's rule, whatever the learner imported
        importlib.import_module(module)
    return [found for rule in MEASURES if (found := rule(seen))]


def _swish_batch(batch: int, width: int, seed: int) -> Tensor:
    return ag.randn(batch, width, generator=ag.Generator(seed + 1), dtype=np.float32)


def checkpointed_step(depth: int, segments: int, *, width: int = 64, batch: int = 32,
                      seed: int = 0) -> CheckpointedStep:
    """:func:`measure_step` of ``swish_stack(depth)`` on a seeded float32 batch, the
    sum of its output as the loss.

    >>> checkpointed_step(depth=4, segments=1).recompute_macs
    0

    It measures what L8 asks the learner to work out: before L8 is solved, a measurement
    counts as seeing L8's solution.
    """
    return measure_step(swish_stack(depth, width, seed), _swish_batch(batch, width, seed),
                        segments)  # L8's answer shown: recorded by measure_step


@dataclass(frozen=True)
class CheckpointCost(CheckpointedStep):
    """One (depth, strategy) row of :func:`checkpoint_costs`: the measured step, and how
    far its gradients are from the plain run's."""

    depth: int
    strategy: str
    max_grad_difference: float


STRATEGIES = ("none", "sqrt", "every")


def _segments(strategy: str, depth: int) -> int:
    return {"none": 1, "sqrt": sqrt_segments(depth), "every": depth}[strategy]


def checkpoint_costs(depths: Sequence[int] = (4, 9, 16, 25, 36), width: int = 64,
                     batch: int = 32, seed: int = 0) -> list[CheckpointCost]:
    """For a Swish stack of each depth, one step with no checkpointing, with about
    √depth segments, and with every layer checkpointed; each row carries the measured
    step and how far its gradients are from the plain run's (they should be equal)."""
    rows = []
    for depth in depths:
        steps = {s: checkpointed_step(depth, _segments(s, depth), width=width, batch=batch,
                                      seed=seed) for s in STRATEGIES}
        rows += [CheckpointCost(**vars(step), depth=depth, strategy=s,
                                max_grad_difference=step.grad_difference(steps["none"]))
                 for s, step in steps.items()]
    return rows


# -- a checkpoint plan: which groups of consecutive modules to checkpoint ---------------------

_PLAN_EXAMPLE = ("a plan is a list of groups, each a list of consecutive module indices: "
                 "[[0, 1], [5]] checkpoints modules 0–1 as one segment and module 5 as another")


def _short(value, limit: int = 40) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[:limit - 3] + "..."


def _a(noun: str) -> str:
    return f"{'an' if noun[:1].lower() in 'aeiou' else 'a'} {noun}"


def _is_index(value) -> bool:
    return isinstance(value, int | np.integer) and not isinstance(value, bool | np.bool_)


def plan_problem(plan, n_modules: int) -> str | None:
    """What is wrong with ``plan`` for a model of ``n_modules`` modules, in a sentence, or
    None if it is a valid plan (an empty plan is valid: it checkpoints nothing).

    >>> plan_problem([[0, 1], [5]], 9) is None
    True
    >>> print(plan_problem([[0, 2]], 9))                  # doctest: +NORMALIZE_WHITESPACE
    Group 1 of your plan, [0, 2], skips modules: a checkpoint re-runs one stretch of
    consecutive modules, so list every index from the first to the last, e.g. [0, 1, 2].
    """
    last = n_modules - 1
    if isinstance(plan, np.ndarray):
        return (f"Your plan is a NumPy array; {_PLAN_EXAMPLE}. Write it as a list of lists "
                "(an array's .tolist() gives one).")
    if isinstance(plan, str | bytes | dict | set | frozenset) or not isinstance(
            plan, list | tuple | range):
        return (f"Your plan is {_a(type(plan).__name__)} ({_short(plan)}); {_PLAN_EXAMPLE}.")
    if plan and all(_is_index(g) for g in plan):
        return (f"Your plan {_short(list(plan))} is a flat list of numbers; {_PLAN_EXAMPLE}. "
                "Put the modules of one segment in one inner list.")
    if len(plan) > n_modules:
        return (f"Your plan has {len(plan)} groups, but the model has only {n_modules} modules; "
                f"{_PLAN_EXAMPLE}.")
    previous = None
    for k, group in enumerate(plan, 1):
        if not isinstance(group, list | tuple | range):
            return (f"Group {k} of your plan is {_a(type(group).__name__)} ({_short(group)}), not "
                    f"a list of module indices; {_PLAN_EXAMPLE}.")
        if len(group) == 0:
            return f"Group {k} of your plan is empty: each group names at least one module."
        bad = next((i for i in group if not _is_index(i)), None)
        if bad is not None or any(not _is_index(i) for i in group):
            return (f"Group {k} of your plan holds {_short(bad)}, which is not a module index: "
                    f"the model's modules are numbered 0 to {last}, as print(model) shows.")
        out = [int(i) for i in group if not 0 <= int(i) <= last]
        if out:
            return (f"Group {k} of your plan names module {out[0]}, but the model's modules are "
                    f"numbered 0 to {last}.")
        group = [int(i) for i in group]
        if group != list(range(group[0], group[0] + len(group))):
            return (f"Group {k} of your plan, {_short(group)}, skips modules: a checkpoint "
                    "re-runs one stretch of consecutive modules, so list every index from "
                    f"the first to the last, e.g. {list(range(min(group), max(group) + 1))}.")
        if previous is not None and group[0] <= previous[-1]:
            word = "overlap" if group[0] >= previous[0] else "are out of order"
            return (f"Groups {k - 1} and {k} of your plan, {previous} and {group}, {word}: "
                    "each module is in at most one checkpoint, and the groups follow the "
                    "model's order.")
        previous = group
    return None


def plan_forward(plan) -> Callable[[nn.Module, Tensor], Tensor]:
    """``forward(model, x)``: the modules of ``model`` in order, each group of ``plan``
    inside one ``checkpoint``, the others plainly. An invalid plan raises ``ValueError``
    with :func:`plan_problem`'s sentence.

    >>> run = measure_step(swish_stack(4), ag.randn(2, 64, dtype=ag.float32),
    ...                    forward=plan_forward([[0, 1]]))
    >>> run.recomputed
    ('0', '1')
    """
    def forward(model: nn.Module, x: Tensor) -> Tensor:
        problem = plan_problem(plan, len(model))
        if problem is not None:
            raise ValueError(problem)
        starts = {int(g[0]): int(g[-1]) for g in plan}
        i, h = 0, x
        while i < len(model):
            if i in starts:
                h = checkpoint(model[i:starts[i] + 1], h)
                i = starts[i] + 1
            else:
                h = model[i](h)
                i += 1
        return h

    return forward


@gate.answers("L8")
def checkpointing() -> Report:
    """Saved bytes and recomputed work with and without checkpointing (engine experiment)."""
    results = checkpoint_costs(depths=(4, 16))
    rows = [(c.depth, c.strategy, c.segments, c.peak, f"{c.extra_forward_work:.2f}",
             c.max_grad_difference == 0) for c in results]
    return Report("Gradient checkpointing: memory for compute",
                  "About √n segments cut the bytes kept for backward, at the price of "
                  "recomputing the forward pass of each segment once; the gradients are "
                  "identical.", ("depth", "strategy", "segments", "peak saved bytes",
                                 "recomputed / forward work", "identical gradients"),
                  rows, data={"results": results})
