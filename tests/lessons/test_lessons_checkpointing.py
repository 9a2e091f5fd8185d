"""widgets.lessons.checkpointing: the measurements lesson 10 plots, against byte and
multiply-add counts worked out from the shapes alone."""

import numpy as np
import pytest

from autograd_core import no_grad, tensor
from autograd_core.recording import creation
from autograd_core.tools.memory import track_saved_bytes
from autograd_core.utils.checkpoint import checkpoint_sequential
from widgets.lessons.checkpointing import checkpointed_step, swish_stack

WIDTH, BATCH, FLOAT32 = 8, 4, 4
ARRAY = BATCH * WIDTH * FLOAT32          # one activation array: (batch, width) float32
LAYER = 3 * ARRAY                        # a SwishBlock keeps x, h and sigmoid(h)
LAYER_MACS = BATCH * WIDTH * WIDTH + 3 * BATCH * WIDTH   # matmul + bias, sigmoid, mul


def run(depth, segments):
    return checkpointed_step(depth, segments, width=WIDTH, batch=BATCH, seed=3)


@pytest.mark.parametrize("depth, segments, peak", [
    (4, 1, 4 * LAYER - ARRAY),            # everything, minus the (uncounted) input batch
    (9, 1, 9 * LAYER - ARRAY),
    (8, 2, 0 * ARRAY + 4 * LAYER),        # (k - 2) boundaries + the last segment's layers
    (9, 3, 1 * ARRAY + 3 * LAYER),
    (16, 4, 2 * ARRAY + 4 * LAYER),
    (6, 6, 4 * ARRAY + 1 * LAYER),        # every layer but the last checkpointed
])
def test_peak_bytes_follow_the_segment_model(depth, segments, peak):
    assert run(depth, segments).peak == peak


@pytest.mark.parametrize("depth, segments", [(4, 1), (8, 2), (9, 3), (6, 6)])
def test_work_per_phase(depth, segments):
    step = run(depth, segments)
    recomputed_layers = depth - depth // segments if segments > 1 else 0
    assert step.forward_macs == depth * LAYER_MACS + BATCH * WIDTH    # + the loss's sum
    assert step.recompute_macs == recomputed_layers * LAYER_MACS
    assert step.extra_forward_work == pytest.approx(
        recomputed_layers * LAYER_MACS / step.forward_macs)
    assert step.total_macs == step.forward_macs + step.recompute_macs + step.backward_macs


@pytest.mark.parametrize("segments", [2, 3, 6])
def test_gradients_identical_to_the_plain_run(segments):
    plain, checkpointed = run(6, 1), run(6, segments)
    assert len(plain.grads) == len(checkpointed.grads) == 12
    for a, b in zip(plain.grads, checkpointed.grads):
        assert np.array_equal(a, b)


def test_plain_gradients_match_finite_differences():
    """The reference run itself is right: d(sum of outputs)/d(a weight), central
    differences in float64 on the same seeded stack."""
    step = run(2, 1)
    model = swish_stack(2, WIDTH, seed=3).to(np.float64)
    x = creation.randn(BATCH, WIDTH, generator=creation.Generator(4), dtype=np.float32)
    x = x.numpy().astype(np.float64)
    w = model[0].linear.weight
    eps = 1e-6

    def total():
        with no_grad():
            return float(model(tensor(x)).sum().item())

    for index in [(0, 0), (3, 5), (7, 1)]:
        original = w.numpy()[index]
        w._data[index] = original + eps
        up = total()
        w._data[index] = original - eps
        down = total()
        w._data[index] = original
        assert step.grads[0][index] == pytest.approx((up - down) / (2 * eps), rel=1e-3,
                                                      abs=1e-6)


@pytest.mark.parametrize("segments", [1, 3])
def test_series_agrees_with_the_engine_tracker(segments):
    step = run(9, segments)
    model = swish_stack(9, WIDTH, seed=3)
    x = creation.randn(BATCH, WIDTH, generator=creation.Generator(4), dtype=np.float32)
    with track_saved_bytes(exclude=[*model.parameters(), x]) as tracker:
        out = model(x) if segments == 1 else checkpoint_sequential(model, segments, x)
        out.sum().backward()
    assert step.peak == tracker.peak
    assert step.phases[0] == "forward" and step.phases[-1] == "backward"
    assert ("recompute" in step.phases) == (segments > 1)
    # every recorded op, first run or recomputed, is visited by exactly one backward step
    recorded = sum(p in ("forward", "recompute") for p in step.phases)
    assert step.phases.count("backward") == recorded


