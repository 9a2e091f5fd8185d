"""Measurements for the checkpointing lesson (notebooks/10_checkpointing.ipynb).

One training step (forward, then backward) of a stack of
:class:`~autograd_core.experiments.SwishBlock` layers, split into any number of
checkpointed segments, measured with the engine's own observers:

* :class:`HeldBytes`: the bytes saved for backward after *every* op event (the
  engine's ``SavedBytesTracker`` keeps only the peak; a plot needs the whole curve);
* :func:`checkpointed_step`: one step with ``k`` segments (``k=1``: no checkpointing),
  returning the curve, its peak, the multiply-adds per phase and the gradients.

Plain data out, no plotting: the notebook draws the pictures.

>>> run = checkpointed_step(depth=9, segments=3)
>>> run.recompute_macs > 0, run.peak < checkpointed_step(depth=9, segments=1).peak
(True, True)
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from autograd_core import creation, nn
from autograd_core.counting import count_ops
from autograd_core.experiments import SwishBlock
from autograd_core.function import observing
from autograd_core.memory import SavedBytesTracker
from autograd_core.utils.checkpoint import checkpoint_sequential

__all__ = ["HeldBytes", "CheckpointedStep", "checkpointed_step", "swish_stack"]


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
    """What one forward + backward of :func:`checkpointed_step` measured."""

    depth: int
    segments: int
    held: tuple[int, ...]
    phases: tuple[str, ...]
    forward_macs: int
    recompute_macs: int
    backward_macs: int
    grads: tuple[np.ndarray, ...]

    @property
    def peak(self) -> int:
        """Largest number of bytes saved for backward at any moment of the step."""
        return max(self.held, default=0)

    @property
    def extra_forward_work(self) -> float:
        """Recomputed multiply-adds as a fraction of the forward pass's."""
        return self.recompute_macs / self.forward_macs if self.forward_macs else 0.0

    @property
    def total_macs(self) -> int:
        return self.forward_macs + self.recompute_macs + self.backward_macs


def swish_stack(depth: int, width: int = 64, seed: int = 0) -> nn.Sequential:
    """``depth`` SwishBlock layers of ``width`` units (float32), seeded."""
    gen = creation.Generator(seed)
    return nn.Sequential(*[SwishBlock(width, gen) for _ in range(depth)])


def checkpointed_step(depth: int, segments: int, *, width: int = 64, batch: int = 32,
                      seed: int = 0) -> CheckpointedStep:
    """Forward and backward of ``swish_stack(depth)`` on a seeded batch, with the layers
    split into ``segments`` consecutive segments by ``checkpoint_sequential`` (every
    segment but the last is checkpointed; ``segments=1`` is the plain run).

    The parameters and the input batch are left out of the byte counts: they are
    alive whether or not anything is recorded.

    >>> checkpointed_step(depth=4, segments=1).recompute_macs
    0
    """
    model = swish_stack(depth, width, seed)
    x = creation.randn(batch, width, generator=creation.Generator(seed + 1), dtype=np.float32)
    params = list(model.parameters())
    tracker = HeldBytes(exclude=[*params, x])
    with count_ops() as work, observing(tracker):
        out = model(x) if segments == 1 else checkpoint_sequential(model, segments, x)
        out.sum().backward()
    return CheckpointedStep(depth, segments, tuple(tracker.held), tuple(tracker.phases),
                            work.forward.macs, work.recompute.macs, work.backward.macs,
                            tuple(p.grad.numpy().copy() for p in params))
