"""Lesson 03 (the reverse sweep), solved: what nbval never runs.

As stored, lesson 03 is a fresh start: every exercise cell shows a sentence and every cell
behind ``after_solving`` says which item to solve first, so nbval never executes the
comparisons those cells hold. Here the lesson runs in this process with each exercise cell
answered (the answers are written here, not read from the package), and every gated cell
must then run and show its comparison. The demonstrations of E5 and E6 run on other data
than the learner's, and that other data must not answer the learner's problem.
"""

from __future__ import annotations

import ast
import contextlib
import io
import json
from pathlib import Path

import numpy as np
import pytest

from widgets import exercises as ex
from widgets.exercises.exercise import forget_results
from widgets.feedback.result import Result, Text

LESSON = Path(__file__).resolve().parents[2] / "notebooks" / "03_reverse_sweep.ipynb"


@pytest.fixture(autouse=True)
def _own_progress_file(tmp_path, monkeypatch):
    """Progress goes to this test's own file, never to a learner's home directory; the
    lesson's global settings (print options, the default generator) are put back after."""
    import autograd_core.recording.creation as creation

    monkeypatch.setenv("AUTOGRAD_LESSONS_PROGRESS", str(tmp_path / "progress.json"))
    monkeypatch.setenv("MPLBACKEND", "Agg")
    forget_results()
    generator = creation.default_generator
    state = generator.initial_seed, generator.numpy
    with np.printoptions(**np.get_printoptions()):
        yield
    generator.initial_seed, generator.numpy = state
    forget_results()


# The exercise cells of the lesson, answered: cell id -> source.
ANSWERED = {
    "c14": '''
def t8_experiment():
    value = np.array([0.5, -1.5, 2.0])
    uses = [lambda t: 3 * t, ag.tanh, lambda t: t ** 2]
    x = leaf("x", value)
    sum(use(x) for use in uses).sum().backward()

    def alone(use):
        fresh = leaf("x", value)
        use(fresh).sum().backward()
        return fresh.grad

    return {"grad": x.grad, "contributions": [alone(use) for use in uses]}


T8(verdict=False, because="x.grad is the sum of what the three uses send", experiment=t8_experiment)
''',
    "c11-fix": '''
def fixed_grads(x, y):
    a, b = x + y, np.tanh(x)
    x_bar = b + a * (1 - b**2)
    return x_bar, b
S1(fixed_grads)
''',
    "c17": '''
def t9_experiment():
    data = np.random.default_rng(9)
    X, W0 = data.standard_normal((5, 3)), data.standard_normal((3, 2))

    def loss(W):
        return ag.tanh(ag.tensor(X) @ W).sum()

    c = 3.0
    W = leaf("W", W0)
    loss(W).backward()
    W_c = leaf("W", W0)
    loss(W_c).backward(gradient=c)
    W_m = leaf("W", W0)
    (c * loss(W_m)).backward()          # M = c·L, seeded with 1
    return {"c": c, "grad_1": W.grad, "grad_c": W_c.grad, "grad_M": W_m.grad}


T9(verdict=False, because="seed c gave the gradients of c times the loss", experiment=t9_experiment)
''',
    "c22-predict": '''
S6.run("predict", pass_1_reaches={"wa", "w1"}, pass_2_reaches="w1, wb", rules_run_twice=2)
''',
    "c22-fix": '''
def one_pass_gradients(w1, wa, wb, x):
    h = ag.tanh(x @ w1)
    (((h @ wa) ** 2).sum() + ag.tanh(h @ wb).sum()).backward()
    return w1.grad.numpy(), wa.grad.numpy(), wb.grad.numpy()
S6(one_pass_gradients)
''',
    "c28": '''
class MySoftplus(Function):
    name = "softplus"
    rule = "dx = g * sigmoid(x)"

    @staticmethod
    def forward(ctx, x):
        ctx.save(x=x)
        return np.log1p(np.exp(x))

    @staticmethod
    def backward(ctx, g):
        return (g * 0.5 * (1 + np.tanh(ctx.load("x") / 2)),)


W3(MySoftplus)
''',
    "c32-fix": '''
def fixed_grad_w(w, x, b, t):
    return (w * x + b - t) * x
S5(fixed_grad_w)
''',
    "c34": "E1(grad_none={'e', 'b'}, grad_zero=['d', 'c'])",
    "c39": "E2(lambda p: {'dw': p.x + p.x, 'dk': float(p.w @ p.x)})",
    "c39-literal": "E2.run('literal', literal_gets_gradient=False)",
    "c44": "E6(lambda p: {'dx': p.x - p.x * np.tanh(p.x)**2 + p.x * p.x})",
    "c44-value": "E6.run('value', value_changes=False)",
    "c49": '''
def my_e5(p):
    h = np.tanh(p.x @ p.W)
    return {"dW": p.x.T @ ((p.t @ p.W) * (1 - h * h)) + p.t.T @ h}
E5(my_e5)
''',
    "c52": '''
def flat_points(a, t):
    return [0.0] + ([np.sqrt(t / a), -np.sqrt(t / a)] if t / a > 0 else [])
E4(flat_points)
''',
    "c56": '''
from autograd_core import nn


def t6_experiment():
    gen = ag.Generator(6)
    net = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 1))
    x, t = ag.randn(8, 3, generator=gen), ag.randn(8, 1, generator=gen)
    network = [s.node.op.name for s in backward_steps(((net(x) - t) ** 2).mean())]
    W1, b1, W2, b2 = (leaf(n, p.numpy()) for n, p in zip(("W1", "b1", "W2", "b2"),
                                                          net.parameters()))
    formula_loss = (((ag.tanh(x @ W1.T + b1) @ W2.T + b2) - t) ** 2).mean()
    return {"network": network,
            "formula": [s.node.op.name for s in backward_steps(formula_loss)],
            "network_grad": net[0].weight.grad, "formula_grad": W1.grad}


T6(verdict=False, because="the same sweep ran on the network and on the formula",
   experiment=t6_experiment)
''',
    "c61": '''
def t10_experiment():
    def loss(w):
        return ((ag.tanh(w) - ag.tensor([0.3, -0.6])) ** 2).sum()

    w0, step = np.array([0.8, 0.4]), 1e-3
    w = leaf("w", w0)
    loss(w).backward()
    unit = w.grad.numpy() / np.linalg.norm(w.grad.numpy())

    def change(d):
        with ag.no_grad():
            return loss(ag.tensor(w0 + step * d)).item() - loss(ag.tensor(w0)).item()

    others = [np.array([np.cos(a), np.sin(a)]) for a in np.linspace(0, 6, 12)]
    return {"loss": loss, "at": w0, "grad": w.grad, "step": step,
            "along_grad": change(unit), "against_grad": change(-unit),
            "others": [(d, change(d)) for d in others]}


T10(verdict=True, because="the change is largest along the gradient", experiment=t10_experiment)
''',
}


