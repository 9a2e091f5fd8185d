"""Prediction items: the learner predicts what an engine experiment shows. The right
predictions (from the question bank, or computed here by hand) pass; a wrong one is
named with the reason; unknown names and empty calls get a sentence."""

import numpy as np
import pytest
from laws_by_hand import BLOCK_MACS
from laws_by_hand import RIGHT as LAW_RIGHT

from widgets import exercises as ex


@pytest.fixture(autouse=True)
def _own_progress_file(tmp_path, monkeypatch):
    """Progress goes to this test's own file, never to a learner's home directory."""
    monkeypatch.setenv("AUTOGRAD_LESSONS_PROGRESS", str(tmp_path / "progress.json"))

def _tanh_chain_grad(x: float, weight: float) -> float:
    """d y / d weight for y = tanh applied max(1, int(|x|)) times to weight·x, by hand."""
    h, slopes = weight * x, []
    for _ in range(max(1, int(abs(x)))):
        slopes.append(1 - np.tanh(h) ** 2)
        h = np.tanh(h)
    return x * float(np.prod(slopes))


def _residual_parameters(n_in: int, n_out: int) -> int:
    """fc1 and fc2 without bias, two batch norms (scale and shift), a bias-free projection
    only when the widths differ; the + adds none."""
    return (n_in * n_out + 2 * n_out + n_out * n_out + 2 * n_out
            + (n_in * n_out if n_in != n_out else 0))


# Right predictions (G1, L6 and L8: laws, worked out by hand in laws_by_hand).
RIGHT = {
    "G1": LAW_RIGHT["G1"],
    "W6": dict(w_pos_grad=_tanh_chain_grad(2.5, 1.5), w_neg_grad=None,
               w_neg_grad_negative=_tanh_chain_grad(-0.5, -2.0)),
    "E1": dict(grad_none={"b", "e"}, grad_zero="c, d"),  # by hand: see test_e1_* below
    "L1": dict(ops_wider=["linear", "batch_norm", "relu", "linear", "batch_norm", "linear",
                          "add"],
               parameters_same=_residual_parameters(8, 8),
               parameters_wider=_residual_parameters(8, 16)),
    "L3": dict(ops_positive=3, ops_negative=2),
    "L4": dict(same_structure=True, same_values=False, same_mask_same_input=False),
    "L6": LAW_RIGHT["L6"],  # laws, by hand: laws_by_hand
    "L7": dict(saved_10=10 * 100 * 8, saved_20=20 * 100 * 8),
    "L8": LAW_RIGHT["L8"],
    "L9": dict(locate=None, first_nonfinite_op="pow"),  # locate: set below
}

# One wrong prediction per item, and the diagnosis it gets.
WRONG = {
    "G1": (dict(frozen_layer_passes_gradient=False), "prediction"),
    "W6": (dict(w_neg_grad=0.0), "prediction"),
    "E1": (dict(grad_zero={"b", "c", "d", "e"}), "set"),
    "L1": (dict(parameters_wider=_residual_parameters(8, 16) - 8 * 16), "missing_projection"),
    "L3": (dict(ops_positive=2), "prediction"),
    "L4": (dict(same_structure=False), "prediction"),
    "L6": (dict(distinct_masks=lambda seeds, calls: len(set(seeds))), "seed_fixes_one_mask"),
    "L7": (dict(saved_10=800), "prediction"),
    "L8": (dict(recompute_macs=lambda depth, segments: depth * BLOCK_MACS), "all_segments"),
    "L9": (dict(first_nonfinite_op="linear"), "prediction"),
}


@pytest.mark.parametrize("exercise_id", RIGHT)
def test_right_predictions_pass(exercise_id):
    from test_feedback_malformed import _locate_returning

    answers = dict(RIGHT[exercise_id])
    if exercise_id == "L9":
        answers["locate"] = _locate_returning(str)
    result = ex.registry()[exercise_id](**answers)
    assert result.ok, repr(result)


@pytest.mark.parametrize("exercise_id", WRONG)
def test_a_wrong_prediction_is_explained(exercise_id):
    given, code = WRONG[exercise_id]
    result = ex.registry()[exercise_id](**given)
    assert not result.ok and result.diagnosis == code, repr(result)
    assert len(result.message.split(". ")) >= 2, "says what the engine shows, and why"


@pytest.mark.parametrize("exercise_id", RIGHT)
def test_unknown_prediction_name(exercise_id):
    result = ex.registry()[exercise_id](no_such_prediction=1)
    assert result.diagnosis == "unknown_name"


