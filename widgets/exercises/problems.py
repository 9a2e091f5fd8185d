"""The data an exercise works on: named, seeded, read-only arrays with a description.

>>> p = Problem("C = A @ B", A=np.ones((2, 3)), B=np.ones((3, 4)))
>>> p.A.shape, sorted(p)
((2, 3), ['A', 'B'])
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping

import numpy as np

from . import words


class Problem(Mapping):
    """Named arrays (read-only copies, so a learner's in-place edit cannot corrupt them)
    plus a description of how they fit together. Access as ``p.A`` or ``p["A"]``."""

    def __init__(self, description: str, **values):
        self._description = description
        self._values = {}
        for name, value in values.items():
            if isinstance(value, np.ndarray):
                value = value.copy()
                value.flags.writeable = False
            self._values[name] = value

    def __getattr__(self, name: str):
        values = self.__dict__.get("_values", {})
        if name in values:
            return values[name]
        raise AttributeError(f"this problem has no {name!r}; it has {', '.join(values)}")

    def __getitem__(self, name: str):
        return self._values[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._values)

    def __len__(self) -> int:
        return len(self._values)

    @property
    def description(self) -> str:
        return self._description

    def __repr__(self) -> str:
        lines = [self._description]
        for name, v in self._values.items():
            if isinstance(v, np.ndarray):
                lines.append(f"  {name}: shape {words.shape(v.shape)}, {v.dtype}")
            else:
                lines.append(f"  {name} = {v!r}")
        return "\n".join(lines)


def rng(seed: int) -> np.random.Generator:
    """The seeded generator every problem draws from (same data every run)."""
    return np.random.default_rng(seed)


def distinct(generator: np.random.Generator, *shape: int) -> np.ndarray:
    """Normal samples, with no two entries closer than 1e-3 (so max/argmax have no ties)."""
    while True:
        a = generator.standard_normal(shape)
        flat = np.sort(a.ravel())
        if flat.size < 2 or np.min(np.diff(flat)) > 1e-3:
            return a
