"""Lesson 13, backprop by hand (H1–H4): the table of every intermediate's gradient, the two
closed forms, and training with the learner's own gradients.

* With the right gradients (computed here in NumPy, independently of the engine) every row is
  right, and training on them gives the engine's loss curve to 1e-10.
* Each diagnosed mistake is named in its own row, rows that only inherit a wrong row say so,
  and no message contains an entry of any expected gradient.
* H1 takes one NumPy function of the problem (the Gradients kind): run on the learner's batch,
  then on batches drawn at check time, so the engine's arrays worked out elsewhere (a
  disguised leaf) are "not from p"; arrays passed the old way get the function's sentence.
* Malformed answers (None, text, a Tensor, NaN, a wrong shape, a function ...) get a sentence.
* Placeholders record nothing; H1 is solved only when all 23 rows are right.
* The loss plot carries a text alternative computed from the run (how the curves compare).
* The stored lesson ships unanswered and holds no line of a solution.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pytest
from solutions import solution_text
from test_feedback_malformed import MALFORMED, assert_a_sentence
from test_feedback_no_answer import leaked

import autograd_core as ag
from widgets import exercises as ex
from widgets.exercises import by_hand, forget_results, store
from widgets.exercises.tracking import parts_of, status
from widgets.figures import DescribedFigure

ROOT = Path(__file__).resolve().parents[2]
LESSON = ROOT / "notebooks" / "13_backprop_by_hand.ipynb"


@pytest.fixture(autouse=True)
def _own_progress_file(tmp_path, monkeypatch):
    """Progress goes to this test's own file, never to a learner's home directory."""
    monkeypatch.setenv("AUTOGRAD_LESSONS_PROGRESS", str(tmp_path / "progress.json"))
    store.notices()
    forget_results()


# -- a NumPy reference, written here without the engine -----------------------------------------


def softmax(z: np.ndarray, axis: int = 1) -> np.ndarray:
    e = np.exp(z - z.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def bn_dx(g, x_hat, gamma, inv_std):
    """Batch norm's input gradient in closed form (training mode, per feature)."""
    dxh = g * gamma
    return inv_std * (dxh - dxh.mean(0, keepdims=True)
                      - x_hat * (dxh * x_hat).mean(0, keepdims=True))


def ce_dlogits(logits, y):
    return (softmax(logits) - np.eye(logits.shape[1])[y]) / len(y)


def numpy_backward(p) -> dict[str, np.ndarray]:
    """Every row's gradient from the forward values of ``p``, op by op, in plain NumPy."""
    n = len(p.y)
    d = {"picked": np.full(n, -1.0 / n)}
    d["log_probs"] = np.zeros((n, 10))
    np.add.at(d["log_probs"], (np.arange(n), p.y), d["picked"])
    d["log_sum_exp"] = -d["log_probs"].sum(1, keepdims=True)
    d["sum_exp"] = d["log_sum_exp"] / p.sum_exp
    d["exps"] = np.repeat(d["sum_exp"], 10, axis=1)
    d["shifted"] = d["exps"] * p.exps + d["log_probs"]
    d["logit_max"] = -d["shifted"].sum(1, keepdims=True)
    winner = p.logits == p.logit_max
    d["logits"] = d["shifted"] + winner / winner.sum(1, keepdims=True) * d["logit_max"]
    d["W2"] = p.h.T @ d["logits"]
    d["b2"] = d["logits"].sum(0)
    d["h"] = d["logits"] @ p.W2.T
    d["bn_out"] = d["h"] * (1 - p.h ** 2)
    d["gamma"] = (d["bn_out"] * p.x_hat).sum(0)
    d["beta"] = d["bn_out"].sum(0)
    d["x_hat"] = d["bn_out"] * p.gamma
    d["inv_std"] = (d["x_hat"] * p.diff).sum(0, keepdims=True)
    d["var_eps"] = d["inv_std"] * -0.5 * p.var_eps ** -1.5
    d["bn_var"] = d["var_eps"].copy()
    d["diff_sq"] = np.repeat(d["bn_var"] / n, n, axis=0)
    d["diff"] = d["x_hat"] * p.inv_std + 2 * p.diff * d["diff_sq"]
    d["bn_mean"] = -d["diff"].sum(0, keepdims=True)
    d["h_pre"] = d["diff"] + d["bn_mean"] / n
    d["W1"] = p.x.T @ d["h_pre"]
    return d


