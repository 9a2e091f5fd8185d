"""The optimizer base class: parameter groups, per-parameter state, ``step``.

A subclass defines ``_update(param, grad, group, state)``, which changes
``param`` in place from its gradient, its group's options (``lr``...) and its own
state (momentum buffers, moment estimates), a dict of NumPy arrays created on the
first step. ``step()`` runs it for every parameter that has a gradient, under
``no_grad`` so that the update itself is not recorded.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable
from typing import Any

import numpy as np

from .. import errors
from ..grad_mode import no_grad
from ..tensor import Tensor

__all__ = ["Optimizer"]


class Optimizer:
    """Base class: ``params`` is an iterable of tensors, or of dicts (parameter groups,
    each ``{"params": [...], **options}`` overriding ``defaults``)."""

    def __init__(self, params: Iterable, defaults: dict[str, Any]):
        self.defaults = defaults
        self.state: dict[Tensor, dict[str, Any]] = {}
        self.param_groups: list[dict[str, Any]] = []
        groups = [params] if isinstance(params, Tensor) else list(params)
        if not groups:
            raise errors.empty_parameters(type(self).__name__)
        if not isinstance(groups[0], dict):
            groups = [{"params": groups}]
        for group in groups:
            self.add_param_group(group)

    def add_param_group(self, group: dict[str, Any]) -> None:
        """Add parameters with their own options, e.g. ``{"params": head, "lr": 1e-2}``."""
        params = group["params"]
        params = [params] if isinstance(params, Tensor) else list(params)
        for p in params:
            if not isinstance(p, Tensor):
                raise errors.not_a_tensor_parameter(type(self).__name__, p)
            if not p.is_leaf:
                raise errors.not_a_leaf_parameter(type(self).__name__, p.shape)
        self.param_groups.append({**self.defaults, **group, "params": params})

    def zero_grad(self, set_to_none: bool = True) -> None:
        """Forget the gradients: ``.grad = None`` (PyTorch's default), or zeros."""
        for group in self.param_groups:
            for p in group["params"]:
                if set_to_none:
                    p.grad = None
                elif p.grad is not None:
                    p.grad = Tensor._wrap(np.zeros_like(p.grad._data))

    def step(self) -> None:
        """Update every parameter that has a gradient, in place, without recording."""
        with no_grad():
            for group in self.param_groups:
                for p in group["params"]:
                    if p.grad is not None:
                        self._update(p, p.grad._data, group, self.state.setdefault(p, {}))

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
