"""Prediction checks: the learner predicts what an engine experiment will show, the
check runs the experiment and compares each prediction with what the engine did.

Each measured fact says how to compare (exactly, as numbers with the gradient
checker's diagnoses, as a shape, a set or an ordered sequence) and why the
engine shows what it shows, for when the prediction was wrong.

The rules every prediction item keeps live here, not in the items:

* A prediction is read in the forms learners type: ``True``, ``"true"``, ``"yes"`` or
  ``1`` for a yes/no; op names in any case; ``"input, weight"`` for a set of names;
  ``"3"`` for a count. Something that cannot be the kind of answer asked for gets a
  sentence and is not counted as a try.
* A wrong prediction is named (reversed, a word too many, ...) without the engine's
  value; the value is shown after a second wrong try, and then recorded as seen.
* Guessing is not solving: a prediction with only a few possible answers (a yes/no, or
  a fact that lists its ``choices``) that comes out right after a wrong try was found by
  elimination, and the item counts as solved after seeing the answer.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..feedback import words
from ..feedback.check import check_gradient
from ..feedback.inputs import AnswerProblem, as_answer
from ..feedback.result import Result
from . import store

KINDS = ("exact", "number", "shape", "set", "sequence")


@dataclass(frozen=True)
class Fact:
    """What the engine showed (``value``), how to compare, and why (``explain``)."""

    value: Any
    explain: str
    kind: str = "exact"
    context: Mapping = field(default_factory=dict)  # for kind="number": check_gradient context
    accept: tuple = ()  # other answers that count as right (e.g. "none" for an empty set)
    choices: tuple = ()  # every possible answer, when there are only a few (a yes/no has 2)
    what: str = ""  # the quantity asked, for a malformed answer: "a number of bytes"

    @property
    def few_choices(self) -> bool:
        """Whether a right answer after a wrong one may have been found by elimination."""
        return isinstance(self.value, bool | np.bool_) or 0 < len(self.choices) <= 4


_MAX_SHOWN = 80  # characters of a value quoted back (a 10⁷-element answer is not echoed)


def _clip(text: str, limit: int = _MAX_SHOWN) -> str:
    return text if len(text) <= limit else text[:limit - 3] + "..."


def _show(value) -> str:
    if isinstance(value, set | frozenset):
        return _clip("{" + ", ".join(sorted(map(str, value))) + "}") if value else "nothing"
    if isinstance(value, tuple) and all(isinstance(v, int | np.integer) for v in value):
        return _clip(words.shape(value))
    if isinstance(value, np.ndarray):
        if value.size > 8:
            return f"an array of shape {words.shape(value.shape)}"
        return _clip(np.array2string(value, precision=4, separator=", "))
    if isinstance(value, float | np.floating):
        return words.number(value)
    return words.short(value, _MAX_SHOWN)


def _kind_of(value) -> str:
    """What a malformed prediction is, in a few words."""
    if isinstance(value, np.ndarray):
        return f"an array of shape {words.shape(value.shape)}"
    if callable(value):
        return f"a function ({words.short(value, 40)})"
    return f"{words.a_type(value)} ({words.short(value, 40)})"


def _as_shape(value):
    if isinstance(value, bool):
        return None
    if isinstance(value, int | np.integer):
        return (int(value),)
    if isinstance(value, str):
        if len(value) > 100:
            return None
        digits = [int(t) for t in value.replace("(", " ").replace(")", " ").replace(",", " ")
                  .split() if t.isdigit()]
        return tuple(digits) if digits else None
    if isinstance(value, list | tuple) and len(value) <= 32 and all(
            isinstance(v, int | np.integer) and not isinstance(v, bool) for v in value):
        return tuple(int(v) for v in value)
    return None


_TRUE = frozenset({"true", "t", "yes", "y", "1"})
_FALSE = frozenset({"false", "f", "no", "n", "0"})


def as_bool(value):
    """A yes/no in the forms learners type (``True``, ``"yes"``, ``"False"``, ``1``, ``0``),
    or None if ``value`` is none of them."""
    if isinstance(value, bool | np.bool_):
        return bool(value)
    if isinstance(value, int | np.integer) and value in (0, 1):
        return bool(value)
    if isinstance(value, str) and len(value) <= 10:
        word = value.strip().strip(".!").lower()
        if word in _TRUE:
            return True
        if word in _FALSE:
            return False
    return None


def _as_set(value) -> frozenset | None:
    if value is None:
        return frozenset()
    if isinstance(value, str):
        if len(value) > 200:
            return None
        value = [v for v in value.replace(" and ", ",").split(",")]
    if not isinstance(value, set | frozenset | list | tuple) or len(value) > 32:
        return None
    if not all(isinstance(v, str) for v in value):
        return None
    return frozenset(v.strip().lower() for v in value
                     if v.strip().lower() not in ("nothing", "none", ""))


def _is_count(value) -> bool:
    return isinstance(value, int | np.integer) and not isinstance(value, bool)


def _as_count(value):
    """A count as a learner may type it (``3``, ``3.0``, ``"3"``), or None."""
    if isinstance(value, str) and value.strip().isdigit() and len(value) < 20:
        return int(value.strip())
    if isinstance(value, int | float | np.number) and not isinstance(value, bool | np.bool_):
        return value
    return None


def _unanswered(given, fact: Fact) -> bool:
    """``...`` is always a placeholder; ``None`` is one unless it could be the answer
    (some facts are "the gradient is None")."""
    if given is Ellipsis:
        return True
    if given is not None:
        return False
    none_is_an_answer = (fact.value is None or any(a is None for a in fact.accept)
                         or any(c is None for c in fact.choices)  # None is a wrong choice
                         or (fact.kind == "set" and not fact.value))  # None reads as "nothing"
    return not none_is_an_answer


def _same(given, value) -> bool:
    """``given == value`` for a plain prediction (bool, str, None, number), never raising:
    a bool is not a number here, text compares without case, and "2" matches 2."""
    if value is None or given is None:
        return given is value
    if isinstance(value, bool | np.bool_):
        return as_bool(given) == bool(value)
    if isinstance(value, str):
        if isinstance(given, str):
            return given.strip().lower() == value.strip().lower()
        if _is_count(given):
            return str(int(given)) == value.strip()
        return False
    if isinstance(value, int | float | np.number):
        return (isinstance(given, int | float | np.number) and not isinstance(given, bool)
                and bool(given == value))
    try:
        return bool(np.all(np.asarray(given) == np.asarray(value)))
    except Exception:  # noqa: BLE001 - any odd object is simply not equal
        return False


def _is_real(value) -> bool:
    return isinstance(value, int | float | np.integer | np.floating) and not isinstance(
        value, bool | np.bool_)


def _number_asked(fact: Fact) -> str:
    """What a number fact asks for, in words: its ``what``, else its shape."""
    if fact.what:
        return fact.what
    shape = np.shape(fact.value)
    return "a number" if shape == () else f"an array of shape {words.shape(shape)}"


def _not_a_number(given, shape: tuple) -> str:
    """Why ``given`` cannot be a number answer of ``shape`` ('' if it can)."""
    try:
        read = as_answer(given, shape)
    except AnswerProblem:
        return _kind_of(given)
    if read.array.shape != tuple(shape):
        got = read.array.shape
        return f"{_kind_of(given)}, which has shape {words.shape(got)}"
    return ""


def _wrong_type(name: str, given, fact: Fact) -> Result | None:
    """A sentence for a prediction that cannot be the kind of answer asked for (not a
    try: diagnosis "type")."""
    value = fact.value
    if isinstance(value, bool | np.bool_) and as_bool(given) is None:
        return Result(False, f"{name} should be True or False; you gave {_kind_of(given)}.",
                      name=name, diagnosis="type")
    if fact.kind == "number" and _is_count(value) and _as_count(given) is None:
        asked = fact.what or "a whole number (a count)"
        return Result(False, f"{name} should be {asked}; you gave {_kind_of(given)}.",
                      name=name, diagnosis="type")
    if fact.kind == "number" and not _is_count(value):
        wrong = _not_a_number(given, np.shape(value))
        if wrong:
            return Result(False, f"{name} should be {_number_asked(fact)}; you gave {wrong}.",
                          name=name, diagnosis="type")
    numbers_or_none = fact.kind == "exact" and all(
        v is None or _is_real(v) for v in (value, *fact.choices, *fact.accept))
    if numbers_or_none and not (given is None or _is_real(given)):
        asked = fact.what or "a number"
        return Result(False, f"{name} should be {asked}; you gave {_kind_of(given)}.",
                      name=name, diagnosis="type")
    if fact.kind == "sequence" and not (isinstance(given, list | tuple) and len(given) <= 64
                                        and all(isinstance(v, str) for v in given)):
        return Result(False, f"{name} should be a list of op names, e.g. ['mul', 'add']; you "
                             f"gave {_kind_of(given)}.", name=name, diagnosis="type")
    return None


def _attempt(name: str, right: bool):
    """(the running Attempt or None, how many wrong tries of this prediction came before);
    a wrong try outside a demonstration is counted."""
    attempt = store.current.get()
    if attempt is None or attempt.demo:
        return attempt, 0
    key = f"{attempt.check}:{name}"
    before = store.read_item(attempt.exercise)["misses"].get(key, 0)
    if not right:
        def count(entry):
            entry["misses"][key] = entry["misses"].get(key, 0) + 1
        store.update(attempt.exercise, count)
    return attempt, before


def _not_yet(name: str, sentence: str, diagnosis: str = "prediction", hint: str = "",
             revealable: bool = True) -> Result:
    """A wrong prediction: the engine's value is shown only after a committed attempt
    (a second wrong try of the same prediction, or ``.reveal()``)."""
    attempt, before = _attempt(name, right=False)
    return Result(False, sentence, name=name, diagnosis=diagnosis, hint=hint,
                  details={"revealable": revealable, "misses_before": before,
                           "attempt": attempt})


def check_fact(name: str, given, fact: Fact) -> Result:
    """One prediction (``given``, called ``name``) against the fact the engine measured.

    A wrong prediction is named (a reversed order, a set with something extra or missing,
    a shape with the batch axis) but the engine's value is shown only after a second wrong
    try of the same prediction, and then progress records that the answer was seen."""
    if fact.kind == "sequence" and isinstance(given, str) and len(given) <= 2000:
        given = [v for v in given.replace(",", " ").split() if v]  # "mul, tanh, add"
    if _unanswered(given, fact):  # a placeholder: say nothing that gives the answer away
        return Result(False, f"{name} is still a placeholder, so there is nothing to check "
                             "yet: replace it with your prediction.", name=name, diagnosis="none")
    if given is None and fact.value is not None and any(c is None for c in fact.choices):
        # None, one of the few choices, but not the engine's (see _unanswered)
        attempt, before = _attempt(name, right=False)
        result = Result(False, f"You said None for {name}, but the engine does compute a "
                               "value for it: is it on a path to the loss?", name=name,
                        diagnosis="none_for_visited",
                        details={"attempt": attempt, "misses_before": before})
    else:
        malformed = _wrong_type(name, given, fact)
        if malformed is not None:
            return malformed
        result = _compare(name, given, fact)
    if result.ok:
        attempt, before = _attempt(name, right=True)
        if before and fact.few_choices and attempt is not None:
            return _by_elimination(name, len(fact.choices) or 2, attempt)
        return result
    attempt, before = result.details.get("attempt"), result.details.get("misses_before", 0)
    if attempt is not None and not attempt.demo and before >= 1:
        return _revealed(name, given, fact, result, attempt)
    tail = (" Try again; after a second wrong try the engine's value is shown."
            if attempt is not None and not attempt.demo else "")
    return Result(False, f"{result.message}{tail}", name=name, diagnosis=result.diagnosis,
                  hint=result._hint)


def guard_few_choices(name: str, right: bool, choices: int) -> Result | None:
    """For an answer with only ``choices`` possible values (a verdict has 2): count a
    wrong one; a right one after a wrong one may have been found by elimination, so it
    counts as seen and this returns the Result that says so (else None)."""
    attempt, before = _attempt(name, right)
    if right and before and attempt is not None:
        return _by_elimination(name, choices, attempt)
    return None


def _by_elimination(name: str, n: int, attempt) -> Result:
    """Right, after a wrong try of a prediction with only ``n`` possible answers: the
    answer may have been found by trying them, so it counts as seen."""
    from .tracking import record_seen

    record_seen(attempt.exercise)
    return Result(True, f"Right. With only {n} possible answers, a right one after a wrong "
                        "try may have been found by elimination, so this item now counts as "
                        "solved after seeing the answer.", name=name, diagnosis="elimination")


def _revealed(name, given, fact, result, attempt) -> Result:
    from .tracking import record_seen

    record_seen(attempt.exercise)
    return Result(False, f"You predicted {_show(given)}; the engine shows {_show(fact.value)}. "
                         f"{fact.explain} (Shown after your second try: this item now counts "
                         "as solved after seeing the answer.)",
                  name=name, diagnosis=result.diagnosis, hint=result._hint)


def _compare(name: str, given, fact: Fact) -> Result:
    """Right, or a wrong prediction named without the engine's value."""
    if fact.kind == "number" and _is_count(fact.value):
        # A count (parameters, ops, passes) is right or wrong: no gradient wording.
        given = _as_count(given)
        if _same(given, fact.value):
            return Result(True, f"Right: the engine counts {fact.value}.", name=name)
        return _not_yet(name, f"You predicted {_show(given)}; that is not the count the "
                              "engine measures.")
    if fact.kind == "number":
        context = {"reference": "what the engine measured", **dict(fact.context)}
        checked = check_gradient(given, fact.value, name=name, **context)
        if checked.ok:  # (an answer that is no number was answered by _wrong_type)
            return checked
        return _not_yet(name, checked.message, checked.diagnosis, checked._hint)
    if fact.kind == "shape":
        got = _as_shape(given)
        if got is None:
            return Result(False, f"{name} should be a shape, a tuple of sizes such as (3, 4); "
                                 f"you gave {_kind_of(given)}.", name=name, diagnosis="type")
        if got == tuple(fact.value):
            return Result(True, f"Right: the engine shows {_show(fact.value)}.", name=name)
        return _not_yet(name, f"You predicted the shape {_show(got)}; that is not the shape "
                              "the engine measures.")
    if fact.kind == "set":
        got = _as_set(given)
        if got is None:
            return Result(False, f"{name} should be a set of words, e.g. {{'input'}} (or "
                                 f"'nothing'); you gave {_kind_of(given)}.", name=name,
                          diagnosis="type")
        want = frozenset(v.lower() for v in fact.value)
        names = fact.context.get("names")  # the words the answer is made of, if listed
        unknown = sorted(got - {n.lower() for n in names}) if names else []
        if unknown:  # a word that cannot be right is not a try
            return Result(False, f"{words.listing(map(repr, unknown))} "
                                 f"{'is' if len(unknown) == 1 else 'are'} not among "
                                 f"{words.listing(names)}: name yours from those, as a set "
                                 "of words.", name=name, diagnosis="type")
        if got == want:
            return Result(True, f"Right: the engine shows {_show(fact.value)}.", name=name)
        extra, missing = got - want, want - got
        # what a word too many and a word missing are, in the item's own terms
        # (context "extra" / "missing", with {n}, {s} and {is}); by default, saved tensors
        say = {"extra": "{n} of your words {is} not kept",
               "missing": "{n} value{s} it keeps {is} missing", **dict(fact.context)}
        what = [say[k].format(n=len(v), s="" if len(v) == 1 else "s",
                              **{"is": "is" if len(v) == 1 else "are"})
                for k, v in (("extra", extra), ("missing", missing)) if v]
        return _not_yet(name, f"Not quite: {' and '.join(what)}.", "set")
    if fact.kind == "sequence":
        got = [str(v).strip().lower() for v in given]
        want = [str(v).strip().lower() for v in fact.value]
        if got == want:
            return Result(True, "Right: that is the order the engine shows.", name=name)
        if got == list(reversed(want)):
            return _not_yet(name, "You gave the order in reverse: that is the order the ops "
                                  "ran forward.", "reversed")
        if sorted(got) != sorted(want):
            return _not_yet(name, f"Your list does not hold the same ops as the engine's "
                                  f"({len(got)} names given, {len(want)} visited).", "sequence")
        first = next(i for i, (a, b) in enumerate(zip(got, want)) if a != b)
        return _not_yet(name, f"The right ops, in another order: the first difference is at "
                              f"position {first}.", "sequence")
    right = _same(given, fact.value) or any(_same(given, a) for a in fact.accept)
    if right:
        return Result(True, f"Right: the engine shows {_show(fact.value)}.", name=name)
    return _not_yet(name, f"You predicted {_show(given)}; that is not what the engine "
                          "measures.")