def right_answers(p=None) -> dict[str, np.ndarray]:
    """Every row's gradient by the table's names (``d_W1``), on ``p`` (the learner's own
    batch unless given)."""
    return {f"d_{k}": v for k, v in numpy_backward(p or ex.H1.problem()).items()}


def my_h1(p) -> dict[str, np.ndarray]:
    """The learner's H1, right: every row from ``p`` alone, in NumPy."""
    return right_answers(p)


def only(*rows: str, change=None):
    """A learner's H1 that returns just ``rows`` (names like ``d_W1``), each from ``p``;
    ``change(answers, p)`` may alter them first."""
    def my_h1(p):
        answers = right_answers(p)
        if change is not None:
            change(answers, p)
        return {k: answers[k] for k in (rows or answers)}
    return my_h1


def my_gradients(f) -> dict[str, np.ndarray]:
    """The learner's H4, right: closed forms plus the linear layers, from ``f`` alone."""
    d_logits = ce_dlogits(f.logits, f.y)
    d_h = d_logits @ f.W2.T
    d_bn_out = d_h * (1 - f.h ** 2)
    d_h_pre = bn_dx(d_bn_out, f.x_hat, f.gamma, f.inv_std)
    return {"W1": f.x.T @ d_h_pre, "gamma": (d_bn_out * f.x_hat).sum(0),
            "beta": d_bn_out.sum(0), "W2": f.h.T @ d_logits, "b2": d_logits.sum(0),
            "h": d_h, "h_pre": d_h_pre}


def said(result) -> str:
    return "\n".join([result.message, *(p.message for p in result.parts)])


def part(result, name: str):
    return next(p for p in result.parts if p.name == name)


NUMBER = re.compile(r"(?<![\w.])-?(?:\d+\.\d*|\.\d+)(?:e[-+]?\d+)?|(?<![\w.])-?\d+e[-+]?\d+")


def written_like(token: str, values: np.ndarray) -> bool:
    """Whether some entry of ``values`` (or its absolute value) rounds to ``token``."""
    t = abs(float(token))
    if t == 0:
        return False
    mantissa = token.lstrip("-").split("e")[0].replace(".", "").lstrip("0")
    half = 0.5 * 10.0 ** (np.floor(np.log10(t)) - max(len(mantissa), 1) + 1)
    return bool(np.any(np.abs(np.abs(values) - t) <= half))


def no_leak(result, row: str | None = None) -> None:
    """No entry of any expected gradient appears in what the learner reads: every number
    with a point or an exponent in the text is compared with every entry (rounded as the
    number is written), and the lessons' own leak finder reads the row's expected array."""
    text = said(result)
    grads = by_hand.reference().grads
    for token in NUMBER.findall(text):
        hits = [n for n, g in grads.items() if written_like(token, g)]
        assert not hits, f"{token} in the message is an entry of {hits}"
    if row is not None:
        assert not leaked(text, grads[row]), leaked(text, grads[row])


# -- with the right gradients --------------------------------------------------------------------


def test_the_numpy_reference_is_the_engines():
    grads = by_hand.reference().grads
    for name, value in numpy_backward(ex.H1.problem()).items():
        np.testing.assert_allclose(value, grads[name], rtol=1e-10, atol=1e-15, err_msg=name)


def test_the_table_has_every_intermediate_and_parameter():
    assert len(by_hand.INTERMEDIATES) >= 15 and len(by_hand.ROWS) == 23
    assert set(by_hand.ROWS) == {*by_hand.INTERMEDIATES, *by_hand.PARAMS}
    assert by_hand.ROWS[0] == "picked" and by_hand.ROWS[-1] == "W1"


