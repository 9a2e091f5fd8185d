"""The laws G1, L6 and L8 ask for, worked out by hand from the mechanism (never read from
the checks or measured by the engine): the right ones, and each slip the items name, as a
learner would write it."""

import numpy as np

ARRAY, LAYER = 32 * 64 * 4, 3 * 32 * 64 * 4          # L8: one float32 activation; a layer's
BLOCK_MACS = 32 * 64 * 64 + 32 * 64 + 2 * 32 * 64     # three; one SwishBlock's multiply-adds
YES_NO = dict(outputs_equal=True, backward_after_no_grad_raises=True,
              frozen_layer_passes_gradient=True, holding_tensor_keeps_saved=True,
              holding_number_keeps_saved=False)


def _recorded(depth, frozen) -> int:
    """Layers from the first trainable one on: those are recorded."""
    first = next((i for i in range(depth) if i not in frozen), depth)
    return depth - first


def kept_bytes(width, depth, batch, frozen, no_grad):
    """G1: the first recorded linear keeps its input (its weight's gradient needs it; its own
    input needs none, so not its weight), every later linear its weight and its input (the
    tanh output before it, one array), and the last tanh its output."""
    r = 0 if no_grad else _recorded(depth, frozen)
    return 0 if r == 0 else 8 * ((r + 1) * batch * width + (r - 1) * width * width)


def kept_bytes_frozen_ignored(width, depth, batch, frozen, no_grad):
    """Slip: freezing changes nothing that is recorded."""
    return 0 if no_grad else 8 * ((depth + 1) * batch * width + (depth - 1) * width * width)


def kept_bytes_frozen_not_recorded(width, depth, batch, frozen, no_grad):
    """Slip: a frozen layer records nothing, wherever it is."""
    t = depth - len(frozen)
    return 0 if no_grad else 8 * ((t + 1) * batch * width + (t - 1) * width * width)


def kept_bytes_under_no_grad_too(width, depth, batch, frozen, no_grad):
    """Slip: no_grad keeps what recording keeps."""
    return kept_bytes(width, depth, batch, frozen, False)


def distinct_masks(seeds, calls):
    """L6: each distinct seed's stream gives ``calls`` masks; equal seeds, equal streams."""
    return len(set(seeds)) * calls


def float32_sums(big, ones):
    """L6: added one at a time, each sum rounded to float32."""
    total = np.float32(big)
    for _ in range(ones):
        total = np.float32(total + np.float32(1.0))
    return float(total), float(np.float32(np.float32(ones) + np.float32(big)))


def peak_checkpointed(depth, segments):
    """L8: the checkpointed segments' inputs but the batch, and the last (longest) segment's
    layers, at the end of the forward pass."""
    last = depth - (depth // segments) * (segments - 1)
    return (segments - 2) * ARRAY + last * LAYER


def recompute_macs(depth, segments):
    """L8: every checkpointed segment runs its layers forward once more."""
    return (depth // segments) * (segments - 1) * BLOCK_MACS


RIGHT_LAWS = {"G1.kept_bytes": kept_bytes, "L6.distinct_masks": distinct_masks,
              "L6.float32_sums": float32_sums, "L8.peak_checkpointed": peak_checkpointed,
              "L8.recompute_macs": recompute_macs}
RIGHT = {"G1": dict(kept_bytes=kept_bytes, **YES_NO),
         "L6": dict(distinct_masks=distinct_masks, float32_sums=float32_sums),
         "L8": dict(gradients_identical=True, peak_checkpointed=peak_checkpointed,
                    recompute_macs=recompute_macs)}
