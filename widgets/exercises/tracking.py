"""Honest progress: which items you solved, kept in files that survive a restart.

An item is *solved* only when every part of it has been right (G5 needs dW2, db2 and
delta1; G14 needs dx and both batch predictions). Parts may be checked in separate calls;
each part counts once it has been right. Asking for the solution (``G5.solution``,
``result.solution()``, the widget's Solution button, a prediction shown after a second
wrong try) is recorded, and an item solved after that is "solved after seeing the
solution". Reading an item's skeleton (``G5.skeleton``) is recorded as help, weaker than
the solution: an item solved after it is "solved with the skeleton". A demonstration
(``G7.demo(...)`` on another problem than yours) records nothing, and neither does a
placeholder answer (``None``), so a lesson nobody has worked on shows a fresh start.

>>> Progress("G1", "G2", title="Lesson 1")          # doctest: +SKIP
Lesson 1: nothing checked yet (2 exercises).
  · G1 (J) · Why a training forward pass keeps intermediates ... (not started)
  · G2 (J) · How an elementwise max (ReLU) routes the gradient (not started)
>>> progress()                                      # doctest: +SKIP   (every lesson)

Progress lives in ``~/.autograd-lessons/``, or where the environment variable
``AUTOGRAD_LESSONS_PROGRESS`` points, one append-only file per kernel (see ``store``).
"""

from __future__ import annotations

import html
import json
import os
import sys
from collections.abc import Mapping
from pathlib import Path

from ..feedback.result import MARK_OK, MARK_WRONG, Result
from . import store
from .exercise import registry
from .predictions import answer_names
from .problems import learner_name

# The lessons and the items each one checks, listed once: the last cell of each lesson is
# Progress.lesson("NN"), and progress() reads every lesson from here.
LESSONS: Mapping[str, tuple[str, tuple[str, ...]]] = {
    "01": ("Start here", ("E2",)),
    "02": ("The forward graph", ("G4", "L1", "L2", "L3", "L4", "T3", "W1", "W6")),
    "03": ("The reverse sweep", ("T6", "T8", "T9", "T10", "S1", "S5", "S6", "E1", "E2", "E4",
                                 "E5", "E6", "W3")),
    "04": ("Memory", ("G11", "G1", "T7", "W4", "S4", "L7")),
    "05": ("Matmul and the MLP", ("G6", "G5", "G8", "G9", "G13", "G12")),
    "06": ("Routing: max, pooling, embeddings", ("G2", "G3", "G10", "B1")),
    "07": ("Convolution", ("G7", "B2", "B3")),
    "08": ("Batch norm, dropout, reproducibility", ("G14", "B4", "B5", "B6", "L5", "L6")),
    "09": ("Forward and reverse mode", ("T1", "T2", "W2", "T4", "S3", "T5")),
    "10": ("Checkpointing", ("L8",)),
    "11": ("Debugging", ("L9", "E3", "W5", "S2")),
    "12": ("Capstone", ("C1", "C2")),
    "13": ("Backprop by hand", ("H1", "H2", "H3", "H4")),
    "14": ("The backward pass is a graph too", ("D1", "D2", "D3", "D4")),
    "15": ("A transformer's training memory", ("A1", "A2", "A3")),
}


def parts_of(exercise, check: str) -> tuple[str, ...]:
    """The answers one check of ``exercise`` takes by name, all of them required (() for a
    check whose result is right or wrong as a whole). The check says them itself: a
    derivation's with ``@answers(...)``, a prediction's by its facts."""
    fn = exercise._checks[check]
    return tuple(getattr(fn, "parts", ())) or answer_names(fn)


def required_parts(exercise) -> list[str]:
    """The keys ``check:part`` that must all have been right for the item to be solved."""
    keys = []
    for check in exercise.checks:
        names = parts_of(exercise, check)
        keys += [f"{check}:{n}" for n in names] if names else [f"{check}:"]
    return keys


def _part_results(check: str, result: Result) -> dict[str, bool]:
    """``check:part -> ok`` for what one Result says (every part, and the whole)."""
    found = {f"{check}:{p.name}": p.ok for p in result.parts if p.name}
    if not result.parts and result.name:
        found[f"{check}:{result.name}"] = result.ok
    found[f"{check}:"] = result.ok
    return found