def test_every_row_is_right_with_the_right_function():
    calls = []

    def learners(p):
        calls.append(p)
        return my_h1(p)

    result = ex.H1(learners)
    assert result.ok, result
    assert [p.name for p in result.parts] == list(by_hand.ANSWERS)
    assert all(p.ok and "right" in p.message for p in result.parts)
    assert "All 23 gradients right, on your batch and on 2 batches drawn at check time." \
        in repr(result)
    assert status("H1") == "solved"
    mine = ex.H1.problem()
    assert np.array_equal(calls[0].x, mine.x) and len(calls) == 3
    assert not np.array_equal(calls[1].x, mine.x) and not np.array_equal(calls[1].W1, mine.W1)


@pytest.mark.parametrize("how", ["by name", "one dict", "globals()"])
def test_arrays_passed_the_old_way_get_the_functions_sentence(how):
    answers = right_answers()
    result = {"by name": lambda: ex.H1(**answers), "one dict": lambda: ex.H1(answers),
              "globals()": lambda: ex.H1({**answers, "np": np, "other": 1})}[how]()
    assert not result.ok and result.diagnosis == "call", repr(result)
    assert "def my_h1(p)" in result.message and "H1(my_h1)" in result.message
    assert status("H1") == "not started"


def test_the_engines_arrays_handed_back_are_not_a_derivation():
    """The audit's route: a leaf holding a disguised copy of the problem's array, run
    through the engine outside the function, its gradients handed back by a function that
    ignores its argument. Right on the learner's batch only: every row whose value depends
    on the batch says it must come from p, and H1 is not solved."""
    from widgets.exercises.by_hand.network import PARAMS, _forward

    p = ex.H1.problem()
    disguised = {k: ag.tensor(2 * p[k], requires_grad=True) for k in PARAMS}
    t = _forward({"x": p.x, "y": p.y, **{k: v * 0.5 for k, v in disguised.items()}})
    t["loss"].backward()
    precomputed = {f"d_{r}": t[r].grad.numpy() for r in by_hand.INTERMEDIATES}
    precomputed.update({f"d_{k}": 2 * disguised[k].grad.numpy() for k in PARAMS})
    result = ex.H1(lambda q: precomputed)
    assert not result.ok
    # d_picked, d_log_sum_exp and d_logit_max are the same on every batch of 32 (-1/N,
    # 1/N and 0): nothing tells a derivation of them from a copy
    same_everywhere = {"d_picked", "d_log_sum_exp", "d_logit_max"}
    for row in result.parts:
        if row.name in same_everywhere:
            assert row.ok, row
        else:
            assert row.diagnosis == "not_from_problem", row
            assert "not from p" in row.message and "must compute it from the arrays" \
                in row.message
    assert "20 not from p" in result.message
    assert not status("H1").startswith("solved")
    no_leak(result)


def test_the_closed_forms_and_the_training_are_right():
    assert ex.H2(bn_dx).ok
    assert ex.H3(ce_dlogits).ok
    result = ex.H4(my_gradients)
    assert result.ok, result
    assert {p.name for p in result.parts} >= set(parts_of(ex.registry()["H4"], "train"))
    for i in ("H2", "H3", "H4"):
        assert status(i) == "solved"


def test_training_on_your_gradients_is_training_on_the_engines():
    run = by_hand.train(my_gradients)
    assert run.yours is not None and len(run.yours) == len(run.engine) == by_hand.TRAIN_STEPS
    assert np.max(np.abs(run.yours - run.engine)) <= 1e-10
    assert run.matches and "the same curve" in repr(run)
    assert run.engine[-1] < 0.5 * run.engine[0]  # it learns
    assert np.array_equal(run.engine, by_hand.train(None).engine)  # deterministic
    fig = run.plot()
    assert [line.get_label() for line in fig.axes[0].get_lines()] == [
        "the engine's gradients (loss.backward())", "your gradients"]


