"""Checks that take several named answers (``dA=..., dB=...``) and report each one."""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence

from ..feedback.result import Result


def named_answers(answers: dict, allowed: Sequence[str]) -> Result | None:
    """A Result explaining what is wrong with the names given, or None if they are fine."""
    if not answers:
        return Result(False, "Nothing to check yet: pass your answers by name, e.g. "
                             + ", ".join(f"{a}=..." for a in allowed) + ".",
                      diagnosis="none")
    unknown = [k for k in answers if k not in allowed]
    if unknown:
        lower = {a.lower(): a for a in allowed}
        tips = [f"{k!r} (did you mean {lower[k.lower()]!r}?)" if k.lower() in lower else repr(k)
                for k in unknown]
        return Result(False, f"This exercise has no answer called {', '.join(tips)}; it takes "
                             f"{', '.join(allowed)}.", diagnosis="unknown_name")
    return None


def check_named(answers: dict, allowed: Sequence[str],
                run: Callable[[dict], list[Result]]) -> Result:
    """Validate the names, then combine the per-answer Results of ``run(answers)``."""
    problem = named_answers(answers, allowed)
    if problem is not None:
        return problem
    return Result.combine(run(answers))


def one_answer(name: str) -> Callable:
    """Decorator: a check of one answer passed by ``name`` (``E4(flat_points=...)``); a missing or
    misspelled name gets the same sentence as in :func:`check_named`."""

    def wrap(fn: Callable[[object], Result]) -> Callable[..., Result]:
        @functools.wraps(fn)
        def check(*args, **answers) -> Result:
            if len(args) == 1 and not answers:  # E4(fn) as well as E4(flat_points=fn)
                answers = {name: args[0]}
            elif args:
                return Result(False, f"This exercise takes one answer, {name}; you passed "
                                     f"{len(args) + len(answers)}.", diagnosis="call")
            problem = named_answers(answers, (name,))
            return problem if problem is not None else fn(answers[name])

        return check

    return wrap


def answers(*names: str) -> Callable:
    """Decorator: the answers a check takes by name, every one of them required for the
    item to be solved (progress reads them here: ``check.parts``)."""

    def mark(fn: Callable) -> Callable:
        fn.parts = tuple(names)
        return fn

    return mark
