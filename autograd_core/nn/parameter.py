"""``Parameter``: a tensor that a module owns and an optimizer updates.

A parameter is a leaf tensor that requires grad by default. Assigning one to a
module attribute (``self.weight = Parameter(...)``) registers it, so
``module.parameters()`` finds it, and gives it a name from its place in the module
tree (``"0.weight"``, ``"block.conv1.weight"``) that the graph view shows. With
``requires_grad=False`` (or after ``module.requires_grad_(False)``) it is *frozen*:
the graph view draws it as a frozen parameter rather than as a constant.
"""

from __future__ import annotations

from typing import Any

from ..recording.tensor import Tensor

__all__ = ["Parameter"]


class Parameter(Tensor):
    """A leaf tensor registered by a module; ``requires_grad=True`` unless told otherwise.

    The data is copied (dtype kept, like ``tensor()``).

    >>> w = Parameter([[1.0, 2.0]])
    >>> w.requires_grad, w.is_leaf
    (True, True)
    """

    __slots__ = ()
    is_parameter = True  # read by the engine to tell frozen parameters from constants

    def __init__(self, data: Any, requires_grad: bool = True):
        super().__init__(data, requires_grad=requires_grad)

    def __repr__(self) -> str:
        return "Parameter containing:\n" + super().__repr__()