# A made-up engine curve, and curves of yours against it -> what the plot's alt text must say.
ENGINE = np.linspace(2.5, 0.3, 300)
CURVES = {
    "not trained": (None, ["300 training steps", "engine's gradients (loss.backward()) only",
                           "it falls from 2.5 to 0.3", "Your curve is not drawn"]),
    "the same": (ENGINE.copy(), ["two curves", "with yours it falls from 2.5 to 0.3",
                                 "the same loss at every step"]),
    "rounding apart": (ENGINE * (1 + 1e-15), ["The two curves are one",
                                              "differ by at most 1e-15 (relative)"]),
    "apart from step 120": (ENGINE + 0.05 * (np.arange(300) >= 120),
                            ["with yours it falls from 2.5 to 0.35",
                             "leaves the engine's at step 120 and ends above it"]),
    "rising": (np.linspace(2.5, 4.0, 300), ["with yours it rises from 2.5 to 4",
                                            "leaves the engine's at step 1 and ends above"]),
    "stopped early": (ENGINE[:100], ["stops at step 100, on the engine's until then"]),
    "below, stopped early": (ENGINE[:100] - 0.1 * (np.arange(100) >= 7),
                             ["leaves the engine's at step 7 and ends below it"]),
}


@pytest.mark.parametrize("label", CURVES)
def test_the_loss_plot_says_what_it_shows(label):
    yours, said = CURVES[label]
    fig = by_hand.TrainingRun(ENGINE, yours, "").plot()
    assert isinstance(fig, DescribedFigure) and repr(fig) == "<Figure size 700x300 with 1 Axes>"
    assert fig._repr_mimebundle_()[1] == {"image/png": {"alt": fig.alt}}
    for words in said:
        assert words in fig.alt, (words, fig.alt)


def test_the_lessons_loss_plot_says_its_curves_are_one():
    run = by_hand.train(my_gradients)
    alt = run.plot().alt
    assert f"falls from {run.engine[0]:.3g} to {run.engine[-1]:.3g}" in alt, alt
    assert "The two curves are one" in alt and "(relative)" in alt, alt
    assert "Your curve is not drawn" in by_hand.train(None).plot().alt


# -- named mistakes, each in its own row ----------------------------------------------------------


N = by_hand.BATCH

# label -> (row, the wrong value built from the right answers a and the problem p, the
# diagnosis the row must name, words its message must contain)
MISTAKES = {
    "transposed square W1": ("W1", lambda a, p: a["d_W1"].T, "transpose", "transpose"),
    "transposed W2": ("W2", lambda a, p: a["d_W2"].T, "transpose", "transposed"),
    "bias not summed over the batch": ("b2", lambda a, p: a["d_logits"],
                                       "missing_broadcast_sum", "broadcast"),
    "gamma not summed": ("gamma", lambda a, p: a["d_bn_out"] * p.x_hat,
                         "missing_broadcast_sum", "broadcast"),
    "off by the batch size": ("picked", lambda a, p: a["d_picked"] * N, "batch_factor",
                              "N = 32"),
    "mean without 1/N": ("diff_sq", lambda a, p: a["d_diff_sq"] * N, "batch_factor", "N = 32"),
    "variance path missing": ("diff", lambda a, p: a["d_x_hat"] * p.inv_std, "overwrite",
                              "diff_sq"),
    "mean path missing": ("h_pre", lambda a, p: a["d_diff"], "bn_missing_mean", "mean"),
    "BN without its variance path": (
        "h_pre", lambda a, p: p.gamma * p.inv_std * (a["d_bn_out"] - a["d_bn_out"].mean(0)),
        "bn_missing_variance", "variance"),
    "BN through x_hat only": ("h_pre", lambda a, p: a["d_x_hat"] * p.inv_std,
                              "batchnorm_naive", "constants"),
    "wrong sign": ("bn_mean", lambda a, p: -a["d_bn_mean"], "sign", "sign"),
    "tanh derivative missing": ("bn_out", lambda a, p: a["d_h"],
                                "missing_activation_derivative", "derivative"),
    "tanh derivative of the input": ("bn_out", lambda a, p: a["d_h"] * (1 - p.bn_out ** 2),
                                     "wrong_activation_derivative", "1 − bn_out²"),
    "indexing not scattered": ("log_probs",
                               lambda a, p: np.repeat(a["d_picked"][:, None], 10, axis=1),
                               "scatter", "label"),
    "a path of shifted missing": ("shifted", lambda a, p: a["d_log_probs"], "overwrite",
                                  "exps"),
    "sum's backward not copied": ("exps", lambda a, p: a["d_sum_exp"], "missing_broadcast",
                                  "copy"),
    "gamma without x_hat": ("gamma", lambda a, p: a["d_bn_out"].sum(0), "missing_factor",
                            "x_hat"),
    "power rule": ("var_eps", lambda a, p: a["d_inv_std"] * -0.5 * p.var_eps ** -0.5,
                   "power_rule", "-3/2"),
}


