"""widgets.lessons.memory: the saved-tensor table, dropping saved tensors, weak watches.

Expected values are written from each op's backward rule (what it must read) and from
shapes and dtypes, not from the engine's own byte counts."""

import gc
import json
from pathlib import Path

import numpy as np
import pytest
from solutions import solution_text

import autograd_core as ag
from autograd_core.nn import functional as F
from widgets.lessons.memory import release_saved, saved_table, watch_saved


def small_block(input_requires_grad: bool):
    """x (5, 4) -> linear(W1) -> tanh -> h; y = h + relu(linear(h, W2)); loss = y.sum()."""
    g = np.random.default_rng(0)
    x = ag.tensor(g.standard_normal((5, 4)), requires_grad=input_requires_grad).named("x")
    w1 = ag.tensor(g.standard_normal((8, 4)), requires_grad=True).named("W1")
    w2 = ag.tensor(g.standard_normal((8, 8)), requires_grad=True).named("W2")
    h = ag.tanh(F.linear(x, w1)).named("h")
    return (h + ag.relu(F.linear(h, w2))).sum()


@pytest.mark.parametrize("input_requires_grad, expected", [
    (False, [("linear", "input", "its input x", 5 * 4 * 8),
             ("tanh", "out", "its own output", 5 * 8 * 8),
             ("linear", "weight", "its weight W2", 8 * 8 * 8),
             ("linear", "input", "its input h", 5 * 8 * 8),
             ("relu", "mask", "an array it made (bool)", 5 * 8 * 1),
             ("add", "nothing", "", 0), ("sum", "nothing", "", 0)]),
    (True, [("linear", "weight", "its weight W1", 8 * 4 * 8),
            ("linear", "input", "its input x", 5 * 4 * 8),
            ("tanh", "out", "its own output", 5 * 8 * 8),
            ("linear", "weight", "its weight W2", 8 * 8 * 8),
            ("linear", "input", "its input h", 5 * 8 * 8),
            ("relu", "mask", "an array it made (bool)", 5 * 8 * 1),
            ("add", "nothing", "", 0), ("sum", "nothing", "", 0)]),
])
def test_saved_table_names_what_each_op_keeps(input_requires_grad, expected):
    table = saved_table(small_block(input_requires_grad))
    got = [(op, name, role) for _, op, name, _, _, role, _ in table.rows]
    assert got == [(op, name, role) for op, name, role, _ in expected]
    # h is saved by tanh (its output) and by the second linear (its input): counted once
    h_bytes = 5 * 8 * 8
    assert table.data["total"] == sum(b for *_, b in expected) - h_bytes


def test_release_saved_makes_backward_fail_clearly():
    loss = small_block(False)
    dropped = release_saved(loss)
    assert dropped == ["op0 linear: input", "op1 tanh: out", "op2 linear: weight",
                       "op2 linear: input", "op3 relu: mask"]
    with pytest.raises(RuntimeError, match="second time"):
        loss.backward()


def test_release_saved_of_a_leaf_drops_nothing():
    assert release_saved(ag.tensor([1.0], requires_grad=True)) == []


def test_watch_sees_saved_arrays_die_with_the_graph():
    x = ag.tensor(np.linspace(-1, 1, 6), requires_grad=True)
    w = ag.tensor(np.full(6, 0.5), requires_grad=True)
    loss = ag.tanh(ag.tanh(x * w)).sum()
    watch = watch_saved(loss, exclude=[x, w])  # mul saved x and w: excluded
    assert (watch.watched, watch.alive, watch.alive_bytes) == (2, 2, 2 * 6 * 8)
    kept_number = loss.item()
    del loss
    gc.collect()
    assert watch.alive == 0 and isinstance(kept_number, float)


def test_watch_after_backward_sees_released_arrays():
    x = ag.tensor(np.linspace(-1, 1, 6), requires_grad=True)
    loss = ag.tanh(ag.tanh(x)).sum()
    watch = watch_saved(loss)
    loss.backward()
    assert watch.watched == 2 and watch.alive == 0  # loss is still held; its arrays are not


def test_watch_of_an_unrecorded_output_is_empty():
    with ag.no_grad():
        out = ag.tanh(ag.tensor([1.0, 2.0], requires_grad=True)).sum()
    assert watch_saved(out).watched == 0


# -- lesson 04 and its items: the text, the checks and the stored lesson agree --------------------

LESSON_04 = Path(__file__).resolve().parents[2] / "notebooks" / "04_memory.ipynb"


