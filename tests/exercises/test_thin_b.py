"""Lesson 03's items E1, E2, E5, E6, T6 and T9 (E4: test_thin_e), rewritten so that the learner
produces the answer: each is solved here the way a learner would (expected values worked out
by hand, never read from the engine), and the thin shortcut that solved the old item (the
tokens it asked for, the engine's own value, a flipped verdict) no longer does."""

from __future__ import annotations

import numpy as np
import pytest

import autograd_core as ag
from autograd_core import nn
from autograd_core.sweep.engine import backward_steps
from widgets import exercises as ex
from widgets.exercises import store
from widgets.exercises.exercise import forget_results
from widgets.exercises.tracking import status


def _diagnosis(result, part=0):
    """The diagnosis of one answer of a check (a Result of one answer has no parts)."""
    return result.parts[part].diagnosis if result.parts else result.diagnosis


@pytest.fixture(autouse=True)
def _own_progress_file(tmp_path, monkeypatch):
    """Progress goes to this test's own file, never to a learner's home directory."""
    monkeypatch.setenv("AUTOGRAD_LESSONS_PROGRESS", str(tmp_path / "progress.json"))
    forget_results()


# -- E1: which leaves the sweep never reaches, and which it reaches with 0 --------------------


def test_e1_solved_by_following_the_graph_back_from_the_loss():
    # by hand: h = tanh(b)·e is unused (b, e never reached); c·0 and relu(d<0) give zeros
    assert ex.E1(grad_none={"b", "e"}, grad_zero="c and d").ok
    assert status("E1") == "solved"


@pytest.mark.parametrize("answers", [
    dict(unused_grad=None, zero_path_grad=[0.0, 0.0]),  # the old item's two tokens
    dict(grad_none=None, grad_zero=0.0),                # one of the old two choices each
    dict(grad_none={"y"}, grad_zero={"w"}),             # the old item's leaves
])
def test_e1_the_old_two_choice_answers_do_not_solve_it(answers):
    result = ex.E1(**answers)
    assert not result.ok and "Traceback" not in repr(result)
    assert not status("E1").startswith("solved")


@pytest.mark.parametrize("typed", ["b e", {"y"}, ["B", "x"]])
def test_e1_a_name_that_is_no_leaf_gets_a_sentence_and_is_no_wrong_try(typed):
    result = ex.E1(grad_none=typed)
    assert not result.ok and _diagnosis(result) == "type", repr(result)
    assert "not among a, b, c, d and e" in repr(result)
    assert not store.read_item("E1")["misses"]  # not a try that brings the reveal nearer


def test_e1_guessing_every_leaf_in_both_sets_is_wrong_in_both():
    result = ex.E1(grad_none=set("abcde"), grad_zero=set("abcde"))
    assert [p.ok for p in result.parts] == [False, False]


# -- E2, E5, E6: the gradients as a NumPy function of the problem -----------------------------
#
# The audit's route: the engine run on a leaf holding the problem's array in disguise
# (shifted by one, so no watch sees it), its .grad handed back by a function that ignores
# its argument. Each item now runs the learner's function on problems drawn at check time
# too, where those arrays do not carry over.


def my_e2(p):
    # by hand: z_i = literal·w_i·x_i + b_i, so dz_i/dw_i = literal·x_i; with a leaf k in the
    # literal's place, dz_i/dk = w_i·x_i, and k, used by every entry, adds them up
    return {"dw": p.literal * p.x, "dk": sum(w * x for w, x in zip(p.w, p.x))}


def my_e5(p):
    # each use of W as if the other were a constant: out = h @ W.T sends out_barᵀ h, and
    # h = tanh(x @ W) sends xᵀ(h̄ ⊙ (1 − h²)) with h̄ = out_bar @ W; a value used twice adds
    return {"dW": p.t.T @ p.h + p.x.T @ ((p.t @ p.W) * (1 - p.h ** 2))}


def _e6_by_hand(x):
    """d/dx of c·tanh(x) + x·c² with c = x.detach() held constant."""
    return x * (1 - np.tanh(x) ** 2) + x ** 2


def my_e6(p):
    return {"dx": _e6_by_hand(p.x)}