@pytest.mark.parametrize("label", MISTAKES)
def test_each_mistake_is_named_in_its_row(label):
    row, make, code, words = MISTAKES[label]

    def change(answers, p):
        answers[f"d_{row}"] = make(answers, p)

    result = ex.H1(only(change=change))
    assert not result.ok
    named = part(result, f"d_{row}")
    assert named.diagnosis == code, (label, named)
    assert words in named.message and "wrong" in named.message.splitlines()[0]
    others = [q for q in result.parts if q.name != f"d_{row}"]
    downstream = {f"d_{r}" for r in by_hand.ROWS[by_hand.ROWS.index(row) + 1:]}
    assert all(q.ok for q in others if q.name not in downstream)  # rows above stay right
    no_leak(result, row)


def test_rows_below_a_wrong_row_say_so():
    def times_n(answers, p):  # forgot the 1/N of the mean
        answers.update({k: v * len(p.y) for k, v in answers.items()})

    result = ex.H1(only(change=times_n))
    first = part(result, "d_picked")
    assert first.diagnosis == "batch_factor"
    for name in ("d_log_probs", "d_h", "d_W1", "d_h_pre"):
        row = part(result, name)
        assert row.diagnosis == "upstream" and "Off only because" in row.message, row
    assert part(result, "d_logit_max").ok  # its gradient is 0, whatever the factor
    no_leak(result)


def test_a_row_wrong_on_its_own_below_a_wrong_row():
    def change(answers, p):
        answers["d_logits"] = answers["d_logits"] * 2
        answers["d_h"] = -answers["d_h"]  # wrong beyond what d_logits explains

    row = part(ex.H1(only(change=change)), "d_h")
    assert "It depends on d_logits, which is not right yet" in row.message


def test_close_is_told_apart_from_wrong():
    def change(answers, p):
        answers["d_h"] = answers["d_h"] * (1 + 1e-4 * np.cos(np.arange(64)))

    result = ex.H1(only("d_h", change=change))
    row = part(result, "d_h") if result.parts else result
    assert row.message.splitlines()[0].strip().endswith("close"), row
    assert "within 1%" in row.message
    no_leak(result)


def test_the_zero_gradient_of_the_max_accepts_rounding():
    d = right_answers()["d_logit_max"]
    assert np.abs(d).max() < 1e-15 and ex.H1(only("d_logit_max")).ok
    assert ex.H1(lambda p: {"d_logit_max": np.zeros((32, 1))}).ok
    assert ex.H1(lambda p: {"d_logit_max": np.ones((32, 1))}).diagnosis in (
        "should_be_zero", "parts")


# -- malformed answers get a sentence ------------------------------------------------------------


@pytest.mark.parametrize("exercise_id", ["H1", "H2", "H3", "H4"])
def test_every_malformed_answer_gets_a_sentence(exercise_id):
    exercise = ex.registry()[exercise_id]
    names = list(parts_of(exercise, next(iter(exercise.checks))))
    names = names[:4] + names[-2:] if names else []
    for label, bad in MALFORMED.items():
        result = exercise(bad)
        assert_a_sentence(result, f"{exercise_id}({label})")
        assert not result.ok
        for name in names:
            if name == "loss_curve":
                continue
            returned = {name: bad} if exercise_id == "H1" else bad
            assert_a_sentence(exercise(lambda *a, r=returned: r), f"{exercise_id} {name}={label}")


