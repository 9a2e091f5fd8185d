"""D4: one Newton step, written by the learner from the engine's gradient and Hessian,
checked on the lesson's logistic regression and on a second problem of another size; and
``newton_run``, the lesson's race of Newton's method against gradient descent.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from ...feedback.check import check_gradient
from ...feedback.context import Mistake
from ...feedback.result import Result
from .. import learner
from ..exercise import Exercise, register
from ..function_cases import Derivation, deriving
from ..problems import Problem
from .problems import logistic

STEPS = 6  # Newton steps in the lesson's race
LEARNING_RATE = 1.0  # gradient descent's step size in the race (stable on this problem)


def _newton_mistakes(w: np.ndarray, g: np.ndarray, H: np.ndarray) -> list[Mistake]:
    """Newton steps with one thing wrong, each named."""
    return [
        Mistake(w + np.linalg.solve(H, g), "Your step goes uphill: it moves the weights "
                "the way the loss rises.", "Mind the sign of the step.", "sign"),
        Mistake(w - H @ g, "Your step multiplies the gradient by H; Newton's step divides "
                "by the curvature instead.", "Solve a linear system with H rather than multiply.",
                "multiplied_by_h"),
        Mistake(w - g / np.diag(H), "Your step divides by H's diagonal only: that ignores how "
                "the weights' curvatures couple (the off-diagonal entries).",
                "Solve with the whole matrix.", "diagonal_only"),
        Mistake(w - g, "Your step is a gradient-descent step with learning rate 1; Newton's "
                "step uses the curvature H too.",
                "The Hessian is the third argument.", "gradient_step"),
    ]


def _case(seed: int, n: int, d: int) -> tuple[tuple, np.ndarray, dict]:
    problem, w0 = logistic(seed=seed, n=n, d=d)
    g, H = problem.gradient_and_hessian(w0)
    expected = w0 - np.linalg.solve(H, g)  # the definition of the step
    return (w0, g, H), expected, {"mistakes": _newton_mistakes(w0, g, H)}


def _compare(out, expected, ctx) -> Result:
    return check_gradient(out, expected, name="w_new", reference="the Newton step's weights",
                          **ctx)


# not closed_form: the step is computed from the engine's g and H, no derivative is asked
_check_d4 = deriving(Derivation("newton_step", (
    ("the lesson's problem", lambda: _case(144, 40, 3)),
    ("a second problem (5 weights)", lambda: _case(149, 60, 5))),
    _compare, right="one Newton step.", label="w_new", closed_form=False),
    """``D4(newton_step)``: your ``newton_step(w, g, H)`` returns the weights after one
    Newton step from ``w`` (gradient ``g``, Hessian ``H``, NumPy arrays); checked on the
    lesson's logistic regression and on one with 5 weights.""")


def newton_problem() -> Problem:
    """D4's data: the logistic regression's X, y, λ and the start w0."""
    problem, w0 = logistic()
    return Problem("An L2-regularised logistic regression: loss(w) = mean(log(1 + exp(X @ w))"
                   " - y * (X @ w)) + 0.05 * |w|², X (40, 3) with a bias column, labels y in "
                   "{0, 1}, start w0.", X=problem.X, y=problem.y, lam=problem.lam, w0=w0)


register(Exercise("D4", "derivation", {"closed_form": _check_d4}, problem=newton_problem))


@dataclass
class NewtonRun:
    """The loss after each step of Newton's method (your step) and of gradient descent."""

    newton: list[float] | None
    descent: list[float]
    minimum: float  # the loss at the minimum (the engine's own Newton steps, run to the end)
    note: str = ""

    def __str__(self) -> str:
        gd = f"gradient descent: loss {self.descent[0]:.4f} -> {self.descent[-1]:.4f}"
        if self.newton is None:
            return f"{gd} in {len(self.descent) - 1} steps. Newton: {self.note}"
        gap = self.descent[-1] - self.newton[-1]
        return (f"{gd}; Newton (your step): {self.newton[0]:.4f} -> {self.newton[-1]:.4f}, "
                f"both after {len(self.descent) - 1} steps (gradient descent is "
                f"{gap:.1e} above).")

    def plot(self):
        """Both curves against the step: the loss above its minimum, on a log scale (a
        figure with its text alternative, no pyplot)."""
        from matplotlib.backends.backend_agg import FigureCanvasAgg

        from ...figures import DescribedFigure

        best = self.minimum
        fig = DescribedFigure(figsize=(6.5, 3), dpi=100)
        FigureCanvasAgg(fig)
        ax = fig.add_subplot()
        steps = np.arange(len(self.descent))
        ax.semilogy(steps, np.maximum(np.array(self.descent) - best, 1e-16), "o-",
                    color="C0", label=f"gradient descent (learning rate {LEARNING_RATE})")
        if self.newton is not None:
            ax.semilogy(steps, np.maximum(np.array(self.newton) - best, 1e-16), "s--",
                        color="C1", label="Newton's method (your step)")
        ax.set_xlabel("step")
        ax.set_ylabel("loss above its minimum")
        ax.legend(fontsize=8)
        fig.tight_layout()
        fig.alt = ("Line chart, log scale: the loss above its minimum, per step, "
                   f"for gradient descent (circles) and Newton's method (squares). {self}")
        return fig


def newton_run(newton_step: Callable | None, steps: int = STEPS) -> NewtonRun:
    """``steps`` steps of Newton's method with your ``newton_step`` and of gradient descent,
    from the same start on the lesson's logistic regression."""
    problem, w0 = logistic()
    minimum = _minimum(problem, w0)
    descent, w = [problem.value(w0)], w0.copy()
    for _ in range(steps):
        g, _ = problem.gradient_and_hessian(w)
        w = w - LEARNING_RATE * g
        descent.append(problem.value(w))
    newton, w = [problem.value(w0)], w0.copy()
    for _ in range(steps):
        g, H = problem.gradient_and_hessian(w)
        try:
            w = learner.call(newton_step, w.copy(), g, H, what="newton_step")
            if w is None:
                return NewtonRun(None, descent, minimum, "your newton_step returns None: "
                                                         "write it first (D4).")
            w = np.asarray(w, dtype=np.float64).reshape(w0.shape)
        except learner.LearnerCodeFailed as exc:
            return NewtonRun(None, descent, minimum, exc.sentence)
        except (TypeError, ValueError):
            return NewtonRun(None, descent, minimum, "your newton_step does not return "
                                                     f"weights of w's shape {w0.shape} yet.")
        newton.append(problem.value(w))
    return NewtonRun(newton, descent, minimum)


def _minimum(problem, w0: np.ndarray, steps: int = 20) -> float:
    """The loss at its minimum: exact Newton steps from w0 until they stop moving."""
    w = w0.copy()
    for _ in range(steps):
        g, H = problem.gradient_and_hessian(w)
        w = w - np.linalg.solve(H, g)
    return problem.value(w)
