"""Prediction checks: the learner predicts what an engine experiment will show, the
check runs the experiment and compares each prediction with what the engine did.

Each measured fact says how to compare (exactly, as numbers with the gradient
checker's diagnoses, as a shape, a set or an ordered sequence) and why the
engine shows what it shows, for when the prediction was wrong.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from . import words
from .feedback import check_gradient
from .result import Result

KINDS = ("exact", "number", "shape", "set", "sequence")


@dataclass(frozen=True)
class Fact:
    """What the engine showed (``value``), how to compare, and why (``explain``)."""

    value: Any
    explain: str
    kind: str = "exact"
    context: Mapping = field(default_factory=dict)  # for kind="number": check_gradient context
    accept: tuple = ()  # other answers that count as right (e.g. "none" for an empty set)


def _show(value) -> str:
    if isinstance(value, set | frozenset):
        return "{" + ", ".join(sorted(map(str, value))) + "}" if value else "nothing"
    if isinstance(value, tuple) and all(isinstance(v, int | np.integer) for v in value):
        return words.shape(value)
    return repr(value)


def _as_shape(value):
    if isinstance(value, int | np.integer):
        return (int(value),)
    if isinstance(value, str):
        digits = [int(t) for t in value.replace("(", " ").replace(")", " ").replace(",", " ")
                  .split() if t.isdigit()]
        return tuple(digits)
    try:
        return tuple(int(v) for v in value)
    except (TypeError, ValueError):
        return None


def _as_set(value) -> frozenset | None:
    if value is None:
        return frozenset()
    if isinstance(value, str):
        value = [value]
    try:
        return frozenset(str(v).strip().lower() for v in value
                         if str(v).strip().lower() not in ("nothing", "none", ""))
    except TypeError:
        return None


def _is_count(value) -> bool:
    return isinstance(value, int | np.integer) and not isinstance(value, bool)


def _unanswered(given, fact: Fact) -> bool:
    """``...`` is always a placeholder; ``None`` is one unless it could be the answer
    (some facts are "the gradient is None")."""
    if given is Ellipsis:
        return True
    if given is not None:
        return False
    none_is_an_answer = (fact.value is None or any(a is None for a in fact.accept)
                         or (fact.kind == "set" and not fact.value))  # None reads as "nothing"
    return not none_is_an_answer


def check_fact(name: str, given, fact: Fact) -> Result:
    """One prediction (``given``, called ``name``) against the fact the engine measured."""
    if _unanswered(given, fact):  # a placeholder: say nothing that gives the answer away
        return Result(False, f"{name} is still a placeholder, so there is nothing to check "
                             "yet: replace it with your prediction.", name=name, diagnosis="none")
    if fact.kind == "number" and _is_count(fact.value):
        # A count (parameters, ops, passes) is right or wrong: no gradient wording.
        got = given
        right = isinstance(given, int | float | np.number) and given == fact.value
    elif fact.kind == "number":
        context = {"reference": "what the engine measured", **dict(fact.context)}
        result = check_gradient(given, fact.value, name=name, **context)
        if result.ok:
            return result
        return Result(False, f"{result.message} {fact.explain}", name=name,
                      diagnosis=result.diagnosis, hint=result._hint)
    elif fact.kind == "shape":
        got = _as_shape(given)
        right = got == tuple(fact.value)
    elif fact.kind == "set":
        got = _as_set(given)
        right = got == frozenset(v.lower() for v in fact.value)
    elif fact.kind == "sequence":
        got = list(given) if isinstance(given, list | tuple) else given
        right = got == list(fact.value)
        if not right and isinstance(got, list) and got == list(reversed(fact.value)):
            return Result(False, f"You gave the order in reverse: {_show(got)}. {fact.explain}",
                          name=name, diagnosis="reversed")
    else:
        got = given
        try:
            right = bool(given == fact.value) or any(given == a for a in fact.accept)
        except (TypeError, ValueError):
            right = False
    if right:
        return Result(True, f"Right: the engine shows {_show(fact.value)}.", name=name)
    return Result(False, f"You predicted {_show(got)}; the engine shows {_show(fact.value)}. "
                         f"{fact.explain}", name=name, diagnosis="prediction")


def check_predictions(given: Mapping[str, Any], facts: Mapping[str, Fact]) -> Result:
    """Compare every prediction given (by name) with the measured facts."""
    if not given:
        return Result(False, "Nothing to check yet: make a prediction, e.g. "
                             + ", ".join(f"{k}=..." for k in facts) + ".", diagnosis="none")
    unknown = [k for k in given if k not in facts]
    if unknown:
        return Result(False, f"There is no prediction called {', '.join(map(repr, unknown))}; "
                             f"this exercise takes {', '.join(facts)}.",
                      diagnosis="unknown_name")
    return Result.combine([check_fact(k, v, facts[k]) for k, v in given.items()])