@pytest.mark.parametrize("label, bad, words", [
    ("text", "p.h.T @ d_logits", "text"),
    ("a Tensor", ag.tensor(np.ones((64, 10)), requires_grad=True), "Tensor"),
    ("NaN", np.full((64, 10), np.nan), "NaN"),
    ("wrong shape", np.ones((3, 3)), "shape"),
    ("a list of lists", [[1.0] * 10] * 63, "shape"),
    ("a dict", {"W2": 1}, "dict"),
])
def test_malformed_rows_are_sentences_in_the_table(label, bad, words):
    result = ex.H1(lambda p: {"d_W2": bad})
    row = part(result, "d_W2") if result.parts else result
    assert words in row.message and "Traceback" not in repr(result), (label, row)


@pytest.mark.parametrize("fn, words", [
    (lambda *a: None, "returns None"),
    (lambda *a: "a formula", "text"),
    (lambda *a: ag.tensor(np.ones((32, 64))), "engine's own code"),  # a Tensor: engine use
    (lambda *a: 1 / 0, "ZeroDivisionError"),
    (lambda *a: np.full((32, 64), np.nan), "NaN"),
    (42, "should be a function"),
])
def test_malformed_functions_are_sentences(fn, words):
    result = ex.H2(fn)
    assert words in result.message and not result.ok, result
    assert "Traceback" not in repr(result)


def test_odd_calls_to_h1():
    assert ex.H1().diagnosis == "none"
    assert ex.H1(d_W3=1).diagnosis == "unknown_name"
    assert ex.H1(np.ones(3)).diagnosis == "call"
    assert ex.H1(lambda p: {"d_W3": 1}).diagnosis == "unknown_name"
    assert ex.H1(my_h1, batch=1).diagnosis == "call"  # no such batch: a sentence


def test_a_demonstration_runs_on_another_batch_only():
    result = ex.H1.demo(only("d_W2", "d_b2"), batch=8)
    assert result.ok and "demonstration" in repr(result)
    assert status("H1") == "not started"
    assert ex.H1.demo(my_h1).diagnosis == "demo_refused"
    assert ex.H1.problem(batch=8).x.shape == (8, 64)


# -- the closed forms: named mistakes, and a second batch ------------------------------------------


def _m(a, axis=0):
    return a.mean(axis=axis, keepdims=True)


@pytest.mark.parametrize("fn, code", [
    (lambda g, xh, gm, s: g * gm * s, "batchnorm_naive"),
    (lambda g, xh, gm, s: gm * s * (g - _m(g)), "bn_missing_variance"),
    (lambda g, xh, gm, s: gm * s * (g - xh * _m(g * xh)), "bn_missing_mean"),
    (lambda g, xh, gm, s: gm * s * (g - _m(g, 1) - xh * _m(g * xh, 1)), "wrong_axis"),
    (lambda g, xh, gm, s: s * (g - _m(g) - xh * _m(g * xh)), "missing_factor"),
    (lambda g, xh, gm, s: bn_dx(g, xh, gm, s) * len(g), "batch_factor"),
    (lambda g, xh, gm, s: -bn_dx(g, xh, gm, s), "sign"),
])
def test_h2_names_batch_norm_mistakes(fn, code):
    result = ex.H2(fn)
    assert result.diagnosis == code, result
    no_leak(result)


def test_h2_finds_a_function_tied_to_the_lessons_batch():
    grads = by_hand.reference().grads
    result = ex.H2(lambda g, xh, gm, s: np.array(grads["h_pre"]))
    assert "Right on the lesson's batch, but not on a second batch" in result.message


