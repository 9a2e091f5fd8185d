"""An :class:`Exercise` and the registry of exercises by question-bank ID.

An exercise has an ID, a title, a kind, one or more check callables, a hint and a
solution (shown only on request; between them, for some, a code skeleton: stepped help,
nudge → skeleton → solution), and optionally a problem (the data to work on),
a snippet (buggy code to fix), options (true/false justifications) and an
experiment (a function that runs the engine and shows the claim).

The words (title, question, hint, skeleton, solution) live in ``texts.toml`` beside this file,
by ID, so the Python modules hold only the checks; an exercise built with its words
given as arguments uses those instead.

Every route that tells a learner an answer records it, on the learner's own item:
``.solution``, ``.reveal()``, a Result's ``.solution()``, ``.experiment()`` and a snippet
that gives another item away (``snippet_gives``) before the item is solved record the
solution as seen; ``.skeleton`` records help (weaker: "solved with the skeleton"); a
demonstration runs only on another problem than the learner's (see :mod:`.demos`). The
solution's text is kept off the exercise and its Results: only those routes read it.
``texts()`` gives the words a learner reads before any help (never a skeleton or a
solution).

Calling an exercise runs its first check: ``exercises.G6(my_g6)``.
"""

from __future__ import annotations

import difflib
import importlib
import inspect
from collections.abc import Callable, Mapping
from functools import cache
from types import MappingProxyType
from typing import Any

from autograd_core.recording.default_dtype import default_dtype_as

from ..feedback.result import Result, Text
from . import demos, engine_watch, learner, store
from .ids import COURSE_IDS, EXERCISE_IDS, _item_words

KINDS = ("derivation", "true_false", "spot_error", "prediction", "write_backward")

# The modules that register exercises, imported once by ``registry()``.
_ITEM_MODULES = (
    "graph_items", "sweep_order", "derivations", "layer_items", "spot_error", "backprop_bugs",
    "true_false", "why_items", "edge_items", "forward_items", "backward_check", "own_gradcheck",
    "by_hand", "capstone_tasks", "second_order", "attention",
)

_REGISTRY: dict[str, Exercise] = {}
_LAST: dict[str, Result] = {}  # the last result of each exercise in this kernel
# Each exercise's worked solution, by ID: read only through Exercise._reveal (recorded).
_WORKED: dict[str, Text] = {}
# Called with (exercise ID, check name, args, kwargs, Result) after every check that is not
# a demonstration: the course's autograder records the answers a graded notebook passed.
_ANSWER_WATCHERS: list[Callable[[str, str, tuple, dict, Result], None]] = []

# Results that are not a try at the item: nothing given yet, a misspelled name, a call the
# check could not read. They are shown, but progress does not record them.
NOT_AN_ATTEMPT = frozenset({"none", "unknown_name", "call", "check_error", "no_reason",
                            "thread"})


