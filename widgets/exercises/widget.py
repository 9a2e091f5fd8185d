"""A small ipywidgets front for one exercise: inputs where useful, a Check button, the
feedback, and hint / solution revealed only on request.

The widget only calls the exercise's own check; the same check is callable as a
plain function, whose Result prints the same feedback (that is what nbval sees).

>>> registry()["T9"].widget(my_experiment)     # doctest: +SKIP   (verdict, reason: inputs)
>>> registry()["G6"].widget(lambda: my_g6)   # doctest: +SKIP   (the function itself)
"""

from __future__ import annotations

import html
from collections.abc import Callable
from typing import Any

import ipywidgets as w

from ..feedback.result import Result
from . import learner


def _call_with(check: Callable[..., Result], answer: Any) -> Result:
    """Run a check on what the answer function returned: a dict (keyword answers), a
    tuple (positional answers), or one value."""
    if isinstance(answer, dict):
        return check(**answer)
    if isinstance(answer, tuple):
        return check(*answer)
    return check(answer)


class ExerciseWidget(w.VBox):
    """Question, inputs, Check, feedback, and Hint / Solution buttons for one exercise."""

    def __init__(self, exercise, answer: Callable[[], Any] | None = None):
        self.exercise = exercise
        self.answer = answer
        self.result: Result | None = None
        header = w.HTML(f"<b>{html.escape(exercise.heading)}</b><br>"
                        f"{html.escape(str(exercise.question))}")
        self.inputs: list[w.Widget] = []
        if exercise.kind == "true_false":  # the answer function is the learner's experiment
            self.verdict = w.ToggleButtons(options=["True", "False"], value=None,
                                           description="The claim is")
            self.because = w.Text(placeholder="why, in one line of your own words",
                                  description="Because", layout=w.Layout(width="100%"))
            self.inputs = [self.verdict, self.because]
        self.check_button = w.Button(description="Check", button_style="primary")
        self.hint_button = w.Button(description="Hint")
        self.solution_button = w.Button(description="Solution")
        self.feedback = w.HTML()
        self.extra = w.HTML()
        self.check_button.on_click(lambda _: self.check())
        self.hint_button.on_click(lambda _: self.show_hint())
        self.solution_button.on_click(lambda _: self.show_solution())
        buttons = w.HBox([self.check_button, self.hint_button, self.solution_button])
        super().__init__([header, *self.inputs, buttons, self.feedback, self.extra])

    def check(self) -> Result:
        """Run the exercise's check on the current input and show the feedback."""
        ex = self.exercise
        if ex.kind == "true_false":
            verdict = None if self.verdict.value is None else self.verdict.value == "True"
            self.result = ex.check(verdict, self.because.value or None, self.answer)
        elif self.answer is None:
            self.result = Result(False, "This widget needs your answer: create it as "
                                        f"{ex.id}.widget(lambda: ...) with a function that "
                                        "returns what you would pass to the check.",
                                 diagnosis="none")
        else:
            try:
                given = learner.call(self.answer, what="answer")
            except learner.LearnerCodeFailed as exc:
                self.result = learner.failed(exc)
            else:
                self.result = _call_with(ex.check, given)
        self.feedback.value = self.result._repr_html_()
        return self.result

    def show_hint(self) -> str:
        """Reveal the hint (for the last mistake, if a check ran)."""
        text = str(self.result.hint()) if self.result is not None and not self.result.ok \
            and self.result.has_hint else str(self.exercise.hint)
        self.extra.value = f"<i>Hint:</i> {html.escape(text)}"
        return text

    def show_solution(self) -> str:
        """Reveal the worked solution."""
        text = str(self.exercise.solution)
        self.extra.value = f"<i>Solution:</i><pre>{html.escape(text)}</pre>"
        return text
