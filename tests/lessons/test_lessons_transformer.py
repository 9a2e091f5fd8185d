"""Lesson 15's helpers (widgets/lessons/transformer.py): the reversal data, the small GPT
and its recomputation plans, what a block saves against the published formula, and the
attention maps the lesson draws."""

from __future__ import annotations

import numpy as np
import pytest

import autograd_core as ag
from autograd_core.tools import graph
from widgets.lessons import transformer as T


def test_a_reversal_sequence_is_digits_separator_reversal_and_only_the_reversal_is_graded():
    x, y = T.reversal_batch(5, seed=3)
    digits = np.random.default_rng(3).integers(0, 10, (5, T.DIGITS))
    np.testing.assert_array_equal(x[:, :T.DIGITS], digits)
    assert (x[:, T.DIGITS] == T.SEPARATOR).all()
    np.testing.assert_array_equal(x[:, T.DIGITS + 1:], digits[:, ::-1][:, :-1])
    assert (y[:, :T.DIGITS] == T.IGNORE).all()
    np.testing.assert_array_equal(y[:, T.DIGITS:], digits[:, ::-1])


def test_the_model_refuses_a_sequence_longer_than_its_context_with_a_sentence():
    model = T.TinyGPT(generator=ag.Generator(0))
    with pytest.raises(ValueError, match="at most 12"):
        model(np.zeros((1, 13), dtype=np.int64))
    with pytest.raises(ValueError, match="'core' is not a part"):
        model.blocks[0].recompute = ["core"]


def test_every_plan_computes_the_same_scores():
    x, _ = T.reversal_batch(3, seed=1)
    model = T.TinyGPT(generator=ag.Generator(0))
    with ag.no_grad():
        plain = model(x).numpy()
    for parts in T.PARTS:
        model.plan([[parts], [parts]])
        np.testing.assert_array_equal(model(x).numpy(), plain)


def test_training_follows_the_schedule_and_lowers_the_loss():
    model = T.TinyGPT(generator=ag.Generator(0))
    history = T.train_reversal(model, steps=80, warmup=10)
    lrs = [h["lr"] for h in history]
    assert lrs[0] == pytest.approx(3e-3 / 11)                   # (t + 1) / (warmup + 1)
    assert max(lrs) == pytest.approx(3e-3) and lrs.index(max(lrs)) == 10
    assert lrs[-1] < 1e-4
    assert history[-1]["loss"] < history[0]["loss"] / 2


def test_the_attention_maps_are_causal_rows_of_weights():
    model = T.TinyGPT(generator=ag.Generator(0))
    w = T.attention_weights(model, [3, 1, 4, 1, 5, 9], layer=1)
    assert w.shape == (4, T.CONTEXT, T.CONTEXT)
    np.testing.assert_allclose(w.sum(axis=-1), 1, rtol=1e-6)
    assert (w[:, np.triu_indices(T.CONTEXT, 1)[0], np.triu_indices(T.CONTEXT, 1)[1]] == 0).all()
    fig = T.attention_map(model, [3, 1, 4, 1, 5, 9])
    assert "314159" in fig.alt and len([a for a in fig.axes if a.get_visible()]) == 4


def test_the_saved_rows_add_up_to_what_the_graph_holds_without_the_weights():
    saves = T.block_saves(2, 16, 32, 4)
    block = T.GPTBlock(32, 4, generator=ag.Generator(0))
    x = ag.randn(2, 16, 32, generator=ag.Generator(1), dtype=ag.float32, requires_grad=True)
    held = graph.capture(block(x).sum()).saved_bytes
    weights = sum(p.numpy().nbytes for p in block.parameters() if p.ndim == 2) + sum(
        p.numpy().nbytes for name, p in block.named_parameters() if name.endswith("ln1.weight")
        or name.endswith("ln2.weight"))  # layer norm reads its weight, not its bias
    assert saves.total == held - weights
    assert sum(r.bytes == 0 for r in saves.rows) == 3              # k, v inputs; weights @ v


def test_the_formula_table_adds_up_to_the_formula_and_to_the_measurement():
    saves = T.block_saves(2, 16, 32, 4)
    table = T.formula_table(saves).splitlines()
    totals = table[-2].split()
    assert int(totals[-2].replace(",", "")) == T.korthikanti_bytes(16, 2, 32, 4)
    assert int(totals[-1].replace(",", "")) == saves.total
    assert T.korthikanti_bytes(16, 2, 32, 4, bytes_per_value=4) == 2 * T.korthikanti_bytes(
        16, 2, 32, 4)


def test_full_recomputation_halves_the_peak_and_repeats_the_forward():
    none = T.recompute_step([[], []])
    full = T.recompute_step([["block"], ["block"]])
    assert none.extra_forward_work == 0 and none.same_gradients()
    assert full.same_gradients() and full.peak < 0.6 * none.peak
    assert 0.95 < full.extra_forward_work <= 1.0
    text = T.strategies(none, full)
    assert "selective" in text and "2.7%" in text and "70%" in text
