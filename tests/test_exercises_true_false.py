"""True/false with justification (T1–T10): the bank's verdict with the right reason
passes; every other option gets its own feedback; each item's engine experiment
shows what the bank says it shows."""

import numpy as np
import pytest

from widgets import exercises as ex


@pytest.fixture(autouse=True)
def _own_progress_file(tmp_path, monkeypatch):
    """Progress goes to this test's own file, never to a learner's home directory."""
    monkeypatch.setenv("AUTOGRAD_LESSONS_PROGRESS", str(tmp_path / "progress.json"))

# The verdicts of shared/question-bank.md.
TRUTH = {"T1": True, "T2": False, "T3": False, "T4": False, "T5": False, "T6": False,
         "T7": True, "T8": False, "T9": False, "T10": True}
T_IDS = list(TRUTH)
def right_option(exercise):
    """The key of the right justification (the raw check: no progress is recorded)."""
    check = exercise.checks["verdict"]
    return next(k for k in exercise.options if check(TRUTH[exercise.id], k).ok)


@pytest.mark.parametrize("tid", T_IDS)
def test_exactly_one_justification_is_right(tid):
    exercise = ex.registry()[tid]
    oks = [k for k in exercise.options if exercise(TRUTH[tid], k).ok]
    assert len(oks) == 1
    assert oks[0] in exercise.solution


@pytest.mark.parametrize("tid", T_IDS)
def test_every_wrong_pick_gets_its_own_feedback(tid):
    exercise = ex.registry()[tid]
    right = right_option(exercise)
    messages = set()
    for key in exercise.options:
        for verdict in (True, False):
            result = exercise(verdict, key)
            if verdict == TRUTH[tid] and key == right:
                continue
            assert not result.ok
            assert result.diagnosis in ("wrong_verdict", "wrong_reason")
            assert f"{tid}.experiment()" in result.message
            messages.add(result.message)
    assert len(messages) == 2 * len(exercise.options) - 1


@pytest.mark.parametrize("tid", T_IDS)
@pytest.mark.parametrize("verdict, because, code", [
    (None, "a", "none"), ("maybe", "a", "none"), (True, None, "no_reason"),
    (True, "zz", "unknown_name"), (False, 3, "unknown_name"),
])
def test_malformed_picks(tid, verdict, because, code):
    assert ex.registry()[tid](verdict, because).diagnosis == code


def test_verdict_may_be_written_as_text():
    key = right_option(ex.T9)
    assert ex.T9("false", key.upper()).ok and ex.T9(" FALSE ", key).ok


def test_the_right_justification_is_not_always_the_same_letter():
    assert len({right_option(ex.registry()[t]) for t in T_IDS}) > 1


# -- the experiments ------------------------------------------------------------------------


def test_t1_forward_and_reverse_agree_to_rounding():
    pytest.importorskip("autograd_core.func", reason="autograd_core.func (forward mode) cannot "
                        "be imported: reinstall the project with pip install -e '.[test]'")
    report = ex.T1.experiment()
    assert report.supports is True
    j = report.data
    assert np.allclose(j["forward"], j["reverse"], rtol=0, atol=1e-12)
    assert np.allclose(j["reverse"], j["numeric"], atol=1e-6)


def test_t2_each_mode_wins_one_case():
    rows = ex.T2.experiment().rows
    largest = max(r[1] for r in rows)
    winners = {r[0]: r[6] for r in rows if r[1] == largest}
    assert winners == {"many inputs -> one output": "reverse",
                       "one input -> many outputs": "forward"}


def test_t3_a_cycle_has_no_order():
    report = ex.T3.experiment()
    assert [r[1] for r in report.rows] == [True, False]
    assert "cycle" in report.summary


def test_t4_the_expanded_formula_outgrows_the_graph():
    data = ex.T4.experiment().data
    formula, graph = data["formula"], data["graph"]
    assert all(b - a == graph[1] - graph[0] for a, b in zip(graph, graph[1:])), "linear"
    assert formula[-1] / formula[-2] > 2 and formula[-1] > 100 * graph[-1]


def test_t4_symbolic_sizes_match_an_independent_count():
    sympy = pytest.importorskip(
        "sympy", reason="sympy is not installed: the size of the expanded derivative is not "
        "counted (install it with: pip install -e '.[lessons]')")
    from widgets.lessons.symbolic import derivative, tree_size

    x = sympy.Symbol("x")
    l = x
    for _ in range(3):
        l = 4 * l * (1 - l)
    ours = derivative(3, "logistic")
    assert tree_size(ours) == ex.T4.experiment().data["formula"][2]
    value = 0.3
    assert float(sympy.diff(l, x).subs(x, value)) == pytest.approx(float(ours.subs(x, value)))
    by_hand = value
    slope = 1.0
    for _ in range(3):  # chain rule, one level at a time
        slope *= 4 - 8 * by_hand
        by_hand = 4 * by_hand * (1 - by_hand)
    assert float(ours.subs(x, value)) == pytest.approx(slope)


def test_t5_finite_difference_error_is_never_zero_and_v_shaped():
    data = ex.T5.experiment().data
    errors = data["float64"]
    best = int(np.argmin(errors))
    assert 0 < best < len(errors) - 1, "error falls, then rises again"
    assert errors.min() > 0


def test_t6_the_same_sweep_on_a_network_and_a_formula():
    rows = ex.T6.experiment().rows
    assert len(rows) == 2 and all(r[3] for r in rows)


def test_t7_sigmoid_reads_its_saved_output():
    rows = dict((r[0], r[1]) for r in ex.T7.experiment().rows)
    assert rows["read by its backward"] == "out"
    assert "second time" in rows["backward after release"]


def test_t8_fan_out_sums():
    data = ex.T8.experiment().data
    assert np.allclose(data["grad"], sum(data["contributions"]))
    x = np.array([0.5, -1.5, 2.0])
    assert np.allclose(data["grad"], 3 + (1 - np.tanh(x) ** 2) + 2 * x)


def test_t9_seed_scales_every_gradient():
    rows = ex.T9.experiment().rows
    assert all(r[1] == pytest.approx(r[0]) and r[2] == pytest.approx(r[0]) for r in rows)


def test_t10_gradient_is_the_steepest_ascent():
    report = ex.T10.experiment()
    changes = dict(report.rows)
    up, down = changes["+grad / |grad|"], changes["−grad / |grad|"]
    assert up == max(changes.values()) and down == min(changes.values())
    assert up == pytest.approx(report.data["norm"], rel=1e-2)


@pytest.mark.parametrize("tid", T_IDS)
def test_experiment_output_is_deterministic(tid):
    exercise = ex.registry()[tid]
    assert repr(exercise.experiment()) == repr(exercise.experiment())
