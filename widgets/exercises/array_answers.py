"""The kind "derive these gradients, as a function of the problem": a :class:`Gradients`.

An item of this kind is data: its problem (and the options that draw another one, such
as G2's ``size``), the engine's answer for each named part, and what the gradient checker
needs to name a mistake in each part (the input it is the gradient of, the known wrong
answers built from the same data). The learner answers with one function of the problem,
the derivation written in NumPy::

    def my_g6(p):
        return {"dA": ..., "dB": ...}      # computed from p.A, p.B and p.G

    G6(my_g6)

The rules live here, once:

* **Worked by hand.** Every call of the learner's function runs under
  :func:`.learner.by_hand`: an engine op, or a call into the engine's code, inside it is
  refused with a sentence, so the engine cannot do the derivation for the function.
* **A closed form, not a measurement.** A part right to the checker's tolerance must
  agree with the engine near machine precision too (:func:`.function_cases.not_closed_form`:
  a closed form in float64 to about 1e-15, central differences at best to about 1e-10), or
  it gets one sentence saying it looks measured, not derived. A complex step, which does
  reach machine precision, and a library that measures derivatives are refused by
  :func:`.learner.by_hand`.
* **Named on the learner's own numbers.** The function runs on the learner's own problem
  first, and every part it returns is compared with the engine's gradient there: a wrong
  part gets the checker's sentence naming its mistake (a transpose, a missing factor),
  never the value; a part wrong in no named way may get the item's own sentence saying
  *where* it is wrong, by the kind of entry (``where``: G2's loser, winner, tie).
* **Probed on problems nobody was given.** Each part right on the learner's problem is
  checked again on ``UNSEEN`` more problems of the same options, drawn at check time from
  a secret seed (:func:`.problems.unseen`). Arrays worked out elsewhere (the engine run on
  a disguised copy of the problem) are right on the learner's own problem only: such a
  part gets one sentence saying the function must compute it from ``p``'s arrays, never
  a value.
* **One form.** Arrays passed by name as before (``G6(dA=...)``), a function per part, a
  dict or a tuple handed in, a function returning anything but a dict of the parts: each
  gets a sentence naming the form, and counts as no try.
* Another problem is drawn only through its options, so the gate records a check on it
  under that problem's name (see :mod:`.demos`), and an option the problem refuses is a
  sentence.

An item whose function has another form (G10's ``embedding_backward(ids, G, num_rows)``,
returning dW itself) says so with ``arguments``, ``returns`` and ``form``.
"""

from __future__ import annotations

import difflib
import inspect
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..feedback.check import check_gradient
from ..feedback.inputs import as_expected
from ..feedback.result import Result
from . import learner
from .function_cases import not_closed_form
from .parts import named_answers
from .problems import Problem, problem_for, unseen

UNSEEN = 2  # the problems nobody was given that a function right on its own is run on
NOT_FROM_P = "not_from_problem"


def _no_context(problem: Problem, right: Mapping[str, Any]) -> Mapping[str, dict]:
    return {}


def _the_problem(problem: Problem) -> tuple:
    return (problem,)


