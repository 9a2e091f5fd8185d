"""E3 (lesson 11) makes the learner derive the sigmoid's slope and write its log, exact and
finite out to |z| = 800: the old one-token answers (0, 0.25, e) no longer solve it, the
engine run inside the learner's function is refused, finite differences are refused as a
measurement rather than a closed form, a formula that leaves float64's range in a tail and
each slip the item names are named, and a right stable closed form solves it for every
learner. Expected values are worked out here by hand, never read from the check."""

import numpy as np
import pytest
from learners import LEARNERS

# each test records into a file of its own (autouse), and what "seen" means: as the rules'
from test_teaching_rules import _own_progress, seen  # noqa: F401, E402

import autograd_core as ag
from widgets import exercises as ex
from widgets.exercises.tracking import status


def log_slope(z):
    """By hand: σ' = e^(−z) / (1 + e^(−z))², even in z, so with a = |z| its log is
    −a − 2·log(1 + e^(−a)); e^(−a) ≤ 1 never overflows and log1p keeps it exact."""
    a = np.abs(z)
    return -a - 2 * np.log1p(np.exp(-a))


def sigmoid(z):
    return 1 / (1 + np.exp(-z))


@pytest.mark.parametrize("learner", LEARNERS, indirect=True)
def test_e3_a_stable_closed_form_solves_it(learner):
    result = ex.E3(log_slope)
    assert result.ok, repr(result)
    assert status("E3") == "solved"


def test_e3_another_stable_closed_form_solves_it_too():
    """log σ(z) + log σ(−z), each log σ written as −log(1 + e^(∓z)) with the larger
    exponent taken out first: the same function, written another way."""
    def by_parts(z):
        def log_sigma(x):
            return np.minimum(x, 0) - np.log1p(np.exp(-np.abs(x)))
        return log_sigma(z) + log_sigma(-z)

    assert ex.E3(log_slope=by_parts).ok


def test_e3_the_old_answers_do_not_solve_it():
    old = ex.E3(peak_z=0.0, peak_slope=0.25, falloff=np.e)   # the old item's call and tokens
    assert not old.ok and old.diagnosis == "unknown_name", repr(old)
    token = ex.E3(0.25)                                      # a token passed by position
    assert not token.ok and "should be a function" in token.message
    constant = ex.E3(lambda z: np.full(np.shape(z), np.log(0.25)))  # the peak everywhere
    assert not constant.ok
    assert not status("E3").startswith("solved")


def test_e3_the_engine_may_not_compute_it():
    def engine(z):
        t = ag.tensor(z, requires_grad=True)
        ag.sigmoid(t).sum().backward()
        return np.log(t.grad.numpy())

    with np.errstate(divide="ignore"):
        result = ex.E3(engine)
    assert not result.ok and result.diagnosis == "uses_engine", repr(result)
    assert status("E3") != "solved"


@pytest.mark.parametrize("h", [1e-4, 1e-5, 1e-6])
def test_e3_finite_differences_are_not_a_closed_form(h):
    def measured(z):
        return np.log((sigmoid(z + h) - sigmoid(z - h)) / (2 * h))

    with np.errstate(all="ignore"):
        result = ex.E3(measured)
    assert not result.ok and result.diagnosis == "not_closed_form", repr(result)
    assert "finite differences" in result.message
    assert status("E3") != "solved"


def naive_quotient(z):
    return np.log(np.exp(-z) / (1 + np.exp(-z)) ** 2)   # e^(−z) overflows below z ≈ −709


def naive_no_abs(z):
    return -z - 2 * np.log1p(np.exp(-z))                  # right for z ≥ 0 only


def naive_sigma(z):
    s = sigmoid(z)
    return np.log(s * (1 - s))                            # 1 − σ(z) rounds to 0 past z ≈ 37


@pytest.mark.parametrize("answer, diagnosis, side", [
    (naive_quotient, "overflow", "z below"),
    (naive_no_abs, "overflow", "z below"),
    # σ(1 − σ) first loses digits on the shoulders (5 to 40), before it reaches −inf
    (naive_sigma, ("overflow", "cancellation"), "z above"),
])
def test_e3_a_formula_that_leaves_float64_in_a_tail_is_named(answer, diagnosis, side):
    with np.errstate(all="ignore"):
        result = ex.E3(answer)
    assert not result.ok and result.diagnosis in np.atleast_1d(diagnosis), repr(result)
    assert "Right on the centre" in result.message and side in result.message, repr(result)
    assert not status("E3").startswith("solved")


def test_e3_the_overflow_sentence_says_where():
    with np.errstate(all="ignore"):
        result = ex.E3(naive_quotient)
    assert result.diagnosis == "overflow"
    assert "nan" in result.message and "float64's range" in result.message


@pytest.mark.parametrize("answer, diagnosis", [
    (lambda z: -np.logaddexp(0.0, -z), "sigma"),                       # log σ, not log σ'
    (lambda z: -log_slope(z), "inverted"),                             # log(1/σ')
    (lambda z: np.exp(log_slope(z)), "not_log"),                       # σ' itself
    (lambda z: -np.abs(z) + 2 * np.log1p(np.exp(-np.abs(z))), "sign"),  # log(a/b) as a sum
    (lambda z: -np.abs(z), "tail_only"),                               # the tail law alone
    (lambda z: -np.abs(z) - np.log1p(np.exp(-np.abs(z))), "one_factor"),
])
def test_e3_each_slip_is_named_without_the_value(answer, diagnosis):
    result = ex.E3(answer)
    assert not result.ok and result.diagnosis == diagnosis, repr(result)
    assert "0.25" not in result.message and "2.718" not in result.message
    assert not status("E3").startswith("solved")


@pytest.mark.parametrize("returned", ["-1.4", {"z": 0.0}, 0.25, [1.0, 2.0]])
def test_e3_a_malformed_answer_gets_a_sentence(returned):
    result = ex.E3(lambda z: returned)
    assert not result.ok and result.diagnosis in ("text", "type", "scalar", "shape"), \
        repr(result)
    assert "Traceback" not in repr(result)


def test_e3_a_placeholder_leaves_it_not_started():
    ex.E3(lambda z: None)
    assert status("E3") == "not started"
