"""E4 (lesson 03), G8, G9 and G13 (lesson 05) make the learner produce the answer: the
shortcuts that solved the old, thin versions (w = t/a read off the skeleton's comment, the
one token (128,), the (5, 4) of G shown in the set-up, the factor N = len(r.x) written in
the skeleton) no longer solve them, the engine's own value handed back is refused or
recorded, each slip the items name is named, and a right answer produced the intended way
solves each. Expected values are worked out here by hand, never read from the checks."""

import functools

import numpy as np
import pytest
from learners import LEARNERS

# each test records into a file of its own (autouse), and what "seen" means: as the rules'
from test_teaching_rules import _own_progress, seen  # noqa: F401, E402

import autograd_core as ag
from autograd_core import nn
from autograd_core.sweep.engine import sum_to as engine_sum_to
from widgets import exercises as ex
from widgets.exercises import engine_watch
from widgets.exercises.tracking import status

# -- E4: every flat point of (a·w² − t)² ------------------------------------------------------


def flat_points(a, t):
    """By hand: dℓ/dw = 2(a·w² − t)·2a·w is 0 where w = 0 (the inner factor) and where
    a·w² = t, which has the real solutions ±√(t/a) only when t/a > 0."""
    points = [0.0]
    if t / a > 0:
        points += [np.sqrt(t / a), -np.sqrt(t / a)]
    return points


@pytest.mark.parametrize("learner", LEARNERS, indirect=True)
def test_e4_every_flat_point_worked_out_by_hand_solves_it(learner):
    result = ex.E4(flat_points)
    assert result.ok, repr(result)
    assert status("E4") == "solved"


def test_e4_points_in_any_order_and_repeated_are_the_same_points():
    def shuffled(a, t):
        return np.array(flat_points(a, t)[::-1] + [0.0, -0.0])

    assert ex.E4(shuffled).ok


def test_e4_the_old_answers_do_not_solve_it():
    p = ex.E4.problem()
    old = ex.E4(w_flat=p.t / p.a)                    # the old item's call and answer
    assert not old.ok and old.diagnosis == "unknown_name"
    as_array = ex.E4(np.array([p.t / p.a]))          # the old answer, passed by position
    assert not as_array.ok and "should be a function" in as_array.message
    linear = ex.E4(lambda a, t: [t / a])             # the old reasoning, (a·w − t)² flat at t/a
    assert not linear.ok and linear.diagnosis == "not_flat", repr(linear)
    assert not status("E4").startswith("solved")


@pytest.mark.parametrize("answer, diagnosis, later", [
    # ± roots only: the chain rule's inner factor 2a·w forgotten
    (lambda a, t: [np.sqrt(t / a), -np.sqrt(t / a)] if t / a > 0 else [], "missed_inner", False),
    (lambda a, t: [0.0, np.sqrt(t / a)] if t / a > 0 else [0.0], "one_root", False),
    (lambda a, t: [0.0], "missed_outer", False),
    # the roots taken unconditionally: nan where t/a < 0
    (lambda a, t: [0.0, np.sqrt(t / a), -np.sqrt(t / a)], "nan", True),
    (lambda a, t: [0.0, np.sqrt(abs(t / a)), -np.sqrt(abs(t / a))], "no_real_root", True),
    # the sign of t tested instead of the sign of t/a: wrong where a < 0 and t < 0
    (lambda a, t: [0.0] + ([np.sqrt(t / a), -np.sqrt(t / a)] if t > 0 else []),
     "missed_outer", True),
    # found by a search, not derived: close, not flat
    (lambda a, t: [0.0] + ([np.sqrt(t / a) + 1e-7, -np.sqrt(t / a)] if t / a > 0 else []),
     "not_exact", False),
    (lambda a, t: [], "missing", False),
])
def test_e4_each_slip_is_named(answer, diagnosis, later):
    with np.errstate(invalid="ignore"):
        result = ex.E4(answer)
    assert not result.ok and result.diagnosis == diagnosis, repr(result)
    assert ("Right on E4.problem()'s a and t" in result.message) == later, repr(result)
    assert not status("E4").startswith("solved")


def test_e4_the_lessons_points_built_in_are_right_on_the_lessons_loss_only():
    p = ex.E4.problem()
    lessons = flat_points(p.a, p.t)
    result = ex.E4(lambda a, t: lessons)
    assert not result.ok and "Right on E4.problem()'s a and t, but not on" in result.message
    assert "signs of a and t" in result.message