@dataclass(frozen=True)
class Gradients:
    """One item of the kind. ``engine(problem)`` gives the right value of each part (a
    Tensor's gradient or an array); ``context(problem, right)`` gives, per part,
    :func:`check_gradient`'s context (``of=``, ``mistakes=``, ``batch_size=`` ...);
    ``options`` are the problem's own options with their defaults; ``where(part, given,
    right, problem)`` may say where a part wrong in no named way is wrong; ``label(result,
    problem)`` may rename a part on another problem (G6's "dA (square)"); ``present(result,
    problem, answers)`` may lay the verdict out another way, from the learner's own problem
    and the answers read there (H1's table, one row per tensor).

    The learner's function is called as ``fn(*arguments(problem))`` (``fn(p)`` unless
    said) and returns a dict by part name, or, with ``returns``, that one part's array;
    ``form`` is how a lesson writes it (``("my_g6", "p")``: its name and parameters) and
    ``call`` how it is checked (``"G6(my_g6)"``)."""

    item: str
    parts: tuple[str, ...]
    problem: Callable[..., Problem]
    engine: Callable[[Problem], Mapping[str, Any]]
    context: Callable[[Problem, Mapping[str, Any]], Mapping[str, dict]] = _no_context
    options: Mapping[str, object] = field(default_factory=dict)
    where: Callable[[str, Any, Any, Problem], Result | None] | None = None
    label: Callable[[Result, Problem], Result] | None = None
    arguments: Callable[[Problem], tuple] = _the_problem
    returns: str | None = None
    form: tuple[str, str] = ("", "p")
    call: str = ""
    present: Callable[[Result, Problem, Mapping[str, Any]], Result] | None = None

    # -- the words ------------------------------------------------------------------------
    @property
    def name(self) -> str:
        """The learner's function's name in the lesson: ``my_g6``."""
        return self.form[0] or f"my_{self.item.lower()}"

    def written(self) -> str:
        """How the function is written and checked, as a sentence's end."""
        if self.returns is not None:
            value = self.returns
        else:
            value = "{" + ", ".join(f'"{k}": ...' for k in self.parts) + "}"
        call = self.call or f"{self.item}({self.name})"
        return f"`def {self.name}({self.form[1]}): return {value}`, then `{call}`"

    def _how(self, what: str) -> Result:
        return Result(False, f"{self.item} takes your derivation as one function of the "
                             f"problem, written with NumPy, not {what}: "
                             f"{self.written()}.", diagnosis="call")

    # -- the check ------------------------------------------------------------------------
    def check(self, fn, options: Mapping[str, object], given: Mapping[str, Any]) -> Result:
        """Grade the learner's function ``fn`` on the problem ``options`` draw, then on
        problems nobody was given; ``given``: whatever else was passed by name."""
        p = problem_for(self.item, self.problem, **options)  # a problem it has, first
        if isinstance(p, Result):
            return p
        refused = self._refused(fn, given)
        if refused is not None:
            return refused
        answers = self._answers(fn, p)
        if isinstance(answers, Result):
            return answers
        right = self.engine(p)
        context = self.context(p, right)
        results = {}
        for part in (k for k in self.parts if k in answers):
            result = check_gradient(answers[part], right[part], name=part,
                                    **context.get(part, {}))
            if result.ok:  # right to the checker's tolerance: derived, or measured?
                result = derived(result, answers[part], right[part], part)
            if self.where is not None and result.diagnosis == "values":
                where = self.where(part, answers[part], right[part], p)
                result = result if where is None else where  # (a wrong Result is falsy)
            results[part] = result
        results.update(self._unseen(fn, options, [k for k, r in results.items() if r.ok],
                                    results))
        verdict = Result.combine([self.label(r, p) if self.label else r
                                  for r in results.values()])
        return verdict if self.present is None else self.present(verdict, p, answers)

    def _refused(self, fn, given: Mapping[str, Any]) -> Result | None:
        """The sentence for an answer not in the one form (arrays by name, a function per
        part, no function), or None."""
        if given:
            lower = {k.lower() for k in self.parts}
            if any(k.lower() in lower for k in given):
                per_part = any(callable(v) for v in given.values())
                return self._how("a function per part" if per_part else "arrays by name")
            named = ", ".join(_near(k, self.options) for k in given)
            options = "".join(f", {k}=..." for k in self.options)
            return Result(False, f"{self.item} has no option called {named}; it takes your "
                                 f"function{' and ' + options[2:] if options else ''}: "
                                 f"{self.written()}.", diagnosis="unknown_name")
        if fn is None:
            return Result(False, f"Nothing to check yet: write your derivation as "
                                 f"{self.written()}.", diagnosis="none")
        if not callable(fn):
            return self._how(_what_it_is(fn))
        return None

    def _answers(self, fn, p: Problem) -> dict | Result:
        """``fn`` run by hand on ``p``, its value read as {part: answer}; or the Result
        saying why it cannot be read (it raised, used the engine, returned another form)."""
        what = _name_of(fn)
        try:
            out = learner.by_hand(fn, *self.arguments(p), what=what)
        except learner.LearnerCodeFailed as exc:
            return learner.failed(exc)
        what = what or "function"
        if out is None:
            return Result(False, f"Your {what} returns None: nothing to check yet (finish "
                                 f"it as {self.written()}).", diagnosis="none")
        if self.returns is not None:
            return {self.returns: out}
        if not isinstance(out, Mapping):
            return self._returned(what, _what_it_is(out))
        if not out or not all(isinstance(k, str) for k in out):
            return self._returned(what, "a dict whose keys are not the parts' names"
                                  if out else "an empty dict")
        unknown = named_answers(dict(out), self.parts)  # a misspelled key: which one
        if unknown is not None:
            return unknown
        if all(v is None for v in out.values()):
            return Result(False, f"Your {what} returns None for every part: nothing to "
                                 "check yet.", diagnosis="none")
        return dict(out)

    def _returned(self, what: str, it: str) -> Result:
        return Result(False, f"Your {what} returned {it}; it should return a dict of your "
                             f"gradients by name: {self.written()}.", diagnosis="call")

    def _unseen(self, fn, options: Mapping[str, object], parts: list[str],
                own: Mapping[str, Result]) -> dict[str, Result]:
        """Each of ``parts`` (right on the learner's problem) checked again on problems
        nobody was given: its own Result where it stays right, else the sentence."""
        if not parts:
            return {}
        wrong: dict[str, str] = {}
        code = NOT_FROM_P  # the engine used there says so in its own code
        for _ in range(UNSEEN):
            with unseen():  # drawn here; the learner's code runs outside
                q = self.problem(**options)
            right = self.engine(q)
            answers = self._answers(fn, q)
            for part in parts:
                if part in wrong:
                    continue
                if isinstance(answers, Result):
                    wrong[part] = answers.message[:1].lower() + answers.message[1:]
                    code = answers.diagnosis if answers.diagnosis == "uses_engine" else code
                elif not check_gradient(answers.get(part), right[part]).ok:
                    wrong[part] = ""
        what = _name_of(fn) or "your function"
        found = {}
        for part in parts:
            if part not in wrong:
                found[part] = Result(True, f"{own[part].message} Right on {UNSEEN} problems "
                                           "drawn at check time too.", name=part)
            elif wrong[part]:
                found[part] = Result(False, f"Your {part} is right on your own problem, but "
                                            f"on another problem of the same kind: "
                                            f"{wrong[part]}", name=part, diagnosis=code)
            else:
                found[part] = Result(
                    False, f"Your {part} is right on your own problem but not on another "
                           f"problem of the same kind, drawn at check time: {what} must "
                           f"compute it from the arrays of the problem it is given (numbers "
                           "worked out elsewhere do not carry over).", name=part,
                    diagnosis=NOT_FROM_P, hint="Write every line of the function with "
                                               "NumPy, from its argument's arrays only.")
        return found


