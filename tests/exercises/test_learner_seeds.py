"""Problems per learner: ``set_learner`` (or ``$AUTOGRAD_LESSONS_LEARNER``) draws each
numeric problem for one learner, so classmates get different numbers, and every check
still accepts the right answer and names the same mistakes on those numbers. With no
learner set, the problems are the shared ones the stored lessons show.

The right answers and mistakes come from ``test_exercises_derivations`` (computed there
independently of the engine), run again here for other learners.
"""

import os
import subprocess
import sys

import numpy as np
import pytest
import test_exercises_derivations as derivations

from widgets import exercises as ex
from widgets.exercises import problems

LEARNERS = ["ada", "Grace Hopper", 7]


@pytest.fixture(autouse=True)
def _fresh(tmp_path, monkeypatch):
    monkeypatch.setenv("AUTOGRAD_LESSONS_PROGRESS", str(tmp_path / "progress.json"))
    monkeypatch.delenv(problems.LEARNER_ENV, raising=False)
    problems.set_learner(None)
    yield
    problems.set_learner(None)


def arrays_of(problem) -> dict:
    return {k: v for k, v in problem.items() if isinstance(v, np.ndarray)}


def same_problem(a, b) -> bool:
    a, b = arrays_of(a), arrays_of(b)
    return a.keys() == b.keys() and all(np.array_equal(a[k], b[k]) for k in a)


WITH_PROBLEMS = [i for i in ex.QUESTION_BANK_IDS if ex.registry()[i].has_problem]


@pytest.mark.parametrize("exercise_id", WITH_PROBLEMS)
def test_default_problems_are_unchanged_when_no_learner_is_set(exercise_id):
    exercise = ex.registry()[exercise_id]
    first = exercise.problem()
    problems.set_learner("ada")
    problems.set_learner(None)
    assert same_problem(first, exercise.problem())


def test_most_drawn_problems_differ_between_learners():
    differ = []
    for exercise_id in WITH_PROBLEMS:
        exercise = ex.registry()[exercise_id]
        shared = exercise.problem()
        problems.set_learner("ada")
        ada = exercise.problem()
        problems.set_learner("grace")
        grace = exercise.problem()
        problems.set_learner(None)
        if arrays_of(shared) and not same_problem(shared, ada) and not same_problem(ada, grace):
            differ.append(exercise_id)
    with_arrays = [i for i in WITH_PROBLEMS if arrays_of(ex.registry()[i].problem())]
    assert len(differ) >= 0.8 * len(with_arrays), (differ, with_arrays)


@pytest.mark.parametrize("name", LEARNERS)
@pytest.mark.parametrize("exercise_id", derivations.CASES)
def test_checks_accept_right_answers_and_name_mistakes_for_every_learner(name, exercise_id):
    problems.set_learner(name)
    derivations.test_right_answer_passes(exercise_id)
    derivations.test_each_mistake_is_named(exercise_id)


def test_names_are_read_without_case_or_spacing():
    problems.set_learner("  Grace   HOPPER ")
    a = ex.G6.problem()
    problems.set_learner("grace hopper")
    assert same_problem(a, ex.G6.problem())


@pytest.mark.parametrize("bad", [3.5, ["ada"], {"name": "ada"}, True, object()])
def test_a_bad_name_gets_a_sentence_and_changes_nothing(bad):
    problems.set_learner("ada")
    before = ex.G6.problem()
    reply = ex.set_learner(bad)
    assert isinstance(reply, str) and "set_learner takes a name" in reply
    assert problems.learner_name() == "ada"
    assert same_problem(before, ex.G6.problem())


def test_blank_name_is_the_default():
    assert "shared default" in ex.set_learner("   ")
    assert problems.learner_name() is None


def test_the_environment_sets_the_learner_for_a_class():
    code = ("from widgets import exercises as ex\n"
            "from widgets.exercises.problems import learner_name\n"
            "print(learner_name(), float(ex.G6.problem().A[0, 0]))")

    def run(env):
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                             env=env, check=True)
        return out.stdout.split()
    base = {k: v for k, v in os.environ.items() if k != problems.LEARNER_ENV}
    default = run(base)
    ada = run({**base, problems.LEARNER_ENV: "ada"})
    assert default[0] == "None" and ada[0] == "ada"
    problems.set_learner("ada")
    assert float(ada[1]) == float(ex.G6.problem().A[0, 0]) != float(default[1])
