"""T1 (lesson 09), L5, L6 (lesson 08) and L8 (lesson 10) make the learner produce the
answer: the shortcuts that solved the old, thin versions (two tokens copied from the cell
above, the engine's own measurement handed back, a flipped yes/no) no longer solve them, and
each slip the items name is named. Expected values are worked out here by hand. L6 and L8
now ask for laws: test_law_items holds them."""

import numpy as np
import pytest

# each test records into a file of its own (autouse), and what "seen" means: as the rules'
from test_teaching_rules import _own_progress, seen  # noqa: F401, E402

import autograd_core as ag
from autograd_core.func import jacfwd, jacrev, jvp, vjp
from widgets import exercises as ex
from widgets.exercises.tracking import status

# -- T1: both Jacobians built pass by pass, and their gap measured -----------------------------

W = ag.randn(2, 3, generator=ag.Generator(1))


def lesson_f(x):
    """Lesson 09's function of section 1, R³ → R²."""
    return ag.tanh(W @ x) * ag.exp(x[0])


X = ag.tensor([0.5, -1.0, 2.0])


def t1_by_passes(columns_axis=1, gap=None):
    """A learner's T1: one jvp per input, one vjp per output, stacked into matrices."""
    def experiment():
        columns = [jvp(lesson_f, (X,), (ag.tensor(e),))[1].numpy() for e in np.eye(3)]
        _, pull = vjp(lesson_f, X)
        rows = [pull(ag.tensor(e))[0].numpy() for e in np.eye(2)]
        forward = np.stack(columns, axis=columns_axis)
        reverse = np.stack(rows, axis=0)
        largest = (np.abs(forward - reverse).max() if forward.shape == reverse.shape else 0.0)
        return {"function": lesson_f, "at": X, "forward": forward, "reverse": reverse,
                "largest_difference": largest if gap is None else gap}
    return experiment


def test_t1_built_pass_by_pass_is_solved():
    result = ex.T1(verdict=True, because="same local derivatives", experiment=t1_by_passes())
    assert result.ok, result.message


def test_t1_the_old_two_token_fill_no_longer_solves_it():
    def old():  # the old exercise cell with its two placeholders filled with f
        return {"function": lesson_f, "at": X, "forward": jacfwd(lesson_f)(X),
                "reverse": jacrev(lesson_f)(X)}
    result = ex.T1(verdict=True, because="they agree", experiment=old)
    assert not result.ok and result.diagnosis == "experiment"
    assert "largest_difference" in result.message
    assert status("T1") != "solved"


def test_t1_matrices_built_elsewhere_are_not_a_measurement():
    data = t1_by_passes()()  # computed before the experiment runs: the engine saw nothing

    result = ex.T1(verdict=True, because="x", experiment=lambda: data)
    assert not result.ok and "one jvp per input" in result.message


def t1_faked(forward_by, reverse_by):
    """Enough passes for the counts, along vectors that are not one-hot, and the matrices
    taken from elsewhere: the counts alone would accept it."""
    def experiment():
        for e in np.ones((3, 3)) + np.eye(3):
            jvp(lesson_f, (X,), (ag.tensor(e),))
        _, pull = vjp(lesson_f, X)
        for e in np.ones((2, 2)) + np.eye(2):
            pull(ag.tensor(e))
        forward, reverse = forward_by(lesson_f)(X).numpy(), reverse_by(lesson_f)(X).numpy()
        return {"function": lesson_f, "at": X, "forward": forward, "reverse": reverse,
                "largest_difference": np.abs(forward - reverse).max()}
    return experiment


def test_t1_columns_not_pushed_by_forward_mode_are_refused():
    result = ex.T1(verdict=True, because="x", experiment=t1_faked(jacrev, jacrev))
    assert not result.ok and "A column of 'forward'" in result.message
    assert status("T1") != "solved"


def test_t1_rows_not_pulled_by_reverse_mode_are_refused():
    result = ex.T1(verdict=True, because="x", experiment=t1_faked(jacfwd, jacfwd))
    assert not result.ok and "A row of 'reverse'" in result.message


def test_t1_jacfwd_and_jacrev_build_the_matrices_by_the_modes_they_name():
    result = ex.T1(verdict=True, because="x", experiment=t1_faked(jacfwd, jacrev))
    assert result.ok, result.message


