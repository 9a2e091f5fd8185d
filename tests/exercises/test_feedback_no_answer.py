"""Feedback names the mistake, never the answer.

Every array check (the derivation items, the spot-the-error items through the learner's
function, the prediction items that compare numbers, ``check_gradient`` itself and
``check_predicted_gradient``, which the stepper's predict mode calls) is fed wrong answers
of every diagnosed kind, plain noise and one wrong entry; no entry of the expected answer,
written the ways messages write numbers, may appear in what the learner reads. The new
diagnoses the audit asked for are each named.
"""

import re

import numpy as np
import pytest
from test_exercises_derivations import (
    CASES,
    _g14_more,
    bn_dx,
    conv_backward,
    g2_right,
    g3_right,
    mlp_right,
    of_the_problem,
)
from test_exercises_gradient import DIAGNOSES

from widgets import exercises as ex
from widgets.exercises import (
    check_gradient,
    check_predicted_gradient,
    reset_progress,
    spot_error,
)
from widgets.feedback import words


@pytest.fixture(autouse=True)
def _own_progress_file(tmp_path, monkeypatch):
    """Progress goes to this test's own file, never to a learner's home directory."""
    monkeypatch.setenv("AUTOGRAD_LESSONS_PROGRESS", str(tmp_path / "progress.json"))


# -- finding an expected value in a message ----------------------------------------------------


def _forms(v: float) -> set[str]:
    """The ways a message may write ``v`` (and its absolute value)."""
    out = set()
    for x in (v, abs(v)):
        out |= {words.number(x), f"{x:.3g}", f"{x:.5g}", f"{x:.6g}", repr(float(x)),
                f"{x:.4f}", f"{x:.3f}", words.factor(x)}
    whole = float(v).is_integer()
    # a rounded form without a point ("3" for 2.9996) says nothing: only whole values
    return {f for f in out if re.search(r"[1-9]", f) and ("." in f or "e" in f or whole)}


def leaked(message: str, expected) -> list[str]:
    """The numbers of ``expected`` that appear in ``message``."""
    values = np.ravel(np.asarray(expected, dtype=np.float64))
    values = np.unique(values[np.isfinite(values) & (values != 0)])
    found = []
    for v in values:
        if float(v).is_integer() and values.size > 1 and abs(v) < 100:
            continue  # small whole entries of an array collide with indices and shapes
        for form in _forms(float(v)):
            # a substring test first: compiling a pattern per form (thousands per test,
            # past re's cache) cost seconds; the pattern then checks the boundaries
            if form in message and re.search(rf"(?<![\w.]){re.escape(form)}(?![\d])",
                                             message):
                found.append(form)
    return found


def said(result) -> str:
    """Everything a learner reads in a Result (its message and every part's)."""
    return "\n".join([result.message, *(p.message for p in result.parts)])


def test_the_leak_finder_finds_numbers():
    e = np.array([0.16158, -2.5, 8.0])
    assert leaked("you have 1, the engine has 0.1616", e) == ["0.1616"]
    assert leaked("the engine shows -2.5 there", e)
    assert not leaked("at index (0, 1) of shape (3, 4), 8 of 12 entries", e)
    assert leaked("the engine's ratio is 8", np.float64(8.0))


# -- wrong answers of every kind ---------------------------------------------------------------


