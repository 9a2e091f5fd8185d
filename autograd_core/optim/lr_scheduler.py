"""Learning-rate schedules, with PyTorch's names and values (``torch.optim.lr_scheduler``).

A scheduler owns no learning rate: it writes ``group["lr"]`` of its optimizer's
parameter groups. Building one remembers each group's lr as ``group["initial_lr"]``
(the scheduler's ``base_lrs``) and sets the lr of step 0; each ``step()``, called after
``optimizer.step()``, moves to the next value. ``last_epoch`` counts the steps taken
(0 after construction), ``get_last_lr()`` lists the lrs set last, one per group.

As in PyTorch, ``LinearLR`` and ``CosineAnnealingLR`` compute the next lr from the
current ``group["lr"]`` (a *recursive* form, so a change made to the lr from outside
carries on), and have a *closed form* from ``base_lrs`` that ``SequentialLR`` uses when
it hands over to the next scheduler at a milestone. ``LambdaLR`` is closed-form only.

>>> import autograd_core as ag
>>> from autograd_core import nn, optim
>>> opt = optim.SGD(nn.Linear(3, 1).parameters(), lr=0.1)
>>> warmup = optim.lr_scheduler.LinearLR(opt, start_factor=0.25, total_iters=3)
>>> cosine = optim.lr_scheduler.CosineAnnealingLR(opt, T_max=10)
>>> sched = optim.lr_scheduler.SequentialLR(opt, [warmup, cosine], milestones=[3])
>>> lrs = []
>>> for _ in range(5):
...     lrs.append(round(sched.get_last_lr()[0], 4))
...     opt.step(); sched.step()
>>> lrs
[0.025, 0.05, 0.075, 0.1, 0.0976]

``cosine_with_warmup`` is this project's convenience (PyTorch has no such function):
the same warm-up-then-cosine shape as a single ``LambdaLR``.

Not supported: PyTorch's deprecated ``step(epoch)`` argument, and tensor learning rates.
"""

from __future__ import annotations

import copy
import math
import types
import warnings
from bisect import bisect_right
from collections.abc import Callable, Sequence
from typing import Any

from .. import errors
from .optimizer import Optimizer

__all__ = ["LRScheduler", "LambdaLR", "StepLR", "LinearLR", "CosineAnnealingLR",
           "SequentialLR", "cosine_with_warmup"]


class LRScheduler:
    """Base class: a subclass defines ``get_lr()`` (the lrs of step ``last_epoch``, one
    per group), and optionally ``_get_closed_form_lr()`` (the same from ``base_lrs``
    alone).

    ``last_epoch=-1`` (the default) starts a schedule; a value >= 0 resumes one, and
    needs the ``initial_lr`` that an earlier scheduler left in each group (KeyError
    otherwise, as in PyTorch).
    """

    def __init__(self, optimizer: Optimizer, last_epoch: int = -1) -> None:
        if not isinstance(optimizer, Optimizer):
            raise errors.not_an_optimizer(optimizer)
        self.optimizer = optimizer
        if last_epoch == -1:
            for group in optimizer.param_groups:
                group.setdefault("initial_lr", group["lr"])
        else:
            for i, group in enumerate(optimizer.param_groups):
                if "initial_lr" not in group:
                    raise errors.missing_initial_lr(i)
        self.base_lrs: list[float] = [group["initial_lr"] for group in optimizer.param_groups]
        self.last_epoch = last_epoch
        self._get_lr_called_within_step = False
        self._is_initial = False
        self._initial_step()

    def _initial_step(self) -> None:
        """Set the lrs of the first step (``last_epoch`` goes from -1 to 0)."""
        self._step_count = 0
        self._is_initial = True
        try:
            self.step()
        finally:
            self._is_initial = False

    def step(self) -> None:
        """Move to the next step of the schedule and write its lr into every group.
        Call it after ``optimizer.step()`` (PyTorch warns otherwise, and so does this)."""
        if self._step_count == 1 and not getattr(self.optimizer, "_opt_called", False):
            warnings.warn(errors.scheduler_before_optimizer(), stacklevel=2)
        self._step_count += 1
        self._update_lr()

    def _update_lr(self, epoch: int | None = None) -> None:
        """The next step's lrs (recursive form), or those of step ``epoch`` (closed form
        where the scheduler has one), written into the groups."""
        self._get_lr_called_within_step = True
        try:
            if epoch is None:
                self.last_epoch += 1
                values = self.get_lr()
            else:
                self.last_epoch = epoch
                closed_form = getattr(self, "_get_closed_form_lr", None)
                values = closed_form() if closed_form is not None else self.get_lr()
        finally:
            self._get_lr_called_within_step = False
        for group, lr in zip(self.optimizer.param_groups, values, strict=True):
            group["lr"] = lr
        self._last_lr = [group["lr"] for group in self.optimizer.param_groups]

    def get_lr(self) -> list[float]:
        """The lrs of step ``last_epoch``, one per group (``step()`` calls it; to read the
        current lrs use ``get_last_lr()``)."""
        raise NotImplementedError

    def _warn_if_outside_step(self) -> None:
        if not self._get_lr_called_within_step:
            warnings.warn(errors.get_lr_outside_step(), stacklevel=3)

    def get_last_lr(self) -> list[float]:
        """The lrs this scheduler set last, one per parameter group."""
        return self._last_lr

    def state_dict(self) -> dict[str, Any]:
        """Everything but the optimizer (``last_epoch``, ``base_lrs``, the options...),
        copied; save it with the optimizer's ``state_dict``."""
        return self._attributes_but("optimizer")

    def _attributes_but(self, *names: str) -> dict[str, Any]:
        return {key: copy.deepcopy(value) for key, value in self.__dict__.items()
                if key not in names}

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        """Restore what ``state_dict`` returned."""
        self.__dict__.update(copy.deepcopy(state_dict))


