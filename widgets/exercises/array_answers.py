"""The kind "derive these gradients on the item's problem": a :class:`Gradients`.

An item of this kind is data: its problem (and the options that draw another one, such
as G2's ``size``), the engine's answer for each named part, and what the gradient checker
needs to name a mistake in each part (the input it is the gradient of, the known wrong
answers built from the same data). The rules live here, once:

* every part is compared with the engine's gradient on the same problem, and a wrong
  part gets the checker's sentence naming its mistake, never the value;
* a part wrong in no named way may get the item's own sentence saying *where* it is
  wrong, by the kind of entry (``where``: G2's loser, winner, tie);
* another problem is drawn only through its options, so the gate records a check on it
  under that problem's name (see :mod:`.demos`), and an option the problem refuses is
  a sentence.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from ..feedback.check import check_gradient
from ..feedback.result import Result
from .parts import named_answers
from .problems import Problem, problem_for


def _no_context(problem: Problem, right: Mapping[str, Any]) -> Mapping[str, dict]:
    return {}


@dataclass(frozen=True)
class Gradients:
    """One item of the kind. ``engine(problem)`` gives the right value of each part (a
    Tensor's gradient or an array); ``context(problem, right)`` gives, per part,
    :func:`check_gradient`'s context (``of=``, ``mistakes=``, ``batch_size=`` ...);
    ``options`` are the problem's own options with their defaults; ``where(part, given,
    right, problem)`` may say where a part wrong in no named way is wrong; ``label(result,
    problem)`` may rename a part on another problem (G6's "dA (square)")."""

    item: str
    parts: tuple[str, ...]
    problem: Callable[..., Problem]
    engine: Callable[[Problem], Mapping[str, Any]]
    context: Callable[[Problem, Mapping[str, Any]], Mapping[str, dict]] = _no_context
    options: Mapping[str, object] = field(default_factory=dict)
    where: Callable[[str, Any, Any, Problem], Result | None] | None = None
    label: Callable[[Result, Problem], Result] | None = None

    def check(self, options: Mapping[str, object], answers: Mapping[str, Any]) -> Result:
        """Grade ``answers`` (part name -> array) on the problem ``options`` draw."""
        p = problem_for(self.item, self.problem, **options)  # a problem it has, first
        if isinstance(p, Result):
            return p
        wrong_names = named_answers(dict(answers), self.parts)
        if wrong_names is not None:
            return wrong_names
        right = self.engine(p)
        context = self.context(p, right)
        results = []
        for part in (k for k in self.parts if k in answers):
            result = check_gradient(answers[part], right[part], name=part,
                                    **context.get(part, {}))
            if self.where is not None and result.diagnosis == "values":
                where = self.where(part, answers[part], right[part], p)
                result = result if where is None else where  # (a wrong Result is falsy)
            results.append(self.label(result, p) if self.label else result)
        return Result.combine(results)


def gradients(kind: Gradients, doc: str) -> Callable[..., Result]:
    """The check of an item of the kind: ``ID(da=..., db=...)`` (``ID(dx)`` for one part),
    with the problem's options as keywords (``G2(..., size=8)``). Every part is required
    to solve the item (``.parts``); the kind stays on it as ``.gradients``."""

    def check(*args, **given) -> Result:
        options = {k: given.pop(k, default) for k, default in kind.options.items()}
        if args:  # G14(dx) as well as G14(dx=dx), for an item of one part
            if len(args) > 1 or len(kind.parts) > 1 or given:
                return Result(False, f"{kind.item} takes its answers by name: "
                                     + ", ".join(f"{k}=..." for k in kind.parts) + ".",
                              diagnosis="call")
            given = {kind.parts[0]: args[0]}
        return kind.check(options, given)

    # what the gate reads: each option a keyword-only parameter with its default
    check.__signature__ = inspect.Signature(
        [inspect.Parameter("args", inspect.Parameter.VAR_POSITIONAL)]
        + [inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, default=default)
         for name, default in kind.options.items()]
        + [inspect.Parameter("answers", inspect.Parameter.VAR_KEYWORD)],
        return_annotation=Result)
    check.__doc__ = doc
    check.__name__ = check.__qualname__ = f"check_{kind.item.lower()}"
    check.parts = kind.parts
    check.gradients = kind
    return check
