"""Engine invariants: how gradients accumulate, what is recorded and saved, when it
is released, and the order and bookkeeping of the reverse sweep.

Tests marked "every op" run over the whole op table of test_op_gradients.py.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from op_table import CASES, case_ids, draw_upstream, run_engine
from strategies import PROPERTY_SETTINGS

import autograd_core as ag
from autograd_core.recording.node import Node
from autograd_core.tools import graph

TABLE_SETTINGS = settings(PROPERTY_SETTINGS, max_examples=4)
SECOND_BACKWARD = "backward through the graph a second time"


def _draw_run(case, data):
    """Draw an example of ``case`` and run it: (example, leaves, outputs, upstream)."""
    example = data.draw(case.examples, label="example")
    leaves, outputs = run_engine(case, example)
    return example, leaves, outputs, draw_upstream(data, outputs)


def _grads(leaves) -> list:
    return [np.array(x.grad.numpy()) for x in leaves]


# -- accumulation -------------------------------------------------------------------------
def test_fan_out_sums_the_gradients_of_every_use():
    values = np.array([[-0.5, 0.25], [1.0, 2.0]])
    v = np.array([[1.0, -2.0], [0.5, 3.0]])
    x = ag.tensor(values, requires_grad=True)
    y = ag.exp(x) + ag.tanh(x)  # x feeds two ops
    steps = list(graph.backward_steps(y, v))
    np.testing.assert_allclose(x.grad.numpy(), v * (np.exp(values) + 1 - np.tanh(values) ** 2))
    to_x = [s for step in steps for s in step.sent if s.target is x]
    assert [s.accumulated for s in to_x] == [False, True]
    np.testing.assert_array_equal(to_x[1].total, to_x[1].previous + to_x[1].grad)


def test_fan_out_at_an_intermediate_node_is_summed_before_its_step():
    x = ag.tensor([0.5, -1.0], requires_grad=True)
    h = x * 2.0
    y = (ag.exp(h) + ag.tanh(h)).sum()
    steps = list(graph.backward_steps(y))
    into_h = [s for step in steps for s in step.sent if s.target is h.grad_fn]
    h_step = next(step for step in steps if step.node is h.grad_fn)
    assert [s.accumulated for s in into_h] == [False, True]
    np.testing.assert_array_equal(h_step.grad_output, into_h[1].total)
    hv = 2.0 * np.array([0.5, -1.0])
    np.testing.assert_allclose(x.grad.numpy(), 2.0 * (np.exp(hv) + 1 - np.tanh(hv) ** 2))


def test_gradients_accumulate_into_grad_until_it_is_reset():
    x = ag.tensor([1.0, 2.0], requires_grad=True)
    (x * 3.0).sum().backward()
    (x * x).sum().backward()  # a second, separate graph: adds to .grad
    np.testing.assert_array_equal(x.grad.numpy(), [3.0 + 2.0, 3.0 + 4.0])
    x.grad = None
    (x * x).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [2.0, 4.0])


def test_an_unused_input_keeps_grad_none():
    """Convention (PyTorch's): only leaves the output depends on through recorded ops
    receive a ``.grad``; any other leaf keeps ``None``. A leaf that is used, even if
    its gradient happens to be zero, gets an array of zeros."""
    x = ag.tensor([1.0, 2.0], requires_grad=True)
    unused = ag.tensor([3.0, 4.0], requires_grad=True)
    zero_weighted = ag.tensor([5.0, 6.0], requires_grad=True)
    frozen = ag.tensor([7.0, 8.0])
    (x * frozen + zero_weighted * 0.0).sum().backward()
    assert unused.grad is None and frozen.grad is None
    np.testing.assert_array_equal(zero_weighted.grad.numpy(), [0.0, 0.0])
    np.testing.assert_array_equal(x.grad.numpy(), [7.0, 8.0])


def test_a_python_number_is_a_constant_not_a_graph_node():
    x = ag.tensor([1.0, 2.0], requires_grad=True)
    y = 2.5 * x + np.array([1.0, 1.0])
    mul = y.grad_fn.edges[0]
    assert isinstance(mul, Node) and mul.edges == (None, x)
    assert y.grad_fn.edges[1] is None
    kinds = {(t.kind, t.label) for t in graph.capture(y).tensors}
    assert ("constant", "2.5") in kinds and ("constant", None) in kinds  # number, array
    y.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [2.5, 2.5])


# -- detach and recording modes ----------------------------------------------------------
def test_detach_keeps_the_values_and_cuts_the_gradient():
    x = ag.tensor([1.0, -2.0, 3.0], requires_grad=True)
    h = x * 2.0
    d = h.detach()
    assert np.shares_memory(d.numpy(), h.numpy())
    np.testing.assert_array_equal(d.numpy(), h.numpy())
    assert d.grad_fn is None and not d.requires_grad and d.is_leaf
    (x * x.detach()).sum().backward()  # d/dx of x * c with c = x held constant
    np.testing.assert_array_equal(x.grad.numpy(), [1.0, -2.0, 3.0])


@pytest.mark.parametrize("case", CASES, ids=case_ids)
@TABLE_SETTINGS
@given(data=st.data())
def test_no_grad_records_and_saves_nothing_for_every_op(case, data):
    example = data.draw(case.examples, label="example")
    with ag.no_grad():
        leaves, outputs = run_engine(case, example)
    assert all(x.requires_grad for x in leaves)
    for y in outputs:
        assert y.grad_fn is None and not y.requires_grad
        assert graph.saved_bytes(y) == 0 and graph.capture(y).ops == ()


def _double(x):
    return x * x


@pytest.mark.parametrize("style", ["context manager", "decorator"])
def test_no_grad_and_enable_grad_nest(style):
    x = ag.tensor([1.0, 2.0], requires_grad=True)
    if style == "context manager":
        with ag.no_grad():
            off = _double(x)
            with ag.enable_grad():
                on = _double(x)
            after = _double(x)
    else:
        @ag.no_grad()
        def outer():
            return _double(x), ag.enable_grad()(_double)(x), _double(x)

        off, on, after = outer()
    assert off.grad_fn is None and not off.requires_grad
    assert after.grad_fn is None
    assert on.requires_grad and on.grad_fn is not None and graph.saved_bytes(on) > 0
    assert ag.is_grad_enabled()
    on.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [2.0, 4.0])


def test_grad_mode_is_restored_when_the_block_raises():
    with pytest.raises(ValueError), ag.no_grad():
        raise ValueError("boom")
    assert ag.is_grad_enabled()


# -- saved tensors ----------------------------------------------------------------------
@pytest.mark.parametrize("case", CASES, ids=case_ids)
@TABLE_SETTINGS
@given(data=st.data())
def test_every_op_saves_exactly_what_its_backward_reads(case, data):
    """The saved-tensor record of each node equals the names its backward loads."""
    _, _, outputs, upstream = _draw_run(case, data)
    for i, (y, v) in enumerate(zip(outputs, upstream, strict=True)):
        for step in graph.backward_steps(y, v, retain_graph=i < len(outputs) - 1):
            assert set(step.reads) == set(step.node.saved), (
                f"{step.node.op.name} saved {sorted(step.node.saved)} but its backward "
                f"read {sorted(set(step.reads))}")


@pytest.mark.parametrize("case", CASES, ids=case_ids)
@TABLE_SETTINGS
@given(data=st.data())
def test_every_op_releases_saved_tensors_after_backward(case, data):
    """After a backward without retain_graph nothing is held, the capture says
    released, and a second backward through a graph that saved something raises.
    A graph that saved nothing (add, sum, reshape, ...) can be walked again, as in
    PyTorch: its second backward just accumulates."""
    _, leaves, outputs, upstream = _draw_run(case, data)
    saved_any = [bool(graph.capture(y).saved) for y in outputs]
    for y, v in zip(outputs, upstream, strict=True):  # the table's outputs share no node
        y.backward(v)
    first = _grads(leaves)
    for y, v, saved in zip(outputs, upstream, saved_any, strict=True):
        assert graph.saved_bytes(y) == 0
        assert all(s.released and s.nbytes == 0 for s in graph.capture(y).saved)
        if saved:
            with pytest.raises(RuntimeError, match=SECOND_BACKWARD):
                y.backward(v)
        else:
            y.backward(v)
    if not any(saved_any):
        for g, g1 in zip(_grads(leaves), first, strict=True):
            np.testing.assert_array_equal(g, 2 * g1)


def test_second_backward_error_says_how_to_fix_it():
    x = ag.tensor([1.0, 2.0], requires_grad=True)
    y = ag.exp(x).sum()
    y.backward()
    with pytest.raises(RuntimeError, match="retain_graph=True") as caught:
        y.backward()
    assert "exp" in str(caught.value)


@pytest.mark.parametrize("case", CASES, ids=case_ids)
@TABLE_SETTINGS
@given(data=st.data())
def test_two_retained_backwards_give_exactly_twice_the_gradient(case, data):
    """Bit for bit 2x where a leaf gets one contribution per backward. A leaf used
    several times (fan-out) gets its second pass added term by term to the first
    total, so there the sum is 2x up to rounding."""
    _, leaves, outputs, upstream = _draw_run(case, data)
    contributions = {id(x): 0 for x in leaves}
    for y, v in zip(outputs, upstream, strict=True):
        for step in graph.backward_steps(y, v, retain_graph=True):
            for sent in step.sent:
                if id(sent.target) in contributions:
                    contributions[id(sent.target)] += 1
    first = _grads(leaves)
    for y, v in zip(outputs, upstream, strict=True):
        y.backward(v, retain_graph=True)
    for x, g, g1 in zip(leaves, _grads(leaves), first, strict=True):
        if contributions[id(x)] == 1:
            np.testing.assert_array_equal(g, 2 * g1)
        else:
            np.testing.assert_allclose(g, 2 * g1, rtol=1e-14, atol=1e-300)


# -- the recorded graph -------------------------------------------------------------------
@pytest.mark.parametrize("case", CASES, ids=case_ids)
@TABLE_SETTINGS
@given(data=st.data())
def test_capture_is_the_same_data_for_the_same_program(case, data):
    example = data.draw(case.examples, label="example")
    first = [graph.capture(y) for y in run_engine(case, example)[1]]
    again = [graph.capture(y) for y in run_engine(case, example)[1]]
    assert first == again
    for g in first:
        assert [op.id for op in g.ops] == [f"op{i}" for i in range(len(g.ops))]
        assert [t.id for t in g.tensors] == [f"t{i}" for i in range(len(g.tensors))]


def test_reverse_sweep_visits_each_node_after_all_its_consumers():
    """A diamond with uneven arms: x -> a -> exp -> d and a -> tanh -> tanh -> d."""
    x = ag.tensor([0.3, -0.7], requires_grad=True)
    a = x * 2.0
    d = ag.exp(a) + ag.tanh(ag.tanh(a))
    y = d.sum()
    steps = list(graph.backward_steps(y))
    order = [step.node for step in steps]
    assert len(order) == len(set(order)) == 6  # mul, exp, tanh, tanh, add, sum: once each
    position = {node: i for i, node in enumerate(order)}
    for consumer in order:
        for producer in consumer.edges:
            if isinstance(producer, Node):
                assert position[producer] > position[consumer], (
                    f"{producer.op.name} visited before its consumer {consumer.op.name}")
    av = 2.0 * x.numpy()
    expected = 2.0 * (np.exp(av) + (1 - np.tanh(np.tanh(av)) ** 2) * (1 - np.tanh(av) ** 2))
    np.testing.assert_allclose(x.grad.numpy(), expected)


@pytest.mark.parametrize("bias_shape", [(2,), (1, 2)])
def test_broadcasting_is_undone_in_the_step_that_broadcast(bias_shape):
    """In x @ W + b, the add step sums b's (4, 2) gradient down to b's shape."""
    rng = np.random.default_rng(0)
    x = ag.tensor(rng.normal(size=(4, 3)), requires_grad=True)
    w = ag.tensor(rng.normal(size=(3, 2)), requires_grad=True)
    b = ag.tensor(rng.normal(size=bias_shape), requires_grad=True)
    v = rng.normal(size=(4, 2))
    steps = {step.node.op.name: step for step in graph.backward_steps(x @ w + b, v)}
    to_input = {s.input_index: s for s in steps["add"].sent}
    assert to_input[1].target is b and to_input[1].unbroadcast_from == (4, 2)
    assert to_input[1].grad.shape == bias_shape
    assert to_input[0].unbroadcast_from is None
    assert all(s.unbroadcast_from is None for s in steps["matmul"].sent)
    np.testing.assert_allclose(b.grad.numpy(), v.sum(axis=0).reshape(bias_shape))


def test_a_saved_zero_dimensional_result_counts_its_bytes():
    # NumPy returns a scalar (np.float64), not an ndarray, for an op on 0-d input.
    y = ag.tanh(ag.tensor(2.0, requires_grad=True))
    assert y.grad_fn.saved["out"].nbytes == 8
    assert graph.saved_bytes(y) == 8


def test_an_op_without_a_backward_rule_fails_with_its_name():
    from autograd_core.recording.node import Function

    class NoRule(Function):
        name = "no_rule"

        @staticmethod
        def forward(ctx, a):
            return a * 2

    x = ag.tensor([1.0, 2.0], requires_grad=True)
    with pytest.raises(NotImplementedError, match="'no_rule' defines no backward rule"):
        NoRule.apply(x).sum().backward()