def wrong_answers(right, n: int = 8) -> dict:
    """Every kind of wrong answer the diagnoses name, and plain noise and one wrong entry."""
    r = np.asarray(right, dtype=np.float64)
    g = np.random.default_rng(123)
    out = {
        "noise": g.standard_normal(r.shape), "sign": -r, "twice": 2 * r, "half": r / 2,
        "three times": 3 * r, "batch times": n * r, "over batch": r / n, "zeros": 0 * r,
        "ones": np.ones_like(r), "close": r * (1 + 1e-4), "rounded": np.round(r, 2),
        "one wrong entry": r.copy(), "shuffled": np.roll(r, 1),
        "a scalar": 1.5, "stacked (not summed)": np.stack([r, r, -r]),
        "keepdims": r[None], "integers": np.trunc(r * 3).astype(int),
        "sign and batch": -n * r,
    }
    if r.size:
        out["one wrong entry"].flat[r.size // 2] += 1 + abs(r.flat[r.size // 2])
    if r.ndim >= 2:
        out["transposed"] = np.swapaxes(r, -1, -2)
        out["transposed, batch times"] = n * np.swapaxes(r, -1, -2)
        out["flattened"] = r.ravel()
    return out


def assert_no_leak(result, expected, label):
    text = said(result)
    if result.ok:  # e.g. 8.0 rounded is still 8.0
        return
    found = leaked(text, expected)
    assert not found, f"{label}: the message gives away {found}:\n{text}"
    assert all(len(m) <= 600 for m in [result.message, *(p.message for p in result.parts)])


# (exercise, extra keyword arguments, {part: expected}) for every named-answer array check
def _array_items():
    items = []
    p = ex.G2.problem()
    items.append(("G2", {}, g2_right(p)))
    items.append(("G3", {}, g3_right(ex.G3.problem())[0]))
    items.append(("G5", {}, mlp_right(ex.G5.problem())[0]))
    for square in (False, True):
        q = ex.G6.problem(square=square)
        items.append(("G6", {"square": square}, {"dA": q.G @ q.B.T, "dB": q.A.T @ q.G}))
    for stride, padding in ((1, 0), (2, 1)):
        q = ex.G7.problem(stride=stride, padding=padding)
        dx, dw, _ = conv_backward(q.x, q.w, q.G, stride, padding)
        items.append(("G7", {"stride": stride, "padding": padding}, {"dx": dx, "dw": dw}))
    items.append(("G9", {}, {"db": ex.G9.problem().G.sum(0)}))
    q = ex.G10.problem()
    dW = np.zeros_like(q.W)
    np.add.at(dW, q.ids, q.G)
    items.append(("G10", {}, {"dW": dW, "row1": dW[1]}))
    q = ex.G13.problem()
    # by hand: d/dw (x·w − t)² = 2(x·w − t)x per token; L_sum weighs real tokens by 1,
    # L_seq by 1 / (B · n_b)
    per_token = 2 * (q.x @ q.w - q.t)[..., None] * q.x
    weights = q.mask / (len(q.mask) * q.mask.sum(axis=1, keepdims=True))
    items.append(("G13", {}, {"grad_sum": (q.mask[..., None] * per_token).sum(axis=(0, 1)),
                              "grad_seq": (weights[..., None] * per_token).sum(axis=(0, 1))}))
    q = ex.G14.problem()
    items.append(("G14", {}, {"dx": bn_dx(q.x, q.gamma, q.G, q.eps)}))
    q = ex.W5.problem()
    s = 1 / (1 + np.exp(-q.z))
    items.append(("W5", {}, {"dz": q.G * s * (1 - s)}))
    items.append(("E2", {}, {"dw": 2 * ex.E2.problem().x}))
    q = ex.E5.problem()
    items.append(("E5", {}, {"dW": q.x.T @ ((q.t @ q.W) * (1 - q.h ** 2)) + q.t.T @ q.h}))
    q = ex.E6.problem()
    items.append(("E6", {}, {"dx": q.x * (1 - np.tanh(q.x) ** 2) + q.x ** 2}))
    q = ex.L2.problem()
    items.append(("L2", {}, {"da": q.G[:, :3], "db": q.G[:, 3:]}))
    q = ex.L5.problem()
    rm, rv = 0.1 * q.x.mean(0), 0.9 + 0.1 * q.x.var(0, ddof=1)
    items.append(("L5", {}, {"batchnorm_eval": (q.z - rm) / np.sqrt(rv + 1e-5),
                             "dropout_eval": q.z, "kept_value": 4 / 3}))
    return items


ARRAY_ITEMS = _array_items()


@pytest.mark.parametrize("exercise_id, extra, expected", ARRAY_ITEMS,
                         ids=[f"{i[0]}{i[1] or ''}" for i in ARRAY_ITEMS])
def test_no_wrong_answer_reveals_the_expected_values(exercise_id, extra, expected):
    exercise = ex.registry()[exercise_id]
    for part, right in expected.items():
        for label, answer in wrong_answers(right).items():
            reset_progress()  # each wrong answer is a first try (a second try may reveal)
            if of_the_problem(exercise):  # the part a learner's function returns
                result = exercise(lambda q, k=part, a=answer: {k: a}, **extra)
            else:
                result = exercise(**{part: answer}, **extra)
            assert_no_leak(result, right, f"{exercise_id} {part} {label}")


@pytest.mark.parametrize("exercise_id", list(CASES))
def test_the_named_mistakes_of_every_item_reveal_nothing(exercise_id):
    """The wrong answers each item diagnoses by name (test_exercises_derivations.CASES)."""
    build, extra = CASES[exercise_id]
    exercise = ex.registry()[exercise_id]
    problem = exercise.problem() if exercise.has_problem else None
    answers, _ = build(problem, "wrong")
    right, _ = build(problem, "right")
    result = (exercise(lambda q: build(q, "wrong")[0], **extra) if of_the_problem(exercise)
              else exercise(**answers, **extra))
    for part in result.parts or (result,):
        if part.name in right:
            assert not leaked(part.message, right[part.name]), part.message


@pytest.mark.parametrize("kind", ["no variance path", "no mean path", "unbiased variance",
                                  "forgot gamma"])
def test_g14_partial_gradients_reveal_nothing(kind):
    p = ex.G14.problem()
    result = ex.G14(lambda q: {"dx": _g14_more(q, kind)[0]})
    assert not leaked(said(result), bn_dx(p.x, p.gamma, p.G, p.eps))


# -- the spot-the-error items: the learner's function returns the wrong arrays -----------------


def _function_items():
    x, y = spot_error._s1_data()
    dx, dy, _ = spot_error._s1_engine(x, y)
    steps, w0 = spot_error._s2_steps()
    fresh = [spot_error._batch_grad(w0, bx, bt) for bx, bt in steps]  # the whole batch's
    import autograd_core as ag

    def swept_per_micro_batch(w, steps_, micro):  # what S2 watches for, its result dropped
        for bx, bt in steps_:
            for start in range(0, len(bx), micro):
                ((bx[start:start + micro] @ w - bt[start:start + micro]) ** 2).sum().backward()

    x4, w1_4, w2_4 = spot_error._s4_data()
    g1, g2, _ = spot_error._s4_engine(x4, w1_4, w2_4)

    p5 = spot_error._s5_problem()
    z = p5["w"] * p5["x"] + p5["b"]
    leaves = spot_error._s6_leaves()
    la, lb = spot_error._s6_losses(*leaves.values())
    (la + lb).backward()

    def one_sweep(w1, wa, wb, x_):  # what S6 watches for, its result dropped
        sum(spot_error._s6_losses(w1, wa, wb, x_)).backward()
    return [
        ("S1", (dx, dy), lambda a, b: (lambda x_, y_: (a, b))),
        ("S2", tuple(fresh), lambda *gs: (lambda *a: [swept_per_micro_batch(*a), *gs][1:])),
        ("S4", (g1, g2), lambda a, b: (lambda w1, w2, x_: (w1 * ag.tensor(a)).sum()
                                       + (w2 * ag.tensor(b)).sum())),  # gradients a and b
        ("S5", ((z - p5["t"]) * p5["x"],), lambda a: (lambda *args: a)),
        ("S6", tuple(leaves[k].grad.numpy() for k in ("w1", "wa", "wb")),
         lambda *gs: (lambda *a: (one_sweep(*a), *gs)[1:])),
    ]


@pytest.mark.parametrize("exercise_id, right, make", _function_items(),
                         ids=[i[0] for i in _function_items()])
def test_spot_error_feedback_reveals_nothing(exercise_id, right, make):
    exercise = ex.registry()[exercise_id]
    for k, r in enumerate(right):
        for label, answer in wrong_answers(r).items():
            returned = list(right)
            returned[k] = answer
            result = exercise(make(*returned))
            assert_no_leak(result, r, f"{exercise_id} output {k} {label}")


def test_s3_and_g12_functions_reveal_nothing():
    from widgets.exercises import mlp

    def wrong(x, n):
        slope = np.ones_like(x)
        for _ in range(n):
            slope, x = slope * 2 * (1 - 2 * x), 4 * x * (1 - x)
        return slope

    result = ex.S3(wrong)
    assert not leaked(said(result), list(spot_error._nested_grad(np.array([0.1, 0.3, 0.7]), 2)))
    p = mlp.problem(square=True)
    right, d2, _ = mlp_right(p)
    for label, value in wrong_answers(right["dW2"]).items():
        result = ex.G12(lambda q, v=value: {**right, "dW2": v})
        assert_no_leak(result, right["dW2"], f"G12 dW2 {label}")


# -- check_gradient and the stepper's predict mode -----------------------------------------------


@pytest.mark.parametrize("label, answer, expected, context, code", DIAGNOSES,
                         ids=[d[0] for d in DIAGNOSES])
def test_check_gradient_diagnoses_reveal_nothing(label, answer, expected, context, code):
    result = check_gradient(answer, expected, name="dW", **context)
    if not result.ok:
        assert not leaked(result.message, expected), result.message


@pytest.mark.parametrize("check", [check_gradient, check_predicted_gradient])
@pytest.mark.parametrize("context", [{}, {"batch_size": 8}, {"upstream": "up"},
                                     {"activation_derivative": "fprime"}],
                         ids=["plain", "batch", "upstream", "activation"])
def test_every_kind_of_wrong_answer_to_the_core_checks(check, context):
    g = np.random.default_rng(7)
    for shape in [(), (5,), (3, 4), (4, 4), (2, 3, 3)]:
        expected = g.standard_normal(shape) * 1.7 + 0.3
        ctx = {k: (g.standard_normal(shape) + 2 if v == "up" else
                   1 - np.tanh(g.standard_normal(shape)) ** 2 if v == "fprime" else v)
               for k, v in context.items()}
        answers = wrong_answers(expected)
        if "upstream" in ctx:
            answers["missing upstream"] = expected / ctx["upstream"]
        if "activation_derivative" in ctx:
            answers["missing f'"] = expected / ctx["activation_derivative"]
        for label, answer in answers.items():
            result = check(answer, expected, name="d", **ctx)
            if result.ok:
                continue
            found = leaked(result.message, expected)
            assert not found, f"{shape} {label}: {found} in {result.message}"


def test_predict_mode_text_answers_reveal_nothing():
    expected = np.array([[0.3141, -1.2718], [2.2222, 0.5772]])
    for typed in ["[[1, 2], [3, 4]]", "[[0.3141, -1.2718], [2.2222, 0.577]]",
                  "[[-0.3141, 1.2718], [-2.2222, -0.5772]]", "0", "[[1, 2]]", "abc"]:
        result = check_predicted_gradient(typed, expected, name="dx")
        assert not leaked(result.message, expected), result.message


# -- the audit's missing diagnoses ---------------------------------------------------------------


def test_g6_square_products_in_the_wrong_order_or_untransposed():
    p = ex.G6.problem(square=True)
    cases = {"dA": {"missing_transpose": p.G @ p.B, "factor_order": p.B.T @ p.G},
             "dB": {"missing_transpose": p.A @ p.G, "factor_order": p.G @ p.A.T}}
    for part, wrong in cases.items():
        for code, answer in wrong.items():
            result = ex.G6(lambda q, k=part, a=answer: {k: a}, square=True)
            assert result.diagnosis == code, repr(result)
            assert "square" in result.message


def _g7_first_image_dw(p):
    return {"dw": conv_backward(p.x, p.w, p.G, p.stride, p.padding)[2][0]}


def _g7_first_channel_dx(p):
    one = np.zeros_like(p.G)
    one[:, 0] = p.G[:, 0]
    return {"dx": conv_backward(p.x, p.w, one, p.stride, p.padding)[0]}


def _g7_stride_left_out(p):
    """dx and dw with the stride left out of the indices (G read as if the stride were 1)."""
    pad = p.padding
    xp = np.pad(p.x, ((0, 0), (0, 0), (pad, pad), (pad, pad)))
    dxp, dw1 = np.zeros_like(xp), np.zeros_like(p.w)
    for n, o, i, j in np.ndindex(p.G.shape):
        dxp[n, :, i:i + 3, j:j + 3] += p.G[n, o, i, j] * p.w[o]
        dw1[o] += p.G[n, o, i, j] * xp[n, :, i:i + 3, j:j + 3]
    return {"dx": dxp[:, :, pad:pad + 5, pad:pad + 5], "dw": dw1}


def test_g7_batch_sum_output_channels_and_stride():
    assert ex.G7(_g7_first_image_dw).diagnosis == "missing_batch_sum"
    result = ex.G7(_g7_first_channel_dx)
    assert result.diagnosis == "one_output_channel" and "channel 0" in result.message
    result = ex.G7(_g7_stride_left_out, stride=2, padding=1)
    assert [r.diagnosis for r in result.parts] == ["stride_not_spread", "stride_not_spread"]
    q = ex.G7.problem(stride=2, padding=1)
    assert not leaked(said(result), conv_backward(q.x, q.w, q.G, 2, 1)[0])


def test_g7_defaults_match_the_problem_and_a_fixed_stride_is_recognised():
    """A function that fixes the stride and padding instead of reading them from ``p`` is
    right on one problem only; on the other (same G shape) it is named, never the value."""
    p = ex.G7.problem()
    assert (p.stride, p.padding) == (1, 0)

    def fixed(stride, padding):
        def my_g7(q):
            dx, dw, _ = conv_backward(q.x, q.w, q.G, stride, padding)
            return {"dx": dx, "dw": dw}
        return my_g7

    assert ex.G7(fixed(1, 0)).ok  # G7 without stride/padding checks G7.problem()
    result = ex.G7(fixed(1, 0), stride=2, padding=1)
    assert not result.ok and "stride=1, padding=0" in said(result)
    assert {r.diagnosis for r in result.parts} == {"other_problem"}
    result = ex.G7(fixed(2, 1))
    assert not result.ok and "stride=2, padding=1" in said(result)
    assert {r.diagnosis for r in result.parts} == {"other_problem"}


@pytest.mark.parametrize("code", ["batchnorm_sums", "batchnorm_variance_sign",
                                  "batchnorm_wrong_axis", "missing_eps"])
def test_g14_sums_sign_axis_and_eps(code):
    p = ex.G14.problem()
    d = p.G * p.gamma

    def closed(axis, eps=p.eps, sign=-1.0, reduce="mean"):
        inv = 1 / np.sqrt(p.x.var(axis=axis, keepdims=True) + eps)
        xhat = (p.x - p.x.mean(axis=axis, keepdims=True)) * inv
        r = getattr(np, reduce)
        return inv * (d - r(d, axis=axis, keepdims=True)
                      + sign * xhat * r(d * xhat, axis=axis, keepdims=True))

    answer = {"batchnorm_sums": closed(0, reduce="sum"), "batchnorm_variance_sign":
              closed(0, sign=1.0), "batchnorm_wrong_axis": closed(1),
              "missing_eps": closed(0, eps=0.0)}[code]
    result = ex.G14(lambda q: {"dx": answer})
    assert result.diagnosis == code, repr(result)
    assert "you have" not in result.message and "engine has" not in result.message


def test_g3_gradient_sent_to_the_argmin():
    p = ex.G3.problem()
    dmin = np.zeros_like(p.x)
    for i in range(2):
        for j in range(2):
            win = p.x[0, 0, 2 * i:2 * i + 2, 2 * j:2 * j + 2]
            k = np.unravel_index(np.argmin(win), win.shape)
            dmin[0, 0, 2 * i + k[0], 2 * j + k[1]] = p.G[0, 0, i, j]
    assert ex.G3(lambda q: {"dx_max": dmin}).diagnosis == "pool_argmin"


def test_g2_relu_derivative_of_one_half_at_zero():
    result = ex.G2(lambda p: {"dx": p.G * ((p.x > 0) + 0.5 * (p.x == 0))})
    assert result.diagnosis == "relu_at_zero" and "½" in result.message


# Words that would state the tie convention lesson 06 asks the learner to derive.
TIE_CONVENTION_WORDS = ("half", "halv", "0.5", "1/2", "½", "split", "equal", "50%")


def _g2_tie_slips(p):
    tie, wins_a, wins_b = (p.a == p.b) * 1.0, (p.a > p.b) * 1.0, (p.b > p.a) * 1.0
    return {"a all": ("da", p.G * (wins_a + tie)), "a nothing": ("da", p.G * wins_a),
            "b all": ("db", p.G * (wins_b + tie)), "b nothing": ("db", p.G * wins_b)}


@pytest.mark.parametrize("slip", ["a all", "a nothing", "b all", "b nothing"])
def test_g2_names_a_tie_slip_without_stating_the_convention(slip):
    """A tie given one side's whole gradient, or none, is named (the tie, index 2, the
    winner's or loser's rule), and the reply never states the split lesson 06 asks for."""
    part, _ = _g2_tie_slips(ex.G2.problem())[slip]
    result = ex.G2(lambda p: dict([_g2_tie_slips(p)[slip]]))
    assert result.diagnosis == "tie_convention", repr(result)
    message = result.message.lower()
    assert "tie (index 2)" in message and ("winner" in message or "loser" in message)
    assert not [w for w in TIE_CONVENTION_WORDS if w in message], result.message


def test_g2_relu_reply_does_not_state_the_tie_rule_of_maximum():
    """ReLU′(0) = ½ is named as the learner's own value, not as maximum's tie rule."""
    message = ex.G2(lambda p: {"dx": p.G * ((p.x > 0) + 0.5 * (p.x == 0))}).message.lower()
    assert "maximum" not in message and "tie" not in message, message


def test_two_mistakes_read_as_one_sentence():
    """'…with that undone, Your dW2…' was the audit's example."""
    def my_g5(p):
        _, _, d3 = mlp_right(p)
        return {"dW2": -((d3 @ p.W3).T @ p.a1)}  # missing tanh'(z2), and the sign

    result = ex.G5(my_g5)
    assert "+" in result.diagnosis, repr(result)
    assert "with that undone, your" in result.message
    assert "with that undone, Your" not in result.message


def test_messages_never_give_the_corrected_expression():
    e = np.random.default_rng(3).standard_normal((3, 4))
    for answer in (e.T, e[None], np.stack([e, e]), e.ravel()):
        message = check_gradient(answer, e, name="dW", of="W").message
        assert "is correct" not in message and "answer." not in message, message
    assert "Compare its shape with W's" in check_gradient(e.T, e, name="dW", of="W").message