def test_e4_the_engine_may_not_find_the_points():
    """A Newton search on the engine's own gradient, inside the learner's function."""
    def engine_search(a, t):
        found = []
        for start in (-3.0, 0.01, 3.0):
            w = start
            for _ in range(60):
                x = ag.tensor(w, requires_grad=True)
                ((a * x ** 2 - t) ** 2).backward()
                w -= float(x.grad.numpy()) / (12 * a * a * w * w - 4 * a * t + 1e-30)
            found.append(w)
        return found

    result = ex.E4(engine_search)
    assert not result.ok and result.diagnosis == "uses_engine", repr(result)


@pytest.mark.parametrize("returned", ["0, 1", {"w": 0.0}, [[0.0], [1.0, 2.0]], [np.inf]])
def test_e4_a_malformed_answer_gets_a_sentence_and_is_no_try(returned):
    result = ex.E4(lambda a, t: returned)
    assert not result.ok and result.diagnosis in ("type", "nonfinite"), repr(result)
    assert "Traceback" not in repr(result)


def test_e4_a_placeholder_leaves_it_not_started():
    ex.E4(lambda a, t: None)
    assert status("E4") == "not started"


# -- G8: the shapes of a Linear layer's gradients, on inputs of any rank ---------------------------


def linear_grad_shapes(x_shape, units):
    """By hand: each gradient has its tensor's shape; the bias is added at every position of
    every axis in front of the features, so its gradient is summed over all of them."""
    *front, features = x_shape
    return {"dx": tuple(x_shape), "dW": (units, features), "db": (units,),
            "db_axes": tuple(range(len(front)))}


@pytest.mark.parametrize("learner", LEARNERS, indirect=True)
def test_g8_the_shapes_worked_out_solve_it(learner):
    result = ex.G8(linear_grad_shapes)
    assert result.ok, repr(result)
    assert status("G8") == "solved"


def test_g8_the_old_one_token_answer_does_not_solve_it():
    old = ex.G8(shape=(128,))
    assert not old.ok and old.diagnosis == "unknown_name"
    positional = ex.G8((128,))
    assert not positional.ok and "should be a function" in positional.message
    assert not ex.G8(lambda x_shape, units: (128,)).ok
    assert not status("G8").startswith("solved")


def test_g8_the_batch_answer_alone_is_right_on_the_lessons_layer_only():
    """db summed over axis 0, the old item's "the batch axis is summed away"."""
    def batch_axis_only(x_shape, units):
        return {**linear_grad_shapes(x_shape, units), "db_axes": (0,)}

    result = ex.G8(batch_axis_only)
    assert not result.ok and result.diagnosis == "kept_batch_axis", repr(result)
    assert "Right on the lesson's Linear(32, 128)" in result.message
    assert "a batch of sequences" in result.message


def _with(**changed):
    def shapes(x_shape, units):
        right = linear_grad_shapes(x_shape, units)
        front, features = tuple(x_shape[:-1]), x_shape[-1]
        out = (*front, units)
        values = {"out": out, "front": front, "row": (1, units), "wt": (features, units),
                  "per_position_w": (*front, units, features), "units_last": (len(x_shape) - 1,),
                  "every_axis": tuple(range(len(x_shape))), "zero": (0,), "nothing": ()}
        return {**right, **{k: values[v] for k, v in changed.items()}}
    return shapes


@pytest.mark.parametrize("shapes, diagnosis", [
    (_with(db="out"), "kept_batch_axis"),          # the output's shape
    (_with(db="front"), "wrong_axis"),             # summed over the units
    (_with(db="row"), "reshape"),                  # (1, H)
    (_with(dW="wt"), "transpose"),                 # (in, out)
    (_with(dW="per_position_w"), "kept_batch_axis"),
    (_with(dx="out"), "output_shape"),
    (_with(db_axes="units_last"), "wrong_axis"),
    (_with(db_axes="every_axis"), "wrong_axis"),
    (_with(db_axes="nothing"), "no_sum"),
])
def test_g8_each_slip_is_named(shapes, diagnosis):
    result = ex.G8(shapes)
    assert not result.ok and result.diagnosis == diagnosis, repr(result)
    assert "(128,)" not in result.message


def test_g8_summing_axis_0_of_one_example_is_named():
    def always_axis_0(x_shape, units):
        return {**linear_grad_shapes(x_shape, units),
                "db_axes": tuple(range(max(1, len(x_shape) - 1)))}

    result = ex.G8(always_axis_0)
    assert not result.ok and result.diagnosis == "nothing_copied", repr(result)


def test_g8_the_engine_may_not_measure_the_shapes():
    def measured(x_shape, units):
        layer = nn.Linear(x_shape[-1], units)
        x = ag.zeros(*x_shape, requires_grad=True)
        layer(x).sum().backward()
        return {"dx": x.grad.shape, "dW": layer.weight.grad.shape,
                "db": layer.bias.grad.shape, "db_axes": tuple(range(len(x_shape) - 1))}

    result = ex.G8(measured)
    assert not result.ok and result.diagnosis == "uses_engine", repr(result)


