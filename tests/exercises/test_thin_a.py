"""L1, T3, W1, W6 (lesson 02) and T7 (lesson 04) ask the learner to work the answer out: a
trace and two parameter counts, gradients by the chain rule, experiments that measure what
the claim turns on. What solved the old, thin items (the tokens the lesson's cell left
blank, copied from the cell above) solves none of them now, and the slips the new answers
invite are named. Every expected value is computed here, by hand, never by the checks.
"""

import numpy as np
import pytest

import autograd_core as ag
from autograd_core.tools.graph import CycleError, capture, saved_bytes, topological_order
from widgets import exercises as ex
from widgets.exercises.exercise import forget_results
from widgets.exercises.tracking import status


@pytest.fixture(autouse=True)
def _own_progress_file(tmp_path, monkeypatch):
    monkeypatch.setenv("AUTOGRAD_LESSONS_PROGRESS", str(tmp_path / "progress.json"))
    forget_results()


def diagnoses(result) -> dict:
    return {p.name: p.diagnosis for p in (result.parts or [result])}


# -- L1: a trace of the 8 -> 16 block, and both blocks' parameters -------------------------

# fc1 and fc2 are bias-free, each batch norm has a scale and a shift per feature, the
# projection (8 -> 16 only) is a bias-free Linear, and the + adds nothing
SAME = 8 * 8 + 2 * 8 + 8 * 8 + 2 * 8
WIDER = 8 * 16 + 2 * 16 + 16 * 16 + 2 * 16 + 8 * 16
OPS_WIDER = ["linear", "batch_norm", "relu", "linear", "batch_norm", "linear", "add"]


def test_l1_is_solved_by_the_trace_and_the_two_counts():
    result = ex.L1(ops_wider=OPS_WIDER, parameters_same=SAME, parameters_wider=WIDER)
    assert result.ok, result
    assert status("L1") == "solved"


def test_l1_the_old_tokens_no_longer_solve_it():
    """The old L1: F's ops as the lesson listed them, then yes/no and a 0."""
    result = ex.L1(ops=["linear", "batch_norm", "relu", "linear", "batch_norm", "add"],
                   merge_parameters=0, projection_same_shape=False,
                   projection_different_shape=True)
    assert not result.ok and result.diagnosis == "unknown_name"
    assert status("L1") != "solved"


def test_l1_the_trace_copied_from_f_misses_the_projection():
    result = ex.L1(ops_wider=["linear", "batch_norm", "relu", "linear", "batch_norm", "add"])
    assert not result.ok and status("L1") == "in progress"


@pytest.mark.parametrize("same, wider, named", [
    (SAME + 16, WIDER, {"parameters_same": "linear_bias"}),
    (SAME, WIDER + 32, {"parameters_wider": "linear_bias"}),
    (SAME + 8 * 8, WIDER, {"parameters_same": "needless_projection"}),
    (SAME, WIDER - 8 * 16, {"parameters_wider": "missing_projection"}),
    (SAME + 8, WIDER, {"parameters_same": "merge_parameters"}),
    (SAME, WIDER + 16, {"parameters_wider": "merge_or_projection_bias"}),
    (SAME + 32, WIDER + 64, {"parameters_same": "running_statistics",
                             "parameters_wider": "running_statistics"}),
])
def test_l1_each_miscount_is_named_without_the_count(same, wider, named):
    result = ex.L1(parameters_same=same, parameters_wider=wider)
    got = diagnoses(result)
    for part, code in named.items():
        assert got[part] == code, result
    said = str(result)
    assert str(SAME) not in said and str(WIDER) not in said


# -- W6: gradients through the branch that ran, None for the one that did not ---------------


def tanh_chain_grad(x: float, weight: float) -> float:
    """d y / d weight for y = tanh applied max(1, int(|x|)) times to weight·x."""
    h, grad = weight * x, x
    for _ in range(max(1, int(abs(x)))):
        grad *= 1 - np.tanh(h) ** 2
        h = np.tanh(h)
    return grad


def test_w6_is_solved_by_the_chain_rule_and_none():
    result = ex.W6(w_pos_grad=tanh_chain_grad(2.5, 1.5), w_neg_grad=None,
                   w_neg_grad_negative=tanh_chain_grad(-0.5, -2.0))
    assert result.ok, result
    assert status("W6") == "solved"


