"""The exercise widget and the progress summary, headless: construct, set inputs, click,
read the HTML. Hints and solutions appear only when their buttons are clicked."""

import re

import pytest

pytest.importorskip("ipywidgets", reason="ipywidgets is not installed: the exercise widgets "
                    "are not tested (install it with: pip install -e '.[widgets]')")

from widgets import exercises as ex  # noqa: E402
from widgets.exercises.exercise import forget_results  # noqa: E402


@pytest.fixture(autouse=True)
def _own_progress_file(tmp_path, monkeypatch):
    """Progress goes to this test's own file, never to a learner's home directory."""
    monkeypatch.setenv("AUTOGRAD_LESSONS_PROGRESS", str(tmp_path / "progress.json"))

# The key of T9's right justification, found with the raw check (records no progress).
T9_RIGHT = next(k for k in ex.T9.options if ex.T9.checks["verdict"](False, k).ok)


@pytest.fixture(autouse=True)
def fresh_progress():
    forget_results()
    yield
    forget_results()


def test_true_false_widget_checks_the_picked_options():
    w = ex.T9.widget()
    assert w.feedback.value == "" and w.extra.value == ""
    w.verdict.value, w.because.value = "False", T9_RIGHT
    w.check_button.click()
    assert w.result.ok and "✔" in w.feedback.value
    w.verdict.value = "True"
    w.check_button.click()
    assert not w.result.ok and "✘" in w.feedback.value


def test_true_false_widget_with_nothing_picked():
    w = ex.T1.widget()
    w.check_button.click()
    assert not w.result.ok and "True or False" in w.feedback.value


def test_answer_widget_runs_the_same_check_as_the_function():
    p = ex.G6.problem()
    w = ex.G6.widget(lambda: dict(dA=p.G @ p.B.T, dB=p.G.T @ p.A))
    w.check_button.click()
    plain = ex.G6(dA=p.G @ p.B.T, dB=p.G.T @ p.A)
    assert w.result.diagnosis == plain.diagnosis and w.feedback.value == plain._repr_html_()


@pytest.mark.parametrize("answer, words", [
    (None, "needs your answer"),
    (lambda: 1 / 0, "ZeroDivisionError"),
])
def test_answer_widget_problems_are_sentences(answer, words):
    w = ex.G6.widget(answer)
    w.check_button.click()
    assert not w.result.ok and words in w.feedback.value


def test_spot_error_widget_takes_the_function():
    w = ex.S5.widget(lambda: (lambda w_, x, b, t: (w_ * x + b - t) * x))
    w.check_button.click()
    assert w.result.ok


def test_hint_and_solution_only_on_click():
    w = ex.G6.widget(lambda: dict(dA=ex.G6.problem().G))
    w.check_button.click()
    assert "Hint" not in w.extra.value and "Solution" not in w.extra.value
    assert "B.T" not in w.feedback.value
    w.hint_button.click()
    assert "Hint" in w.extra.value
    w.solution_button.click()
    assert "Solution" in w.extra.value and "B.T" in w.extra.value


def test_progress_never_says_all_while_something_failed():
    progress = ex.Progress("G6", "T9", title="Lesson 2")
    assert "nothing checked yet" in repr(progress)
    p = ex.G6.problem()
    ex.G6(dA=p.G @ p.B.T, dB=p.A.T @ p.G)
    ex.T9(True, T9_RIGHT)
    text = repr(progress)
    assert "1 of 2 solved" in text and not re.search(r"\ball\b", text, re.IGNORECASE)
    assert "in progress" in text
    ex.T9(False, T9_RIGHT)
    assert repr(progress).startswith("Lesson 2: all 2 exercises solved.")
    assert progress.complete
    ex.G6(dA=p.G)  # a later wrong check does not undo a solved item
    assert progress.complete


def test_progress_widget_refreshes():
    progress = ex.Progress("T9")
    view = progress.widget()
    html, refresh = view.children
    assert "nothing checked yet" in html.value
    ex.T9(False, T9_RIGHT)
    refresh.click()
    assert "all 1" in html.value


def test_progress_rejects_unknown_ids():
    with pytest.raises(KeyError, match="unknown exercise"):
        ex.Progress("G6", "Z1")