@pytest.mark.parametrize("db_axes", [5, "0", (0.0,), [True]])
def test_g8_unreadable_axes_get_a_sentence(db_axes):
    result = ex.G8(lambda x_shape, units: {**linear_grad_shapes(x_shape, units),
                                           "db_axes": db_axes})
    assert not result.ok and result.diagnosis == "type", repr(result)


def test_g8_negative_axes_and_a_list_read_as_axes():
    def negative(x_shape, units):
        return {**linear_grad_shapes(x_shape, units),
                "db_axes": [i - len(x_shape) for i in range(len(x_shape) - 1)]}

    assert ex.G8(negative).ok


# -- G9: db, then the engine's un-broadcast written by hand -----------------------------------


def sum_to(g, shape):
    """By hand: broadcasting lines the shapes up from the right, adding axes in front and
    stretching size-1 axes; the copies' gradients are summed along both."""
    added = g.ndim - len(shape)
    stretched = tuple(added + i for i, n in enumerate(shape) if n == 1 and g.shape[added + i] > 1)
    return g.sum(axis=tuple(range(added)) + stretched, keepdims=True).reshape(shape)


@pytest.mark.parametrize("learner", LEARNERS, indirect=True)
def test_g9_db_and_sum_to_worked_out_solve_it(learner):
    assert ex.G9(lambda q: {"db": q.G.sum(axis=0)}).ok
    assert status("G9") == "in progress"
    result = ex.G9.run("unbroadcast", sum_to)
    assert result.ok, repr(result)
    assert status("G9") == "solved"


def test_g9_the_old_shape_prediction_does_not_solve_it():
    q = ex.G9.problem()
    ex.G9(lambda p: {"db": p.G.sum(axis=0)})
    old = ex.G9.run("unbroadcast", shape=q.G.shape)  # the (5, 4) shown in the set-up
    assert not old.ok and old.diagnosis == "unknown_name"
    assert not ex.G9.run("unbroadcast", q.G.shape).ok
    assert status("G9") == "in progress"


def test_g9_the_engines_sum_to_handed_back_is_refused():
    def calls_it(g, shape):
        return engine_sum_to(g, shape)

    def runs_the_engine(g, shape):
        b = ag.tensor(np.zeros(shape), requires_grad=True)
        (ag.tensor(np.zeros(g.shape)) + b).backward(g)
        return b.grad.numpy()

    for answer in (engine_sum_to, functools.partial(engine_sum_to), calls_it, runs_the_engine):
        result = ex.G9.run("unbroadcast", answer)
        assert not result.ok and result.diagnosis == "uses_engine", repr(result)
    assert not status("G9").startswith("solved")


def test_g9_the_lessons_sum_over_axis_0_is_right_on_g9s_problem_only():
    result = ex.G9.run("unbroadcast", lambda g, shape: g.sum(axis=0))
    assert not result.ok and result.diagnosis == "reshape", repr(result)  # (H,) for (1, H)
    assert "Right on G9.problem()'s G" in result.message and "(1, H)" in result.message


def _leading_only(g, shape):
    return g.sum(axis=tuple(range(g.ndim - len(shape))))


def _kept_nothing(g, shape):
    added = g.ndim - len(shape)
    stretched = tuple(added + i for i, n in enumerate(shape) if n == 1 and g.shape[added + i] > 1)
    return g.sum(axis=tuple(range(added)) + stretched)


def _averaged(g, shape):
    added = g.ndim - len(shape)
    stretched = tuple(added + i for i, n in enumerate(shape) if n == 1 and g.shape[added + i] > 1)
    axes = tuple(range(added)) + stretched
    return g.mean(axis=axes, keepdims=True).reshape(shape) if axes else g


@pytest.mark.parametrize("answer, diagnosis", [
    (_leading_only, "missing_broadcast_sum"),      # the stretched size-1 axes never summed
    (_kept_nothing, "reshape"),                    # the right sums, the size-1 axes dropped
    (_averaged, "averaged"),
    (lambda g, shape: g.sum(), "wrong_axis"),      # every axis summed
    (lambda g, shape: g.sum(axis=-1), "wrong_axis"),  # the units summed
    (lambda g, shape: 1.0, "scalar"),
])
def test_g9_each_slip_of_sum_to_is_named(answer, diagnosis):
    result = ex.G9.run("unbroadcast", answer)
    assert not result.ok and result.diagnosis == diagnosis, repr(result)