class Exercise:
    """One question-bank item as something a learner can run.

    >>> ex = registry()["G6"]                   # doctest: +SKIP
    >>> ex(my_g6)                               # doctest: +SKIP
    """

    def __init__(self, id: str, kind: str, checks: Mapping[str, Callable[..., Result]],
                 *, title: str | None = None, hint: str | None = None,
                 solution: str | None = None, question: str | None = None,
                 level: str | None = None, problem: Callable[..., Any] | None = None,
                 snippet: str | None = None, options: Mapping[str, str] | None = None,
                 experiment: Callable[..., Any] | None = None, skeleton: str | None = None,
                 tries: int | None = None, snippet_gives: tuple[str, ...] = ()):
        if kind not in KINDS:
            raise ValueError(f"unknown exercise kind {kind!r}; one of {KINDS}")
        if not checks:
            raise ValueError(f"exercise {id} needs at least one check")
        words = _all_words().get(id, {})
        title = title if title is not None else words.get("title")
        hint = hint if hint is not None else words.get("hint")
        solution = solution if solution is not None else words.get("solution")
        question = question if question is not None else words.get("question", "")
        skeleton = skeleton if skeleton is not None else words.get("skeleton")
        snippet = snippet if snippet is not None else words.get("snippet")
        if title is None or hint is None or solution is None:
            raise ValueError(f"exercise {id} needs a title, a hint and a solution: give them "
                             "as arguments or in widgets/exercises/texts.toml")
        self.id = id
        self.title = title
        self.kind = kind
        self.level = level
        self.question = Text(question or title)
        self._checks = MappingProxyType(dict(checks))
        # What a learner reaches as G4.checks["order"]: each runs through run(), recorded.
        self.checks = MappingProxyType({name: self._routed(name, fn)
                                        for name, fn in checks.items()})
        self.hint = Text(hint)
        _WORKED[id] = Text(solution)
        self._snippet = Text(snippet) if snippet else None
        # The items whose answer the snippet gives away (G12's holds most of G5's).
        self.snippet_gives = tuple(snippet_gives)
        # The items whose answer the worked solution holds most of (G7's conv backward is
        # B2's): reading it before those are solved counts as seeing their solution too.
        self.solution_gives = tuple(words.get("solution_gives", ()))
        self._skeleton = Text(skeleton) if skeleton else None
        self.options = MappingProxyType(dict(options)) if options else None
        self._problem = problem
        self._experiment = experiment
        # Wrong checks (and measurements) allowed before a right answer counts as found by
        # search: for items a loop over every candidate could otherwise solve.
        self.tries = tries

    # -- running checks -------------------------------------------------------------
    def check(self, *args, hint: bool = False, demo: bool = False, **kwargs) -> Result:
        """Run the main check on your answer; the Result prints the feedback.
        ``demo=True`` runs it as a demonstration (another problem only, never recorded)."""
        return self.run(next(iter(self.checks)), *args, hint=hint, demo=demo, **kwargs)

    __call__ = check

    def demo(self, *args, check: str | None = None, **kwargs) -> Result:
        """Run a check as a demonstration (a lesson showing what a mistake looks like) on
        another problem than yours (``G6.demo(..., square=True)``): the feedback is shown,
        nothing is recorded. On your own problem it is refused (see :mod:`.demos`)."""
        return self.run(check or next(iter(self.checks)), *args, demo=True, **kwargs)

    def run(self, check: str, *args, hint: bool = False, demo: bool = False,
            **kwargs) -> Result:
        """Run one named check of this exercise (see ``.checks``)."""
        if check not in self.checks:
            near = difflib.get_close_matches(str(check), list(self.checks), n=1)
            tip = f" (did you mean {near[0]!r}?)" if near else ""
            result = Result(False, f"{self.id} has no check called {str(check)[:40]!r}{tip}; "
                                   f"its checks are {', '.join(map(repr, self.checks))}.",
                            diagnosis="call")
            return result.presented(title=self.heading)
        title = self.heading + (" · demonstration (not recorded in your progress)"
                                if demo else "")
        # a check on another problem (G2(..., size=8)) is recorded under that problem's
        # name, never as the learner's own parts; a yes/no on it would tell their own
        variant = "" if demo else demos.variant(self, check, kwargs)
        if demo or variant:
            refused = (demos.refusal if demo else demos.same_on_every_problem)(
                self, check, kwargs)
            if refused is not None:
                return refused.presented(title=title)
        fn = self._checks[check]
        token = store.current.set(store.Attempt(self.id, check, demo))
        try:
            with default_dtype_as("float64"):  # whatever default the learner set
                result = _call_problem(self.id, fn, args, kwargs)
                if result is None:
                    result = fn(*args, **kwargs)
        except Exception as error:  # noqa: BLE001 - every call a learner makes gets a sentence
            result = Result(False, f"The check could not read what you passed "
                                   f"({learner.describe(error)[:120]}). Pass your answer as "
                                   f"the question shows: {self.id}.question.",
                            diagnosis="check_error")
        finally:
            store.current.reset(token)
        if demo:
            refused = demos.refusal_after(self, check, kwargs, result)
            if refused is not None:
                return refused.presented(title=title)
        result = result.presented(title=title, hint=self.hint, show_hint=hint,
                                  on_reveal=self._reveal)
        if demo:
            return result
        _LAST[self.id] = result
        for watcher in _ANSWER_WATCHERS:
            watcher(self.id, check, args, kwargs, result)
        if result.diagnosis not in NOT_AN_ATTEMPT:
            from .tracking import record

            note = record(self, check, result, variant=variant)
            if note:
                result.message = f"{result.message}\n{note}"
        return result

    def _routed(self, check: str, fn: Callable[..., Result]) -> Callable[..., Result]:
        """``self.run(check, ...)`` with the check's name, words and signature, but not the
        check itself: no ``__wrapped__`` leads past the recording."""
        def routed(*args, **kwargs) -> Result:
            return self.run(check, *args, **kwargs)

        routed.__name__, routed.__qualname__ = fn.__name__, fn.__qualname__
        routed.__doc__ = fn.__doc__
        routed.__signature__ = inspect.signature(fn)
        # the check's parts, and nothing else of it: no way back to it, nor the kind behind
        # it (a prediction's facts, a derivation's cases and their answers; the raw check in
        # ._checks keeps them, for progress and the tests)
        if hasattr(fn, "parts"):
            routed.parts = fn.parts
        return routed

    @property
    def solution(self) -> Text:
        """The worked solution. Asking for it is recorded: an item solved after this counts
        as "solved after seeing the solution"."""
        return self._reveal()

    def reveal(self) -> Text:
        """Show the worked solution (and the answers of a prediction item); recorded."""
        return self.solution

    def _reveal(self) -> Text:
        """The worked solution, recorded as seen: every route to it comes through here
        (with the items it gives away, ``solution_gives``)."""
        from .tracking import helper_measured

        self._record_seen()
        for other in self.solution_gives:
            helper_measured(other, "solution")
        return _WORKED[self.id]

    def _record_seen(self) -> None:
        from .tracking import record_seen

        record_seen(self.id)

    @property
    def skeleton(self) -> Text | None:
        """The second step of help, after the hint: code with the blanks still to fill.
        Reading it is recorded as help: an item solved after it is "solved with the
        skeleton" (weaker than seeing the solution)."""
        if self._skeleton is not None:
            from .tracking import record_help

            record_help(self.id)
        return self._skeleton

    @property
    def snippet(self) -> Text | None:
        """The code the item starts from (buggy code to fix, a module to hunt). Where it
        gives another item's answer away (``snippet_gives``), reading it before that item
        is solved counts as seeing that item's solution."""
        if self._snippet is not None:
            from .tracking import helper_measured

            for other in self.snippet_gives:
                helper_measured(other, "solution")
        return self._snippet

    def problem(self, *args, **kwargs):
        """The data this exercise works on (the same every run)."""
        if self._problem is None:
            raise AttributeError(f"{self.id} has no problem data; read its question instead.")
        problem = self._problem(*args, **kwargs)
        if self._own_problem(args, kwargs):  # the engine's backward on it gives the answer
            engine_watch.hand_out(self.id, problem)
        return problem

    def _own_problem(self, args: tuple, kwargs: dict) -> bool:
        """Whether ``problem(*args, **kwargs)`` is one the learner answers: their own, or
        one whose parts the item requires (G7's strided problem); not a demonstration's."""
        from .tracking import required_parts

        try:
            options = inspect.signature(self._problem).bind_partial(*args, **kwargs).arguments
        except TypeError:
            return False
        checks = [name for name in self._checks if demos.problem_options(self, name)]
        variants = {demos.variant(self, name, dict(options)) for name in checks} or {""}
        return any(v == "" or any(f"({v})" in part for part in required_parts(self))
                   for v in variants)

    def experiment(self, *args, **kwargs):
        """Run the engine experiment that shows the answer (returns a result object).
        Before the item is solved this is a way of seeing its answer, and is recorded as
        one (the item then counts as "solved after seeing the solution")."""
        if self._experiment is None:
            raise AttributeError(f"{self.id} has no separate experiment: its check runs one.")
        from .tracking import status

        if not status(self.id).startswith("solved"):
            self._record_seen()
            print(f"({self.id}.experiment() shows what {self.id} asks for: run before "
                  f"{self.id} is solved, it counts as seeing the solution.)")
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


