"""Lesson 08's float experiment: the order of a float32 sum changes its last bits."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

import autograd_core as ag

__all__ = ["summation_order", "SummationOrder"]


# -- floating-point summation order (L6) ------------------------------------------------------
@dataclass(frozen=True)
class SummationOrder:
    """The same float32 numbers summed in several orders; ``exact`` is their exact sum
    (math.fsum in float64) for reference."""

    values: dict
    exact: float

    @property
    def difference(self) -> float:
        """In-order sum minus reversed sum: not 0, though the numbers are the same."""
        return float(self.values["in order"]) - float(self.values["reversed"])

    @property
    def ulps(self) -> int:
        """How many float32 steps apart the in-order and reversed sums are."""
        a, b = np.float32(self.values["in order"]), np.float32(self.values["reversed"])
        return abs(int(a.view(np.int32)) - int(b.view(np.int32)))


def summation_order(n: int = 10_000, seed: int = 0) -> SummationOrder:
    """Sum ``n`` seeded float32 numbers front to back, back to front, sorted, and
    pairwise (NumPy's ``sum``). Float addition rounds after every step, so it is not
    associative: each order rounds differently and the last bits differ.

    >>> s = summation_order()
    >>> s.difference != 0
    True
    """
    rng = ag.Generator(seed).numpy
    numbers = rng.standard_normal(n).astype(np.float32)
    def sequential(a):  # cumsum adds one number at a time, left to right
        return np.cumsum(a, dtype=np.float32)[-1]

    values = {
        "in order": sequential(numbers),
        "reversed": sequential(numbers[::-1]),
        "sorted": sequential(np.sort(numbers)),
        "pairwise (np.sum)": np.sum(numbers, dtype=np.float32),
    }
    return SummationOrder(values, math.fsum(numbers.astype(np.float64)))