def _on_variant(key: str, variant: str) -> str:
    """``gradients:da`` checked on another problem: ``gradients:da (size=8)``. A part the
    check already names for its problem (G7's ``dx (stride=2, padding=1)``) keeps its name."""
    check, _, part = key.partition(":")
    return key if not variant or " (" in part else f"{check}:{part} ({variant})".replace(
        ": (", ":(")


def record(exercise, check: str, result: Result, variant: str = "") -> str:
    """Record a learner's check of ``exercise`` (never a demonstration or a placeholder);
    returns a sentence about the progress file if something about it went wrong. A check
    on another problem (``variant``, e.g. "size=8") records its parts under that problem's
    name: right there, they are not the parts of the learner's own problem."""
    required = required_parts(exercise)
    placeholders = {f"{check}:{p.name}" for p in result.parts if p.diagnosis == "none"}
    if placeholders:  # the whole says nothing while a part is still a placeholder
        placeholders.add(f"{check}:")
    placeholders = {_on_variant(key, variant) for key in placeholders}
    found = {_on_variant(key, variant): ok for key, ok in _part_results(check, result).items()}

    if not variant:  # what the autograder's replay of a notebook tallies (see _note)
        _note(exercise.id, "right" if result.ok else "try" if _a_wrong_answer(result) else "")
    notes = []

    def change(entry):
        for key, ok in found.items():
            if key in placeholders:
                continue
            part = entry["parts"].setdefault(key, {"ok": False, "ever": False})
            part["ok"] = ok
            part["ever"] = part["ever"] or ok
        if _a_wrong_answer(result):
            entry["misses"][TRIES] = entry["misses"].get(TRIES, 0) + 1
        for key in mistakes_named(check, result):
            entry["misses"][key] = entry["misses"].get(key, 0) + 1
        if entry["solved"] is None and all(entry["parts"].get(k, {}).get("ever")
                                           for k in required):
            entry["solved"] = store.now()
            tries = entry["misses"].get(TRIES, 0)
            searched = exercise.tries is not None and tries > exercise.tries
            entry["after_solution"] = entry["solution_seen"] is not None or searched
            if entry.get("help_seen") is not None and not entry["after_solution"]:
                entry["after_help"] = True
            if searched and entry["solution_seen"] is None:
                notes.append(f"({exercise.id} allows {exercise.tries} tries: after {tries}, "
                             "a right answer may have come from trying many, so it counts "
                             "as solved after seeing the solution.)")

    store.update(exercise.id, change)
    return " ".join([*notes, *store.notices()])


# Keys, kept with the misses, counting each named mistake: "mistake:<check>:<part>:<kind>"
# (the class report ranks them).
MISTAKE = "mistake:"


def mistakes_named(check: str, result: Result) -> list[str]:
    """The named mistakes in one check's Result, as ``mistake:check:part:diagnosis`` keys
    (not a format slip, a placeholder or a right part)."""
    wrong = [p for p in result.parts if not p.ok] or ([] if result.ok else [result])
    return [f"{MISTAKE}{check}:{p.name}:{p.diagnosis}" for p in wrong
            if p.diagnosis and p.diagnosis not in FORMAT_SLIPS | {"none", "correct"}]


# Diagnoses of an answer that could not be read as one (a format slip is not a try).
FORMAT_SLIPS = frozenset({"type", "text", "ragged", "bool", "complex", "unreadable",
                          "reason_format", "call"})


def _a_wrong_answer(result: Result) -> bool:
    """Whether a check's result holds a wrong answer (a try): a part answered wrong, even
    beside a part still a placeholder (C2's module probed without a fix), but not a
    format slip, and not placeholders alone."""
    wrong = [p for p in result.parts if not p.ok] or ([] if result.ok else [result])
    answered = [p for p in wrong if p.diagnosis != "none"]
    return bool(answered) and not all(p.diagnosis in FORMAT_SLIPS for p in answered)


# The count, kept with the misses, of an item's wrong checks and measurements: an item
# with a budget of tries (Exercise(tries=N), the capstone's tasks) solved past it was
# found by search, not thought.
TRIES = "tries:"


def count_try(exercise_id: str) -> None:
    """Count one try of an item outside its check (a measurement of a candidate plan);
    nothing is counted during a demonstration."""
    _note(exercise_id, "try")
    _count_try(exercise_id)


def _count_try(exercise_id: str) -> None:
    if _in_demo():
        return

    def change(entry):
        if entry["solved"] is None:
            entry["misses"][TRIES] = entry["misses"].get(TRIES, 0) + 1

    store.update(exercise_id, change)