def _call_problem(exercise_id: str, fn: Callable, args: tuple, kwargs: dict) -> Result | None:
    """A sentence for a call the check cannot take (an answer passed by position to a check
    that takes names, a misspelled name, too many answers), or None if the call fits."""
    try:
        signature = inspect.signature(fn, follow_wrapped=False)
        signature.bind(*args, **kwargs)
        return None
    except (TypeError, ValueError):
        pass
    params = [p for p in signature.parameters.values()
              if p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)]
    names = [p.name for p in params]
    takes_names = any(p.kind == p.VAR_KEYWORD for p in signature.parameters.values())
    unknown = [k for k in kwargs if k not in names]
    if unknown and not takes_names and names in (["fn"], ["op"]):
        what = "function" if names == ["fn"] else "op class"
        return Result(False, f"{exercise_id} takes your {what} by position, not by name: "
                             f"{exercise_id}(your_{what.split()[0]}).", diagnosis="unknown_name")
    if unknown and not takes_names:
        tips = []
        for k in unknown:
            near = difflib.get_close_matches(k, names, n=1, cutoff=0.5)
            tips.append(f"{k[:40]!r}" + (f" (did you mean {near[0]!r}?)" if near else ""))
        takes = ", ".join(names) if names else "no named answers"
        return Result(False, f"{exercise_id} has no answer called {', '.join(tips)}; it takes "
                             f"{takes}.", diagnosis="unknown_name")
    if args and takes_names and not names:
        try:
            example = fn().message
        except Exception:  # noqa: BLE001
            example = ""
        return Result(False, f"{exercise_id} takes its answers by name, not by position. "
                             f"{example}".strip(), diagnosis="call")
    most = len([p for p in params if p.kind != p.KEYWORD_ONLY])
    return Result(False, f"{exercise_id} takes at most {most} answer{'s' if most != 1 else ''} "
                         f"by position ({', '.join(names) or 'none'}); you passed {len(args)}.",
                  diagnosis="call")


