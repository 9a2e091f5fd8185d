"""``after_solving``: a comparison that gives an answer away runs only once the item is
solved or its solution was seen; before that, a sentence, and the comparison never runs."""

import pytest

from widgets import exercises as ex


@pytest.fixture(autouse=True)
def _own_progress_file(tmp_path, monkeypatch):
    monkeypatch.setenv("AUTOGRAD_LESSONS_PROGRESS", str(tmp_path / "progress.json"))


def spy():
    calls = []
    return calls, lambda: calls.append(1) or "compared"


def my_g6(p):
    return {"dA": p.G @ p.B.T, "dB": p.A.T @ p.G}


def solve_g6():
    assert ex.G6(my_g6).ok


def test_a_fresh_start_shows_a_sentence_and_runs_nothing():
    calls, show = spy()
    reply = ex.after_solving("G6", show)
    assert not calls and "Solve G6" in reply


def test_a_wrong_or_partial_answer_is_not_enough():
    calls, show = spy()
    ex.G6(lambda p: {"dA": p.G @ p.B.T})
    ex.G6(lambda p: {"dA": p.G @ p.B.T, "dB": p.A.T @ p.G * 2})
    ex.after_solving("G6", show)
    assert not calls


def test_solving_runs_the_comparison():
    calls, show = spy()
    solve_g6()
    assert ex.after_solving("G6", show) == "compared" and calls == [1]


def test_seeing_the_solution_runs_it_too():
    calls, show = spy()
    str(ex.G6.solution)
    assert ex.after_solving("G6", show) == "compared"


def test_a_demonstration_does_not_count():
    calls, show = spy()
    ex.G6.demo(my_g6)
    ex.after_solving("G6", show)
    assert not calls


def test_every_item_of_a_tuple_is_needed():
    calls, show = spy()
    solve_g6()
    reply = ex.after_solving(("G6", "G5"), show)
    assert not calls and "G5" in reply and "G6" not in reply


@pytest.mark.parametrize("bad", ["G99", "", ("G6", "nope")])
def test_unknown_ids_get_a_sentence(bad):
    calls, show = spy()
    reply = ex.after_solving(bad, show)
    assert not calls and "not an exercise" in reply


def test_a_demonstration_on_the_learners_own_problem_waits_and_says_where_the_item_is():
    """Items with only the learner's own problem (T8, D1, ...) have their lesson's
    demonstration behind after_solving: the sentence names it and where the item is."""
    calls, show = spy()
    reply = str(ex.after_solving("T8", show, kind="demonstration", where="in lesson 03"))
    assert not calls
    assert reply.startswith("This demonstration runs the check on your own problem")
    assert "Solve T8 in lesson 03, then run this cell again." in reply
    assert "Solve G6 above" in str(ex.after_solving("G6", show))  # the default words
