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


def t9_experiment():
    """A learner's T9 experiment: the same loss seeded with 1 and with 2.5, and 2.5 times it
    seeded with 1, fresh leaves."""
    import numpy as np

    import autograd_core as ag

    w0, grads = np.array([[0.2, -0.4], [0.7, 0.1]]), []
    for seed, factor in ((1.0, 1.0), (2.5, 1.0), (1.0, 2.5)):
        w = ag.tensor(w0, requires_grad=True)
        (factor * ag.tanh(w).sum()).backward(gradient=seed)
        grads.append(w.grad)
    return {"c": 2.5, "grad_1": grads[0], "grad_c": grads[1], "grad_M": grads[2]}


T9_REASON = "the seed scales every gradient by c"


@pytest.fixture(autouse=True)
def fresh_progress():
    forget_results()
    yield
    forget_results()


def test_true_false_widget_checks_verdict_reason_and_experiment():
    w = ex.T9.widget(t9_experiment)
    assert w.feedback.value == "" and w.extra.value == ""
    w.verdict.value, w.because.value = "False", T9_REASON
    w.check_button.click()
    assert w.result.ok and "✔" in w.feedback.value
    w.verdict.value = "True"
    w.check_button.click()
    assert not w.result.ok and "✘" in w.feedback.value


def test_true_false_widget_with_nothing_filled_in():
    w = ex.T1.widget()
    w.check_button.click()
    assert not w.result.ok and "Fill in the experiment first" in w.feedback.value
    w = ex.T9.widget(t9_experiment)
    w.check_button.click()
    assert not w.result.ok and "state your verdict" in w.feedback.value


def test_answer_widget_runs_the_same_check_as_the_function():
    def my_g6(p):
        return dict(dA=p.G @ p.B.T, dB=p.G.T @ p.A)

    w = ex.G6.widget(lambda: my_g6)
    w.check_button.click()
    plain = ex.G6(my_g6)
    assert w.result.diagnosis == plain.diagnosis == "parts"
    assert w.feedback.value == plain._repr_html_()


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
    w = ex.G6.widget(lambda: lambda p: dict(dA=p.G))
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
    ex.G6(lambda p: dict(dA=p.G @ p.B.T, dB=p.A.T @ p.G))
    ex.T9(True, T9_REASON, t9_experiment)
    text = repr(progress)
    assert "1 of 2 solved" in text and not re.search(r"\ball\b", text, re.IGNORECASE)
    assert "in progress" in text
    ex.T9(False, T9_REASON, t9_experiment)  # the verdict flipped: may be a guess
    assert repr(progress).startswith("Lesson 2: 2 of 2 solved (1 after seeing the solution).")
    assert progress.complete
    ex.G6(lambda p: dict(dA=p.G))  # a later wrong check does not undo a solved item
    assert progress.complete


def test_progress_widget_refreshes():
    progress = ex.Progress("T9")
    view = progress.widget()
    html, refresh = view.children
    assert "nothing checked yet" in html.value
    ex.T9(False, T9_REASON, t9_experiment)
    refresh.click()
    assert "all 1" in html.value


def test_progress_rejects_unknown_ids():
    with pytest.raises(KeyError, match="unknown exercise"):
        ex.Progress("G6", "Z1")
