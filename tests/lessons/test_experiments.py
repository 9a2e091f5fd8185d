"""The lesson experiments (widgets/lessons: modes, floats, graphs, symbolic), and the
claims they stand for:

* T5: finite differences are not autograd: their error against the exact gradient
  is a V in h (truncation, then rounding), higher in float32;
* W6/L3: define-by-run records what ran; the untaken branch gets no gradient;
* L6/L4: seeded generators reproduce draws and masks, yet the order of a float sum
  changes its last bits;
* T3/W1: a graph with a cycle has no topological order and is rejected; every
  graph the engine records has one;
* T4/S3: the written-out symbolic derivative outgrows the recorded graph.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from op_table import CASES, as_outputs, case_ids, run_engine
from strategies import PROPERTY_SETTINGS, arrays

import autograd_core as ag
from autograd_core import nn
from autograd_core.tools import graph
from autograd_core.tools.graph import CycleError, topological_order
from widgets.lessons import floats, modes
from widgets.lessons.graphs import _define_by_run


# -- T5: finite differences ---------------------------------------------------------------------
def _exact_slope(x: float) -> float:
    """d/dx tanh(x)·eˣ by hand: (1 - tanh²x)·eˣ + tanh(x)·eˣ."""
    t = math.tanh(x)
    return (1 - t * t) * math.exp(x) + t * math.exp(x)


def test_finite_difference_error_is_a_v_lower_and_further_left_in_float64():
    result = modes._finite_difference_errors()
    h = result["h"]
    assert h[0] == pytest.approx(1e-1) and h[-1] == pytest.approx(1e-12)
    assert result["exact"] == pytest.approx(_exact_slope(0.7), rel=1e-14)
    best = {}
    for dtype in ("float32", "float64"):
        err = result[dtype]
        k = int(np.argmin(err))
        best[dtype] = (h[k], err[k])
        assert err[0] > 100 * err[k] and err[-1] > 100 * err[k], dtype  # both arms of the V
    # theory for central differences: best h ~ eps^(1/3), error ~ eps^(2/3)
    assert 1e-4 <= best["float32"][0] <= 3e-2 and best["float32"][1] < 1e-4
    assert 1e-7 <= best["float64"][0] <= 1e-3 and best["float64"][1] < 1e-9
    # in float32, x + h == x once h is below half an ulp of x: the slope is 0
    assert result["float32"][-1] == pytest.approx(abs(result["exact"]))


@pytest.mark.parametrize("scheme, order", [("central", 2), ("forward", 1)])
def test_truncation_arm_falls_with_the_order_of_the_scheme(scheme, order):
    hs = [1e-1, 1e-2]
    err = modes._finite_difference_errors(hs=hs, dtypes=(np.float64,),
                                               scheme=scheme)["float64"]
    slope = math.log10(err[0] / err[1])  # decades of error per decade of h
    assert slope == pytest.approx(order, abs=0.15)


# -- W6, L3: define-by-run ---------------------------------------------------------------------
def test_python_control_flow_records_a_different_graph_per_input():
    positive, negative = _define_by_run((2.5, -0.5))
    assert positive.ops == ("mul", "tanh", "tanh")  # int(2.5) = 2 loop turns
    assert negative.ops == ("mul", "tanh")
    # the branch that did not run is not in the graph: no gradient at all (None, not 0)
    assert positive.grad_w_neg is None and negative.grad_w_pos is None
    # the branch that ran gets the chain rule of what ran, computed here by hand
    t1 = math.tanh(1.5 * 2.5)
    assert positive.grad_w_pos == pytest.approx(
        2.5 * (1 - t1 ** 2) * (1 - math.tanh(t1) ** 2), rel=1e-12)
    assert negative.grad_w_neg == pytest.approx(-0.5 * (1 - math.tanh(1.0) ** 2), rel=1e-12)


# -- L6, L4: reproducibility --------------------------------------------------------------------
def test_summing_the_same_float32_numbers_in_another_order_changes_the_last_bits():
    result = floats.summation_order(n=10_000, seed=0)
    numbers = np.random.default_rng(0).standard_normal(10_000).astype(np.float32)
    by_hand = np.float32(0)
    for v in numbers:  # one float32 addition at a time
        by_hand = np.float32(by_hand + v)
    assert result.values["in order"] == by_hand
    assert result.exact == pytest.approx(math.fsum(numbers.astype(np.float64)))
    assert result.difference != 0 and result.ulps > 0
    assert result.values["in order"] != result.values["reversed"]
    # every order is close to the exact sum: only the last bits moved
    for value in result.values.values():
        assert abs(float(value) - result.exact) < 1e-5 * 10_000


def test_seeded_generators_reproduce_draws_masks_and_initial_weights():
    def draws(seed):
        gen = ag.Generator(seed)
        layer = nn.Linear(3, 4, generator=gen)
        drop = nn.Dropout(0.5, generator=ag.Generator(seed))
        return [ag.randn(5, generator=gen).numpy(), layer.weight.numpy().copy(),
                drop(ag.ones(20)).numpy()]

    for a, b in zip(draws(7), draws(7)):
        np.testing.assert_array_equal(a, b)
    assert not np.array_equal(draws(7)[2], draws(8)[2])  # another seed, another mask
    ag.manual_seed(3)
    first = ag.randn(4).numpy()
    ag.manual_seed(3)
    np.testing.assert_array_equal(first, ag.randn(4).numpy())


def test_two_calls_share_the_graph_but_not_the_values_or_masks():
    """L4: same program, two inputs: same structure, different activations and masks."""
    model = nn.Sequential(nn.Linear(3, 3, generator=ag.Generator(0)), nn.Dropout(0.5))
    a = model(ag.randn(2, 3, requires_grad=True))
    b = model(ag.randn(2, 3, requires_grad=True))
    ga, gb = graph.capture(a), graph.capture(b)
    assert [o.op for o in ga.ops] == [o.op for o in gb.ops]
    assert not np.array_equal(a.numpy(), b.numpy())


# -- T3, W1: cycles -------------------------------------------------------------------------------
@pytest.mark.parametrize("nodes, edges, cycle", [
    (["a", "b"], [("a", "b"), ("b", "a")], "a -> b -> a"),
    (["x", "y", "z"], [("x", "y"), ("y", "z"), ("z", "x")], "x -> y -> z -> x"),
    (["w"], [("w", "w")], "w -> w"),
    (["in", "h", "out"], [("in", "h"), ("h", "out"), ("out", "h")], "h -> out -> h"),
])
def test_a_hand_made_cyclic_graph_has_no_order_and_is_rejected(nodes, edges, cycle):
    with pytest.raises(CycleError, match=f"the graph has a cycle: {cycle};"):
        topological_order(nodes, edges)


@pytest.mark.parametrize("case", CASES, ids=case_ids)
@PROPERTY_SETTINGS
@given(data=st.data())
def test_every_recorded_graph_has_a_topological_order(case, data):
    example = data.draw(case.examples, label="example")
    _, outputs = run_engine(case, example)
    for y in as_outputs(outputs):
        g = graph.capture(y)
        ids = [t.id for t in g.tensors] + [o.id for o in g.ops]
        order = {n: i for i, n in enumerate(topological_order(ids, g.edges))}
        assert len(order) == len(ids)
        assert all(order[a] < order[b] for a, b in g.edges)


@PROPERTY_SETTINGS
@given(x=arrays((3,)), depth=st.integers(1, 6))
def test_nested_programs_record_three_ops_per_level_in_execution_order(x, depth):
    g = graph.capture(modes.nested(ag.tensor(x, requires_grad=True), depth))
    assert [o.op for o in g.ops] == ["mul", "add", "tanh"] * depth
    ids = [t.id for t in g.tensors] + [o.id for o in g.ops]
    assert [i for i in topological_order(ids, g.edges) if i.startswith("op")] == \
        [o.id for o in g.ops]


# -- T4, S3: symbolic vs automatic ---------------------------------------------------------------
@pytest.mark.parametrize("kind", ["reuse", "chain"])
def test_recorded_graph_grows_linearly_with_depth(kind):
    sizes = modes.recorded_graph_sizes([1, 2, 4, 8], kind)
    assert sizes["ops"].tolist() == [3, 6, 12, 24]
    # reuse: a new tensor per op; chain: w and b are two shared leaves
    assert sizes["nodes"].tolist() == [2 * o + (1 if kind == "reuse" else 3)
                                       for o in sizes["ops"].tolist()]


def test_nested_rejects_an_unknown_kind():
    with pytest.raises(ValueError, match="kind must be one of"):
        modes.nested(ag.tensor(1.0), 2, "loop")


def test_written_out_derivative_outgrows_the_graph_and_sharing_closes_the_gap():
    sympy = pytest.importorskip(
        "sympy", reason="sympy is not installed: the symbolic side of T4 is skipped "
        "(install it with: pip install -e '.[lessons]')")
    from widgets.lessons.symbolic import derivative, symbolic_vs_graph

    depths = [1, 2, 3, 4, 5, 6, 7, 8]
    reuse = symbolic_vs_graph(depths, "reuse")
    sym, ops, shared = reuse["symbolic_nodes"], reuse["graph_ops"], reuse["shared_nodes"]
    assert ops.tolist() == [3 * d for d in depths]
    assert all(b > 2 * a for a, b in zip(sym[2:], sym[3:]))  # more than doubles per level
    assert sym[-1] > 100 * ops[-1]
    assert len(set(np.diff(shared[1:]).tolist())) == 1  # shared: a constant step per level
    chain = symbolic_vs_graph([4, 8, 16, 32], "chain")
    growth = chain["symbolic_nodes"][1:] / chain["symbolic_nodes"][:-1]
    assert all(g > 2.5 for g in growth)  # quadratic: doubling d more than doubles it
    assert chain["graph_ops"].tolist() == [12, 24, 48, 96]
    # the symbolic derivative is right: it equals the engine's gradient numerically
    x, w, b = sympy.symbols("x w b")
    for kind in ("reuse", "chain"):
        expr = derivative(4, kind)
        numeric = sympy.lambdify((x, w, b), expr, modules=[{"tanh": np.tanh}, "numpy"])
        xt = ag.tensor(0.3, requires_grad=True)
        modes.nested(xt, 4, kind, w=0.5, b=0.1).backward()
        assert numeric(0.3, 0.5, 0.1) == pytest.approx(xt.grad.item(), rel=1e-12)


def test_a_formula_too_deep_to_write_out_is_refused_with_a_sentence():
    """Beyond depth 14 sympy would take hours on the nested functions that reuse a value (T4
    asks for depths 40 to 60): it says so at once instead of hanging."""
    pytest.importorskip("sympy", reason="sympy is not installed: the symbolic side of T4 is "
                        "skipped (install it with: pip install -e '.[lessons]')")
    from widgets.lessons import symbolic

    for kind in ("reuse", "logistic"):
        with pytest.raises(ValueError, match="too deep to write out"):
            symbolic.derivative(symbolic.MAX_DEPTH + 1, kind)
    assert symbolic.tree_size(symbolic.derivative(3, "reuse")) == 195
    assert symbolic.tree_size(symbolic.derivative(32, "chain")) > 0  # cheap: not refused


def test_expanding_only_makes_the_formula_bigger():
    pytest.importorskip("sympy", reason="sympy is not installed: the symbolic side of T4 is "
                        "skipped (install it with: pip install -e '.[lessons]')")
    from widgets.lessons.symbolic import symbolic_vs_graph

    plain = symbolic_vs_graph([2, 3], "chain")["symbolic_nodes"]
    expanded = symbolic_vs_graph([2, 3], "chain", expand=True)["symbolic_nodes"]
    assert all(e > p for e, p in zip(expanded, plain))
