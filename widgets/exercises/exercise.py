"""An :class:`Exercise` and the registry of exercises by question-bank ID.

An exercise has an ID, a title, a kind, one or more check callables, a hint and a
solution (shown only on request), and optionally a problem (the data to work on),
a snippet (buggy code to fix), options (true/false justifications) and an
experiment (a function that runs the engine and shows the claim).

The words (title, question, hint, solution) live in ``texts.toml`` beside this file,
by ID, so the Python modules hold only the checks; an exercise built with its words
given as arguments uses those instead.

Calling an exercise runs its first check: ``exercises.G6(dA=..., dB=...)``.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Mapping
from functools import cache
from importlib import resources
from types import MappingProxyType
from typing import Any

from .ids import QUESTION_BANK_IDS
from .result import Result, Text

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

KINDS = ("derivation", "true_false", "spot_error", "prediction", "write_backward")

# The modules that register exercises, imported once by ``registry()``.
_ITEM_MODULES = (
    "graph_items", "derivations", "layer_items", "spot_error", "backprop_bugs", "true_false",
    "why_items", "edge_items", "forward_items",
)

_REGISTRY: dict[str, Exercise] = {}
_LAST: dict[str, Result] = {}  # the last result of each exercise in this kernel


class Exercise:
    """One question-bank item as something a learner can run.

    >>> ex = registry()["G6"]                   # doctest: +SKIP
    >>> ex(dA=my_dA, dB=my_dB)                  # doctest: +SKIP
    """

    def __init__(self, id: str, kind: str, checks: Mapping[str, Callable[..., Result]],
                 *, title: str | None = None, hint: str | None = None,
                 solution: str | None = None, question: str | None = None,
                 level: str | None = None, problem: Callable[..., Any] | None = None,
                 snippet: str | None = None, options: Mapping[str, str] | None = None,
                 experiment: Callable[..., Any] | None = None):
        if kind not in KINDS:
            raise ValueError(f"unknown exercise kind {kind!r}; one of {KINDS}")
        if not checks:
            raise ValueError(f"exercise {id} needs at least one check")
        words = texts().get(id, {})
        title = title if title is not None else words.get("title")
        hint = hint if hint is not None else words.get("hint")
        solution = solution if solution is not None else words.get("solution")
        question = question if question is not None else words.get("question", "")
        if title is None or hint is None or solution is None:
            raise ValueError(f"exercise {id} needs a title, a hint and a solution: give them "
                             "as arguments or in widgets/exercises/texts.toml")
        self.id = id
        self.title = title
        self.kind = kind
        self.level = level
        self.question = Text(question or title)
        self.checks = MappingProxyType(dict(checks))
        self.hint = Text(hint)
        self.solution = Text(solution)
        self.snippet = Text(snippet) if snippet else None
        self.options = MappingProxyType(dict(options)) if options else None
        self._problem = problem
        self._experiment = experiment

    # -- running checks -------------------------------------------------------------
    def check(self, *args, hint: bool = False, **kwargs) -> Result:
        """Run the main check on your answer; the Result prints the feedback."""
        return self.run(next(iter(self.checks)), *args, hint=hint, **kwargs)

    __call__ = check

    def run(self, check: str, *args, hint: bool = False, **kwargs) -> Result:
        """Run one named check of this exercise (see ``.checks``)."""
        if check not in self.checks:
            raise KeyError(f"{self.id} has no check {check!r}; its checks are "
                           f"{list(self.checks)}.")
        result = self.checks[check](*args, **kwargs)
        result = result.presented(title=self.heading, hint=self.hint, solution=self.solution,
                                  show_hint=hint)
        _LAST[self.id] = result
        return result

    def problem(self, *args, **kwargs):
        """The data this exercise works on (the same every run)."""
        if self._problem is None:
            raise AttributeError(f"{self.id} has no problem data; read its question instead.")
        return self._problem(*args, **kwargs)

    def experiment(self, *args, **kwargs):
        """Run the engine experiment that shows the answer (returns a result object)."""
        if self._experiment is None:
            raise AttributeError(f"{self.id} has no separate experiment: its check runs one.")
        return self._experiment(*args, **kwargs)

    @property
    def has_problem(self) -> bool:
        return self._problem is not None

    @property
    def has_experiment(self) -> bool:
        return self._experiment is not None

    @property
    def last_result(self) -> Result | None:
        """The result of the last check of this exercise run in this kernel."""
        return _LAST.get(self.id)

    def widget(self, answer: Callable[[], Any] | None = None):
        """An ipywidgets box: inputs where useful, a Check button, hint and solution."""
        from .widget import ExerciseWidget

        return ExerciseWidget(self, answer)

    # -- display ------------------------------------------------------------------------
    @property
    def heading(self) -> str:
        level = f" ({self.level})" if self.level else ""
        return f"{self.id}{level} · {self.title}"

    def __repr__(self) -> str:
        lines = [self.heading, f"  {self.question}" if self.question != self.title else "",
                 f"  kind: {self.kind}; checks: {', '.join(self.checks)}"]
        if self.options:
            lines += [f"  ({key}) {text}" for key, text in self.options.items()]
        return "\n".join(line for line in lines if line)


@cache
def texts() -> Mapping[str, Mapping[str, str]]:
    """The words of every exercise from ``texts.toml``, by question-bank ID."""
    source = resources.files(__package__).joinpath("texts.toml").read_text(encoding="utf-8")
    return MappingProxyType(tomllib.loads(source))


def register(exercise: Exercise) -> Exercise:
    """Add an exercise to the registry; each question-bank ID exactly once."""
    if exercise.id in _REGISTRY:
        raise ValueError(f"exercise {exercise.id} is registered twice")
    if exercise.id not in QUESTION_BANK_IDS:
        raise ValueError(f"{exercise.id} is not a question-bank ID")
    _REGISTRY[exercise.id] = exercise
    return exercise


def registry() -> Mapping[str, Exercise]:
    """Question-bank ID -> :class:`Exercise`, in the bank's order (read-only).

    >>> "G5" in registry()
    True
    """
    for module in _ITEM_MODULES:
        importlib.import_module(f"{__package__}.{module}")
    return MappingProxyType({i: _REGISTRY[i] for i in QUESTION_BANK_IDS if i in _REGISTRY})


def check(exercise_id: str, *args, hint: bool = False, **kwargs) -> Result:
    """Run the main check of a question-bank item: ``check("G6", dA=..., dB=...)``."""
    exercises = registry()
    if exercise_id not in exercises:
        raise KeyError(f"no exercise {exercise_id!r}; known IDs: {', '.join(exercises)}")
    return exercises[exercise_id].check(*args, hint=hint, **kwargs)


def last_results() -> Mapping[str, Result]:
    """The last result of every exercise checked in this kernel (read-only)."""
    return MappingProxyType(dict(_LAST))


def forget_results() -> None:
    """Clear the record of past results (a fresh start for the progress summary)."""
    _LAST.clear()