def test_l5_dropout_and_batch_norm_in_evaluation():
    p = ex.L5.problem()
    running_mean, running_var = 0.1 * p.x.mean(0), 0.9 + 0.1 * p.x.var(0, ddof=1)
    normed = (p.z - running_mean) / np.sqrt(running_var + 1e-5)
    assert ex.L5(kept_value=4 / 3, dropout_eval=p.z, batchnorm_eval=normed).ok
    with_batch_stats = (p.z - p.x.mean(0)) / np.sqrt(p.x.var(0) + 1e-5)
    result = ex.L5(kept_value=0.75, dropout_eval=0.75 * p.z, batchnorm_eval=with_batch_stats)
    assert [r.diagnosis for r in result.parts] == ["values", "eval_scaled", "momentum"]


def test_g14_batch_dependence():
    assert ex.G14.run("batch", training=True, evaluation=False).ok
    report = ex.G14.experiment()
    assert report.supports is True


def test_g1_experiment_reports_memory_on_request():
    assert not any("held after" in str(r[0]) for r in ex.G1.experiment().rows)
    report = ex.G1.experiment(memory=True)
    assert report.data["saved_bytes_no_grad"] == 0
    held = {r[0]: r[1] for r in report.rows if "held after" in str(r[0])}
    assert held["no_grad: memory still held after it (KiB)"] == "< 10"
    assert held["recording: memory still held after it (KiB)"] > 100


@pytest.mark.parametrize("exercise_id", ["G1", "G4", "W5", "W6", "L7", "L8", "L9"])
def test_experiment_reprs_are_deterministic(exercise_id):
    exercise = ex.registry()[exercise_id]
    assert repr(exercise.experiment()) == repr(exercise.experiment())


@pytest.mark.parametrize("placeholder", [None, ...])
def test_a_placeholder_prediction_gives_nothing_away(placeholder):
    result = ex.G14.run("batch", training=placeholder, evaluation=placeholder)
    feedback = str(result)
    assert not result.ok
    assert "nothing to check yet" in feedback
    assert "engine shows" not in feedback  # the measured answer stays hidden


def test_a_wrong_count_is_called_a_count_not_a_gradient():
    result = ex.L3(ops_positive=2)
    feedback = str(result)
    assert not result.ok
    assert "You predicted 2; that is not the count the engine measures." in feedback
    assert "gradient" not in feedback.lower()


def test_the_engines_value_is_shown_only_after_a_second_wrong_try():
    first = str(ex.L3(ops_positive=2))
    assert "engine shows" not in first and "3" not in first.split("measures")[0][-5:]
    second = str(ex.L3(ops_positive=4))
    assert "You predicted 4; the engine shows 3." in second
    assert "solved after seeing the answer" in second


def test_e1_names_each_kind_of_slip_in_the_learners_terms():
    """By hand: b and e feed only h, which the loss never uses (never reached: None); c
    reaches it times 0 and d through relu at negative inputs (reached: zeros); a gets 2."""
    unused_as_zero = ex.E1(grad_none=set(), grad_zero={"b", "c", "d", "e"})
    assert not unused_as_zero.ok
    none_part, zero_part = unused_as_zero.parts
    assert "2 of the leaves the sweep never reaches are missing" in none_part.message
    assert "2 of the leaves you named are not given an array of zeros" in zero_part.message
    for shown in ('"b"', "'b'", "{b", "{c"):
        assert shown not in repr(unused_as_zero)  # the kind of slip, never the set


def test_e1_a_dead_relu_read_as_never_reached_is_named():
    dead_relu_as_none = ex.E1(grad_none={"b", "d", "e"}, grad_zero={"c"})
    none_part, zero_part = dead_relu_as_none.parts
    assert "1 of the leaves you named is reached by the sweep" in none_part.message
    assert "1 of the leaves that end with all zeros is missing" in zero_part.message
    assert "{b" not in repr(dead_relu_as_none) and "{c" not in repr(dead_relu_as_none)


def test_e1_none_is_a_placeholder_not_an_attempt():
    from widgets.exercises.tracking import status

    result = ex.E1(grad_none=None, grad_zero=None)
    assert not result.ok and status("E1") == "not started"




def test_a_check_computes_in_float64_whatever_default_the_learner_set():
    """A learner who tried ``ag.set_default_dtype(ag.float32)`` (lesson 01 names it) is not
    told a right answer is wrong: W6's check computes in float32 otherwise. The learner's
    default is theirs again after the check."""
    import autograd_core as ag

    before = ag.get_default_dtype()
    ag.set_default_dtype(ag.float32)
    try:
        result = ex.registry()["W6"](**RIGHT["W6"])
        assert ag.get_default_dtype() is ag.float32
    finally:
        ag.set_default_dtype(before)
    assert result.ok, repr(result)