class LambdaLR(LRScheduler):
    """lr = initial_lr * lr_lambda(last_epoch): one function for every group, or a list
    of one function per group.

    >>> sched = LambdaLR(opt, lr_lambda=lambda epoch: 0.95 ** epoch)    # doctest: +SKIP
    """

    def __init__(self, optimizer: Optimizer,
                 lr_lambda: Callable[[int], float] | Sequence[Callable[[int], float]],
                 last_epoch: int = -1) -> None:
        if not isinstance(optimizer, Optimizer):
            raise errors.not_an_optimizer(optimizer)
        self.optimizer = optimizer
        groups = len(optimizer.param_groups)
        if isinstance(lr_lambda, (list, tuple)):
            if len(lr_lambda) != groups:
                raise errors.lr_lambda_count(groups, len(lr_lambda))
            self.lr_lambdas = list(lr_lambda)
        else:
            self.lr_lambdas = [lr_lambda] * groups
        for fn in self.lr_lambdas:
            if not callable(fn):
                raise errors.not_callable("LambdaLR", "lr_lambda", fn)
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[float]:
        self._warn_if_outside_step()
        return [base_lr * fn(self.last_epoch)
                for fn, base_lr in zip(self.lr_lambdas, self.base_lrs, strict=True)]

    def state_dict(self) -> dict[str, Any]:
        """As ``LRScheduler.state_dict``; the functions are not saved, only the
        attributes of those that are callable objects (as PyTorch does)."""
        state = self._attributes_but("optimizer", "lr_lambdas")
        state["lr_lambdas"] = [None if isinstance(fn, types.FunctionType)
                               else copy.deepcopy(fn.__dict__) for fn in self.lr_lambdas]
        return state

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        state = dict(state_dict)
        saved = state.pop("lr_lambdas")
        super().load_state_dict(state)
        for fn, attributes in zip(self.lr_lambdas, saved):
            if attributes is not None:
                fn.__dict__.update(copy.deepcopy(attributes))