def reveal(name: str, fact: Fact) -> Result:
    """The engine's value and the reason, on request (progress records it as seen)."""
    return Result(False, f"The engine shows {_show(fact.value)}. {fact.explain}", name=name,
                  diagnosis="revealed")


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


def predicting(facts: Callable[..., Mapping[str, Fact] | Result],
               options: tuple[str, ...] = ()) -> Callable[..., Result]:
    """The check of a prediction item: one prediction per fact ``facts()`` measures, by
    name; keyword ``options`` (a problem variant) go to ``facts`` instead, which may
    answer a bad one with a Result. The check keeps ``facts`` (``check.facts``), so
    progress and the tests read an item's answers from the item itself.

    >>> check = predicting(lambda: {"grad_is_none": Fact(True, "Never visited.")})
    >>> check(grad_is_none="yes").ok
    True
    """

    def check(**given) -> Result:
        chosen = {k: given.pop(k) for k in options if k in given}
        measured = facts(**chosen)
        if isinstance(measured, Result):
            return measured
        return check_predictions(given, measured)

    check.facts = facts
    check.__doc__ = facts.__doc__
    named = getattr(facts, "__name__", "facts").lstrip("_")
    check.__name__ = check.__qualname__ = f"check_{named}"
    return check


def answer_names(check: Callable) -> tuple[str, ...]:
    """The predictions a check made by :func:`predicting` takes (() for another check)."""
    facts = getattr(check, "facts", None)
    if facts is None:
        return ()
    if check not in _NAMES:
        measured = facts()
        _NAMES[check] = tuple(measured) if not isinstance(measured, Result) else ()
    return _NAMES[check]


_NAMES: dict[Callable, tuple[str, ...]] = {}
