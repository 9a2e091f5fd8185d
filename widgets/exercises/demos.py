"""A demonstration is feedback on another problem than the learner's own.

A lesson shows what a mistake looks like with ``G6.demo(..., square=True)``: the check's
feedback on *another* problem, recorded nowhere. On the learner's own problem the same
call would be a check that counts no try, so a loop over candidates could solve the item
unseen (and spend none of C1's or A3's tries); such a demonstration is refused, with one
sentence naming the item's other problems, and the learner's answer goes to the check
itself, which records it. Refusing costs the learner nothing: no try is counted and no
answer is told.

An item's other problems are named by its options: the keyword-only parameters of its
check that have a default (``size``, ``square``, ``stride``, ...) and the parameters of its
``problem(...)`` the check accepts. A call is on the learner's own problem when every option
it passes has its default value, or when the problem it picks is one the item requires
(G7's strided problem: its parts are named for the variant). On another problem, an
answer that is a yes/no, a number or a word is refused too: such an answer (E2's
``literal_gets_gradient``) does not change with the problem.
"""

from __future__ import annotations

import inspect

import numpy as np

from ..feedback.result import Result


def problem_options(exercise, check: str) -> dict[str, object]:
    """Each option of ``exercise``'s ``check`` that picks another problem, with its
    default (the learner's own problem).

    >>> from widgets import exercises
    >>> problem_options(exercises.G6, "gradients")
    {'square': False}
    """
    params = inspect.signature(exercise._checks[check], follow_wrapped=False).parameters
    options = {name: p.default for name, p in params.items()
               if p.kind == p.KEYWORD_ONLY and p.default is not p.empty}
    takes_any = any(p.kind == p.VAR_KEYWORD for p in params.values())
    if exercise.has_problem:
        for name, p in inspect.signature(exercise._problem).parameters.items():
            if p.default is not p.empty and (takes_any or name in params):
                options.setdefault(name, p.default)
    return options


def _same(given: object, default: object) -> bool:
    """Whether an option a learner passed is its default (an array too); a value that
    cannot be compared is another problem, which the check answers with a sentence."""
    try:
        return bool(given == default)
    except Exception:  # noqa: BLE001 - arrays, and anything a learner's __eq__ raises
        try:
            return bool(np.array_equal(given, default))
        except Exception:  # noqa: BLE001
            return False


def variant(exercise, check: str, kwargs: dict) -> str:
    """The other problem a call picks, as its options away from their defaults ("size=8");
    "" for a call on the learner's own problem.

    >>> from widgets import exercises
    >>> variant(exercises.G2, "gradients", {"size": 8}), variant(exercises.G2, "gradients", {})
    ('size=8', '')
    """
    options = problem_options(exercise, check)
    return ", ".join(f"{name}={_shown(kwargs[name])}" for name, default in options.items()
                     if name in kwargs and not _same(kwargs[name], default))


def _shown(value: object) -> str:
    if isinstance(value, bool | int | float | str | np.generic) and len(repr(value)) <= 20:
        return repr(value)
    return "another"  # an array (W5's z): named, never printed


def refusal(exercise, check: str, kwargs: dict) -> Result | None:
    """The sentence refusing a demonstration whose call is on the learner's own problem
    (every option at its default) or passes a yes/no, a number or a word (see
    :func:`same_on_every_problem`); None for a demonstration it allows."""
    options = problem_options(exercise, check)
    if not variant(exercise, check, kwargs):
        return _refused(exercise, options)
    return same_on_every_problem(exercise, check, kwargs)


def same_on_every_problem(exercise, check: str, kwargs: dict) -> Result | None:
    """For a call on another problem (a demonstration or a check): the sentence refusing
    an answer that is a yes/no, a number or a word (E2's ``literal_gets_gradient``, W5's
    ``layers``), the same on every problem, so another problem would tell the learner's
    own answer unrecorded; None if every answer is an array or a function."""
    options = problem_options(exercise, check)
    facts = [name for name, value in kwargs.items()
             if name not in options and isinstance(value, bool | int | float | str | np.generic)]
    if facts:
        i = exercise.id
        away = ", ".join(f"{name}=..." for name in options if name in kwargs)
        return Result(False, f"Another problem gives feedback on arrays or functions; "
                             f"{', '.join(facts)} would be the same on yours: check it on "
                             f"your own problem, {i}(...) without {away}, which records it "
                             "as a try.", diagnosis="demo_refused")
    return None


def refusal_after(exercise, check: str, kwargs: dict, result: Result) -> Result | None:
    """The refusal for a demonstration on another problem whose result would record a part
    the item requires under the variant's own name (G7's strided problem: "dx (stride=2,
    padding=1)"), or None. A part under its plain name ("da", whether passed by name or
    returned by the learner's function) is recorded under the variant: no refusal."""
    from .tracking import _part_results, required_parts

    required = set(required_parts(exercise))
    plain = {f"{check}:{name}" for name in kwargs} | {f"{check}:"}
    if any(key in required and key not in plain and " (" in key.partition(":")[2]
           for key in _part_results(check, result)):
        return _refused(exercise, problem_options(exercise, check))
    return None


def _refused(exercise, options: dict) -> Result:
    i = exercise.id
    if not options:
        return Result(False, f"{i} has only your own problem, so it has no demonstration: "
                             f"check your answer with {i}(...), which records it as a try.",
                      diagnosis="demo_refused")
    named = ", ".join(f"{name}=..." for name in options)
    return Result(False, f"{i}.demo(...) gives feedback on another problem than yours ({named}, "
                         f"as the lessons' demonstrations pass), not on your own: check your "
                         f"answer with {i}(...), which records it as a try.",
                  diagnosis="demo_refused")
