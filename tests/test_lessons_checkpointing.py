"""widgets.lessons.checkpointing: the measurements lesson 10 plots, against byte and
multiply-add counts worked out from the shapes alone."""

import numpy as np
import pytest

from autograd_core import creation, no_grad, tensor
from autograd_core.memory import track_saved_bytes
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