def _disguised_e2():
    """E2's gradients from the engine, on leaves holding the problem's w and the 2 shifted
    by one, worked out outside any function."""
    p = ex.E2.problem()
    w = ag.tensor(p.w + 1, requires_grad=True)
    (2 * (w - 1) * ag.tensor(p.x) + ag.tensor(p.b)).sum().backward()
    k = ag.tensor(3.0, requires_grad=True)
    ((k - 1) * ag.tensor(p.w) * ag.tensor(p.x) + ag.tensor(p.b)).sum().backward()
    return {"dw": w.grad.numpy(), "dk": k.grad.numpy()}


def _disguised_e5():
    p = ex.E5.problem()
    w = ag.tensor(p.W + 1, requires_grad=True)
    tied = w - 1
    (ag.tanh(ag.tensor(p.x) @ tied) @ tied.T * ag.tensor(p.t)).sum().backward()
    return {"dW": w.grad.numpy()}


def _disguised_e6():
    p = ex.E6.problem()
    leaf = ag.tensor(p.x + 1, requires_grad=True)
    x = leaf - 1
    (x.detach() * ag.tanh(x) + x * x.detach() ** 2).sum().backward()
    return {"dx": leaf.grad.numpy()}


RIGHT = {"E2": my_e2, "E5": my_e5, "E6": my_e6}
DISGUISED = {"E2": _disguised_e2, "E5": _disguised_e5, "E6": _disguised_e6}
YES_NO = {"E2": ("literal", "literal_gets_gradient"), "E6": ("value", "value_changes")}


@pytest.mark.parametrize("item", ["E2", "E5", "E6"])
def test_a_right_numpy_function_solves_the_gradients_and_the_yes_no_part_too(item):
    exercise = ex.registry()[item]
    result = exercise(RIGHT[item])
    assert result.ok, repr(result)
    assert all("drawn at check time" in p.message for p in result.parts or (result,))
    if item in YES_NO:
        assert status(item) == "in progress"  # the yes/no part is still to answer
        check, part = YES_NO[item]
        assert exercise.run(check, **{part: "no"}).ok  # by hand: a constant; same values
    assert status(item) == "solved"


@pytest.mark.parametrize("item", ["E2", "E6"])
def test_the_yes_no_part_alone_does_not_solve_it(item):
    check, part = YES_NO[item]
    assert ex.registry()[item].run(check, **{part: False}).ok
    assert status(item) == "in progress"


@pytest.mark.parametrize("item", ["E2", "E6"])
def test_a_flipped_yes_no_counts_as_seeing_the_answer(item):
    exercise = ex.registry()[item]
    check, part = YES_NO[item]
    assert not exercise.run(check, **{part: True}).ok
    flipped = exercise.run(check, **{part: False})
    assert flipped.ok and flipped.diagnosis == "elimination"
    assert exercise(RIGHT[item]).ok
    assert status(item) == "solved after seeing the solution"


@pytest.mark.parametrize("item", ["E2", "E5", "E6"])
def test_the_engine_on_a_disguised_leaf_worked_out_elsewhere_does_not_solve_it(item):
    exercise = ex.registry()[item]
    precomputed = DISGUISED[item]()
    right = RIGHT[item](exercise.problem())
    for part, value in precomputed.items():  # the route gives the right arrays for p ...
        assert np.allclose(value, right[part])
    result = exercise(lambda p: precomputed)  # ... and ignores the problem it is given
    assert not result.ok
    for part in result.parts or (result,):
        assert part.diagnosis == "not_from_problem", repr(result)
        assert "must compute it from the arrays of the problem it is given" in part.message
    assert not status(item).startswith("solved")


@pytest.mark.parametrize("item", ["E2", "E5", "E6"])
def test_arrays_passed_the_old_way_get_the_sentence_naming_the_function(item):
    exercise = ex.registry()[item]
    result = exercise(**RIGHT[item](exercise.problem()))
    assert not result.ok and result.diagnosis == "call"
    assert f"def my_{item.lower()}(p)" in result.message
    assert status(item) == "not started"


@pytest.mark.parametrize("item", ["E2", "E6"])
def test_the_yes_no_passed_to_the_gradients_check_names_its_own_check(item):
    check, part = YES_NO[item]
    result = ex.registry()[item](**{part: False})  # the old form, E2(literal_gets_gradient=...)
    assert not result.ok and result.diagnosis == "call"
    assert f'{item}.run("{check}", {part}=...)' in result.message
    assert "did you mean" not in result.message
    assert status(item) == "not started"


