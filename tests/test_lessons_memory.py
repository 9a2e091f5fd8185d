"""widgets.lessons.memory: the saved-tensor table, dropping saved tensors, weak watches.

Expected values are written from each op's backward rule (what it must read) and from
shapes and dtypes, not from the engine's own byte counts."""

import gc

import numpy as np
import pytest

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
