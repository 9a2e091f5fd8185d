"""The inspector's text for every kind of node, checked against the engine itself."""

from __future__ import annotations

import numpy as np
import pytest

import autograd_core as ag
from widgets.inspector import inspect_node
from widgets.live import live
from widgets.replay import record
from widgets.summary import full, summarize


@pytest.fixture
def program():
    """A two-module model; returns (replay, value summaries, the parameters' real
    gradients from a separate plain backward of the same program)."""
    def run():
        ag.manual_seed(0)
        model = ag.nn.Sequential(ag.nn.Linear(2, 3), ag.nn.ReLU())
        x = ag.tensor([[1.0, -2.0], [0.5, 0.25]], name="x")
        return model, model(x).sum()

    model, loss = run()
    loss.backward()
    grads = {name: p.grad.numpy().copy() for name, p in model.named_parameters()}
    _, loss = run()
    view = live(loss, "test")
    values = {tid: summarize(a) for tid, a in view.values.items()}
    return record(loss, view=view), values, grads


def tensor_id(replay, name):
    return next(t.id for t in replay.graph.tensors if t.name == name)


def test_a_leaf_shows_its_gradient_as_the_engine_computed_it(program):
    replay, values, grads = program
    tid = tensor_id(replay, "0.weight")
    before = inspect_node(replay, tid, 0, values=values)
    assert "nothing yet" in before and "(3, 2) float64" in before
    after = inspect_node(replay, tid, len(replay), values=values)
    assert full(grads["0.weight"]) in after.replace("&#x27;", "'")
    assert "read by</th><td>op0" in after


def test_a_gradient_sent_at_this_step_stays_hidden_in_predict_mode(program):
    replay, values, _ = program
    tid = tensor_id(replay, "0.bias")
    k = next(s.number for s in replay.steps if any(r.tensor == tid for r in s.sent))
    hidden = inspect_node(replay, tid, k, values=values, revealed=False)
    assert "predict it first" in hidden and "<pre" not in hidden.split("gradient")[-1]
    assert "predict it first" not in inspect_node(replay, tid, k, values=values)


def test_an_op_shows_its_rule_module_saves_and_when_it_is_visited(program):
    replay, values, _ = program
    relu = next(o for o in replay.graph.ops if o.op == "relu")
    visit = next(s.number for s in replay.steps if s.op == relu.id)
    text = inspect_node(replay, relu.id, visit - 1, values=values)
    assert relu.rule.replace("<", "&lt;") in text
    assert "module</th><td>1" in text and "&#x27;mask&#x27;" in text
    assert f"visited at step {visit} (still to come)" in text
    assert "(done)" in inspect_node(replay, relu.id, visit, values=values)


def test_an_array_an_op_made_and_saved_says_who_saved_it_and_when_it_went(program):
    replay, values, _ = program
    relu = next(o for o in replay.graph.ops if o.op == "relu")
    mask = f"{relu.id}_mask"
    text = inspect_node(replay, mask, len(replay), values=values)
    visit = next(s.number for s in replay.steps if s.op == relu.id)
    assert f"{relu.id} (relu) as &#x27;mask&#x27;" in text
    assert f"at step {visit}" in text and "bool" in text


def test_a_tensor_saved_by_an_op_lists_the_bytes_and_the_release(program):
    replay, values, _ = program
    x = tensor_id(replay, "x")
    linear = next(o for o in replay.graph.ops if o.op == "linear")
    before = inspect_node(replay, x, 0, values=values)
    saved = next(s for s in linear.saved if s.tensor == x)
    assert f"{linear.id} as &#x27;{saved.name}&#x27; ({saved.buffer_nbytes} B)" in before
    assert "released at step" in inspect_node(replay, x, len(replay), values=values)
    assert "constant" in before and "does not require grad" in before


def test_modules_and_unknown_ids_get_a_sentence(program):
    replay, values, _ = program
    linear = next(o for o in replay.graph.ops if o.op == "linear")
    assert linear.id in inspect_node(replay, "m_0", 1, values=values)
    assert "Click a node" in inspect_node(replay, "nonsense", 1, values=values)


def test_values_are_optional():
    x = ag.tensor(np.ones(2), requires_grad=True)
    replay = record((x * 2).sum())
    assert "values" not in inspect_node(replay, "t0", 1)


def _bias_before_a_norm(normalise: bool):
    """A bias added before a normalisation over the batch gets a gradient that is zero
    up to rounding (the normalisation removes anything added to every row alike)."""
    g = ag.Generator(3)
    x = ag.randn(8, 100, generator=g)
    b = ag.randn(100, generator=g, requires_grad=True).named("b")
    h = x + b
    if normalise:
        h = (h - h.mean(dim=0)) / ag.sqrt(h.var(dim=0) + 1e-5)
    loss = (h * ag.randn(8, 100, generator=g)).sum()
    return loss, b


def test_a_gradient_that_is_rounding_noise_shows_as_zero_in_the_panels_and_inspector():
    """The noise's last bits depend on the CPU; measured against the upstream gradient
    terms it was summed from, every statistic reads 0, on every machine."""
    from widgets.panels import step_panel

    loss, b = _bias_before_a_norm(normalise=True)
    replay = record(loss)
    k, sent = next((step.number, s) for step in replay.steps for s in step.sent
                   if s.to_leaf and replay.tensors[s.tensor].name == "b")
    assert 0 < np.abs(sent.grad).max() < 1e-13  # what the engine computed: noise, not 0
    zero = "(100,) min 0 max 0 mean 0 norm 0"
    assert zero in step_panel(replay, k)
    assert zero in inspect_node(replay, sent.tensor, k)
    assert zero in replay.grad_text(sent.tensor, k)
    from widgets.graph_table import replay_table

    assert zero in replay_table(replay, k)


def test_a_real_gradient_of_the_same_shape_keeps_its_digits():
    loss, b = _bias_before_a_norm(normalise=False)
    replay = record(loss)
    text = replay.grad_text(replay.graph.id_of(b) or next(
        t.id for t in replay.graph.tensors if t.name == "b"), len(replay))
    assert "mean 0 " not in text and "norm 0" not in text, text