@pytest.mark.parametrize("literal", [2, 3])
@pytest.mark.parametrize("wrong, part, diagnosis", [
    (lambda p: p.x, "dw", "missing_constant"),
    (lambda p: p.w * p.x, "dk", "missing_reduction"),       # not summed over the entries
    (lambda p: p.literal * float(np.dot(p.w, p.x)), "dk", "kept_literal"),
    (lambda p: float(p.x.sum()), "dk", "dropped_w"),
    (lambda p: float(np.dot(p.w, p.x) + p.b.sum()), "dk", "added_b"),
])
def test_e2_a_wrong_part_is_named_on_whichever_problem_is_checked(wrong, part, diagnosis,
                                                                  literal):
    result = ex.E2.demo(lambda p: {part: wrong(p)}, literal=literal) if literal != 2 \
        else ex.E2(lambda p: {part: wrong(p)})
    assert not result.ok and _diagnosis(result) == diagnosis, repr(result)
    if diagnosis in ("missing_constant", "kept_literal"):
        assert f"the {literal}" in result.parts[0].message if result.parts else result.message


def test_e2_a_dk_copied_from_the_yes_no_part_is_wrong():
    result = ex.E2(lambda p: {"dk": 0.0})  # "the literal gets nothing"
    assert not result.ok and not status("E2").startswith("solved")


@pytest.mark.parametrize("use, other", [("first", False), ("second", False),
                                        ("second", True)])
def test_e5_one_use_of_the_weight_alone_is_named_by_its_layer(use, other):
    one = {"first": lambda p: p.x.T @ ((p.t @ p.W) * (1 - p.h ** 2)),
           "second": lambda p: p.t.T @ p.h}[use]
    call = ex.E5.demo if other else ex.E5
    result = call(lambda p: {"dW": one(p)}, **({"other": True} if other else {}))
    assert not result.ok and result.diagnosis == "overwrite", repr(result)
    layer = {"first": "first layer (x @ W) alone", "second": "second layer (h @ W.T) alone"}
    assert layer[use] in result.message


@pytest.mark.parametrize("other", [False, True])
@pytest.mark.parametrize("answer, diagnosis", [
    (lambda x: x, None),                          # the old item's answer, dx = x
    (lambda x: np.tanh(x) + x * (1 - np.tanh(x) ** 2) + 3 * x ** 2, "through_detach"),
    (lambda x: x * (1 - np.tanh(x) ** 2), "first_term_only"),
    (lambda x: x ** 2, "second_term_only"),
])
def test_e6_the_old_answer_and_the_slips_are_wrong(answer, diagnosis, other):
    call = ex.E6.demo if other else ex.E6
    result = call(lambda p: {"dx": answer(p.x)}, **({"other": True} if other else {}))
    assert not result.ok
    if diagnosis:
        assert _diagnosis(result) == diagnosis, repr(result)


def test_e6_the_lessons_demonstration_runs_on_other_data_only():
    shown = ex.E6.demo(lambda p: {"dx": np.tanh(p.x) + p.x * (1 - np.tanh(p.x) ** 2)
                                  + 3 * p.x ** 2}, other=True)
    assert _diagnosis(shown) == "through_detach"
    assert status("E6") == "not started"
    refused = ex.E6.demo(lambda p: {"dx": p.x}, other=False)
    assert refused.diagnosis == "demo_refused"


# -- T6: backprop on a network and reverse mode on the same formula --------------------------------


def _network():
    net = nn.Sequential(nn.Linear(2, 3), nn.Tanh(), nn.Linear(3, 1))
    x = ag.tensor(np.linspace(-1, 1, 10).reshape(5, 2))
    return net, x


