"""What a check knows besides the right answer, so that it can *name* a mistake.

A derivation check passes context to :func:`check_gradient`: the batch size, the
upstream gradient, the activation derivative, the per-path contributions, known
wrong answers. Each diagnosis uses only the pieces it needs; anything missing
simply means that diagnosis is not attempted.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from .inputs import as_expected
from .tolerance import Tolerance, tolerance_for


@dataclass(frozen=True)
class Mistake:
    """A known wrong answer and what to tell a learner whose answer equals it.

    >>> Mistake(np.zeros(3), "You sent the gradient to the losing input.", code="loser")
    Mistake(code='loser')
    """

    candidate: np.ndarray
    says: str
    hint: str = ""
    code: str = "known_mistake"

    def __repr__(self) -> str:
        return f"Mistake(code={self.code!r})"


@dataclass(frozen=True)
class Context:
    """Everything :func:`check_gradient` may use to diagnose a wrong answer."""

    name: str = "your answer"
    reference: str = "the engine's gradient"
    of: str | None = None  # the tensor this is the gradient of, e.g. "b2"
    tol: Tolerance = tolerance_for(np.float64)
    batch_size: int | None = None
    batch_axis: int = 0
    upstream: np.ndarray | None = None
    activation_derivative: np.ndarray | None = None
    before_activation: np.ndarray | None = None
    wrong_derivatives: Mapping[str, np.ndarray] = field(default_factory=dict)
    paths: Mapping[str, np.ndarray] = field(default_factory=dict)
    naive: np.ndarray | None = None
    mistakes: Sequence[Mistake] = ()
    answer_is_integer: bool = False  # set by check_gradient, not by callers

    @property
    def is_gradient(self) -> bool:
        """Whether the expected value is a gradient (named ``of`` a tensor, or called one by
        ``reference``): only then do shape messages speak of the tensor it belongs to."""
        return self.of is not None or "gradient" in self.reference


KNOWN_KEYS = frozenset(Context.__dataclass_fields__) - {"tol", "answer_is_integer"}


def _array(value):
    return None if value is None else as_expected(value).astype(np.float64)


def make_context(tol: Tolerance, answer_is_integer: bool = False, **context) -> Context:
    """A :class:`Context` from keyword arguments, with a clear error for unknown keys."""
    unknown = sorted(set(context) - KNOWN_KEYS)
    if unknown:
        raise TypeError(f"check_gradient: unknown context {unknown}; known context keys are "
                        f"{sorted(KNOWN_KEYS)}.")
    paths = context.pop("paths", None) or {}
    if not isinstance(paths, Mapping):
        paths = {f"path {i + 1}": p for i, p in enumerate(paths)}
    wrong = context.pop("wrong_derivatives", None) or {}
    for key in ("upstream", "activation_derivative", "before_activation", "naive"):
        if key in context:
            context[key] = _array(context[key])
    return Context(
        tol=tol, answer_is_integer=answer_is_integer,
        paths={label: _array(p) for label, p in paths.items()},
        wrong_derivatives={label: _array(d) for label, d in wrong.items()},
        **context,
    )