def test_w6_the_old_tokens_no_longer_solve_it():
    result = ex.W6(w_neg_grad=None, same_graph=False)
    assert not result.ok and status("W6") != "solved"
    ex.W6(w_neg_grad=None)  # the one old token still right is one part of three
    assert status("W6") == "in progress"


@pytest.mark.parametrize("given, part, code", [
    (2.5, "w_pos_grad", "no_tanh_slope"),  # stopped at the multiplication
    (2.5 * (1 - np.tanh(3.75) ** 2), "w_pos_grad", "one_tanh"),
    (1.5 * (1 - np.tanh(np.tanh(3.75)) ** 2) * (1 - np.tanh(3.75) ** 2), "w_pos_grad", "wrt_x"),
    (-0.5, "w_neg_grad_negative", "no_tanh_slope"),
    (-2.0 * (1 - np.tanh(1.0) ** 2), "w_neg_grad_negative", "wrt_x"),
    (-0.5 * (1 - np.tanh(1.0) ** 2) * (1 - np.tanh(np.tanh(1.0)) ** 2), "w_neg_grad_negative",
     "tanh_count"),  # a second tanh for |x| = 0.5
])
def test_w6_each_slip_is_named(given, part, code):
    result = ex.W6(**{part: given})
    assert not result.ok and diagnoses(result)[part] == code, result


def test_w6_a_computed_zero_for_the_branch_that_did_not_run_is_wrong():
    result = ex.W6(w_neg_grad=0.0)
    assert not result.ok and status("W6") == "in progress"


# -- T3: the record after each pass, and an order -------------------------------------------


def t3_old_tokens():
    """The old cell with its two blanks filled: h = h * w, order = topological_order(...)."""
    w = ag.tensor(0.9, requires_grad=True)
    h = ag.tensor(1.0, requires_grad=True)
    for _ in range(3):
        h = h * w
    graph = capture(h)
    return {"graph": graph, "order": topological_order([o.id for o in graph.ops], graph.edges)}


def t3_designed():
    w = ag.tensor(0.7, requires_grad=True)
    h = ag.tensor([1.0, -1.0], requires_grad=True)
    sizes = []
    for _ in range(3):
        h = ag.sin(h * w) + h  # three ops per pass
        sizes.append(len(capture(h).ops))
    graph = capture(h)
    return {"graph": graph, "order": topological_order([o.id for o in graph.ops], graph.edges),
            "sizes": sizes}


def test_t3_old_tokens_no_longer_solve_it():
    result = ex.T3(verdict=False, because="an order exists", experiment=t3_old_tokens)
    assert not result.ok and result.diagnosis == "experiment"
    assert status("T3") != "solved"


def test_t3_a_designed_experiment_solves_it_and_sizes_grow_by_a_pass():
    assert t3_designed()["sizes"] == [3, 6, 9]  # by hand: mul, sin, add per pass
    result = ex.T3(verdict=False, because="each pass records new ops", experiment=t3_designed)
    assert result.ok, result
    assert status("T3") == "solved"


def test_t3_a_flipped_verdict_is_not_solving():
    assert not ex.T3(verdict=True, because="a loop", experiment=t3_designed).ok
    assert ex.T3(verdict=False, because="new ops", experiment=t3_designed).diagnosis \
        == "elimination"
    assert status("T3") == "solved after seeing the solution"


# -- W1: close a cycle yourself, and what no order can place ---------------------------------


def w1_old_tokens():
    """The old cell with its blank filled: the lesson's cycle, and what topological_order
    said about it."""
    edges = [("x", "mul"), ("mul", "y"), ("y", "add"), ("add", "z"), ("z", "mul")]
    try:
        result = topological_order([n for e in edges for n in e], edges)
    except CycleError as error:
        result = error
    return {"edges": edges, "result": result}


def w1_designed(closing=("add", "tanh"), unplaced=("tanh", "add", "out")):
    """x -> tanh -> add -> out, with x feeding add too; add -> tanh closes tanh, add; out
    waits for add, so it is never placed either; x still is (by hand)."""
    edges = [("x", "tanh"), ("tanh", "add"), ("x", "add"), ("add", "out")]
    try:
        result = topological_order([n for e in edges for n in e], [*edges, closing])
    except CycleError as error:
        result = error
    return {"edges": edges, "closing_edge": closing, "result": result,
            "unplaced": set(unplaced)}