def test_t1_columns_stacked_as_rows_are_named():
    result = ex.T1(verdict=True, because="x", experiment=t1_by_passes(columns_axis=0))
    assert not result.ok and "turned on its side" in result.message


def test_t1_a_gap_not_measured_from_the_matrices_is_named():
    result = ex.T1(verdict=True, because="x", experiment=t1_by_passes(gap=1.0))
    assert not result.ok and "'largest_difference' is not" in result.message


def test_t1_a_square_function_is_refused():
    def square():
        f = ag.tanh
        x = ag.tensor([0.1, 0.2])
        return {"function": f, "at": x, "forward": jacfwd(f)(x), "reverse": jacrev(f)(x),
                "largest_difference": 0.0}
    result = ex.T1(verdict=True, because="x", experiment=square)
    assert not result.ok and "not as many" in result.message


# -- L5: both layers' evaluation outputs, worked out ---------------------------------------------


def l5_by_hand():
    p = ex.L5.problem()
    running_mean = 0.9 * 0 + 0.1 * p.x.mean(axis=0)
    running_var = 0.9 * 1 + 0.1 * p.x.var(axis=0, ddof=1)
    return p, dict(kept_value=1 / (1 - 0.25), dropout_eval=p.z,
                   batchnorm_eval=(p.z - running_mean) / np.sqrt(running_var + 1e-5))


def test_l5_worked_out_is_solved():
    _, answers = l5_by_hand()
    assert ex.L5(**answers).ok
    assert status("L5") == "solved"


def test_l5_the_old_answers_are_not_this_item():
    p = ex.L5.problem()
    result = ex.L5(kept_value=4 / 3, eval_identity=True, running_mean=0.1 * p.x.mean(0))
    assert not result.ok and result.diagnosis == "unknown_name"


@pytest.mark.parametrize("slip, code", [
    (lambda p: (p.z - p.z.mean(0)) / np.sqrt(p.z.var(0) + 1e-5), "training_mode"),
    (lambda p: (p.z - p.x.mean(0)) / np.sqrt(p.x.var(0, ddof=1) + 1e-5), "momentum"),
    (lambda p: (p.z - 0.1 * p.x.mean(0)) / np.sqrt(1 + 1e-5), "variance_not_moved"),
    (lambda p: (p.z - 0.1 * p.x.mean(0)) / np.sqrt(0.9 + 0.1 * p.x.var(0) + 1e-5),
     "biased_variance"),
])
def test_l5_batch_norm_slips_are_named(slip, code):
    p = ex.L5.problem()
    result = ex.L5(batchnorm_eval=slip(p))
    assert not result.ok and result.diagnosis == code, result.message


def test_l5_dropout_scaled_at_evaluation_is_named():
    p = ex.L5.problem()
    assert ex.L5(dropout_eval=p.z * (1 - p.p)).diagnosis == "eval_scaled"


# -- L6 and L8: laws now (test_law_items); the old answers are not these items ---------------


def test_l6_the_old_flipped_yes_no_answers_are_not_this_item():
    for guess in (False, True):
        result = ex.L6(same_seed_same_mask=guess, order_changes_sum=guess)
        assert result.diagnosis == "unknown_name"
    assert status("L6") == "not started"


def test_l6_the_old_numbers_are_not_laws():
    result = ex.L6(distinct_masks=4)
    assert not result.ok and result.diagnosis == "type"
    assert ex.L6(front_to_back=1e8).diagnosis == "unknown_name"


def test_l8_the_old_yes_no_answers_are_not_this_item():
    result = ex.L8(gradients_identical=True, saves_less=True, recomputes=True)
    assert not result.ok and result.diagnosis == "unknown_name"


def test_l8_measuring_the_step_before_solving_shows_the_solution():
    """The old item asked the learner to copy checkpointed_step(...).peak after three yes/no
    answers; a measurement before solving still counts as seeing the solution, and the laws
    that solve it afterwards say so."""
    from laws_by_hand import RIGHT

    from widgets.lessons.checkpointing import checkpointed_step

    ex.L8(gradients_identical=True)
    measured = checkpointed_step(depth=16, segments=4)
    assert seen("L8")
    assert not ex.L8(peak_checkpointed=measured.peak).ok  # a number is not a law
    ex.L8(**RIGHT["L8"])
    assert status("L8") == "solved after seeing the solution"