# Words in texts.toml that state an answer: read only through routes that record it.
ANSWER_WORDS = frozenset({"solution", "settled"})
# Words that help short of the answer: read only through ``.skeleton``, which records it.
HELP_WORDS = frozenset({"skeleton"})


def _all_words() -> Mapping[str, Mapping[str, Any]]:
    """Every word of every exercise in ``texts.toml``, answers included (for the
    exercises themselves, which show them only through a recorded route)."""
    return _item_words()


@cache
def texts() -> Mapping[str, Mapping[str, Any]]:
    """The words a learner reads before answering, by exercise ID (title, question,
    hint, ...): never a solution, a settled verdict or a skeleton (``.skeleton`` records
    it)."""
    return MappingProxyType({i: MappingProxyType({k: v for k, v in w.items()
                                                  if k not in ANSWER_WORDS | HELP_WORDS})
                             for i, w in _all_words().items()})


def register(exercise: Exercise) -> Exercise:
    """Add an exercise to the registry; each question-bank ID exactly once."""
    if exercise.id in _REGISTRY:
        raise ValueError(f"exercise {exercise.id} is registered twice")
    if exercise.id not in EXERCISE_IDS:
        raise ValueError(f"{exercise.id} is not an exercise ID (ids.py)")
    _REGISTRY[exercise.id] = exercise
    return exercise


def registry() -> Mapping[str, Exercise]:
    """Exercise ID -> :class:`Exercise`: the question bank's in its order, then the course's
    own (read-only).

    >>> "G5" in registry()
    True
    """
    for module in _ITEM_MODULES:
        importlib.import_module(f"{__package__}.{module}")
    return MappingProxyType({i: _REGISTRY[i] for i in EXERCISE_IDS if i in _REGISTRY})


def check(exercise_id: str, *args, hint: bool = False, **kwargs) -> Result:
    """Run the main check of a question-bank item: ``check("G6", my_g6)``."""
    exercises = registry()
    if exercise_id not in exercises:
        return _no_such_item(exercise_id)
    return exercises[exercise_id].check(*args, hint=hint, **kwargs)


def _no_such_item(exercise_id) -> Result:
    near = difflib.get_close_matches(str(exercise_id).upper(), list(registry()), n=1)
    tip = f" Did you mean {near[0]!r}?" if near else ""
    return Result(False, f"There is no exercise {str(exercise_id)[:20]!r}; the IDs are G1–G14, "
                         f"T1–T10, S1–S6, W1–W6, E1–E6, L1–L9 and the course's own "
                         f"{', '.join(COURSE_IDS)}.{tip}", diagnosis="call")


def demo(exercise_id: str, *args, check: str | None = None, **kwargs) -> Result:
    """Run a check as a demonstration on another problem than yours:
    ``demo("G7", my_g7, stride=1, padding=1)``. The feedback is shown, but nothing is
    recorded (neither progress nor the last result of the item)."""
    exercises = registry()
    if exercise_id not in exercises:
        return _no_such_item(exercise_id)
    return exercises[exercise_id].demo(*args, check=check, **kwargs)


def watch_answers(watcher: Callable[[str, str, tuple, dict, Result], None]) -> None:
    """Call ``watcher(exercise_id, check, args, kwargs, result)`` after every check run that
    is not a demonstration (the autograder records a graded notebook's answers with it)."""
    if watcher not in _ANSWER_WATCHERS:
        _ANSWER_WATCHERS.append(watcher)


def last_results() -> Mapping[str, Result]:
    """The last result of every exercise checked in this kernel (read-only)."""
    return MappingProxyType(dict(_LAST))


def forget_results() -> None:
    """Clear the record of past results (a fresh start for the progress summary)."""
    _LAST.clear()