@pytest.mark.parametrize("fn, code", [
    (lambda z, y: ce_dlogits(z, y) * len(y), "batch_factor"),
    (lambda z, y: -ce_dlogits(z, y), "sign"),
    (lambda z, y: softmax(z) / len(y), "missing_onehot"),
    (lambda z, y: (softmax(z, 0) - np.eye(z.shape[1])[y]) / len(y), "wrong_axis"),
    (lambda z, y: (softmax(z) - 1) / len(y), "minus_one_everywhere"),
])
def test_h3_names_cross_entropy_mistakes(fn, code):
    result = ex.H3(fn)
    assert result.diagnosis == code, result
    no_leak(result)


# -- H4 and the lesson's training cell ------------------------------------------------------------


def test_h4_unwritten_is_a_sentence_and_trains_nothing():
    nothing = {k: None for k in by_hand.PARAMS}
    result = ex.H4(lambda f: nothing)
    assert result.diagnosis == "none" and status("H4") == "not started"
    run = by_hand.train(lambda f: nothing)
    assert run.yours is None and "Finish exercise H4" in repr(run)
    assert run.plot().axes[0].get_lines()[0].get_label().startswith("the engine's")
    raised = by_hand.train(lambda f: f.nothing_here)
    assert raised.yours is None and "raised AttributeError" in repr(raised)


def test_h4_catches_a_function_tied_to_the_first_batch():
    first = by_hand.reference().values

    def tied(f):
        g = my_gradients(f)
        g["W2"] = first["h"].T @ ce_dlogits(f.logits, first["y"])
        return g

    result = ex.H4(tied)
    curve = part(result, "loss_curve")
    assert not curve.ok and "leaves the engine's at step" in curve.message
    assert status("H4") == "in progress"


def test_h4_names_a_wrong_parameter_and_waits_with_the_curve():
    def sums_instead_of_mean(f):
        g = my_gradients(f)
        g["W2"] = g["W2"] * len(f.y)
        return g

    result = ex.H4(sums_instead_of_mean)
    assert part(result, "d_W2").diagnosis == "batch_factor"
    assert part(result, "loss_curve").diagnosis == "none"
    no_leak(result)


# -- progress -------------------------------------------------------------------------------------


def test_h1_is_solved_only_when_every_row_is_right():
    ex.H1(only(*by_hand.ANSWERS[:20]))
    assert status("H1") == "in progress"
    ex.H1.demo(my_h1, batch=16)  # a demonstration changes nothing
    assert status("H1") == "in progress"
    ex.H1(only(*by_hand.ANSWERS[20:]))
    assert status("H1") == "solved"


def test_placeholders_leave_a_fresh_start():
    ex.H1(lambda p: {name: None for name in by_hand.ANSWERS})
    ex.H2(lambda *a: None)
    ex.H4(lambda f: {k: None for k in by_hand.PARAMS})
    text = repr(ex.Progress("H1", "H2", "H3", "H4"))
    assert "nothing checked yet" in text and "last check" not in text


def test_the_problem_is_deterministic_and_read_only():
    a, b = ex.H1.problem(), ex.H1.problem()
    assert list(a) == list(b)
    for name in a:
        if isinstance(a[name], np.ndarray):
            assert np.array_equal(a[name], b[name]) and not a[name].flags.writeable


# -- the stored lesson -----------------------------------------------------------------------------


def test_the_stored_lesson_ships_unanswered_and_without_solutions():
    nb = json.loads(LESSON.read_text())
    sources = ["".join(c["source"]) for c in nb["cells"]]
    outputs = json.dumps([c.get("outputs", []) for c in nb["cells"]])
    from solutions import words

    for exercise_id in ("H1", "H2", "H3", "H4"):
        for line in words(exercise_id)["solution"].splitlines():
            line = line.split("#")[0].strip()
            if len(line) >= 16 and not line.startswith(("def ", "return {", "d_logits = ce_",
                                                        "d_h_pre = bn_", "\"gamma\"")):
                assert not any(line in s for s in sources), (exercise_id, line)
                assert line not in outputs, (exercise_id, line)
    tagged = [c for c in nb["cells"] if "exercise" in c.get("metadata", {}).get("tags", [])]
    assert len(tagged) == 4
    forward = next(c for c in nb["cells"]
                   if c["cell_type"] == "code" and "retain_grad()" in "".join(c["source"]))
    assert "the checks' data: True" in "".join(forward["outputs"][0]["text"])
    assert "nothing checked yet" in "".join(nb["cells"][-1]["outputs"][0]["data"]["text/plain"])