# -- a forward of your own, and plans (the capstone's task C1 uses them) ---------------------

from widgets.lessons.checkpointing import measure_step, plan_forward, plan_problem  # noqa: E402


@pytest.mark.parametrize("plan, recomputed", [
    ([], ()), ([[0, 1]], ("0", "1")), ([[1], [3, 4]], ("1", "3", "4")),
    ([[0, 1, 2, 3, 4, 5]], ("0", "1", "2", "3", "4", "5")),
])
def test_a_plan_checkpoints_its_groups_and_says_what_ran_again(plan, recomputed):
    model = swish_stack(6, WIDTH, seed=3)
    x = creation.randn(BATCH, WIDTH, generator=creation.Generator(4), dtype=np.float32)
    step = measure_step(model, x, forward=plan_forward(plan))
    plain = measure_step(model, x)
    assert step.segments == 0 and plain.recomputed == ()
    assert step.recomputed == recomputed
    assert step.same_gradients(plain) and step.grad_difference(plain) == 0
    assert (step.recompute_macs > 0) == bool(plan)


def test_the_same_split_as_checkpoint_sequential_measures_the_same():
    model = swish_stack(9, WIDTH, seed=3)
    x = creation.randn(BATCH, WIDTH, generator=creation.Generator(4), dtype=np.float32)
    ours = measure_step(model, x, forward=plan_forward([[0, 1, 2], [3, 4, 5]]))
    theirs = measure_step(model, x, segments=3)
    assert (ours.peak, ours.recompute_macs) == (theirs.peak, theirs.recompute_macs)
    assert ours.recomputed == theirs.recomputed == tuple(str(i) for i in range(6))


def test_a_gradient_that_never_arrives_is_none_not_a_crash():
    model = swish_stack(3, WIDTH, seed=3)
    x = creation.randn(BATCH, WIDTH, generator=creation.Generator(4), dtype=np.float32)

    def cut(m, h):
        with no_grad():
            h = m[0](h)
        return m[1:](h)

    step = measure_step(model, x, forward=cut)
    assert step.grads[0] is None and step.grads[2] is not None
    assert not step.same_gradients(measure_step(model, x))


@pytest.mark.parametrize("plan, words", [
    ([[0, 1], [5]], None), ([], None), ([range(2, 4)], None),
    ([[0, 2]], "skips modules"), ([1, 2], "flat list"), ([[1], [1]], "overlap"),
    ([[6]], "numbered 0 to 5"), ("[[0]]", "is a str"), ([[0], 7], "is an int"),
])
def test_plan_problem(plan, words):
    found = plan_problem(plan, 6)
    assert (found is None) if words is None else (words in found and len(found) <= 600)
    if words is not None:
        with pytest.raises(ValueError, match=words):
            plan_forward(plan)(swish_stack(6, WIDTH), creation.randn(2, WIDTH))


# -- the lesson: predictions first, measurements once L8 is solved -----------------------------

import json  # noqa: E402
from pathlib import Path  # noqa: E402

LESSON = Path(__file__).resolve().parents[2] / "notebooks" / "10_checkpointing.ipynb"
MEASURES = ("checkpointed_step(", "checkpoint_costs(", "count_ops()", "track_saved_bytes(")


def test_lesson_10_asks_for_the_prediction_before_any_measurement_shows_it():
    cells = json.loads(LESSON.read_text())["cells"]
    sources = ["".join(c["source"]) for c in cells]
    exercise = next(i for i, c in enumerate(cells)
                    if "exercise" in c["metadata"].get("tags", []) and "L8(" in sources[i])
    measuring = [i for i, s in enumerate(sources) if cells[i]["cell_type"] == "code"
                 and any(m in s for m in MEASURES)]
    assert measuring and min(measuring) > exercise
    for i in measuring:
        shown = "".join("".join(o.get("text", ""))
                        + "".join(o.get("data", {}).get("text/plain", ""))
                        for o in cells[i]["outputs"])
        assert 'after_solving("L8"' in sources[i], sources[i][:80]
        assert "gives L8's answer away" in shown and "bytes" not in shown
    assert not any("L8.demo" in s for s in sources), "a demonstration would answer L8"