def record_seen(exercise_id: str) -> None:
    """Record that the solution of an item was shown (only the first time counts)."""
    _note(exercise_id, "solution")
    _first(exercise_id, "solution_seen")


def record_help(exercise_id: str) -> None:
    """Record that help short of the solution (the item's skeleton) was shown: an item
    solved after it is "solved with the skeleton" (only the first time counts)."""
    _note(exercise_id, "help")
    _first(exercise_id, "help_seen")


# The audit event every try, help and solution shown, and right check is announced by
# (sys.audit), as it happens, whatever the progress store then keeps. In a lesson nobody
# listens; the autograder's sandbox, replaying a graded notebook, tallies them with an audit
# hook of its own, which the notebook's code can neither remove nor reset (``sandbox``).
PROGRESS_EVENT = "autograd_lessons.progress"
_audit = sys.audit


def _note(exercise_id: str, what: str) -> None:
    """Announce ``what`` ("try", "help", "solution", "right") of ``exercise_id``."""
    if what and not _in_demo():
        _audit(PROGRESS_EVENT, exercise_id, what)


def _in_demo() -> bool:
    attempt = store.current.get()
    return attempt is not None and attempt.demo


def _first(exercise_id: str, field: str) -> None:
    if _in_demo():
        return

    def change(entry):
        if entry.get(field) is None:
            entry[field] = store.now()

    store.update(exercise_id, change)


# What a helper that measures an item's answer records, by what the measurement gives.
_HELPER_RECORDS = {"try": _count_try,
                   "help": lambda exercise_id: _first(exercise_id, "help_seen"),
                   "solution": lambda exercise_id: _first(exercise_id, "solution_seen")}


def helper_measured(exercise_id: str, gives: str) -> None:
    """Record that a helper (lesson support, a reference answer) just computed what
    ``exercise_id`` asks: ``gives`` is "try" (a candidate measured, counted against the
    item's tries), "help" or "solution". Nothing is recorded once the item is solved."""
    _note(exercise_id, gives)
    if store.read_item(exercise_id)["solved"] is not None:
        return
    _HELPER_RECORDS[gives](exercise_id)


SOLVED = "solved"
AFTER_SOLUTION = "solved after seeing the solution"
WITH_SKELETON = "solved with the skeleton"


def status(exercise_id: str) -> str:
    """"solved", "solved with the skeleton", "solved after seeing the solution",
    "in progress" or "not started"."""
    entry = store.read_item(exercise_id)
    if entry["solved"]:
        if entry.get("after_solution"):
            return AFTER_SOLUTION
        return WITH_SKELETON if entry.get("after_help") else SOLVED
    if entry["parts"] or entry["misses"]:
        return "in progress"
    return "not started"


def export_progress(path: str | os.PathLike = "my-progress.json") -> str:
    """Write every item's record, merged from all your kernels, to one JSON file you can
    hand in with a submission (or keep); returns a sentence saying where it went. The
    file holds your learner name only if you chose one with ``set_learner``."""
    target = Path(path).expanduser()
    data = {"version": store.VERSION, "exported": store.now(), "learner": learner_name(),
            "items": store.read_all()}
    try:
        target.write_text(json.dumps(data, indent=1, sort_keys=True), encoding="utf-8")
    except OSError as exc:
        return f"Your progress could not be written to {target} ({exc.strerror or exc})."
    solved = sum(1 for entry in data["items"].values() if entry.get("solved"))
    items = "item" if solved == 1 else "items"
    return f"Your progress ({solved} {items} solved) was written to {target}."


def reset_progress() -> None:
    """Forget every recorded result at the current location (start over)."""
    store.reset()


class _Report:
    """Shows ``lines()`` as text (first line, then one line per entry) and as HTML."""

    def lines(self) -> list[str]:
        raise NotImplementedError

    def __repr__(self) -> str:
        return "\n".join(self.lines())

    def _repr_html_(self) -> str:
        first, *rest = self.lines()
        items = "".join(f"<li style='list-style:none'>{html.escape(r.strip())}</li>"
                        for r in rest)
        return f"<div class='ag-progress'><b>{html.escape(first)}</b><ul>{items}</ul></div>"