class StepLR(LRScheduler):
    """lr = initial_lr * gamma ** (last_epoch // step_size): the lr multiplied by
    ``gamma`` every ``step_size`` steps (recursive from the current lr, as PyTorch's).

    >>> sched = StepLR(opt, step_size=1, gamma=0.7)    # doctest: +SKIP
    """

    def __init__(self, optimizer: Optimizer, step_size: int, gamma: float = 0.1,
                 last_epoch: int = -1) -> None:
        if isinstance(step_size, bool) or not isinstance(step_size, int) or step_size < 1:
            raise errors.step_size(step_size)
        self.step_size = step_size
        self.gamma = gamma
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[float]:
        self._warn_if_outside_step()
        groups = self.optimizer.param_groups
        if self.last_epoch == 0 or self.last_epoch % self.step_size != 0:
            return [group["lr"] for group in groups]
        return [group["lr"] * self.gamma for group in groups]

    def _get_closed_form_lr(self) -> list[float]:
        return [base_lr * self.gamma ** (self.last_epoch // self.step_size)
                for base_lr in self.base_lrs]


class LinearLR(LRScheduler):
    """lr = initial_lr * factor, the factor going linearly from ``start_factor`` (step 0)
    to ``end_factor`` (step ``total_iters``), then staying there.

    >>> warmup = LinearLR(opt, start_factor=0.01, total_iters=100)    # doctest: +SKIP
    """

    def __init__(self, optimizer: Optimizer, start_factor: float = 1.0 / 3,
                 end_factor: float = 1.0, total_iters: int = 5, last_epoch: int = -1) -> None:
        if not 0 < start_factor <= 1:  # also refuses nan
            raise errors.linear_factor("start")
        if not 0 <= end_factor <= 1:
            raise errors.linear_factor("end")
        self.start_factor = start_factor
        self.end_factor = end_factor
        self.total_iters = total_iters
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[float]:
        """Recursive: the current lr times the ratio of this step's factor to the last."""
        self._warn_if_outside_step()
        groups = self.optimizer.param_groups
        if self.last_epoch == 0:
            return [group["lr"] * self.start_factor for group in groups]
        if self._is_initial or self.last_epoch > self.total_iters:
            return [group["lr"] for group in groups]
        change = self.end_factor - self.start_factor
        ratio = 1.0 + change / (self.total_iters * self.start_factor
                                + (self.last_epoch - 1) * change)
        return [group["lr"] * ratio for group in groups]

    def _get_closed_form_lr(self) -> list[float]:
        change = self.end_factor - self.start_factor
        factor = self.start_factor + change * min(self.total_iters, self.last_epoch) \
            / self.total_iters
        return [base_lr * factor for base_lr in self.base_lrs]


class CosineAnnealingLR(LRScheduler):
    r"""lr = eta_min + (initial_lr - eta_min) * (1 + cos(pi * last_epoch / T_max)) / 2:
    from the initial lr at step 0 down to ``eta_min`` at step ``T_max``, and (as in
    PyTorch, which has no restarts here) back up over the next ``T_max`` steps.

    PyTorch computes it recursively from the current lr (so, like PyTorch, the values
    can differ from the closed form above in the last digits):

    ::

        lr_t = eta_min + (lr_{t-1} - eta_min) * (1 + cos(pi t / T_max))
                                              / (1 + cos(pi (t - 1) / T_max))

    with one exception at the bottom of each period, where the denominator is 0.

    >>> sched = CosineAnnealingLR(opt, T_max=1000, eta_min=1e-5)    # doctest: +SKIP
    """

    def __init__(self, optimizer: Optimizer, T_max: int, eta_min: float = 0.0,
                 last_epoch: int = -1) -> None:
        if T_max == 0:
            raise errors.cosine_T_max(T_max)
        self.T_max = T_max
        self.eta_min = eta_min
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[float]:
        self._warn_if_outside_step()
        groups, t, period = self.optimizer.param_groups, self.last_epoch, self.T_max
        if self._is_initial:
            return [group["lr"] for group in groups]
        if self._step_count == 1 and t > 0:
            return self._get_closed_form_lr()
        if (t - 1 - period) % (2 * period) == 0:  # leaving the bottom: 0 / 0 above
            return [group["lr"] + (base_lr - self.eta_min) * (1 - math.cos(math.pi / period)) / 2
                    for base_lr, group in zip(self.base_lrs, groups, strict=True)]
        return [(1 + math.cos(math.pi * t / period)) / (1 + math.cos(math.pi * (t - 1) / period))
                * (group["lr"] - self.eta_min) + self.eta_min for group in groups]

    def _get_closed_form_lr(self) -> list[float]:
        return [self.eta_min + (base_lr - self.eta_min)
                * (1 + math.cos(math.pi * self.last_epoch / self.T_max)) / 2
                for base_lr in self.base_lrs]


class SequentialLR(LRScheduler):
    """Runs ``schedulers[0]`` until step ``milestones[0]``, then ``schedulers[1]`` (from
    its own step 0, in closed form) until ``milestones[1]``... The usual warm-up then
    cosine: ``SequentialLR(opt, [LinearLR(opt, 0.01, total_iters=w),
    CosineAnnealingLR(opt, T_max=total - w)], milestones=[w])``.
    """

    def __init__(self, optimizer: Optimizer, schedulers: Sequence[LRScheduler],
                 milestones: Sequence[int], last_epoch: int = -1) -> None:
        if len(schedulers) < 1:
            raise errors.sequential_schedulers("expects at least one scheduler, but got no "
                                               "scheduler.")
        for i, scheduler in enumerate(schedulers):
            if not hasattr(scheduler, "optimizer"):
                raise errors.sequential_not_a_scheduler(i, scheduler)
            if scheduler.optimizer is not optimizer:
                raise errors.sequential_schedulers(
                    f"expects all schedulers to belong to the same optimizer, but got "
                    f"scheduler {type(scheduler).__name__} at index {i} with another one.")
        if len(milestones) != len(schedulers) - 1:
            raise errors.sequential_schedulers(
                "expects number of schedulers provided to be one more than the number of "
                f"milestone points, but got number of schedulers {len(schedulers)} and the "
                f"number of milestones to be equal to {len(milestones)}.")
        self._schedulers = list(schedulers)
        self._milestones = list(milestones)
        self.last_epoch = last_epoch + 1
        self.optimizer = optimizer
        for group in optimizer.param_groups:  # undo what building the schedulers did
            group["lr"] = group["initial_lr"]
        for scheduler in self._schedulers:
            _undo_initial_step(scheduler)
        first = self._schedulers[bisect_right(self._milestones, 0)]
        first._initial_step()
        self._last_lr = first.get_last_lr()

    def step(self) -> None:
        """The next step of the scheduler whose turn it is (at a milestone, the next
        scheduler starts from its step 0)."""
        self.last_epoch += 1
        idx = bisect_right(self._milestones, self.last_epoch)
        scheduler = self._schedulers[idx]
        if idx > 0 and self._milestones[idx - 1] == self.last_epoch:
            scheduler._update_lr(0)
        else:
            scheduler.step()
        self._last_lr = scheduler.get_last_lr()

    def state_dict(self) -> dict[str, Any]:
        """Its own counters and milestones, and each scheduler's ``state_dict``."""
        state = self._attributes_but("optimizer", "_schedulers")
        state["_schedulers"] = [s.state_dict() for s in self._schedulers]
        return state

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        state = dict(state_dict)
        saved = state.pop("_schedulers")
        super().load_state_dict(state)
        for scheduler, s in zip(self._schedulers, saved):
            scheduler.load_state_dict(s)


def _undo_initial_step(scheduler) -> None:
    """Take back the step a scheduler took when it was built (nested ones too)."""
    if hasattr(scheduler, "_schedulers"):
        for s in scheduler._schedulers:
            _undo_initial_step(s)
    elif hasattr(scheduler, "last_epoch"):
        scheduler.last_epoch -= 1


class _WarmupCosineFactor:
    """``cosine_with_warmup``'s factor for one group (a callable object, so that
    ``LambdaLR.state_dict`` saves its settings)."""

    def __init__(self, warmup_steps: int, total_steps: int, floor: float):
        self.warmup_steps, self.total_steps, self.floor = warmup_steps, total_steps, floor

    def __call__(self, step: int) -> float:
        if step < self.warmup_steps:
            return (step + 1) / (self.warmup_steps + 1)
        decay = self.total_steps - self.warmup_steps
        progress = min(1.0, (step - self.warmup_steps) / decay) if decay > 0 else 1.0
        return self.floor + (1 - self.floor) * (1 + math.cos(math.pi * progress)) / 2


def cosine_with_warmup(optimizer: Optimizer, warmup_steps: int, total_steps: int,
                       min_lr: float = 0.0) -> LambdaLR:
    """This project's convenience (not a PyTorch function): a ``LambdaLR`` whose lr rises
    linearly for ``warmup_steps`` steps, then follows a half cosine from each group's lr
    down to ``min_lr`` at step ``total_steps``, and stays at ``min_lr`` after.

    ::

        lr_t = lr * (t + 1) / (warmup_steps + 1)                   t < warmup_steps
        lr_t = min_lr + (lr - min_lr) * (1 + cos(pi * p)) / 2      p = (t - warmup_steps)
                                                                     / (total_steps - warmup_steps)

    (p stops at 1.) Up to ``total_steps`` these are the values of PyTorch's
    ``SequentialLR([LinearLR(start_factor=1 / (warmup_steps + 1), total_iters=warmup_steps),
    CosineAnnealingLR(T_max=total_steps - warmup_steps, eta_min=min_lr)],
    milestones=[warmup_steps])``, in closed form; no step has lr 0 (unless min_lr = 0 at
    the end).

    >>> sched = cosine_with_warmup(opt, warmup_steps=100, total_steps=1000)    # doctest: +SKIP
    """
    for name, value in (("warmup_steps", warmup_steps), ("total_steps", total_steps)):
        if isinstance(value, bool) or not isinstance(value, int):
            raise errors.warmup_schedule(f"{name} must be an int, but got "
                                         f"{type(value).__name__}.", TypeError)
    if not 0 <= warmup_steps <= total_steps or total_steps < 1:
        raise errors.warmup_schedule(f"expected 0 <= warmup_steps <= total_steps and "
                                     f"total_steps >= 1, but got warmup_steps={warmup_steps}, "
                                     f"total_steps={total_steps}.")
    if not isinstance(optimizer, Optimizer):
        raise errors.not_an_optimizer(optimizer)
    factors = []
    for i, group in enumerate(optimizer.param_groups):
        lr = group.get("initial_lr", group["lr"])
        if not 0 <= min_lr <= lr:  # also refuses nan
            raise errors.warmup_schedule(f"min_lr={min_lr!r} is not in [0, lr] for "
                                         f"param_groups[{i}], whose lr is {lr!r}.")
        factors.append(_WarmupCosineFactor(warmup_steps, total_steps,
                                           min_lr / lr if lr else 0.0))
    return LambdaLR(optimizer, factors)
