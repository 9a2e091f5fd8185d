"""Measurements for the checkpointing lessons (10, and the capstone's last section).

One measurement, :func:`measure_step`, serves every table and plot: one training step
(forward, loss, backward) of an ``nn.Sequential`` split into checkpointed segments,
watched by the engine's own observers. It returns a :class:`CheckpointedStep`: the
bytes saved for backward after every op event (the curve), its peak, the bytes the
finished forward pass keeps, the multiply-adds per phase and the gradients.

Built on it:

* :class:`SwishBlock` and :func:`swish_stack`: the layers lesson 10 measures;
* :func:`checkpointed_step`: one step of a Swish stack with ``k`` segments;
* :func:`checkpoint_costs`: no checkpointing vs √n segments vs every layer, per depth.

Plain data out, no plotting: the notebooks draw the pictures.

>>> run = checkpointed_step(depth=9, segments=3)
>>> run.recompute_macs > 0, run.peak < checkpointed_step(depth=9, segments=1).peak
(True, True)
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

import autograd_core as ag
from autograd_core import nn
from autograd_core.counting import count_ops
from autograd_core.function import observing
from autograd_core.memory import SavedBytesTracker, activation_bytes
from autograd_core.tensor import Tensor
from autograd_core.utils.checkpoint import checkpoint_sequential, sqrt_segments

__all__ = ["SwishBlock", "swish_stack", "HeldBytes", "CheckpointedStep", "measure_step",
           "checkpointed_step", "CheckpointCost", "checkpoint_costs", "STRATEGIES"]


class SwishBlock(nn.Module):
    """One layer of the checkpointing experiment: h = Linear(x), out = h·σ(h).

    It keeps three activations for backward (its input, h and σ(h)), as most layers
    of a real network keep several. (With Linear + Tanh, tanh's saved output *is*
    the next Linear's saved input, so a layer keeps one distinct array and
    checkpointing every layer would save nothing.)
    """

    def __init__(self, width: int, generator: ag.Generator | None = None):
        super().__init__()
        self.linear = nn.Linear(width, width, generator=generator)

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
    grads: tuple[np.ndarray, ...]

    @property
    def extra_forward_work(self) -> float:
        """Recomputed multiply-adds as a fraction of the forward pass's."""
        return self.recompute_macs / self.forward_macs if self.forward_macs else 0.0

    @property
    def total_macs(self) -> int:
        """Forward, recomputed and backward multiply-adds together."""
        return self.forward_macs + self.recompute_macs + self.backward_macs

    def grad_difference(self, other: CheckpointedStep) -> float:
        """Largest absolute difference between this step's gradients and ``other``'s."""
        return max((float(np.max(np.abs(a - b), initial=0.0))
                    for a, b in zip(self.grads, other.grads)), default=0.0)


def _sum(out: Tensor) -> Tensor:
    return out.sum()


def measure_step(model: nn.Sequential, x: Tensor, segments: int = 1,
                 loss: Callable[[Tensor], Tensor] = _sum) -> CheckpointedStep:
    """Forward ``model`` on ``x`` split into ``segments`` consecutive segments by
    ``checkpoint_sequential`` (every segment but the last is checkpointed;
    ``segments=1`` is the plain run), apply ``loss``, then backward.

    The parameters and the input batch are left out of the byte counts: they are
    alive whether or not anything is recorded. Each parameter's ``.grad`` is reset
    first, so the gradients returned are this step's alone.

    >>> measure_step(swish_stack(4), ag.randn(2, 64), segments=1).recompute_macs
    0
    """
    params = list(model.parameters())
    for p in params:
        p.grad = None
    tracker = HeldBytes(exclude=[*params, x])
    with count_ops() as work, observing(tracker):
        out = model(x) if segments == 1 else checkpoint_sequential(model, segments, x)
        value = loss(out)
        kept = activation_bytes(value, exclude=[*params, x])
        value.backward()
    return CheckpointedStep(segments, tuple(tracker.held), tuple(tracker.phases), tracker.peak,
                            kept, work.forward.macs, work.recompute.macs, work.backward.macs,
                            tuple(p.grad.numpy().copy() for p in params))


def _swish_batch(batch: int, width: int, seed: int) -> Tensor:
    return ag.randn(batch, width, generator=ag.Generator(seed + 1), dtype=np.float32)


def checkpointed_step(depth: int, segments: int, *, width: int = 64, batch: int = 32,
                      seed: int = 0) -> CheckpointedStep:
    """:func:`measure_step` of ``swish_stack(depth)`` on a seeded float32 batch, the
    sum of its output as the loss.

    >>> checkpointed_step(depth=4, segments=1).recompute_macs
    0
    """
    return measure_step(swish_stack(depth, width, seed), _swish_batch(batch, width, seed),
                        segments)


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