def t6_learner(formula="same"):
    """A learner's T6 experiment: the network's sweep, then the formula's."""
    net, x = _network()
    network = [s.node.op.name for s in backward_steps((net(x) ** 2).sum())]
    W1, b1, W2, b2 = (ag.tensor(p.numpy(), requires_grad=True) for p in net.parameters())
    if formula == "same":                          # nn.Linear computes x @ W.T + b
        loss = ((ag.tanh(x @ W1.T + b1) @ W2.T + b2) ** 2).sum()
        grad = W1
    else:                                          # the old item's Rosenbrock formula
        u, v = ag.tensor(-0.5, requires_grad=True), ag.tensor(1.2, requires_grad=True)
        loss = (1 - u) ** 2 + 100 * (v - u ** 2) ** 2
        grad = u
    formula_ops = [s.node.op.name for s in backward_steps(loss)]
    data = {"network": network, "formula": formula_ops,
            "network_grad": net[0].weight.grad, "formula_grad": grad.grad}
    if formula == "old":
        return {"network": network, "formula": formula_ops}
    if formula == "network's grad handed back":
        data["formula_grad"] = net[0].weight.grad
    return data


def test_t6_solved_with_the_network_written_out_as_a_formula():
    result = ex.T6(verdict=False, because="one sweep, the same gradients",
                   experiment=t6_learner)
    assert result.ok, repr(result)


@pytest.mark.parametrize("variant, says", [
    ("old", "has no 'network_grad' and 'formula_grad'"),
    ("rosenbrock", "'formula_grad' is not the gradient of the same weight"),
    ("network's grad handed back", "'formula_grad' is not a gradient the sweep you call"),
])
def test_t6_the_old_experiment_and_its_shortcuts_are_named(variant, says):
    result = ex.T6(verdict=False, because="same sweep",
                   experiment=lambda: t6_learner(variant))
    assert not result.ok and result.diagnosis == "experiment"
    assert says in result.message, result.message


def test_t6_the_formula_must_compute_what_the_network_computes():
    def other_weights():
        data = t6_learner()
        net, x = _network()  # another network: other weights
        W1, b1, W2, b2 = (ag.tensor(p.numpy() + 0.5, requires_grad=True)
                          for p in net.parameters())
        loss = ((ag.tanh(x @ W1.T + b1) @ W2.T + b2) ** 2).sum()
        data["formula"] = [s.node.op.name for s in backward_steps(loss)]
        data["formula_grad"] = W1.grad
        return data

    result = ex.T6(verdict=False, because="same", experiment=other_weights)
    assert not result.ok and "does your formula compute what the network" in result.message


def test_t6_a_flipped_verdict_is_sent_back():
    result = ex.T6(verdict=True, because="they differ", experiment=t6_learner)
    assert not result.ok and result.diagnosis == "wrong_verdict"


# -- T9: the seed, and the loss it differentiates -------------------------------------------------


def t9_learner(grad_m="c times the loss", c=2.5):
    w0 = np.array([[0.2, -0.4], [0.7, 0.1]])

    def gradient(seed, factor=1.0):
        w = ag.tensor(w0, requires_grad=True)
        (factor * ag.tanh(w).sum()).backward(gradient=seed)
        return w.grad

    data = {"c": c, "grad_1": gradient(1.0), "grad_c": gradient(c)}
    if grad_m == "c times the loss":
        data["grad_M"] = gradient(1.0, factor=c)
    elif grad_m == "computed":
        data["grad_M"] = c * data["grad_1"].numpy()
    elif grad_m == "seeded c":
        data["grad_M"] = data["grad_c"]
    elif grad_m == "another loss":
        w = ag.tensor(w0, requires_grad=True)
        (c * (w ** 2).sum()).backward()
        data["grad_M"] = w.grad
    return data


def test_t9_solved_by_finding_the_loss_that_the_seed_differentiates():
    result = ex.T9(verdict=False, because="seed c is the gradient of c·L",
                   experiment=t9_learner)
    assert result.ok, repr(result)


@pytest.mark.parametrize("variant, says", [
    ("old", "has no 'grad_M'"),
    ("computed", "'grad_M' is not what a plain backward()"),
    ("seeded c", "'grad_M' is not what a plain backward()"),
    ("another loss", "'grad_M' is not the gradient your seed c gave"),
])
def test_t9_the_old_experiment_and_its_shortcuts_are_named(variant, says):
    result = ex.T9(verdict=False, because="scaled", experiment=lambda: t9_learner(variant))
    assert not result.ok and result.diagnosis == "experiment"
    assert says in result.message, result.message


def test_t9_a_flipped_verdict_is_sent_back():
    result = ex.T9(verdict=True, because="any seed", experiment=t9_learner)
    assert not result.ok and result.diagnosis == "wrong_verdict"