def test_g9_a_placeholder_sum_to_leaves_it_not_started():
    ex.G9.run("unbroadcast", lambda g, shape: None)
    assert status("G9") == "not started"


# -- G13: the reduction over a padded batch of sequences ----------------------------------------


def g13_by_hand(r):
    """d/dw (x·w − t)² = 2(x·w − t)·x per token; L_sum weighs each real token by 1, L_seq
    by 1 / (B · n_b) (n_b: its sequence's real tokens), padding by 0."""
    per_token = 2 * (r.x @ r.w - r.t)[..., None] * r.x
    seq = r.mask / (len(r.mask) * r.mask.sum(axis=1, keepdims=True))
    return ((r.mask[..., None] * per_token).sum(axis=(0, 1)),
            (seq[..., None] * per_token).sum(axis=(0, 1)))


@pytest.mark.parametrize("learner", LEARNERS, indirect=True)
def test_g13_both_gradients_worked_out_solve_it(learner):
    r = ex.G13.problem()
    grad_sum, grad_seq = g13_by_hand(r)
    assert np.allclose(grad_sum, r.mask.sum() * r.grad_tok)  # L_sum = n_real · L_tok
    assert ex.G13(lambda q: dict(zip(("grad_sum", "grad_seq"), g13_by_hand(q)))).ok
    assert status("G13") == "solved"


@pytest.mark.parametrize("learner", LEARNERS, indirect=True)
def test_g13_no_factor_turns_grad_tok_into_grad_seq(learner):
    """The per-sequence mean weighs the sequences' tokens differently (lengths all differ):
    its gradient points another way, so no factor (counted or guessed) gives it."""
    r = ex.G13.problem()
    lengths = r.mask.sum(axis=1)
    assert len(set(lengths)) == len(lengths)
    _, grad_seq = g13_by_hand(r)
    cosine = grad_seq @ r.grad_tok / (np.linalg.norm(grad_seq) * np.linalg.norm(r.grad_tok))
    assert cosine < 1 - 1e-6
    factor = grad_seq @ r.grad_tok / (r.grad_tok @ r.grad_tok)  # the best a factor can do
    assert not ex.G13(lambda q: {"grad_seq": factor * q.grad_tok}).ok


def test_g13_the_old_answers_do_not_solve_it():
    r = ex.G13.problem()
    n_rows = len(r.x)                                   # the skeleton's old N = len(r.x)
    old = ex.G13(grad_sum=n_rows * r.grad_tok, factor=float(n_rows))
    assert not old.ok and old.diagnosis == "call"
    assert not ex.G13(lambda q: {"grad_sum": len(q.x) * q.grad_tok}).ok
    assert status("G13") != "solved"


@pytest.mark.parametrize("part, answer, diagnosis", [
    ("grad_sum", lambda r, s, q: r.mask.size * r.grad_tok, "counted_padding"),
    ("grad_sum", lambda r, s, q: len(r.mask) * r.grad_tok, "batch_count"),
    ("grad_sum", lambda r, s, q: r.grad_tok / r.mask.sum(), "inverse"),
    ("grad_sum", lambda r, s, q: (2 * (r.x @ r.w - r.t)[..., None] * r.x).sum(axis=(0, 1)),
     "no_mask"),
    ("grad_seq", lambda r, s, q: r.grad_tok, "token_mean"),
    ("grad_seq", lambda r, s, q: s / r.mask.size, "counted_padding"),
    ("grad_seq", lambda r, s, q: s / len(r.mask), "no_length_mean"),
    ("grad_seq", lambda r, s, q: q * len(r.mask), "no_batch_mean"),
])
def test_g13_each_slip_is_named(part, answer, diagnosis):
    r = ex.G13.problem()
    result = ex.G13(lambda q: {part: answer(q, *g13_by_hand(q))})
    assert not result.ok and result.diagnosis == diagnosis, repr(result)
    assert str(int(r.mask.sum())) not in result.message


def test_g13_the_engines_backward_on_the_problem_counts_as_seeing_it():
    engine_watch.forget()
    try:
        r = ex.G13.problem()
        w = ag.tensor(r.w, requires_grad=True)
        per_token = (ag.tensor(r.x) @ w - ag.tensor(r.t)) ** 2 * ag.tensor(r.mask)
        per_token.sum().backward()
        assert seen("G13")
        precomputed = {"grad_sum": w.grad.numpy(), "grad_seq": g13_by_hand(r)[1]}
        assert not ex.G13(lambda q: precomputed).ok  # right on r only: not derived
        assert ex.G13(lambda q: dict(zip(("grad_sum", "grad_seq"), g13_by_hand(q)))).ok
        assert status("G13") == "solved after seeing the solution"
    finally:
        engine_watch.forget()