def test_w1_old_tokens_no_longer_solve_it():
    result = ex.W1(verdict=False, because="no node can come first", experiment=w1_old_tokens)
    assert not result.ok and result.diagnosis == "experiment"
    assert status("W1") != "solved"


def test_w1_a_designed_experiment_solves_it():
    result = ex.W1(verdict=False, because="no node of a cycle can go first",
                   experiment=w1_designed)
    assert result.ok, result
    assert status("W1") == "solved"


def test_w1_copying_the_cycle_from_the_error_is_named():
    """The error names the cycle; the nodes it feeds are the learner's to work out."""
    message = str(w1_designed()["result"])
    assert "add -> tanh -> add" in message and "out" not in message.split(";")[0]
    result = ex.W1(verdict=False, because="x",
                   experiment=lambda: w1_designed(unplaced=("tanh", "add")))
    assert not result.ok and "not every node that can never be placed" in result.message


def test_w1_an_edge_that_points_forward_closes_no_cycle():
    result = ex.W1(verdict=False, because="x",
                   experiment=lambda: w1_designed(closing=("x", "out"), unplaced=()))
    assert not result.ok and "makes no cycle" in result.message


def test_a_cycle_with_a_node_downstream_is_named_not_a_stop_iteration():
    """topological_order raised StopIteration when a node fed by the cycle was left over."""
    edges = [("x", "y"), ("y", "z"), ("z", "x"), ("y", "b")]  # b: first by name, not on it
    with pytest.raises(CycleError, match="the graph has a cycle: x -> y -> z -> x;"):
        topological_order(["b", "x", "y", "z"], edges)


# -- T7: two inputs, one upstream gradient, and a backward without the saved values ---------


def t7_old_tokens():
    """The old cell with its two blanks filled."""
    x = ag.tensor([-2.0, 0.0, 3.0], requires_grad=True)
    y = ag.sigmoid(x)
    kept = saved_bytes(y)
    y.sum().backward()
    error = None
    try:
        y.sum().backward()
    except RuntimeError as caught:
        error = caught
    return {"saved_bytes": kept, "error": error}


def t7_designed(op=ag.sigmoid):
    grads = []
    g = np.array([0.5, -1.0])
    for values in ([0.0, 1.0], [2.0, -3.0]):
        x = ag.tensor(values, requires_grad=True)
        y = op(x)
        kept = saved_bytes(y)
        y.backward(g)
        grads.append(x.grad)
    error = None
    try:
        y.backward(g)
    except RuntimeError as caught:
        error = caught
    return {"saved_bytes": kept, "grads": grads, "error": error}


def test_t7_old_tokens_no_longer_solve_it():
    result = ex.T7(verdict=True, because="it is freed", experiment=t7_old_tokens)
    assert not result.ok and result.diagnosis == "experiment"
    assert status("T7") != "solved"


def test_t7_a_designed_experiment_solves_it():
    data = t7_designed()
    s = [1 / (1 + np.exp(-np.array(v))) for v in ([0.0, 1.0], [2.0, -3.0])]
    for grad, sig in zip(data["grads"], s):  # by hand: g · σ(1 − σ), different per input
        assert np.allclose(grad.numpy(), np.array([0.5, -1.0]) * sig * (1 - sig))
    assert data["saved_bytes"] == 2 * 8  # sigmoid keeps its output: two float64 values
    result = ex.T7(verdict=True, because="same g, other x, other gradient",
                   experiment=t7_designed)
    assert result.ok, result
    assert status("T7") == "solved"


def test_t7_an_op_whose_backward_reads_nothing_certifies_no_verdict():
    """A control: on x + 1 the same g gives the same gradient and nothing is saved, so the
    experiment does not speak of a backward that reads forward values."""
    for verdict in (True, False):
        result = ex.T7(verdict=verdict, because="x",
                       experiment=lambda: t7_designed(op=lambda x: x + 1.0))
        assert not result.ok and result.diagnosis == "experiment"
    assert status("T7") != "solved"
