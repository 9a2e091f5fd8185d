"""The teaching rules, held over every exercise at once: generated from the registry and
the items' own data (a prediction item's facts), never written item by item, so a new
item cannot break them.

1. Every route that shows an answer records that the learner saw it: ``.solution``,
   ``.reveal()``, a Result's ``.solution()``, ``.experiment()`` before the item is solved;
   ``texts()`` and a Result that cannot record show no solution.
2. Guessing is not solving: answering every part False, then every part True, then each
   part with whichever of the two was right, never gives a plain "solved".
3. Feedback names the mistake, never the answer: a first wrong prediction's reply holds
   no printed form of the engine's value.
4. Right answers in the forms learners type are right: "True", "yes", 1 for a yes/no,
   op names in any case, "a, b" for a set of names, "3" for a count.
5. Every part the bank names is required (G6 on non-square shapes, G7 with stride too).
6. A placeholder is never an attempt: every check called as a lesson's exercise cell
   first holds it (nothing given, or None) leaves the item "not started".
"""

from __future__ import annotations

import contextlib
import io

import numpy as np
import pytest
from test_feedback_malformed import answer_names
from test_feedback_no_answer import leaked

from widgets import exercises as ex
from widgets.exercises import reset_progress, store
from widgets.exercises.exercise import ANSWER_WORDS, texts
from widgets.exercises.predictions import Fact
from widgets.exercises.tracking import status
from widgets.feedback.result import Result

IDS = list(ex.registry())
WITH_EXPERIMENT = [i for i in IDS if ex.registry()[i].has_experiment]


@pytest.fixture(autouse=True)
def _own_progress(tmp_path, monkeypatch):
    """Each test records into a file of its own, starting from nothing."""
    monkeypatch.setenv("AUTOGRAD_LESSONS_PROGRESS", str(tmp_path / "progress.json"))
    reset_progress()
    ex.forget_results()


def seen(exercise_id: str) -> bool:
    return store.read_item(exercise_id)["solution_seen"] is not None


# -- 1. every route to an answer is recorded ---------------------------------------------------


@pytest.mark.parametrize("route", ["solution", "reveal", "result"])
@pytest.mark.parametrize("exercise_id", IDS)
def test_every_route_to_a_solution_records_it(exercise_id, route):
    exercise = ex.registry()[exercise_id]
    if route == "solution":
        shown = exercise.solution
    elif route == "reveal":
        shown = exercise.reveal()
    else:
        shown = exercise.run(next(iter(exercise.checks))).solution()
    assert seen(exercise_id), f"{exercise_id}: {route} showed the solution unrecorded"
    assert str(shown).strip()


@pytest.mark.parametrize("exercise_id", WITH_EXPERIMENT)
def test_an_experiment_run_before_solving_counts_as_seeing_the_answer(exercise_id):
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        ex.registry()[exercise_id].experiment()
    assert seen(exercise_id)
    assert f"{exercise_id}.experiment()" in printed.getvalue()
    assert "counts as seeing the solution" in printed.getvalue()


def test_the_words_a_learner_reads_first_hold_no_answer():
    from solutions import words

    for exercise_id in IDS:
        shown = texts()[exercise_id]
        assert not ANSWER_WORDS & set(shown), exercise_id
        solution = words(exercise_id)["solution"].strip().splitlines()[0]
        for key in ("title", "question"):
            assert solution not in shown[key], (exercise_id, key)


def test_a_result_that_cannot_record_shows_no_solution():
    worked = "dA = G @ B.T, the worked solution"
    assert worked not in str(Result(False, "Not yet.", solution=worked).solution())


# -- 2. guessing is not solving ------------------------------------------------------------------


def checks_with_names():
    for exercise_id, exercise in ex.registry().items():
        for check in exercise.checks:
            names = answer_names(exercise, check)
            if names:
                yield pytest.param(exercise_id, check, names, id=f"{exercise_id}.{check}")


@pytest.mark.parametrize("exercise_id, check, names", list(checks_with_names()))
def test_answering_all_false_then_all_true_then_the_right_mix_never_solves(
        exercise_id, check, names):
    exercise = ex.registry()[exercise_id]
    right = {}
    for guess in (False, True):
        result = exercise.run(check, **{n: guess for n in names})
        for part in result.parts or (result,):
            if part.ok and part.name in names:
                right.setdefault(part.name, guess)
    exercise.run(check, **{n: right.get(n, False) for n in names})
    assert status(exercise_id) != "solved", (
        f"{exercise_id}.{check} was solved by trying False and True on every part")


# -- 3 and 4. prediction items: what the reply says, and the forms it reads ----------------