def _lesson_text(path) -> str:
    return "\n".join("".join(c["source"]) for c in json.loads(path.read_text())["cells"])


def test_s4_the_item_and_lesson_04_agree_that_the_fix_is_to_recompute(tmp_path, monkeypatch):
    """S4 is "I kept only the output to save memory, then ran backward". Keeping the whole
    graph (the plain forward pass, or retain_graph) makes backward run but saves nothing, so
    it is not the fix; recomputing the intermediates when backward needs them is. The check,
    the item's help and lesson 04 all say so."""
    from autograd_core.utils.checkpoint import checkpoint
    from widgets import exercises as ex

    monkeypatch.setenv("AUTOGRAD_LESSONS_PROGRESS", str(tmp_path / "progress.json"))

    def keeps_everything(w1, w2, x):
        return ag.sigmoid(ag.tanh(x @ w1) @ w2).sum()

    def recomputes(w1, w2, x):
        return checkpoint(lambda t: ag.sigmoid(ag.tanh(t @ w1) @ w2), x,
                          parameters=[w1, w2]).sum()

    kept = ex.S4(keeps_everything)
    assert not kept.ok
    assert {p.name: p.diagnosis for p in kept.parts}["memory"] == "keeps_intermediates"
    assert ex.S4(recomputes).ok

    solution = str(solution_text(ex.S4))
    assert "checkpoint" in solution and "Recompute" in solution
    assert "retain_graph" in solution and "saves no memory" in solution

    text = _lesson_text(LESSON_04)
    section = text[text.index("## 4."):text.index("## 5.")]
    assert "S4(loss_for_backward)" in section and "def loss_for_backward(" in ex.S4.snippet
    assert "retain_graph" not in section, "lesson 04 must not offer keeping the graph as S4's fix"
    assert "trades compute for" not in text, "that is lesson 10's L8 to find out"


def test_the_no_grad_peak_is_the_two_layer_outputs_g1s_solution_speaks_of():
    """Lesson 04 once said "three layer outputs" beside a stored figure of two. The figure is
    now printed in layer outputs by the lesson's gated cell, and G1's solution (the only text
    that states it) says two: measure it on the lesson's model."""
    from autograd_core import nn
    from autograd_core.tools import memory
    from widgets import exercises as ex

    def make_model(depth):
        gen = ag.Generator(1)
        layers = []
        for _ in range(depth):
            layers += [nn.Linear(256, 256, dtype=ag.float32, generator=gen), nn.Tanh()]
        return nn.Sequential(*layers)

    batch = ag.randn(256, 256, generator=ag.Generator(2), dtype=ag.float32)
    layer_output = 256 * 256 * 4
    for depth in (3, 6):
        peak = memory.forward_peak_memory(make_model(depth), batch)
        assert 1.5 < peak["no_grad"] / layer_output < 2.5
        assert peak["recording"] / layer_output > depth
    assert "two layer outputs" in str(solution_text(ex.G1))
    assert "three layer outputs" not in _lesson_text(LESSON_04)


def test_s4_can_be_solved_with_what_lessons_03_and_04_teach(tmp_path, monkeypatch):
    """Lesson 04 names the tools S4 relies on before asking it (an op of one's own, ctx.save
    and ctx.load, enable_grad inside a backward), not lesson 10's checkpoint: a fix built
    from those passes."""
    from autograd_core.recording.node import Function
    from widgets import exercises as ex

    monkeypatch.setenv("AUTOGRAD_LESSONS_PROGRESS", str(tmp_path / "progress.json"))

    class Again(Function):
        name = "again"

        @staticmethod
        def forward(ctx, x, w1, w2):
            ctx.save(x=x, w1=w1, w2=w2)
            with ag.no_grad():
                return ag.sigmoid(ag.tanh(ag.tensor(x) @ ag.tensor(w1)) @ ag.tensor(w2)).numpy()

        @classmethod
        def backward(cls, ctx, grad):
            x, w1, w2 = (ag.tensor(ctx.load(k), requires_grad=True) for k in ("x", "w1", "w2"))
            with ag.enable_grad():
                ag.sigmoid(ag.tanh(x @ w1) @ w2).backward(grad)
            return x.grad.numpy(), w1.grad.numpy(), w2.grad.numpy()

    assert ex.S4(lambda w1, w2, x: Again.apply(x, w1, w2).sum()).ok
    text = _lesson_text(LESSON_04)
    section = text[text.index("## 4."):text.index("### Exercise S4")]
    assert all(tool in section for tool in ("ctx.save", "ctx.load", "ag.enable_grad()"))
