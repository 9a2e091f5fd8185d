"""The optimizer base class: parameter groups, per-parameter state, ``step``.

A subclass defines ``_update(param, grad, group, state)``, which changes
``param`` in place from its gradient, its group's options (``lr``...) and its own
state (momentum buffers, moment estimates), a dict of NumPy arrays created on the
first step. ``step()`` runs it for every parameter that has a gradient, under
``no_grad`` so that the update itself is not recorded.
"""

from __future__ import annotations

import copy
import os
import sys
import warnings
from collections.abc import Iterable
from typing import Any

import numpy as np

from .. import errors
from ..recording.grad_mode import no_grad
from ..recording.tensor import Tensor

__all__ = ["Optimizer", "zero_grads"]

_OPTIM_DIR = os.path.dirname(os.path.abspath(__file__))


def _caller_level() -> int:
    """The ``stacklevel`` of the first frame outside this package (the user's line
    that built the optimizer), for a warning raised from ``add_param_group``."""
    level, frame = 2, sys._getframe(2)
    while frame is not None and os.path.dirname(frame.f_code.co_filename) == _OPTIM_DIR:
        level, frame = level + 1, frame.f_back
    return level


def zero_grads(params: Iterable[Tensor], set_to_none: bool = True) -> None:
    """``zero_grad`` of optimizers and modules: ``.grad = None`` (PyTorch's default),
    or zeros written in place (as PyTorch does: ``g = p.grad`` taken before sees them;
    a read-only gradient array is replaced instead)."""
    for p in params:
        if set_to_none:
            p.grad = None
        elif p.grad is not None and p.grad._data.flags.writeable:
            p.grad._data.fill(0)
            p.grad._version[0] += 1
        elif p.grad is not None:
            p.grad = Tensor._wrap(np.zeros_like(p.grad._data))


class Optimizer:
    """Base class: ``params`` is an iterable of tensors, or of dicts (parameter groups,
    each ``{"params": [...], **options}`` overriding ``defaults``)."""

    def __init__(self, params: Iterable, defaults: dict[str, Any]):
        self.defaults = defaults
        self.state: dict[Tensor, dict[str, Any]] = {}
        self.param_groups: list[dict[str, Any]] = []
        if isinstance(params, Tensor):
            raise errors.params_not_iterable(type(self).__name__, params.shape)
        groups = list(params)
        if not groups:
            raise errors.empty_parameters(type(self).__name__)
        if not isinstance(groups[0], dict):
            groups = [{"params": groups}]
        for group in groups:
            self.add_param_group(group)

    def add_param_group(self, group: dict[str, Any]) -> None:
        """Add parameters with their own options, e.g. ``{"params": head, "lr": 1e-2}``.

        As in PyTorch, a parameter already in another group is refused (ValueError),
        and a parameter listed twice in one group is kept twice with a UserWarning:
        ``step()`` then updates it once per listing, from one shared state, exactly as
        ``torch.optim`` does (so ``SGD([p, p], lr)`` moves ``p`` by ``2 * lr * grad``).
        """
        name = type(self).__name__
        params = group["params"]
        params = [params] if isinstance(params, Tensor) else list(params)
        for p in params:
            if not isinstance(p, Tensor):
                raise errors.not_a_tensor_parameter(name, p)
            if not p.is_leaf:
                raise errors.not_a_leaf_parameter(name, p.shape)
        ids = {id(p) for p in params}
        if len(ids) != len(params):
            warnings.warn(errors.duplicate_parameters(name), stacklevel=_caller_level())
        if any(id(p) in ids for p in self._params()):
            raise errors.parameter_in_two_groups(name)
        self.param_groups.append({**self.defaults, **group, "params": params})

    def zero_grad(self, set_to_none: bool = True) -> None:
        """Forget the gradients: ``.grad = None`` (PyTorch's default), or zeros written
        in place (as PyTorch does: ``g = p.grad`` taken before sees the zeros)."""
        zero_grads(self._params(), set_to_none)

    def step(self) -> None:
        """Update every parameter that has a gradient, in place, without recording."""
        self._opt_called = True  # read by the lr schedulers' call-order warning
        with no_grad():
            for group in self.param_groups:
                for p in group["params"]:
                    if p.grad is not None:
                        state = self.state.get(p, {})
                        self._update(p, p.grad._data, group, state)
                        if state:  # plain SGD keeps none, as in PyTorch
                            self.state[p] = state

    def _update(self, param: Tensor, grad: np.ndarray, group: dict, state: dict) -> None:
        raise NotImplementedError

    def state_bytes(self) -> int:
        """Bytes held by the optimizer's state arrays (momentum, moment estimates...):
        memory a model needs on top of its parameters and gradients."""
        return sum(a.nbytes for s in self.state.values() for a in s.values()
                   if isinstance(a, np.ndarray))

    # -- saving and loading ---------------------------------------------------------
    def _params(self) -> list[Tensor]:
        return [p for group in self.param_groups for p in group["params"]]

    def state_dict(self) -> dict[str, Any]:
        """A copy of the state and the options, parameters referred to by position
        (like PyTorch): ``{"state": {0: {...}, ...}, "param_groups": [...]}``."""
        index = {id(p): i for i, p in enumerate(self._params())}
        state = {index[id(p)]: copy.deepcopy(s) for p, s in self.state.items()}
        groups = [{**{k: v for k, v in g.items() if k != "params"},
                   "params": [index[id(p)] for p in g["params"]]} for g in self.param_groups]
        return {"state": state, "param_groups": groups}

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        """Restore what ``state_dict`` returned, onto the same parameters in order."""
        name = type(self).__name__
        groups = state_dict["param_groups"]
        if len(groups) != len(self.param_groups):
            raise errors.optimizer_state(name, f"{len(groups)} parameter groups given, "
                                               f"this optimizer has {len(self.param_groups)}")
        for saved, group in zip(groups, self.param_groups):
            if len(saved["params"]) != len(group["params"]):
                raise errors.optimizer_state(name, "a parameter group has a different size")
        params = self._params()
        for saved, group in zip(groups, self.param_groups):
            group.update({k: v for k, v in saved.items() if k != "params"})
        self.state = {params[i]: copy.deepcopy(s) for i, s in state_dict["state"].items()}

    def __repr__(self) -> str:
        lines = [f"{type(self).__name__} ("]
        for i, group in enumerate(self.param_groups):
            lines.append(f"Parameter Group {i}")
            lines += [f"    {k}: {group[k]}" for k in sorted(group) if k != "params"]
        return "\n".join(lines + [")"])