def prediction_facts():
    """(item, check, part, fact) for every fact of every prediction check."""
    for exercise_id, exercise in ex.registry().items():
        for check, fn in exercise.checks.items():
            facts = getattr(fn, "facts", None)
            if facts is not None:
                for part, fact in facts().items():
                    yield pytest.param(exercise_id, check, part, fact,
                                       id=f"{exercise_id}.{part}")


def wrong_prediction(fact: Fact):
    """A plausible wrong prediction of ``fact`` (None where none is needed)."""
    value = fact.value
    if isinstance(value, bool | np.bool_):
        return not value
    if fact.kind == "sequence":
        return list(reversed(value)) if len(set(value)) > 1 else [*value, "add"]
    if fact.kind == "set":
        return {"nothing"} if value else {"input"}
    if fact.kind == "number":
        return np.asarray(value, dtype=np.float64) * 1.5 + 1
    if isinstance(value, str):
        return "zz"
    return None


def printed_forms(fact: Fact) -> list[str]:
    """How a reply would write the fact's value."""
    value = fact.value
    if isinstance(value, bool | np.bool_):
        return []  # "True"/"False" also name the learner's own prediction
    if fact.kind == "number":
        return [form for form in leaked(" ".join(_numbers(value)), value)]
    if isinstance(value, str):
        return [value]
    if fact.kind in ("set", "sequence"):
        return [", ".join(map(str, value))] if len(value) > 1 else []
    return []


def _numbers(value) -> list[str]:
    from widgets.feedback import words

    flat = np.ravel(np.asarray(value, dtype=np.float64))
    return [f(x) for x in flat for f in (words.number, repr, lambda v: f"{v:.4g}")]


@pytest.mark.parametrize("exercise_id, check, part, fact",
                         [c for c in prediction_facts()
                          if wrong_prediction(c.values[3]) is not None])
def test_a_first_wrong_prediction_is_answered_without_the_value(exercise_id, check, part,
                                                                fact):
    wrong = wrong_prediction(fact)
    reply = ex.registry()[exercise_id].run(check, **{part: wrong})
    said = "\n".join([reply.message, *(p.message for p in reply.parts)])
    assert not reply.ok
    for form in printed_forms(fact):
        assert form not in said, (exercise_id, part, form, said)


def typed_forms(fact: Fact) -> list:
    """The right answer as a learner may type it."""
    value = fact.value
    if isinstance(value, bool | np.bool_):
        return (["True", "yes", "Y", 1, "true."] if value else ["False", "no", "N", 0])
    if fact.kind == "sequence":
        return [[str(v).upper() for v in value], ", ".join(map(str, value))]
    if fact.kind == "set" and len(value) > 1:
        return [", ".join(sorted(value)).upper()]
    if fact.kind == "number" and isinstance(value, int | np.integer):
        return [str(int(value))]
    return []


def form_cases():
    for case in prediction_facts():
        exercise_id, check, part, fact = case.values
        for typed in typed_forms(fact):
            yield pytest.param(exercise_id, check, part, typed,
                               id=f"{exercise_id}.{part}-{typed!r}")


@pytest.mark.parametrize("exercise_id, check, part, typed", list(form_cases()))
def test_a_right_answer_in_the_form_a_learner_types_is_right(exercise_id, check, part, typed):
    reply = ex.registry()[exercise_id].run(check, **{part: typed})
    assert reply.ok, reply


# -- 5. every part the bank names is required ---------------------------------------------------


def test_g6_is_solved_on_the_non_square_problem_only():
    sq = ex.G6.problem(square=True)
    assert ex.G6(dA=sq.G @ sq.B.T, dB=sq.A.T @ sq.G, square=True).ok
    assert status("G6") != "solved"
    p = ex.G6.problem()
    ex.G6(dA=p.G @ p.B.T, dB=p.A.T @ p.G)
    assert status("G6") == "solved"


def test_g7_needs_its_strided_problem_too():
    from test_exercises_derivations import conv_backward

    for stride, padding, solved in ((1, 0, "in progress"), (2, 1, "solved")):
        p = ex.G7.problem(stride=stride, padding=padding)
        dx, dw, _ = conv_backward(p.x, p.w, p.G, stride, padding)
        assert ex.G7(dx=dx, dw=dw, stride=stride, padding=padding).ok
        assert status("G7") == solved


# -- 6. a placeholder is never an attempt -------------------------------------------------------


@pytest.mark.parametrize("exercise_id", IDS)
def test_a_placeholder_leaves_the_item_not_started(exercise_id):
    exercise = ex.registry()[exercise_id]
    for check in exercise.checks:
        with contextlib.redirect_stdout(io.StringIO()):
            exercise.run(check)  # each answer at its default: None, as the cells hold it
    assert status(exercise_id) == "not started"
    assert store.read_item(exercise_id)["misses"] == {}
