"""Every question-bank item has a registered exercise with a working check.

The question bank ships with the tests as ``tests/data/question-bank.md``: a copy of the
maintainers' ``shared/question-bank.md`` (beside the clone in their workspace and in CI),
and a test fails if the two differ wherever the original is there. The package keeps its
own list of IDs, compared with the bank here. Behaviour of the checks is tested in the
other ``test_exercises_*`` files.
"""

import re
from pathlib import Path

import pytest

from widgets import exercises
from widgets.exercises.exercise import KINDS


@pytest.fixture(autouse=True)
def _own_progress_file(tmp_path, monkeypatch):
    """Progress goes to this test's own file, never to a learner's home directory."""
    monkeypatch.setenv("AUTOGRAD_LESSONS_PROGRESS", str(tmp_path / "progress.json"))

ROOT = Path(__file__).resolve().parents[2]
BANK = ROOT / "tests" / "data" / "question-bank.md"
SHARED_BANK = ROOT.parent / "shared" / "question-bank.md"  # the maintainers' original


def bank_text() -> str:
    return BANK.read_text(encoding="utf-8")


def test_bundled_question_bank_matches_the_original():
    """Outside the maintainers' workspace there is no original to compare with; CI has it."""
    if SHARED_BANK.exists():
        assert bank_text() == SHARED_BANK.read_text(encoding="utf-8"), (
            "tests/data/question-bank.md is out of date: copy ../shared/question-bank.md "
            "over it (cp ../shared/question-bank.md tests/data/question-bank.md)")


def test_package_id_list_matches_the_question_bank():
    ids = exercises.parse_question_bank(bank_text())
    assert ids, "no IDs parsed from the question bank"
    assert ids == list(exercises.QUESTION_BANK_IDS), (
        "widgets/exercises/ids.py is out of date with the question bank: "
        f"only in the bank {sorted(set(ids) - set(exercises.QUESTION_BANK_IDS))}, "
        f"only in the package {sorted(set(exercises.QUESTION_BANK_IDS) - set(ids))}")


def test_every_question_bank_id_has_a_registered_exercise():
    registered = exercises.registry()
    missing = [i for i in exercises.QUESTION_BANK_IDS if i not in registered]
    assert not missing, f"question-bank IDs without an exercise: {missing}"
    assert list(registered) == list(exercises.EXERCISE_IDS), "registry is not in bank order"


def test_every_id_in_the_bank_file_is_registered():
    registered = exercises.registry()
    missing = [i for i in exercises.parse_question_bank(bank_text()) if i not in registered]
    assert not missing, f"IDs in the question bank without an exercise: {missing}"


def test_interview_levels_match_the_bank():
    levels = dict(re.findall(r"^\|\s*(G\d+)\s*\|\s*\(([JMS])\)", bank_text(), re.MULTILINE))
    assert len(levels) == 14
    got = {i: exercises.registry()[i].level for i in levels}
    assert got == levels


@pytest.mark.parametrize("exercise_id", exercises.EXERCISE_IDS)
def test_exercise_is_complete(exercise_id):
    ex = exercises.registry()[exercise_id]
    assert ex.id == exercise_id
    assert ex.title and ex.question and ex.hint and ex.solution
    assert ex.kind in KINDS
    assert ex.checks and all(callable(c) for c in ex.checks.values())
    assert getattr(exercises, exercise_id) is ex  # exercises.G5 works
    assert exercise_id in repr(ex)
    if ex.kind == "true_false":  # a verdict settled by the learner's own experiment
        assert ex.has_experiment and ex.skeleton and not ex.options
    if ex.kind == "spot_error":
        assert ex.snippet, "a spot-the-error item shows the buggy snippet"


@pytest.mark.parametrize("exercise_id", exercises.EXERCISE_IDS)
def test_calling_with_nothing_explains_instead_of_raising(exercise_id):
    result = exercises.check(exercise_id)
    assert not result.ok
    assert exercise_id in repr(result)
    assert "all" not in result.message.lower().split()[:2]


def test_registering_an_id_twice_is_refused():
    from widgets.exercises.exercise import register

    ex = exercises.registry()["G6"]
    with pytest.raises(ValueError, match="twice"):
        register(ex)


def test_unknown_id():
    result = exercises.check("g6x")  # a sentence, not a KeyError: every call gets one
    assert not result.ok and "no exercise 'g6x'" in result.message
    assert "Did you mean 'G6'?" in result.message
    assert not exercises.demo("G99").ok
    with pytest.raises(AttributeError):
        exercises.G99  # noqa: B018


@pytest.mark.parametrize("exercise_id", [i for i in exercises.QUESTION_BANK_IDS
                                         if exercises.registry()[i].has_problem])
def test_problems_are_deterministic_and_read_only(exercise_id):
    ex = exercises.registry()[exercise_id]
    a, b = ex.problem(), ex.problem()
    assert list(a) == list(b)
    for name in a:
        value = a[name]
        if hasattr(value, "flags"):
            assert (value == b[name]).all()
            assert not value.flags.writeable
    assert ex.problem().description in repr(ex.problem())


def test_snippets_are_valid_python():
    import ast

    for ex in exercises.registry().values():
        if ex.snippet:
            ast.parse(ex.snippet)