def derived(result: Result, given, right, part: str) -> Result:
    """``result`` (right to the checker's tolerance) for a part derived by hand, or the
    sentence saying it agrees with the engine only as a measurement does: where the engine's
    answer is in float64, a closed form agrees near machine precision
    (:func:`.function_cases.not_closed_form`)."""
    reference = as_expected(right)
    if reference.dtype != np.float64:
        return result
    measured = not_closed_form(given, reference, part)
    return result if measured is None else measured


def _near(name: str, options) -> str:
    """'sise' (did you mean 'size'?): a misspelled option, with the one it is near."""
    near = difflib.get_close_matches(name, list(options), n=1, cutoff=0.5)
    return f"{name[:40]!r}" + (f" (did you mean {near[0]!r}?)" if near else "")


def _name_of(fn) -> str:
    name = getattr(fn, "__name__", "")
    return name if isinstance(name, str) and name.isidentifier() else ""


def _what_it_is(value) -> str:
    if isinstance(value, dict):
        return "a dict"
    if isinstance(value, tuple | list):
        return f"a {type(value).__name__}"
    if isinstance(value, np.ndarray) or hasattr(value, "grad_fn"):
        return "an array"
    if isinstance(value, bool | int | float | complex | np.generic):
        return "a number"
    return f"a {type(value).__name__}"


def gradients(kind: Gradients, doc: str) -> Callable[..., Result]:
    """The check of an item of the kind: ``ID(fn)``, with the problem's options as
    keywords (``G2(my_g2, size=8)``). Every part is required to solve the item
    (``.parts``); the kind stays on it as ``.gradients``."""

    def check(fn=None, **given) -> Result:
        options = {k: given.pop(k, default) for k, default in kind.options.items()}
        return kind.check(fn, options, given)

    # what the gate reads: each option a keyword-only parameter with its default
    check.__signature__ = inspect.Signature(
        [inspect.Parameter("fn", inspect.Parameter.POSITIONAL_OR_KEYWORD, default=None)]
        + [inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, default=default)
         for name, default in kind.options.items()]
        + [inspect.Parameter("answers", inspect.Parameter.VAR_KEYWORD)],
        return_annotation=Result)
    check.__doc__ = doc
    check.__name__ = check.__qualname__ = f"check_{kind.item.lower()}"
    check.parts = kind.parts
    check.gradients = kind
    return check