class Progress(_Report):
    """Progress over a fixed list of exercise IDs, read from the progress file (so it
    survives a kernel restart). Never says "all correct" while one is unsolved."""

    def __init__(self, *ids: str, title: str = "This notebook"):
        known = registry()
        unknown = [i for i in ids if i not in known]
        if unknown:
            raise KeyError(f"unknown exercise IDs {unknown}; known: {', '.join(known)}")
        self.ids = tuple(ids)
        self.title = title

    @classmethod
    def lesson(cls, number: str) -> Progress:
        """The progress of one lesson's exercises, as ``LESSONS`` lists them (the lesson's
        last cell: ``Progress.lesson("05")``), so no lesson types its items a second time."""
        if number not in LESSONS:
            raise KeyError(f"no lesson {number!r}; the lessons are {', '.join(LESSONS)}")
        title, ids = LESSONS[number]
        return cls(*ids, title=f"Lesson {number} · {title}")

    def status(self) -> dict[str, str]:
        """ID -> the item's :func:`status` ("solved", "solved with the skeleton", ...)."""
        return {i: status(i) for i in self.ids}

    @property
    def correct(self) -> int:
        """How many items are solved (with or without seeing the solution)."""
        return sum(s.startswith("solved") for s in self.status().values())

    @property
    def complete(self) -> bool:
        """True only when every item is solved."""
        return self.correct == len(self.ids)

    def summary(self, states: dict[str, str] | None = None) -> str:
        states = states if states is not None else self.status()
        n = len(self.ids)
        if n == 0:
            return f"{self.title}: no exercises in this lesson."
        solved = sum(s.startswith("solved") for s in states.values())
        seen = sum(s == AFTER_SOLUTION for s in states.values())
        helped = sum(s == WITH_SKELETON for s in states.values())
        started = sum(s == "in progress" for s in states.values())
        if solved == 0 and started == 0:
            return f"{self.title}: nothing checked yet ({n} exercise{'s' if n > 1 else ''})."
        if solved == n and not seen and not helped:
            return f"{self.title}: all {n} exercises solved."
        notes = [f"{seen} after seeing the solution"] if seen else []
        notes += [f"{helped} with the skeleton"] if helped else []
        after = f" ({', '.join(notes)})" if notes else ""
        more = f"; {started} in progress" if started else ""
        return f"{self.title}: {solved} of {n} solved{after}{more}."

    def lines(self) -> list[str]:
        exercises = registry()
        states = self.status()
        marks = {SOLVED: MARK_OK, WITH_SKELETON: MARK_OK, AFTER_SOLUTION: MARK_OK,
                 "in progress": "◐", "not started": "·"}
        out = [self.summary(states)]
        for i, s in states.items():
            detail = s
            if s == "in progress":
                detail = self._in_progress(exercises[i])
            out.append(f"  {marks[s]} {exercises[i].heading} ({detail})")
        out += [f"  Note: {n}" for n in store.notices()]
        return out

    @staticmethod
    def _in_progress(exercise) -> str:
        entry = store.read_item(exercise.id)
        required = required_parts(exercise)
        done = sum(bool(entry["parts"].get(k, {}).get("ever")) for k in required)
        if len(required) > 1:
            return f"in progress: {done} of {len(required)} parts right"
        last = entry["parts"].get(required[0], {})
        return "in progress" + (f": your last check was {MARK_WRONG}" if last and not
                                last.get("ok") else "")


    def widget(self):
        """An HTML widget with a Refresh button that re-reads the results."""
        import ipywidgets as w

        view = w.HTML(self._repr_html_())
        refresh = w.Button(description="Refresh")
        refresh.on_click(lambda _: setattr(view, "value", self._repr_html_()))
        return w.VBox([view, refresh])


class Overview(_Report):
    """Every lesson's progress, one line per lesson (``progress()``)."""

    def lines(self) -> list[str]:
        where = store.location()
        kept = f"kept in {store.journal_folder(where)}" if where else \
            "kept in memory for this run"
        out = [f"Your progress in every lesson ({kept}):"]
        total = solved = 0
        for number, (title, ids) in LESSONS.items():
            p = Progress(*ids, title=f"{number} {title}")
            out.append("  " + p.summary())
            total += len(ids)
            solved += p.correct
        out.append(f"{solved} of {total} lesson exercises solved.")
        out += [f"  Note: {n}" for n in store.notices()]
        return out



def progress() -> Overview:
    """An overview of every lesson: how many of its exercises you solved."""
    return Overview()
