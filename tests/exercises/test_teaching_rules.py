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
7. One gate (issue #39): nothing tells a learner whether a candidate is right, or shows the
   answer, without recording it on the learner's own item. A demonstration on the learner's
   own problem is refused; a skeleton is recorded as help ("solved with the skeleton"); no
   attribute of an exercise or its Result holds the solution; every helper that computes an
   item's answer (its experiment's function, a reference experiment handed in as the
   learner's, lesson 13's reference, A3's and L8's measurements, G12's snippet for G5)
   records a try or the solution; no public name of an exercise module is a registered check
   or a prediction's facts (both are reached through the exercise only), and
   ``check_backward`` on an item's own spec is that item's check. A helper that computes an
   item's answer, or its near misses (the answer up to one slip), is private or records the
   items it gives (``ANSWERING``; generated: any public ``engine_*``, ``*_mistakes`` or
   ``*_facts``); a backward spec's mistakes and B1's engine function are private.
8. A derivation written as a function (the kind :class:`Derivation`) is the learner's: the
   engine may not run inside it, a closed form is told apart from a measurement (finite
   differences) by agreement near machine precision, and it is probed on a second problem.
   A derivation by hand (a :class:`Derivation` by hand, every :class:`Gradients` check, every
   written backward) is not measured: complex arithmetic (a complex step, which reaches
   machine precision) is refused, a Gradients part at finite-difference accuracy is told
   apart, and a backward that reruns its own forward (finite differences) is refused.
9. A law written as a function (a check's ``laws``: G1's bytes, L6's masks and sums, L8's
   peak and recomputed work) is tried on cases drawn at check time, without the engine: the
   right law by hand (``laws_by_hand.RIGHT_LAWS``) is right, one number handed back for
   every case (a measurement read off a fixed set-up) never is, and a law that runs the
   engine is refused.
"""

from __future__ import annotations

import contextlib
import functools
import importlib
import inspect
import io
import pkgutil
import re
import subprocess
import sys

import numpy as np
import pytest
from solutions import solution_text
from test_feedback_malformed import answer_names
from test_feedback_no_answer import leaked
from test_true_false_experiments import REASONS, TRUTH

import autograd_core as ag
import widgets
from widgets import exercises as ex
from widgets.exercises import ids, reset_progress, store
from widgets.exercises.demos import problem_options
from widgets.exercises.exercise import ANSWER_WORDS, texts
from widgets.exercises.predictions import Fact
from widgets.exercises.problems import unseen
from widgets.exercises.tracking import Progress, required_parts, status
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
        for check, fn in exercise._checks.items():  # the raw check: the routed one has none
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


def _g6_by_hand(p):
    return {"dA": p.G @ p.B.T, "dB": p.A.T @ p.G}


def test_g6_is_solved_on_the_non_square_problem_only():
    assert ex.G6(_g6_by_hand, square=True).ok
    assert status("G6") != "solved"
    ex.G6(_g6_by_hand)
    assert status("G6") == "solved"


def test_g7_needs_its_strided_problem_too():
    from test_exercises_derivations import conv_backward

    def my_g7(p):
        dx, dw, _ = conv_backward(p.x, p.w, p.G, p.stride, p.padding)
        return {"dx": dx, "dw": dw}

    for stride, padding, solved in ((1, 0, "in progress"), (2, 1, "solved")):
        assert ex.G7(my_g7, stride=stride, padding=padding).ok
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
    assert not seen(exercise_id) and not helped(exercise_id)  # the check's own measurement


# -- 7. one gate: every route to an answer is recorded on the learner's own item ----------------


def helped(exercise_id: str) -> bool:
    return store.read_item(exercise_id).get("help_seen") is not None


def untouched(exercise_id: str) -> bool:
    entry = store.read_item(exercise_id)
    return status(exercise_id) == "not started" and entry["misses"] == {} \
        and entry["solution_seen"] is None


_VARIANT = re.compile(r"^[^(]+ \((.+)\)$")


def required_variants(exercise, check: str) -> list[dict]:
    """The other problems an item requires besides its default (G7's strided one), read
    from the names of its required parts: 'dx (stride=2, padding=1)'."""
    found = []
    for key in required_parts(exercise):
        head, _, part = key.partition(":")
        match = _VARIANT.match(part)
        if head == check and match:
            pairs = (item.split("=") for item in match.group(1).split(", "))
            variant = {k: int(v) if v.lstrip("-").isdigit() else v for k, v in pairs}
            if variant not in found:
                found.append(variant)
    return found


def own_problem_calls():
    """(item, check, answer names, options) for every call on the learner's own problem:
    no option, every option passed at its default, and each required variant."""
    for exercise_id, exercise in ex.registry().items():
        for check in exercise.checks:
            options = problem_options(exercise, check)
            names = [n for n in answer_names(exercise, check)  # plain answers, no options
                     if n not in options and " (" not in n]
            calls = [("own", {})] + ([("defaults", dict(options))] if options else [])
            calls += [(f"variant{n}", v) for n, v in
                      enumerate(required_variants(exercise, check))]
            for label, given in calls:
                yield pytest.param(exercise_id, check, names, given,
                                   id=f"{exercise_id}.{check}-{label}")


@pytest.mark.parametrize("exercise_id, check, names, options", list(own_problem_calls()))
@pytest.mark.parametrize("how", ["method", "keyword", "function"])
def test_a_demonstration_on_the_learners_own_problem_is_refused(exercise_id, check, names,
                                                               options, how):
    """Else a loop of demos finds the answer with no try counted (and past C1's budget)."""
    exercise = ex.registry()[exercise_id]
    candidate = {n: 0.5 for n in names}  # any candidate: it is never graded
    call = {"method": lambda: exercise.demo(check=check, **candidate, **options),
            "keyword": lambda: exercise.run(check, **candidate, **options, demo=True),
            "function": lambda: ex.demo(exercise_id, check=check, **candidate, **options)}
    result = call[how]()
    assert not result.ok and result.diagnosis == "demo_refused", (exercise_id, result)
    assert f"{exercise_id}(...)" in result.message and "Traceback" not in repr(result)
    assert not re.search(r"\d\.\d", result.message)  # it states no value
    assert untouched(exercise_id) and exercise_id not in ex.last_results()


def other_problem_facts():
    """(item, check, answer names, options) for checks with other problems: every option
    away from its default, every answer a yes/no (the same on every problem)."""
    for exercise_id, exercise in ex.registry().items():
        for check in exercise.checks:
            options = problem_options(exercise, check)
            names = [n for n in answer_names(exercise, check) if n not in options]
            if options and names:
                yield pytest.param(exercise_id, check, names,
                                   {o: "another" for o in options}, id=f"{exercise_id}.{check}")


@pytest.mark.parametrize("exercise_id, check, names, options", list(other_problem_facts()))
@pytest.mark.parametrize("demo", [True, False], ids=["demo", "check"])
def test_another_problem_tells_no_answer_that_is_the_same_on_every_problem(
        exercise_id, check, names, options, demo):
    """E2's literal_gets_gradient or W5's layers do not change with the problem: neither a
    demonstration nor a check on another problem answers them (a check would record them
    under the other problem, so flipping them there would solve nothing and count no try)."""
    result = ex.registry()[exercise_id].run(check, **{n: True for n in names}, **options,
                                            demo=demo)
    assert not result.ok and result.diagnosis == "demo_refused", (exercise_id, result)
    assert f"{exercise_id}(...)" in result.message and "Traceback" not in repr(result)
    assert untouched(exercise_id)


class _Unequal:
    """An option value whose comparison raises (a learner's odd object)."""

    def __eq__(self, other):
        raise RuntimeError("no comparing me")

    __hash__ = object.__hash__


@pytest.mark.parametrize("exercise_id, check, names, options", list(other_problem_facts()))
def test_a_malformed_option_gets_a_sentence(exercise_id, check, names, options):
    result = ex.registry()[exercise_id].demo(check=check, **{o: _Unequal() for o in options})
    assert not result.ok and result.message and "Traceback" not in repr(result)
    assert untouched(exercise_id)


@pytest.mark.parametrize("exercise_id, check", [(i, c) for i in IDS for c in
                                                 ex.registry()[i].checks])
def test_a_check_reached_through_checks_is_recorded_like_any_check(exercise_id, check):
    """``G4.checks["order"](...)`` is the same check as ``G4(...)``: it goes through run()."""
    exercise = ex.registry()[exercise_id]
    names = [n for n in answer_names(exercise, check) if " (" not in n]
    with contextlib.redirect_stdout(io.StringIO()):
        exercise.checks[check](**{n: 0.5 for n in names[:1]})
    assert exercise_id in ex.last_results()
    assert exercise.checks[check](demo=True).diagnosis == "demo_refused"
    routed = exercise.checks[check]  # no attribute of it leads past the recording
    assert not hasattr(routed, "__wrapped__")
    assert not hasattr(routed, "facts")  # a prediction's facts are its answers
    # nor a kind's data (a derivation's cases hold the engine's answer for each input)
    assert set(vars(routed)) <= {"parts", "__signature__"}
    assert all(cell.cell_contents is not exercise._checks[check] for cell in routed.__closure__)
    assert str(inspect.signature(routed)) == str(inspect.signature(exercise._checks[check]))


@pytest.mark.parametrize("exercise_id", [i for i in IDS if ex.registry()[i].skeleton])
def test_a_skeleton_is_help_and_is_recorded(exercise_id):
    exercise = ex.registry()[exercise_id]
    assert "skeleton" not in texts()[exercise_id]  # only .skeleton shows it
    assert not helped(exercise_id)
    assert str(exercise.skeleton).strip()
    assert helped(exercise_id) and not seen(exercise_id)
    assert status(exercise_id) == "not started"  # help is no try


def test_an_item_solved_after_its_skeleton_says_so():
    assert ex.G6.skeleton  # read: help seen
    ex.G6(_g6_by_hand)
    assert status("G6") == "solved with the skeleton"
    assert "1 with the skeleton" in repr(Progress("G6", "G5"))
    assert ex.G5.solution and status("G5") == "not started"  # the solution stays stronger


@pytest.mark.parametrize("exercise_id", IDS)
def test_no_attribute_of_an_exercise_or_its_result_holds_the_solution(exercise_id):
    exercise = ex.registry()[exercise_id]
    worked = solution_text(exercise).strip()
    result = exercise.run(next(iter(exercise.checks)))
    held = [*vars(exercise).values(), *vars(result).values()]
    for name in dir(ids):  # the IDs module's public functions: none gives the words away
        value = getattr(ids, name)
        if not name.startswith("_") and inspect.isfunction(value) and not any(
                p.default is p.empty for p in inspect.signature(value).parameters.values()):
            held.append(value())
    assert not any(worked in str(value) for value in held), exercise_id
    assert not seen(exercise_id)


@pytest.mark.parametrize("exercise_id", WITH_EXPERIMENT)
def test_an_experiments_own_function_records_the_solution(exercise_id):
    """The function behind ``.experiment()`` is importable from its module: calling it
    directly is the same route."""
    with contextlib.redirect_stdout(io.StringIO()):
        ex.registry()[exercise_id]._experiment()
    assert seen(exercise_id)


def _reference_experiment(exercise_id: str):
    """A true-or-false item's reference experiment (private: its source is the experiment)."""
    for module in ("widgets.exercises.true_false_experiments", "widgets.exercises.why_items"):
        found = getattr(importlib.import_module(module), f"_reference_{exercise_id.lower()}",
                        None)
        if found is not None:
            return found
    raise LookupError(exercise_id)


TRUE_FALSE = [i for i in IDS if ex.registry()[i].kind == "true_false"]


@pytest.mark.parametrize("wrapped", [False, True], ids=["as is", "wrapped"])
@pytest.mark.parametrize("exercise_id", TRUE_FALSE)
def test_a_reference_experiment_handed_in_is_no_solving(exercise_id, wrapped):
    reference = _reference_experiment(exercise_id)
    experiment = (lambda: dict(reference())) if wrapped else reference
    result = ex.registry()[exercise_id](verdict=TRUTH[exercise_id],
                                        because=REASONS[exercise_id], experiment=experiment)
    assert result.ok
    assert status(exercise_id) == "solved after seeing the solution"


def _gated_helpers():
    """Every function of ``widgets`` that wears ``gate.answers``: the item it answers."""
    found = {}
    for info in pkgutil.walk_packages(widgets.__path__, "widgets."):
        if not info.name.startswith(("widgets.lessons", "widgets.exercises")):
            continue
        module = importlib.import_module(info.name)
        for name, value in vars(module).items():
            if getattr(value, "gate_item", None) and value.__module__ == info.name:
                found[f"{info.name}.{name}"] = value.gate_item
    return found


def test_no_gated_helper_leads_back_to_the_helper_it_gates():
    """The fifth audit called every T item's reference experiment through
    ``_reference_tN.__wrapped__``, unrecorded, and was marked solved. Generated over every
    gated helper of the lessons and the exercises."""
    for name in _gated_helpers():
        module, _, attribute = name.rpartition(".")
        helper = getattr(importlib.import_module(module), attribute)
        assert not hasattr(helper, "__wrapped__"), name
        assert helper.__name__ == attribute  # its name, words and signature stay


def test_every_gated_helper_names_an_item_and_every_experiment_is_gated():
    helpers = _gated_helpers()
    assert set(helpers.values()) <= set(IDS)
    for exercise_id in WITH_EXPERIMENT:
        exercise = ex.registry()[exercise_id]
        if exercise.kind != "true_false":  # theirs runs the gated reference experiment
            assert getattr(exercise._experiment, "gate_item", None) == exercise_id


def _cnn_step(wrapped: bool = False, appended: bool = False, **plan):
    """``measure_step`` of the capstone's CNN (C1's model) on a batch of 64 images, with
    ``plan`` (``segments=`` or ``forward=``); float32 or not, C1's answer scales from it.
    ``wrapped`` puts it inside a Sequential of one, its layers one level down; ``appended``
    adds a module that passes its input on."""
    from autograd_core import nn
    from widgets.lessons import checkpointing, digits

    class PassOn(nn.Module):
        def forward(self, x):
            return x

    x = ag.tensor(np.random.default_rng(5).random((64, 1, 8, 8)))
    model = nn.Sequential(digits.make_cnn()) if wrapped else digits.make_cnn()
    model = nn.Sequential(*model, PassOn()) if appended else model
    return checkpointing.measure_step(model, x, **plan)


def _measure(helper: str):
    from widgets.exercises import by_hand
    from widgets.lessons import checkpointing, transformer

    return {"recompute_step": lambda: transformer.recompute_step([["mlp"], []]),
            "measure_step(make_cnn, forward)": lambda: _cnn_step(
                forward=checkpointing.plan_forward([[4, 5]])),
            "measure_step(make_cnn, segments)": lambda: _cnn_step(segments=2),
            "checkpointed_step": lambda: checkpointing.checkpointed_step(depth=4, segments=2),
            "reference": by_hand.reference,
            "reference_for": lambda: by_hand.reference_for(dict(ex.H1.problem())),
            "G12.snippet": lambda: ex.G12.snippet,
            "block_saves": lambda: transformer.block_saves(2, 48, 32, 4),
            # the same models wrapped, or measured directly (issue #39's re-audit)
            "measure_step(wrapped make_cnn)": lambda: _cnn_step(
                wrapped=True, forward=lambda m, x: checkpointing.plan_forward([[4, 5]])(m[0], x)),
            "measure_step(a GPT with a plan)": lambda: checkpointing.measure_step(
                transformer.TinyGPT(32, 4, 2, context=16, generator=ag.Generator(7)).plan(
                    [["mlp"], []]), ag.tensor(np.zeros((2, 16), dtype=np.int64)),
                loss=lambda out: out.sum()),
            "measure_step(swish_stack)": lambda: checkpointing.measure_step(
                checkpointing.swish_stack(16), ag.randn(4, 64), 4),
            # what a measurement answers is what the engine ran (the capstone audit's routes)
            "measure_step(a plan attribute set by hand)": lambda: _cnn_step(
                forward=_claiming(checkpointing.plan_forward([[0, 1, 2]]), [[7, 8]])),
            "measure_step(make_cnn, a module appended)": lambda: _cnn_step(
                appended=True, forward=checkpointing.plan_forward([[4, 5]])),
            "measure_step(checkpoint_core set by hand)": lambda: checkpointing.measure_step(
                _cores_by_hand(transformer.TinyGPT(32, 4, 2, context=64,
                                                   generator=ag.Generator(7)).plan([[], []])),
                ag.tensor(np.zeros((2, 64), dtype=np.int64)), loss=lambda out: out.sum())}[helper]()


def _claiming(forward, plan):
    forward.plan = plan  # an attribute anyone can set: no measurement reads it
    return forward


def _cores_by_hand(model):
    for block in model.blocks:
        block.attn.checkpoint_core = True
    return model


# (helper, the item it answers, what it records): the measuring helpers of lesson support
# and the exercises that compute an item's answer and are not an item's experiment.
MEASURING = [("recompute_step", "A3", "try"), ("measure_step(make_cnn, forward)", "C1", "try"),
             ("measure_step(make_cnn, segments)", "C1", "try"),
             ("checkpointed_step", "L8", "solution"),
             ("reference", "H1", "solution"), ("reference_for", "H1", "solution"),
             ("G12.snippet", "G5", "solution"), ("block_saves", "A2", "solution"),
             ("measure_step(wrapped make_cnn)", "C1", "try"),
             ("measure_step(a GPT with a plan)", "A3", "try"),
             ("measure_step(swish_stack)", "L8", "solution"),
             ("measure_step(a plan attribute set by hand)", "C1", "try"),
             ("measure_step(make_cnn, a module appended)", "C1", "try"),
             ("measure_step(checkpoint_core set by hand)", "A3", "try")]


@pytest.mark.parametrize("helper, exercise_id, gives", MEASURING, ids=[m[0] for m in MEASURING])
def test_a_measuring_helper_records_on_the_item_it_answers(helper, exercise_id, gives):
    _measure(helper)
    entry = store.read_item(exercise_id)
    if gives == "try":
        assert entry["misses"].get("tries:") == 1 and not seen(exercise_id)
    else:
        assert seen(exercise_id)


def test_a_measurement_the_item_asks_for_is_not_held_against_it():
    from widgets.lessons import transformer

    transformer.recompute_step([[], []])  # the lesson's own plans, shown to everyone
    transformer.recompute_step([["block"], ["block"]])
    assert untouched("A3")
    _cnn_step(segments=1)  # lesson 12's own measurements: the plain step and three segments
    _cnn_step(segments=3)
    ex.C1.problem().measure([[7, 8]])  # and its example plan
    assert untouched("C1")
    transformer.block_saves(batch=2, seq=16, hidden=32, heads=4)  # lesson 15's table: A2's data
    assert untouched("A2")


def test_the_checks_own_measurements_are_not_recorded_as_help():
    """A check that grades with a gated helper records its result only."""
    ex.A3([["attention_core"], []])
    ex.L8(gradients_identical=True)
    ex.G4(lambda ops, loss: [loss])
    ex.G14.run("batch", training=True)
    ex.C1([[7, 8]])
    ex.A2(lambda b, s, h, a: 0)  # measures A2's other sizes to grade
    for exercise_id in ("A3", "L8", "G4", "G14", "C1", "A2"):
        assert not seen(exercise_id) and store.read_item(exercise_id)["misses"].get(
            "tries:", 0) <= 1


def _exercise_modules() -> list[str]:
    """``widgets.exercises`` and every module under it: where the items' checks live."""
    return ["widgets.exercises", *(info.name for info in
                                   pkgutil.walk_packages(ex.__path__, "widgets.exercises."))]


def _raw_checks() -> dict[int, str]:
    """Each registered check (and a prediction check's facts, its answers), as reached by
    ``__wrapped__`` too, by id: 'G4.order'."""
    found = {}
    for exercise_id, exercise in ex.registry().items():
        for check, fn in exercise._checks.items():
            for value in (fn, getattr(fn, "facts", None)):
                while value is not None and id(value) not in found:
                    found[id(value)] = f"{exercise_id}.{check}"
                    value = getattr(value, "__wrapped__", None)
    return found


def _public_names(module) -> set[str]:
    """What tab-completion and ``from module import *`` show of a module."""
    return {n for n in dir(module) if not n.startswith("_")} | set(getattr(module, "__all__", ()))


@pytest.mark.parametrize("module_name", _exercise_modules())
def test_no_public_name_of_an_exercise_module_checks_an_answer_unrecorded(module_name):
    """``graph_items.check_g4(order=[...])`` would say right or wrong with nothing recorded:
    a registered check is reached only through its exercise, whose run() records it."""
    module = importlib.import_module(module_name)
    raw = _raw_checks()
    leaks = []
    for name in sorted(_public_names(module)):
        value = getattr(module, name, None)
        while value is not None:
            if id(value) in raw:
                leaks.append(f"{module_name}.{name} is {raw[id(value)]}")
                break
            value = getattr(value, "__wrapped__", None)
    assert not leaks, leaks


@pytest.mark.parametrize("module_name", _exercise_modules())
def test_no_public_name_of_an_exercise_module_holds_a_claims_verdict(module_name):
    """Issue #39's third audit: ``true_false.truth(CLAIMS[i])`` gave every T item's
    verdict, unrecorded. No public name holds a claim (its reference experiment and its
    settled words), a list of them, or a function that measures a verdict."""
    from widgets.exercises.true_false import Claim

    module = importlib.import_module(module_name)
    leaks = []
    for name in sorted(_public_names(module)):
        value = getattr(module, name, None)
        held = value if isinstance(value, list | tuple) else (
            value.values() if isinstance(value, dict) else [value])
        if any(isinstance(v, Claim) for v in held) or (callable(value) and "truth" in name):
            leaks.append(f"{module_name}.{name}")
    assert not leaks, leaks
    assert not [n for n in dir(Claim) if not n.startswith("_") and n in ("word", "truth")]


GIVING = [(i, other) for i in IDS for other in ex.registry()[i].solution_gives]


@pytest.mark.parametrize("exercise_id, other", GIVING, ids=[f"{i}->{o}" for i, o in GIVING])
def test_a_solution_that_holds_another_items_answer_shows_it(exercise_id, other):
    """Issue #39's third audit: ``G7.solution``'s loops pasted into B2's backward solved B2,
    with only G7 recorded. Reading a solution records what it gives away as seen too."""
    assert other in IDS and other != exercise_id
    str(ex.registry()[exercise_id].solution)
    assert seen(other)


def _layer_op_that_fails():
    """An op of the wrong kind for any spec: a try (its backward ignores the upstream)."""
    from autograd_core.recording.node import Function

    class Lazy(Function):
        @staticmethod
        def forward(ctx, x, *rest, **params):
            return x

        @staticmethod
        def backward(ctx, g):
            return g

    return Lazy


@pytest.mark.parametrize("exercise_id", [i for i in IDS
                                         if ex.registry()[i].kind == "write_backward"])
def test_check_backward_on_an_items_own_spec_is_that_items_check(exercise_id):
    """``check_backward(MyConv, "conv2d")`` is B2's check: it records on B2, as B2(MyConv)."""
    from widgets.exercises import backward_check

    specs = [s for s, i in backward_check.SPEC_ITEMS.items() if i == exercise_id]
    assert specs, f"{exercise_id} names no spec of check_backward"
    with contextlib.redirect_stdout(io.StringIO()):
        result = ex.check_backward(_layer_op_that_fails(), specs[0])
    assert not result.ok and "Traceback" not in repr(result)
    assert exercise_id in ex.last_results() and status(exercise_id) == "in progress"
    reset_progress()
    other = ex.check_backward(_layer_op_that_fails(), specs[0], eps=0.5)
    assert not other.ok and f"{exercise_id}(" in other.message  # no check on other data
    assert untouched(exercise_id)


def _all_right(exercise, check: str):
    """A stand-in for ``check`` that calls every part the item requires right, whatever it
    is given (the learner's answers on another problem, say)."""
    original = exercise._checks[check]
    names = [key.partition(":")[2] for key in required_parts(exercise)
             if key.partition(":")[0] == check]

    def fake(*args, **kwargs) -> Result:
        parts = [Result(True, "Right.", name=n) for n in names if n]
        return Result.combine(parts) if parts else Result(True, "Right.")

    fake.__signature__ = inspect.signature(original)
    fake.__dict__.update(vars(original))
    return fake


def variant_calls():
    """(item, options) for every check with another problem: each option away from its
    default (a value the problem accepts, where the item names one)."""
    others = {"size": 8, "square": True, "seed": 6, "batch_size": 4, "kind": "tanh",
              "literal": 3, "other": True, "widths": (2, 3), "merges": True,
              "stride": 2, "padding": 1}
    for exercise_id, exercise in ex.registry().items():
        for check in exercise.checks:
            options = problem_options(exercise, check)
            if options:
                given = {o: others.get(o, np.ones(3)) for o in options}
                yield pytest.param(exercise_id, given, id=f"{exercise_id}.{check}")


@pytest.mark.parametrize("exercise_id, options", list(variant_calls()))
def test_a_check_on_another_problem_never_solves_the_learners_own(exercise_id, options,
                                                                   monkeypatch):
    """``G2(..., size=8)`` all right is right on problem 8, not on the learner's own."""
    from types import MappingProxyType

    exercise = ex.registry()[exercise_id]
    monkeypatch.setattr(exercise, "_checks", MappingProxyType(
        {check: _all_right(exercise, check) for check in exercise._checks}))
    for check in exercise.checks:
        exercise.run(check, **options)
    assert not status(exercise_id).startswith("solved"), exercise_id
    for check in exercise.checks:  # the control: the same replies on the learner's own
        exercise.run(check)
    assert status(exercise_id) == "solved", exercise_id


# -- 8. the derivation kind's rules, over every item of the kind ------------------------------

DERIVED = [(i, c, fn.derivation) for i in IDS for c, fn in ex.registry()[i]._checks.items()
           if getattr(fn, "derivation", None) is not None]
BY_HAND = [d for d in DERIVED if d[2].by_hand]
CLOSED_FORM = [d for d in DERIVED if d[2].closed_form]


def _same(a, b) -> bool:
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        return np.shape(a) == np.shape(b) and np.array_equal(a, b)
    return a == b


def _complex_step():
    """A complex step's arithmetic (its own function: the check reads the code that ran)."""
    return np.tanh(np.ones(2) + 1e-20j).imag / 1e-20


def _decimal_step():
    """Finite differences at 40 digits, as the fifth audit's ``decimal`` route did (its own
    function: the check reads the code that ran)."""
    from decimal import Decimal, getcontext

    getcontext().prec = 40
    h = Decimal("1e-20")
    return float(((Decimal(2) + h) ** 2 - Decimal(2) ** 2) / h)


def _oracle(kind, *, noise: float = 0.0, engine: bool | str = False, first_only: bool = False):
    """A learner's function that knows the engine's answer of every case of ``kind``
    (looked up by its arguments); ``noise`` makes it agree only to that relative size,
    ``engine`` runs one engine op first ("hidden": calls the engine's array code, which
    runs no op, through ``functools.singledispatch``; "process": in a child process;
    "complex": a complex step's arithmetic instead),
    ``first_only`` always answers the lesson's case."""
    cases = [make() for _, make in kind.cases]
    gen = np.random.default_rng(0)

    def blur(x):
        if isinstance(x, tuple | list):
            return type(x)(blur(p) for p in x)
        x = np.array(x, dtype=np.float64)
        return x * (1 + noise * gen.choice([-1.0, 1.0], size=x.shape))

    def learners_function(*args):
        if engine == "hidden":
            from autograd_core.sweep.engine import sum_to

            functools.singledispatch(sum_to)(np.ones((2, 3)), (3,))
        elif engine == "process":
            subprocess.run([sys.executable, "-c", "import autograd_core"], check=True)
        elif engine == "complex":
            _complex_step()
        elif engine:
            ag.tensor(1.0) * 2.0
        for case_args, expected, _ in cases[:1] if first_only else cases:
            if first_only or all(_same(a, b) for a, b in zip(args, case_args)):
                return blur(expected) if noise else expected  # (G8: a dict of shapes)
        raise AssertionError("the check ran the function on arguments no case gave")

    return learners_function


@pytest.mark.parametrize("exercise_id, check, kind", DERIVED, ids=[d[0] for d in DERIVED])
def test_a_derivation_that_is_the_engines_on_every_case_is_right(exercise_id, check, kind,
                                                                 cases_as_listed):
    assert DERIVED, "no item of the derivation kind"
    assert ex.registry()[exercise_id].run(check, _oracle(kind)).ok


@pytest.mark.parametrize("exercise_id, check, kind", BY_HAND, ids=[d[0] for d in BY_HAND])
def test_the_engine_may_not_run_inside_a_derivation(exercise_id, check, kind):
    result = ex.registry()[exercise_id].run(check, _oracle(kind, engine=True))
    assert not result.ok and result.diagnosis == "uses_engine", repr(result)
    assert status(exercise_id) != "solved"


@pytest.mark.parametrize("route", ["hidden", "process"])
@pytest.mark.parametrize("exercise_id, check, kind", BY_HAND, ids=[d[0] for d in BY_HAND])
def test_the_engine_may_not_run_inside_a_derivation_by_a_side_route(exercise_id, check, kind,
                                                                    route):
    """Issue #39's third audit: the engine's code called through a library function
    (``functools.singledispatch``), or run in a child process the watch cannot see."""
    result = ex.registry()[exercise_id].run(check, _oracle(kind, engine=route))
    assert not result.ok, repr(result)
    if route == "hidden":
        assert result.diagnosis == "uses_engine", repr(result)
    else:
        assert "another process" in result.message, repr(result)
    assert status(exercise_id) != "solved"


@pytest.mark.parametrize("exercise_id, check, kind", BY_HAND, ids=[d[0] for d in BY_HAND])
def test_complex_arithmetic_inside_a_derivation_is_refused(exercise_id, check, kind):
    """The audit after issue #39: a complex step on the learner's own forward,
    ``f(x + 1e-20j).imag / 1e-20``, agrees with the engine to machine precision."""
    result = ex.registry()[exercise_id].run(check, _oracle(kind, engine="complex"))
    assert not result.ok and result.diagnosis == "complex", repr(result)
    assert status(exercise_id) != "solved"


@pytest.mark.parametrize("exercise_id, check, kind", BY_HAND, ids=[d[0] for d in BY_HAND])
def test_a_check_by_hand_waits_for_the_learners_own_threads(exercise_id, check, kind):
    """Issue #39's fourth audit: a worker thread started before the check ran the engine
    for the learner's function (with the engine's observers taken away while it did), and
    nothing saw it: a thread started earlier is not watched before Python 3.12. A check by
    hand does not run while a thread of the learner's code is alive; that is no try."""
    import queue
    import threading

    stop = queue.Queue()
    worker = threading.Thread(target=lambda: stop.get(), daemon=True)
    worker.start()
    try:
        result = ex.registry()[exercise_id].run(check, _oracle(kind))
    finally:
        stop.put(None)
        worker.join()
    assert not result.ok and result.diagnosis == "thread", repr(result)
    assert untouched(exercise_id)


@pytest.mark.parametrize("exercise_id, check, kind", CLOSED_FORM,
                         ids=[d[0] for d in CLOSED_FORM])
def test_a_closed_form_is_told_apart_from_finite_differences(exercise_id, check, kind,
                                                              cases_as_listed):
    """An answer off by one part in 10⁸ (what central differences reach) is refused with a
    sentence of its own; one off by rounding (10⁻¹⁵) is right."""
    exercise = ex.registry()[exercise_id]
    measured = exercise.run(check, _oracle(kind, noise=1e-8))
    assert not measured.ok and measured.diagnosis == "not_closed_form", repr(measured)
    assert exercise.run(check, _oracle(kind, noise=1e-15)).ok


def _drawn_afresh(kind) -> bool:
    """Whether a later case of ``kind`` differs between two draws at check time (its data
    comes from ``rng``), so that a table noted at one check cannot answer the next."""
    from widgets.exercises import problems

    def draw():
        with problems.unseen():
            return [make()[0] for _, make in kind.cases[1:]]

    first, second = draw(), draw()
    return any(not all(_same(a, b) for a, b in zip(x, y)) for x, y in zip(first, second))


DRAWN_AFRESH = [d for d in DERIVED if _drawn_afresh(d[2])]


@pytest.mark.parametrize("exercise_id, check, kind", DRAWN_AFRESH,
                         ids=[d[0] for d in DRAWN_AFRESH])
def test_a_table_of_answers_from_an_earlier_check_does_not_carry_over(exercise_id, check,
                                                                       kind):
    """Issue #39's fourth audit: a function that returns None at a first check noted the
    cases' arguments (no try spent); the engine's answers on them, in a table, then passed.
    The cases after the lesson's are drawn afresh at every check."""
    exercise = ex.registry()[exercise_id]
    cases = [make() for _, make in kind.cases]  # what kind.cases lists (as a spy sees it)
    table = [(args, expected) for args, expected, _ in cases]

    def tabled(*args):
        for case_args, expected in table:
            if all(_same(a, b) for a, b in zip(args, case_args)):
                return expected
        return None

    result = exercise.run(check, tabled)
    assert not result.ok, repr(result)
    assert status(exercise_id) != "solved"


@pytest.mark.parametrize("exercise_id, check, kind", DERIVED, ids=[d[0] for d in DERIVED])
def test_a_derivation_is_probed_on_a_second_problem(exercise_id, check, kind):
    """The lesson's answer built into the function is right on the lesson's case only."""
    result = ex.registry()[exercise_id].run(check, _oracle(kind, first_only=True))
    assert not result.ok and "but not on" in result.message, repr(result)


# -- 7, continued: the routes a lesson's own cells and tools leave in the kernel --------------


def test_a_gated_cells_function_stays_gated_when_called_again():
    """``after_solving("L5", running_estimates)`` refuses to run it; the name the cell left
    behind must not run it either (issue #39's re-audit called it directly)."""
    from widgets.exercises.reveal import after_solving

    shown = []
    namespace = {"after_solving": after_solving, "shown": shown}
    exec("def running_estimates():\n    shown.append(1)\n    return 'the answer'\n"
         "first = after_solving('L5', running_estimates)", namespace)
    assert not shown and "L5" in str(namespace["first"])
    later = namespace["running_estimates"]()
    assert not shown and "L5" in str(later), "the cell's name ran the comparison unearned"
    assert ex.L5.solution  # recorded: the comparison is earned now
    assert namespace["running_estimates"]() == "the answer" and shown == [1]


def test_quietly_from_a_learners_cell_records_as_usual():
    """The gate's ``quietly`` is for a check grading with the helper it records; from a
    learner's code (here, code compiled outside the package) it changes nothing."""
    from widgets import gate
    from widgets.exercises.sweep_order import sweep_of_g4  # gated: G4's engine order

    namespace = {"gate": gate, "sweep_of_g4": sweep_of_g4}
    exec("with gate.quietly():\n    sweep_of_g4()", namespace)
    assert store.read_item("G4")["solution_seen"], "quietly() hid a reference from the gate"


# -- 7, continued: the helpers that compute an item's answer (issue #39's third audit) -------


# (module, public name it had, the items its value gives): each computed an item's answer,
# or the answer up to one known slip, with nothing recorded. Now each is private (only the
# checks and the tests read it) or gated: a call outside a check records every item it gives.
ANSWERING = [
    ("widgets.exercises.forward_items", "residual_facts", ("L1",)),
    ("widgets.exercises.forward_items", "two_runs", ("L4",)),
    ("widgets.exercises.forward_items", "chain_saved_bytes", ("L7",)),
    ("widgets.exercises.forward_items", "l9_op_fact", ("L9",)),
    ("widgets.exercises.forward_items", "define_by_run", ("L3", "W6")),
    ("widgets.lessons.graphs", "define_by_run", ("L3", "W6")),
    ("widgets.lessons.graphs", "branchy", ("L3", "W6")),
    ("widgets.lessons.graphs", "branches", ("L3", "W6")),
    ("widgets.exercises.edge_items", "e3_case", ("E3",)),
    ("widgets.exercises.edge_items", "e3_mistakes", ("E3",)),
    ("widgets.exercises.layer_items", "g8_engine_shape", ("G8",)),
    ("widgets.exercises.layer_items", "g8_measured", ("G8",)),
    ("widgets.exercises.layer_items", "g9_engine_sum_to", ("G9",)),
    ("widgets.exercises.edge_items", "e4_case", ("E4",)),
    ("widgets.exercises.derivations", "g13_gradient", ("G13",)),
    ("widgets.exercises.derivations", "g13_context", ("G13",)),
    ("widgets.exercises.layer_items", "batch_norm_dx_mistakes", ("G14",)),
    ("widgets.exercises.backward_specs", "batch_norm_dx_mistakes", ("G14",)),
    ("widgets.exercises.why_items", "w5_layers", ("W5",)),
    ("widgets.exercises.mlp", "engine_gradients", ("G5", "G12")),
    ("widgets.exercises.mlp", "check_parts", ("G5", "G12")),
    ("widgets.exercises.mlp", "context", ("G5", "G12")),
    ("widgets.exercises.by_hand", "forward", ("H1",)),
    ("widgets.exercises.by_hand", "run_steps", ("H1",)),
    ("widgets.exercises.by_hand.network", "forward", ("H1",)),
    ("widgets.exercises.by_hand.network", "run_steps", ("H1",)),
    ("widgets.exercises.second_order", "tanh_mistakes", ("D1",)),
    ("widgets.exercises.second_order", "engine_tanh_second", ("D1",)),
    ("widgets.exercises.second_order", "network_mistakes", ("D2",)),
    ("widgets.exercises.second_order", "hvp_mistakes", ("D3",)),
    ("widgets.exercises.second_order", "newton_mistakes", ("D4",)),
    ("widgets.exercises.second_order.problems", "engine_tanh_second", ("D1",)),
    ("widgets.exercises.second_order.curvature", "tanh_mistakes", ("D1",)),
    ("widgets.exercises.second_order.curvature", "network_mistakes", ("D2",)),
    ("widgets.exercises.second_order.products", "hvp_mistakes", ("D3",)),
    ("widgets.exercises.second_order.newton", "newton_mistakes", ("D4",)),
    ("widgets.exercises.attention", "attention_mistakes", ("A1",)),
    ("widgets.exercises.attention", "with_slip", ("A1",)),
    ("widgets.exercises.attention", "byte_mistakes", ("A2",)),
    ("widgets.exercises.attention.backward", "engine_gradients", ("A1",)),
    ("widgets.exercises.attention.backward", "attention_mistakes", ("A1",)),
    ("widgets.exercises.attention.backward", "with_slip", ("A1",)),
    ("widgets.exercises.attention.saved_bytes", "byte_mistakes", ("A2",)),
    ("widgets.lessons.modes", "mode_costs", ("T2",)),
    ("widgets.lessons.modes", "jacobian_costs", ("T2",)),
    ("widgets.lessons.modes", "finite_difference_errors", ("T5",)),
]
# How to call each one that stays public (a lesson calls it).
_CALLS = {"branches": lambda helper: helper(), "with_slip": lambda helper: helper("elementwise")}


@pytest.mark.parametrize("module_name, name, items", ANSWERING,
                         ids=[f"{m.rsplit('.', 1)[1]}.{n}" for m, n, _ in ANSWERING])
def test_a_helper_that_computes_an_answer_is_private_or_records_it(module_name, name, items):
    assert set(items) <= set(IDS)
    module = importlib.import_module(module_name)
    if name not in _public_names(module):
        return  # private: only the checks and the tests read it
    helper = getattr(module, name)
    assert getattr(helper, "gate_item", None) in items, (
        f"{module_name}.{name} gives {'/'.join(items)}'s answer, is public and records nothing: "
        "make it private, or wear @gate.answers")
    assert name in _CALLS, f"{module_name}.{name} is public and gated: say how to call it here"
    _CALLS[name](helper)
    assert all(seen(item) for item in items), [item for item in items if not seen(item)]


def test_a_lesson_calls_with_slip_only_after_solving():
    """Lesson 15's demonstration of a slip still runs once A1 is solved, and shows no
    solution it had not earned: the slip is made inside A1's own check."""
    from widgets.exercises.attention import with_slip

    ex.A1.solution  # noqa: B018 - seen: after_solving lets the demonstration run
    result = ex.A1.demo(with_slip("elementwise"))
    assert not result.ok


def _answering_names() -> list[tuple[str, str]]:
    """Every public function of an exercise or lesson module whose name says it computes
    an answer or its near misses (``engine_*``, ``*_mistakes``, ``*_facts``, ``*_fact``; not
    ``check_fact``, a check, nor ``engine_ops_elsewhere`` and ``engine_calls``, which spot
    the engine in a learner's code)."""
    lessons = importlib.import_module("widgets.lessons")
    modules = [*_exercise_modules(), "widgets.lessons",
               *(info.name for info in pkgutil.walk_packages(lessons.__path__,
                                                             "widgets.lessons."))]
    found = []
    for module_name in modules:
        module = importlib.import_module(module_name)
        for name in sorted(_public_names(module)):
            value = getattr(module, name, None)
            if (inspect.isfunction(value) and value.__module__.startswith("widgets.")
                    and re.search(r"^engine_(?!ops_|calls$)|_mistakes$|(?<!^check)_facts?$", name)):
                found.append((module_name, name))
    return found


def test_no_public_function_named_for_an_answer_is_ungated():
    """Generated: a helper named for what it computes (the engine's value, the near misses
    a check names, a prediction's facts) is private or wears ``@gate.answers``."""
    ungated = [f"{m}.{n}" for m, n in _answering_names()
               if not getattr(getattr(importlib.import_module(m), n), "gate_item", None)]
    assert not ungated, ungated


@pytest.mark.parametrize("spec_name", sorted(ex.BACKWARD_SPECS))
def test_a_backward_specs_near_misses_are_read_by_its_check_only(spec_name):
    """A spec's mistakes are the answer up to one slip each (H3's are softmax cross-entropy's
    backward with one error): no public attribute of ``BACKWARD_SPECS[...]`` holds them."""
    spec = ex.BACKWARD_SPECS[spec_name]
    public = {n for n in dir(spec) if not n.startswith("_")}
    assert "mistakes" not in public, f"BACKWARD_SPECS[{spec_name!r}].mistakes is public"


@pytest.mark.parametrize("spec_name", sorted(ex.BACKWARD_SPECS))
def test_a_backward_specs_hints_nudge_and_never_state_the_rule(spec_name):
    """Issue #39's third audit: B4's, B5's and B6's hints printed ``dβ = Σ g``,
    ``dx = g · mask / (1 − p)`` and softmax cross-entropy's whole rule, so the next try
    solved. A hint after a named slip asks a question; no hint states a gradient."""
    spec = ex.BACKWARD_SPECS[spec_name]
    if spec._mistakes is None:
        return
    arrays = spec.inputs()
    params = {**spec.params, **(spec.data() if spec.data is not None else {})}
    out = spec.reference(*[ag.tensor(a) for a in arrays], **params).numpy()
    g = np.random.default_rng(0).standard_normal(out.shape)
    found = spec._mistakes(arrays, g, params)
    mistakes = [m for ms in found.values() for m in ms] if isinstance(found, dict) else found
    stated = [m.hint for m in mistakes if re.search(r"\bd\w*\s*=|=\s*g\b", m.hint)]
    assert not stated, stated


def test_b1_refuses_the_engines_own_finite_differences():
    """Issue #39's third audit: B1's my_gradcheck handed to the engine's numeric_jacobian
    (which nudges one entry at a time, both ways, as the check asks) solved B1."""
    from autograd_core.tools.gradcheck import numeric_jacobian

    def my_gradcheck(f, x):
        return numeric_jacobian(lambda u: ag.tensor(f(u.numpy())),
                                [ag.tensor(x)])[0][0].reshape(x.shape)

    result = ex.B1(my_gradcheck)
    assert not result.ok and all("numeric_jacobian" in p.message for p in result.parts)
    assert status("B1") != "solved"


def test_b1s_f_shows_the_learner_no_engine_function():
    """``my_gradcheck(f, x)`` gets ``f`` to evaluate; a public callable on it (``f.fn``, the
    engine function) would let it return the engine's gradient instead of measuring."""
    exposed = []

    def my_gradcheck(f, x):
        exposed.extend(n for n in dir(f) if not n.startswith("_") and callable(getattr(f, n)))
        return np.zeros_like(x)

    ex.B1(my_gradcheck)
    assert not exposed, exposed


# -- 7, continued: the engine's own backward on the learner's problem --------------------------

GRADIENT_ITEMS = [i for i in IDS if any(getattr(fn, "gradients", None) is not None
                                        for fn in ex.registry()[i]._checks.values())]


@pytest.fixture()
def _fresh_watch():
    from widgets.exercises import engine_watch

    engine_watch.forget()
    yield
    engine_watch.forget()


@pytest.mark.parametrize("exercise_id", GRADIENT_ITEMS)
def test_the_engines_backward_on_your_own_problem_is_seeing_the_answer(exercise_id,
                                                                       _fresh_watch, capsys):
    """Issue #39's re-audit: ``(A @ B).backward(p.G)`` on ``G6.problem()`` hands back the
    engine's gradients; it is a route to the answer like ``.solution``, and recorded as one.
    Generated over every item of the Gradients kind: a backward that reaches a leaf holding
    one of the problem's arrays."""
    assert GRADIENT_ITEMS
    p = ex.registry()[exercise_id].problem()
    leaves = [ag.tensor(a, requires_grad=True) for a in p.values()
              if isinstance(a, np.ndarray) and a.dtype.kind == "f" and a.size > 1]
    sum(leaf.sum() for leaf in leaves).backward()
    assert seen(exercise_id)
    assert f"{exercise_id}'s own problem" in capsys.readouterr().err


ASKED_PROGRAMS = sorted((i, k) for i, programs in __import__(
    "widgets.exercises.engine_watch", fromlist=["_"]).programs_asked_about().items()
    for k, (_, shown_by) in enumerate(programs) if shown_by == "sweep")


@pytest.mark.parametrize("exercise_id, k", ASKED_PROGRAMS)
def test_a_sweep_of_the_program_an_item_asks_about_is_seeing_its_answer(exercise_id, k,
                                                                        _fresh_watch, capsys):
    """G4's first graph is ``a = x * w; c = a + tanh(a)``: the engine's sweep of that
    program, stepped by the learner, shows its order. Generated over every item
    that names the program it asks about."""
    from autograd_core.tools.graph import backward_steps
    from widgets.exercises.engine_watch import programs_asked_about

    assert ASKED_PROGRAMS
    list(backward_steps(programs_asked_about()[exercise_id][k][0]()))
    assert seen(exercise_id)
    assert f"{exercise_id}'s own problem" in capsys.readouterr().err


def test_s6s_snippet_sweeps_show_its_prediction_only_until_it_is_right(_fresh_watch):
    """S6's own sweeps (one per head) show what its "predict" check asks; once that check
    is right, trying them while writing the one-sweep fix shows nothing more."""
    from widgets.exercises.spot_error import _s6_head

    _s6_head(0).backward()
    assert seen("S6")
    reset_progress()
    result = ex.S6.run("predict", pass_1_reaches={"w1", "wa"}, pass_2_reaches={"w1", "wb"},
                       rules_run_twice=2)
    assert result.ok, repr(result)
    _s6_head(1).backward()
    assert not seen("S6")


def _g4_any_graph(ops, loss):
    """A right G4: the ops the loss reaches, each after every reached op that read it."""
    reads = {name: set(inputs) for name, inputs in ops}
    reached, stack = set(), [loss]
    while stack:
        name = stack.pop()
        if name in reads and name not in reached:
            reached.add(name)
            stack += reads[name]
    order = []
    while len(order) < len(reached):
        order += [n for n in reached if n not in order and all(
            r in order for r in reached if n in reads[r])][:1]
    return order


def _g4_shaped(x, w, *, commuted=False):
    a = x * w
    return (ag.tanh(a) + a if commuted else a + ag.tanh(a)).sum()


@pytest.mark.parametrize("sweep", ["backward", "stepper view"])
def test_g4s_program_with_other_values_and_operands_swapped_is_still_g4s(sweep, _fresh_watch):
    """The program's shape is what the answer depends on: other numbers, other sizes and
    ``tanh(a) + a`` for ``a + tanh(a)`` give the same order; so does the stepper view."""
    from widgets import BackwardStepper

    g = np.random.default_rng(4)
    x, w = (ag.tensor(g.standard_normal(5), requires_grad=True) for _ in range(2))
    loss = _g4_shaped(x, w, commuted=True)
    loss.backward() if sweep == "backward" else BackwardStepper(loss)
    assert seen("G4")


def test_a_sweep_through_a_bigger_program_that_holds_g4s_shows_its_order_too(_fresh_watch):
    """The sweep visits G4's four ops in the same order when more follows them."""
    x, w = (ag.tensor([0.5, 1.5], requires_grad=True) for _ in range(2))
    (_g4_shaped(x, w) * 3.0).backward()
    assert seen("G4")


def test_a_sweep_of_another_program_or_g4s_own_check_is_not_seeing_g4(_fresh_watch):
    x = ag.tensor([0.5, -1.0, 2.0], requires_grad=True)
    w = ag.tensor([1.5, 0.5, -0.5], requires_grad=True)
    (x * w + ag.tanh(x * w)).sum().backward()  # mul computed twice: no value read twice
    a = x * w
    (a + ag.tanh(a) * a).sum().backward()      # one op more, inside, reading a third time
    ag.tanh(x * w).sum().backward()
    assert not seen("G4")
    ex.G4(_g4_any_graph)                        # the check sweeps the program itself
    assert status("G4") == "solved"
    ex.G4.experiment()                          # and, once solved, shows it
    assert status("G4") == "solved"


def test_recording_the_program_l3_asks_about_is_seeing_its_answer(_fresh_watch, capsys):
    """L3 asks how many ops ``y = w_pos·x if x > 0 else w_neg·x, then tanh per unit of |x|``
    records for x = 2.5: recording it (no sweep needed) and counting is the answer. The
    other run, one mul and one tanh, is not watched: too many graphs have that shape."""
    from autograd_core.tools.graph import capture

    w_pos = ag.tensor(1.5, requires_grad=True)
    y = w_pos * ag.tensor(2.5)
    ag.tanh(w_pos * 0.5).sum()  # a shorter program: nothing
    assert not seen("L3")
    for _ in range(2):
        y = ag.tanh(y)
    len(capture(y).ops)
    assert seen("L3")
    assert "L3's own problem" in capsys.readouterr().err


def test_recording_l7s_chain_or_l1s_wider_block_is_seeing_their_answers(_fresh_watch):
    """L7 asks the bytes ten and twenty tanh keep; L1 the ops the 8 -> 16 residual block
    records. Recording those very programs (any values) is the answer; a chain of nine
    tanh, or the 8 -> 8 block, is another program."""
    from autograd_core import nn
    from autograd_core.tools.graph import saved_bytes

    h = ag.tensor(np.ones(7), requires_grad=True)
    for _ in range(9):
        h = ag.tanh(h)
    nn.ResidualBlock(8, 8, linear=True)(ag.randn(3, 8))
    assert not seen("L7") and not seen("L1")
    saved_bytes(ag.tanh(h))
    nn.ResidualBlock(8, 16, linear=True)(ag.randn(2, 8))
    assert seen("L7") and seen("L1")


def _scaled(t, by=1.0):
    return t * by


VARIANTS = {  # each item's program, changed by ops that leave its answer readable
    "G4": lambda: (lambda a: (a + ag.tanh(a * 1.0)).mean())(
        ag.tensor([0.5, 2.0], requires_grad=True) * ag.tensor([1.0, -1.0], requires_grad=True)),
    "E1": lambda: sum(t.mean() for t in (
        ag.tensor([1.0, 2.0], requires_grad=True) * 2,
        ag.tensor([1.0, 2.0], requires_grad=True) * 0.0,
        ag.relu(ag.tensor([1.0, 2.0], requires_grad=True).double())))
    + ag.tensor(0.0),
    "W6": lambda: ag.tanh(ag.tanh(-_scaled(ag.tensor(1.5, requires_grad=True), -1.0)
                                  * ag.tensor(2.5) + 0.0)) / 1.0,
    "L3": lambda: ag.tanh(ag.tanh(ag.tensor(1.5, requires_grad=True).clone() * 2.5)),
    "L4": lambda: ag.nn.Sequential(ag.nn.Linear(3, 5), ag.nn.Tanh(), ag.nn.Dropout(0.2))(
        ag.tensor(np.ones((2, 3), dtype=np.float32)) * 1.0),
    "L1": lambda: ag.nn.ResidualBlock(8, 16, linear=True)(
        ag.tensor(np.ones((2, 8), dtype=np.float32), requires_grad=True) * 1.0),
    "L7": lambda: _tanh_chain_from(ag.tensor(np.ones(3), requires_grad=True) * 1.0, 10),
}


def _tanh_chain_from(h, n):
    for _ in range(n):
        h = ag.tanh(-ag.neg(h))  # two signs in between
    return h


@pytest.mark.parametrize("exercise_id", sorted(VARIANTS))
def test_a_variant_of_an_asked_program_shows_its_answer_too(exercise_id, _fresh_watch):
    """The audit's escapes: ``.mean()`` for ``.sum()`` (E1), a weight times 1.0 (W6), an
    input times 1.0 (L1, L7), a sign, a copy or a cast in between leave the answer readable
    (the same leaves reached, the same order, the same ops to count), so a sweep or record
    of such a variant is seeing the answer as the program itself is."""
    from autograd_core.tools.graph import capture

    assert set(VARIANTS) <= set(ASKED_PROGRAMS_ALL)  # every item named here asks about one
    out = VARIANTS[exercise_id]()
    capture(out)
    if out.requires_grad:
        out.sum().backward()
    assert seen(exercise_id)


ASKED_PROGRAMS_ALL = {i for i, _ in ASKED_PROGRAMS} | set(
    __import__("widgets.exercises.engine_watch", fromlist=["_"]).programs_asked_about())


def test_a_view_sweeping_your_own_problem_is_seeing_the_answer(_fresh_watch):
    """The views are the learner's tools: the stepper on G6's own problem shows dA and dB
    as a backward does (the watch looks through the views to the learner's cell)."""
    from widgets import BackwardStepper

    p = ex.G6.problem()
    a, b = ag.tensor(p.A, requires_grad=True), ag.tensor(p.B, requires_grad=True)
    BackwardStepper(a @ b, ag.tensor(p.G))
    assert seen("G6")


def test_a_backward_on_another_problem_or_in_a_check_is_not_seeing_it(_fresh_watch):
    ex.G6.problem()  # handed out: the learner's own
    other = ex.G6.problem(square=True)
    a, b = ag.tensor(other.A, requires_grad=True), ag.tensor(other.B, requires_grad=True)
    (a @ b).backward(ag.tensor(other.G))  # another problem: not the learner's answer
    assert not seen("G6")
    ex.G6(_g6_by_hand)  # the check runs the engine on p itself
    assert status("G6") == "solved"


# -- 9. the Gradients kind: the learner's derivation is a function of the problem ------------
#
# Issue #39's fourth audit solved every item of the kind without deriving anything: the
# engine run on a leaf holding the problem's array in disguise (shifted, float32, zeros),
# its .grad handed back. Now the answer is a function of the problem, run by hand (no
# engine inside) on the learner's own problem and then on problems drawn at check time
# from a secret seed. Generated over every check of the kind; each needs a right function
# written in NumPy below, so a new item of the kind cannot be added without one.

KIND_CHECKS = [(i, c, fn.gradients) for i in IDS for c, fn in ex.registry()[i]._checks.items()
               if getattr(fn, "gradients", None) is not None]
KIND_IDS = [f"{i}.{c}" for i, c, _ in KIND_CHECKS]


def _bn_dx_closed(p):
    inv = 1 / np.sqrt(p.x.var(0) + p.eps)
    xhat = (p.x - p.x.mean(0)) * inv
    dxhat = p.G * p.gamma
    return {"dx": inv * (dxhat - dxhat.mean(0) - xhat * (dxhat * xhat).mean(0))}


def _scatter_add(ids, G, num_rows):
    dW = np.zeros((num_rows, G.shape[1]))
    np.add.at(dW, ids, G)
    return dW


def _pool_by_loops(p):
    half = p.x.shape[-1] // 2
    dmax, davg = np.zeros_like(p.x), np.zeros_like(p.x)
    for i in range(half):
        for j in range(half):
            win = p.x[0, 0, 2 * i:2 * i + 2, 2 * j:2 * j + 2]
            k = np.unravel_index(np.argmax(win), win.shape)
            dmax[0, 0, 2 * i + k[0], 2 * j + k[1]] = p.G[0, 0, i, j]
            davg[0, 0, 2 * i:2 * i + 2, 2 * j:2 * j + 2] = p.G[0, 0, i, j] / 4
    return {"dx_max": dmax, "dx_avg": davg}


def _mlp_by_hand(p):
    d3 = (p.z3 - p.target) / len(p.x)
    d2 = (d3 @ p.W3) * (1 - p.a2 ** 2)
    return {"dW2": d2.T @ p.a1, "db2": d2.sum(0), "delta1": (d2 @ p.W2) * (1 - p.a1 ** 2)}


def _sigmoid_by_hand(p):
    s = 1 / (1 + np.exp(-p.z))
    return {"dz": p.G * s * (1 - s)}


def _network_by_hand(p):
    """H1: every row of lesson 13's network, op by op back from the loss, in NumPy."""
    n, d = len(p.y), {}
    d["picked"] = np.full(n, -1.0 / n)
    d["log_probs"] = np.zeros_like(p.log_probs)
    d["log_probs"][np.arange(n), p.y] = d["picked"]
    d["log_sum_exp"] = -d["log_probs"].sum(1, keepdims=True)
    d["sum_exp"] = d["log_sum_exp"] / p.sum_exp
    d["exps"] = d["sum_exp"] + 0 * p.exps
    d["shifted"] = d["exps"] * p.exps + d["log_probs"]
    d["logit_max"] = -d["shifted"].sum(1, keepdims=True)
    d["logits"] = d["shifted"] + (p.logits == p.logit_max) * d["logit_max"]
    d["W2"], d["b2"] = p.h.T @ d["logits"], d["logits"].sum(0)
    d["h"] = d["logits"] @ p.W2.T
    d["bn_out"] = d["h"] * (1 - p.h ** 2)
    d["gamma"], d["beta"] = (d["bn_out"] * p.x_hat).sum(0), d["bn_out"].sum(0)
    d["x_hat"] = d["bn_out"] * p.gamma
    d["inv_std"] = (d["x_hat"] * p.diff).sum(0, keepdims=True)
    d["var_eps"] = d["inv_std"] * -0.5 * p.var_eps ** -1.5
    d["bn_var"] = d["var_eps"]
    d["diff_sq"] = d["bn_var"] / n + 0 * p.diff_sq
    d["diff"] = d["x_hat"] * p.inv_std + 2 * p.diff * d["diff_sq"]
    d["bn_mean"] = -d["diff"].sum(0, keepdims=True)
    d["h_pre"] = d["diff"] + d["bn_mean"] / n
    d["W1"] = p.x.T @ d["h_pre"]
    return {f"d_{k}": v for k, v in d.items()}


def _max_relu_by_hand(p):
    tie = 0.5 * (p.a == p.b)
    return {"da": p.G * ((p.a > p.b) + tie), "db": p.G * ((p.b > p.a) + tie),
            "dx": p.G * (p.x > 0)}


def _conv_by_loops(p):
    """Each output's G sent back through the kernel over the window it read (any stride
    and padding): dw gathers G times that window, dx gets G times the kernel there."""
    s, pad = p.stride, p.padding
    xp = np.pad(p.x, ((0, 0), (0, 0), (pad, pad), (pad, pad)))
    dxp, dw = np.zeros_like(xp), np.zeros_like(p.w)
    for n, o, i, j in np.ndindex(p.G.shape):
        window = (n, slice(None), slice(i * s, i * s + 3), slice(j * s, j * s + 3))
        dw[o] += p.G[n, o, i, j] * xp[window]
        dxp[window] += p.G[n, o, i, j] * p.w[o]
    size = p.x.shape[2]
    return {"dx": dxp[:, :, pad:pad + size, pad:pad + size], "dw": dw}


def _merges_by_hand(p):
    s = 1 / (1 + np.exp(-p.u))  # gate: h times the sigmoid's slope; pool: the winner only;
    t = np.tanh(p.x * p.w)      # reuse: both uses of w add up
    return {"du": p.G_gate * p.h * s * (1 - s),
            "d_branches": p.G_pool * (p.branches == p.branches.max(axis=0)),
            "dw": p.G_reuse * (t + p.w * (1 - t ** 2) * p.x)}


# Each check's right function, derived by hand and written in NumPy (independent of the
# engine and of the checks' own code).
BY_HAND_RIGHT = {
    "G2.gradients": _max_relu_by_hand,
    "G3.gradients": _pool_by_loops,
    "G5.gradients": _mlp_by_hand,
    "G6.gradients": _g6_by_hand,
    "G9.db": lambda p: {"db": p.G.sum(axis=0)},
    "G10.gradients": lambda p: {"dW": _scatter_add(p.ids, p.G, len(p.W)),
                                "row1": p.G[p.ids == 1].sum(axis=0)},
    "G10.fix": _scatter_add,
    "G12.fixed": _mlp_by_hand,
    "G13.gradients": lambda p: {  # a token's (x·w − t)² weighed by 1 (sum), 1/(B·n_b) (seq)
        "grad_sum": (p.mask[..., None] * 2 * (p.x @ p.w - p.t)[..., None] * p.x).sum((0, 1)),
        "grad_seq": ((p.mask / (len(p.mask) * p.mask.sum(axis=1, keepdims=True)))[..., None]
                     * 2 * (p.x @ p.w - p.t)[..., None] * p.x).sum(axis=(0, 1))},
    "G14.dx": _bn_dx_closed,
    "G7.gradients": _conv_by_loops,
    "L2.gradients": lambda p: {"da": p.G[:, :p.a.shape[1]], "db": p.G[:, p.a.shape[1]:]},
    "L2.merges": _merges_by_hand,
    "W5.gradients": _sigmoid_by_hand,
    "H1.gradients": _network_by_hand,
    # z = literal·w·x + b: dz_i/dw_i = literal·x_i; with k for the literal, Σ_i w_i·x_i
    "E2.gradients": lambda p: {"dw": p.literal * p.x, "dk": float(np.dot(p.w, p.x))},
    # each use of W as if the other were constant, then their sum
    "E5.dW": lambda p: {"dW": p.t.T @ p.h + p.x.T @ ((p.t @ p.W) * (1 - p.h ** 2))},
    # each detached copy a constant c = x: d/dx [c·tanh(x) + x·c²]
    "E6.gradients": lambda p: {"dx": p.x * (1 - np.tanh(p.x) ** 2) + p.x ** 2},
}


def _own(kind):
    """The learner's own problem of a check of the kind (drawn without handing it out)."""
    return kind.problem(**kind.options)


def _engine_values(kind, p) -> dict:
    """The engine's gradient of every part on ``p``, as arrays."""
    right = kind.engine(p)
    return {k: np.array(right[k].numpy() if hasattr(right[k], "numpy") else right[k])
            for k in kind.parts}


def _answering(kind, values: dict):
    """A learner's function of the check's form that returns ``values`` (by part)."""
    def precomputed(*args):
        return values if kind.returns is None else values[kind.returns]
    return precomputed


def test_every_check_of_the_kind_has_a_right_function_by_hand():
    assert KIND_CHECKS and set(KIND_IDS) == set(BY_HAND_RIGHT)


@pytest.mark.parametrize("exercise_id, check, kind", KIND_CHECKS, ids=KIND_IDS)
def test_the_right_function_in_numpy_is_right_on_yours_and_on_unseen_problems(
        exercise_id, check, kind):
    exercise = ex.registry()[exercise_id]
    right = BY_HAND_RIGHT[f"{exercise_id}.{check}"]
    calls = []

    def learners(*args):
        calls.append(args)
        return right(*args)

    result = exercise.run(check, learners)
    assert result.ok, repr(result)
    # each part says so, or, for a table of many rows (H1), its summary line
    assert (all("drawn at check time" in p.message for p in result.parts or (result,))
            or "drawn at check time" in result.message.splitlines()[0]), repr(result)
    from widgets.exercises.array_answers import UNSEEN

    assert len(calls) == 1 + UNSEEN  # the learner's own problem, then the unseen ones
    own = kind.arguments(_own(kind))
    floats = [[a for a in (c[0].values() if hasattr(c[0], "values") else c)
               if isinstance(a, np.ndarray) and a.dtype.kind == "f"] for c in [own, *calls]]
    assert all(np.array_equal(a, b) for a, b in zip(floats[0], floats[1]))  # yours first
    for i, other in enumerate(floats[2:], start=2):  # then others, of the same shapes
        assert [a.shape for a in other] == [a.shape for a in floats[0]]
        for earlier in floats[1:i]:
            assert not all(np.array_equal(a, b) for a, b in zip(other, earlier))
    for variant in required_variants(exercise, check):  # G7's strided problem too
        assert exercise.run(check, right, **variant).ok
    required = [k for k in required_parts(exercise) if k.startswith(f"{check}:")]
    assert all(store.read_item(exercise_id)["parts"][k]["ever"] for k in required)


@pytest.mark.parametrize("exercise_id, check, kind", KIND_CHECKS, ids=KIND_IDS)
def test_the_engines_arrays_for_your_own_problem_only_are_not_a_derivation(
        exercise_id, check, kind):
    """The audit's route: the engine's gradients on the learner's own problem, worked out
    outside (any disguise) and handed back by a function that ignores its argument."""
    exercise = ex.registry()[exercise_id]
    values = _engine_values(kind, _own(kind))
    with unseen():  # a part the same on every problem (H1's d_picked = -1/N) tells nothing
        other = _engine_values(kind, kind.problem(**kind.options))
    telling = {k for k in kind.parts if not np.allclose(values[k], other[k])}
    assert len(telling) >= max(1, len(kind.parts) - 3)
    for _ in range(3):  # again and again: never solved, never a value shown
        result = exercise.run(check, _answering(kind, values))
        assert not result.ok
        parts = [p for p in result.parts or (result,) if p.name in telling]
        assert {p.diagnosis for p in parts} == {"not_from_problem"}, repr(result)
        for part in parts:
            assert "must compute it from the arrays" in part.message
            assert not leaked(part.message, values[part.name]), part.message
    assert not status(exercise_id).startswith("solved")
    assert store.read_item(exercise_id)["misses"]  # each was a try


def _shifted_leaf_route(kind):
    """The learner's function running the engine itself on leaves holding its problem's
    arrays shifted by one (so no leaf equals a handed-out array): the engine's gradients,
    right on every problem, and refused all the same."""
    from widgets.exercises.problems import Problem

    def shifted(q: Problem) -> Problem:
        moved = {}
        for name, value in q.items():
            if isinstance(value, np.ndarray) and value.dtype.kind == "f":
                leaf = ag.tensor(value + 1, requires_grad=True)
                value = (leaf - 1).detach().numpy()
            moved[name] = value
        return Problem(q.description, **moved)

    if kind.returns is None:
        return lambda q: _engine_values(kind, shifted(q))

    def embedding_backward(ids, G, num_rows):  # G10's fix: the lookup run by the engine
        from autograd_core.nn import functional as F

        table = ag.tensor(np.zeros((num_rows, G.shape[1])) + 1, requires_grad=True)
        F.embedding(ids, table - 1).backward(ag.tensor(G))
        return table.grad.numpy()

    return embedding_backward


@pytest.mark.parametrize("exercise_id, check, kind", KIND_CHECKS, ids=KIND_IDS)
def test_the_engine_inside_the_function_on_shifted_leaves_is_refused(exercise_id, check,
                                                                     kind, _fresh_watch):
    route = _shifted_leaf_route(kind)
    result = ex.registry()[exercise_id].run(check, route)
    assert not result.ok and result.diagnosis == "uses_engine", repr(result)
    assert "engine" in result.message and "NumPy" in result.message
    assert not status(exercise_id).startswith("solved")


def _raises(*args):
    raise KeyError("nope")


def _arrays(args: tuple) -> list:
    """The arrays a learner's function was called with (a problem's, or its arguments)."""
    values = args[0].values() if hasattr(args[0], "values") else args
    return [a for a in values if isinstance(a, np.ndarray)]


def _raises_on_others(kind, right):
    """Right on the learner's own problem; raises on any other."""
    mine = _arrays(kind.arguments(_own(kind)))

    def learners(*args):
        if not all(np.array_equal(a, b) for a, b in zip(_arrays(args), mine)):
            raise IndexError("only my own numbers")
        return right(*args)

    return learners


@pytest.mark.parametrize("exercise_id, check, kind", KIND_CHECKS, ids=KIND_IDS)
@pytest.mark.parametrize("how", ["raises", "None", "text", "a tuple", "unknown key",
                                 "raises on another problem"])
def test_a_function_that_raises_or_returns_garbage_gets_a_sentence(exercise_id, check, kind,
                                                                   how):
    make = {"raises": lambda: _raises, "None": lambda: (lambda *a: None),
            "text": lambda: (lambda *a: "abc"), "a tuple": lambda: (lambda *a: (1.0, 2.0)),
            "unknown key": lambda: (lambda *a: {"zz": np.ones(3)}),
            "raises on another problem": lambda: _raises_on_others(
                kind, BY_HAND_RIGHT[f"{exercise_id}.{check}"])}[how]
    result = ex.registry()[exercise_id].run(check, make())
    assert not result.ok
    for part in (result, *result.parts):
        assert 0 < len(part.message) <= 600 and "Traceback" not in part.message
    assert result.diagnosis != "check_error", repr(result)
    if how == "raises":
        assert "KeyError" in result.message and result.diagnosis == "raised"
    if how == "raises on another problem":
        assert {p.diagnosis for p in result.parts or (result,)} == {"not_from_problem"}
        assert "IndexError" in said_all(result)
    if how == "None":
        assert status(exercise_id) == "not started"  # a placeholder: no try
    if kind.returns is None and how in ("text", "a tuple", "unknown key"):
        assert result.diagnosis in ("call", "unknown_name"), repr(result)
        assert status(exercise_id) == "not started"  # a form to fix: no try


def said_all(result) -> str:
    return "\n".join([result.message, *(p.message for p in result.parts)])


@pytest.mark.parametrize("exercise_id, check, kind", KIND_CHECKS, ids=KIND_IDS)
@pytest.mark.parametrize("how", ["arrays by name", "an array by position",
                                 "a function per part", "a dict"])
def test_arrays_handed_in_the_old_way_get_a_sentence_naming_the_function(exercise_id, check,
                                                                         kind, how):
    values = _engine_values(kind, _own(kind))
    run = ex.registry()[exercise_id].run
    result = {"arrays by name": lambda: run(check, **values),
              "an array by position": lambda: run(check, next(iter(values.values()))),
              "a function per part": lambda: run(check, **{k: (lambda p, v=v: v)
                                                           for k, v in values.items()}),
              "a dict": lambda: run(check, values)}[how]()
    assert not result.ok and result.diagnosis == "call", repr(result)
    assert "def " in result.message and "NumPy" in result.message
    assert not any(leaked(result.message, v) for v in values.values())
    assert untouched(exercise_id)


def test_the_unseen_problems_seed_is_secret_and_gone_when_the_learners_code_runs():
    """The unseen problems come from os.urandom at check time; the learner's function runs
    after the draw, outside it, so no secret is there for it to read."""
    from widgets.exercises import problems

    seen_secret = []

    def my_g6(p):
        seen_secret.append(problems._UNSEEN.get())
        return _g6_by_hand(p)

    assert ex.G6(my_g6).ok and seen_secret == [None, None, None]
    with problems.unseen():
        first = ex.G6.problem().A
    with problems.unseen():
        second = ex.G6.problem().A
    mine = ex.G6.problem().A
    assert not np.array_equal(first, second) and not np.array_equal(first, mine)
    assert np.array_equal(mine, ex.G6.problem().A)  # outside: the learner's own again


def test_the_engine_on_unseen_problems_only_is_refused_too():
    """Precomputed arrays for the learner's own problem, the engine for any other: right
    everywhere, and still not the learner's derivation."""
    own = ex.G6.problem()
    mine = _g6_by_hand(own)

    def my_g6(p):
        if np.array_equal(p.A, own.A):
            return mine
        a, b = ag.tensor(p.A, requires_grad=True), ag.tensor(p.B, requires_grad=True)
        (a @ b).backward(ag.tensor(p.G))
        return {"dA": a.grad.numpy(), "dB": b.grad.numpy()}

    result = ex.G6(my_g6)
    assert not result.ok and {p.diagnosis for p in result.parts} == {"uses_engine"}
    assert all("another problem" in p.message and "engine" in p.message for p in result.parts)
    assert status("G6") != "solved"


def test_lesson_04s_comparisons_live_behind_the_gate(capsys):
    """The audit copied the bodies of lesson 04's cells that compare G11's pairs and W4's
    op with the engine into cells of its own: they now live in a lesson module, and a call
    before the item is solved counts as seeing its answer."""
    from widgets.lessons.memory import engine_sigmoid_beside, what_g11_ops_saved

    what_g11_ops_saved()
    engine_sigmoid_beside(None)  # no op written yet: a sentence, still the engine's answer
    assert seen("G11") and seen("W4")
    assert "does not run yet" in capsys.readouterr().out


def test_the_layers_run_on_l5s_own_problem_are_seeing_its_answer(_fresh_watch, capsys):
    """L5 asks what dropout and batch norm give in evaluation on its own x and z: the
    engine's forward on them, no sweep needed, is the answer (the audit's route). The same
    layers on another problem, and L5's own check, are not."""
    from autograd_core import nn

    other = ex.L5.problem(batch_size=4)
    own = ex.L5.problem()
    bn = nn.BatchNorm1d(3, dtype=np.float64)
    bn(ag.tensor(other.x))
    assert not seen("L5")
    ex.L5(kept_value=1.0)  # the check runs the layers on the problem itself
    assert not seen("L5")
    bn(ag.tensor(own.x))
    assert seen("L5")
    assert "L5's own problem" in capsys.readouterr().err


# The audit after issue #39: a Gradients part measured (finite differences, a complex step)
# rather than derived passed; and a written backward that perturbs its own forward.


@pytest.mark.parametrize("exercise_id, check, kind", KIND_CHECKS, ids=KIND_IDS)
def test_a_part_at_finite_difference_accuracy_is_told_apart(exercise_id, check, kind):
    """Each part of the right function off by one part in 10⁸ (what central differences
    reach) gets the sentence; the right function itself passes (the test above)."""
    right = BY_HAND_RIGHT[f"{exercise_id}.{check}"]

    def measured(*args):
        out = right(*args)
        if kind.returns is not None:
            return out * (1 + 1e-8)
        return {k: np.asarray(v, dtype=np.float64) * (1 + 1e-8) for k, v in out.items()}

    result = ex.registry()[exercise_id].run(check, measured)
    parts = result.parts or (result,)
    wrong = {p.diagnosis for p in parts if not p.ok}
    # (a table of rows, H1's, says of a row off only through the rows it is built from
    # that it is "upstream": its own step back is right)
    assert not result.ok and "not_closed_form" in wrong, repr(result)
    assert wrong <= {"not_closed_form", "upstream"}, repr(result)
    assert status(exercise_id) != "solved"


# A measurement a learner's function may take inside itself: (the arithmetic, the diagnosis,
# words its sentence holds). The fifth audit solved G5, G12, G13, G14, E5 and W5 with
# central differences in Python's ``decimal`` at 60 digits (they agree to 1e-16).
MEASURED_INSIDE = {"complex": (_complex_step, "complex", ""),
                   "decimal": (_decimal_step, "uses_engine", "decimal or fraction arithmetic")}


@pytest.mark.parametrize("arithmetic", sorted(MEASURED_INSIDE))
@pytest.mark.parametrize("exercise_id, check, kind", KIND_CHECKS, ids=KIND_IDS)
def test_measuring_arithmetic_inside_a_gradients_function_is_refused(exercise_id, check,
                                                                     kind, arithmetic):
    step, diagnosis, words = MEASURED_INSIDE[arithmetic]
    right = BY_HAND_RIGHT[f"{exercise_id}.{check}"]

    def stepped(*args):
        step()
        return right(*args)

    result = ex.registry()[exercise_id].run(check, stepped)
    assert not result.ok and result.diagnosis == diagnosis, repr(result)
    assert words in result.message
    assert status(exercise_id) != "solved"


def _spec_items() -> list[tuple[str, str]]:
    from widgets.exercises import backward_check

    ex.registry()
    return sorted((item, spec) for spec, item in backward_check.SPEC_ITEMS.items())


@pytest.mark.parametrize("exercise_id, spec", _spec_items())
def test_a_backward_that_reruns_its_forward_is_refused(exercise_id, spec):
    """Finite differences of the op's own forward inside its backward, at a small step and
    at a large one (exact up to rounding for a linear op such as conv2d)."""
    from test_exercises_backward import Sigmoid, Softplus
    from test_layer_backwards import RIGHT
    from test_measured_not_derived import _by_differences

    right = {**RIGHT, "softplus": Softplus, "sigmoid": Sigmoid}[spec]
    for h in (1e-5, 1.0):
        result = ex.registry()[exercise_id].run("op", _by_differences(right, h))
        assert not result.ok and result.diagnosis == "numerical", repr(result)
    assert status(exercise_id) != "solved"
    assert ex.registry()[exercise_id].run("op", right).ok  # the control


# -- 9. a law is tried on cases drawn at check time ----------------------------------------------


LAW_PARTS = [(i, c, part) for i in IDS for c, fn in ex.registry()[i]._checks.items()
             for part in getattr(fn, "laws", ())]
LAW_IDS = [f"{i}.{part}" for i, _, part in LAW_PARTS]


def test_every_law_part_has_a_right_law_by_hand():
    from laws_by_hand import RIGHT_LAWS

    assert LAW_PARTS and set(LAW_IDS) == set(RIGHT_LAWS)


def _law_part(result, part):
    return next(p for p in result.parts or (result,) if p.name == part)


@pytest.mark.parametrize("exercise_id, check, part", LAW_PARTS, ids=LAW_IDS)
def test_a_law_is_right_by_hand_and_a_measured_number_is_not(exercise_id, check, part):
    from laws_by_hand import RIGHT_LAWS

    exercise, right = ex.registry()[exercise_id], RIGHT_LAWS[f"{exercise_id}.{part}"]
    cases = []

    def learners(*args):
        cases.append(args)
        return right(*args)

    assert _law_part(exercise.run(check, **{part: learners}), part).ok
    assert len(cases) >= 2
    for case in cases:  # what the engine gives on any one case, handed back for every case
        measured = right(*case)
        reply = _law_part(exercise.run(check, **{part: lambda *a, m=measured: m}), part)
        assert not reply.ok, (exercise_id, part, case)
    assert not status(exercise_id).startswith("solved") or seen(exercise_id)


@pytest.mark.parametrize("exercise_id, check, part", LAW_PARTS, ids=LAW_IDS)
def test_the_engine_may_not_run_inside_a_law(exercise_id, check, part):
    from laws_by_hand import RIGHT_LAWS

    right = RIGHT_LAWS[f"{exercise_id}.{part}"]

    def measuring(*args):
        ag.tensor(1.0) + ag.tensor(1.0)  # noqa: B018 - any engine op
        return right(*args)

    reply = _law_part(ex.registry()[exercise_id].run(check, **{part: measuring}), part)
    assert not reply.ok and reply.diagnosis == "uses_engine"