def _run(source: str, namespace: dict):
    """Run a cell's source; the value of its last line if that is an expression."""
    tree = ast.parse(source)
    last = tree.body.pop() if tree.body and isinstance(tree.body[-1], ast.Expr) else None
    exec(compile(tree, "<cell>", "exec"), namespace)  # noqa: S102 - the lesson's own cells
    if last is not None:
        return eval(compile(ast.Expression(last.value), "<cell>", "eval"), namespace)  # noqa: S307
    return None


def test_lesson_03_solved_runs_every_gated_comparison():
    nb = json.loads(LESSON.read_text(encoding="utf-8"))
    cells = [c for c in nb["cells"] if c["cell_type"] == "code"]
    exercise_cells = {c["id"] for c in cells if "exercise" in c["metadata"].get("tags", [])}
    assert exercise_cells == set(ANSWERED), "answer every exercise cell of lesson 03 here"
    namespace: dict = {}
    gated = 0
    with contextlib.redirect_stdout(io.StringIO()) as printed:
        for cell in cells:
            source = ANSWERED.get(cell["id"], "".join(cell["source"]))
            shown = _run(source, namespace)
            if cell["id"] in ANSWERED:
                assert isinstance(shown, Result) and shown.ok, f"{cell['id']}: {shown!r}"
            if "after_solving(" in source:
                gated += 1
                assert not (isinstance(shown, Text) and "answer away" in str(shown)), \
                    f"{cell['id']} still waits once its item is solved: {shown}"
    assert gated >= 8
    import matplotlib.pyplot as plt

    plt.close("all")
    text = printed.getvalue()
    for what in ("ops recorded", "softplus  dx = g * sigmoid(x)", "the engine's w.grad",
                 "v.grad = None", "r.grad = tensor([0., 0.])", "sends to inputs",
                 "x.grad = tensor([3., 3.])"):
        assert what in text, what


def test_the_demonstrations_run_on_other_data():
    for item, name in (("E5", "W"), ("E6", "x")):
        exercise = ex.registry()[item]
        mine, other = exercise.problem(), exercise.problem(other=True)
        assert getattr(mine, name).shape != getattr(other, name).shape
        assert exercise.problem().x.tobytes() == mine.x.tobytes()  # the same every run

    def held(p):  # by hand: each detached copy a constant c = x
        return {"dx": p.x * (1 - np.tanh(p.x) ** 2) + p.x ** 2}

    assert ex.E6(held).ok
    assert ex.E6.demo(held, other=True).ok
    # value_changes is the same on every problem: on the other data it would tell yours
    assert ex.E6.run("value", value_changes=False, other=True,
                     demo=True).diagnosis == "demo_refused"
    assert ex.E6.run("value", value_changes=False, other=True).diagnosis == "demo_refused"

    def nothing_detached(q):
        return {"dx": np.tanh(q.x) + q.x * (1 - np.tanh(q.x) ** 2) + 3 * q.x ** 2}

    wrong = ex.E6.demo(nothing_detached, other=True)
    assert not wrong.ok and "as if nothing were detached" in wrong.message + "".join(
        part.message for part in wrong.parts)

    def tied_gradient(p):
        h = np.tanh(p.x @ p.W)
        return {"dW": p.x.T @ ((p.t @ p.W) * (1 - h * h)) + p.t.T @ h}

    other = ex.E5.problem(other=True)
    assert ex.E5(tied_gradient).ok
    assert ex.E5.demo(tied_gradient, other=True).ok
    worked_out = tied_gradient(other)  # the other data answers nothing of yours
    assert not ex.E5(lambda p: worked_out).ok