def test_the_leak_finder_finds_an_entry():
    grads = by_hand.reference().grads["W1"]
    value = float(grads[grads != 0][5])
    assert written_like(f"{value:.4g}", grads) and written_like(f"{-abs(value):.3e}", grads)
    assert NUMBER.findall(f"index (3, 4), N = 32, about {value:.2g}") == [f"{value:.2g}"]
    assert not written_like("123.456", grads)


def test_help_comes_in_steps():
    for exercise_id in ("H1", "H2", "H3", "H4"):
        exercise = ex.registry()[exercise_id]
        assert exercise.hint and solution_text(exercise)
        assert exercise.skeleton and "___" in exercise.skeleton


def test_the_lesson_solved_with_the_stored_solutions(monkeypatch):
    """The lesson's exercise cells, each replaced by its worked solution and the cell's own
    check, run in a kernel: every item solved, the curves the same, nothing raises."""
    nbformat = pytest.importorskip("nbformat")
    from nbclient import NotebookClient
    from solutions import words

    monkeypatch.setenv("AUTOGRAD_LESSONS_PROGRESS", ":memory:")
    nb = nbformat.read(LESSON, as_version=4)
    for cell in nb.cells:
        if "exercise" in cell.metadata.get("tags", []):
            call = cell.source.strip().splitlines()[-1]
            exercise_id = re.search(r"exercises\.(H\d)\(", call).group(1)
            cell.source = f"{words(exercise_id)['solution']}\n{call}"
    NotebookClient(nb, timeout=300, kernel_name="python3",
                   resources={"metadata": {"path": str(LESSON.parent)}}).execute()
    shown = ["".join(o.get("text", "") + o.get("data", {}).get("text/plain", ""))
             for cell in nb.cells if cell.cell_type == "code" for o in cell.outputs]
    assert not any(o.get("output_type") == "error" for c in nb.cells
                   if c.cell_type == "code" for o in c.outputs)
    assert "All 23 gradients right, on your batch and on 2 batches drawn at check time." \
        in "\n".join(shown)
    assert any("the same curve." in s for s in shown)
    assert "all 4 exercises solved" in shown[-1]


def test_h2_refuses_the_engines_own_batch_norm_backward():
    """Issue #39's re-audit: batch norm's array-level backward (``fast_backward``) runs no
    engine op, so counting ops let it through; a call into the engine's code is refused."""
    from types import SimpleNamespace

    from autograd_core.ops.normalization import BatchNorm

    def bn_backward(d_bn_out, x_hat, gamma, inv_std):
        saved = {"normalized": x_hat, "inv_std": inv_std, "weight": gamma}
        ctx = SimpleNamespace(needs_input_grad=(True, True), load=saved.__getitem__)
        return BatchNorm.fast_backward(ctx, d_bn_out)[0]

    result = ex.H2(bn_backward)
    assert not result.ok and result.diagnosis == "uses_engine", repr(result)


def test_h4_refuses_gradients_the_engine_computed():
    """Issue #39's re-audit: H4 trains on the learner's gradients; a my_gradients that
    rebuilds the network from engine ops and calls backward is not the learner's."""
    from widgets.exercises.by_hand.network import PARAMS, _forward

    def my_gradients(values):
        t = _forward({k: getattr(values, k) for k in ("x", "y", *PARAMS)})
        t["loss"].backward()
        return {k: t[k].grad.numpy() for k in PARAMS}

    result = ex.H4(my_gradients)
    assert not result.ok and result.diagnosis == "uses_engine", repr(result)
