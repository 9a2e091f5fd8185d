"""conv2d forward+backward alone: the engine vs a plain im2col NumPy step vs PyTorch.

Two layers, float32, 3x3 kernels, stride 1, padding 1, with bias; every variant
computes the output and all three gradients (input, weight, bias) for the same
upstream gradient:

* 32x1x28x28 input, 8 filters (an MNIST-sized first layer);
* 64x3x32x32 input, 16 filters (a CIFAR-sized first layer).

"plain NumPy" is the textbook im2col step written by hand: rows of the column
matrix are output pixels (N·OH·OW, C·kh·kw), one matmul with the flattened
weight, and for the input gradient a col2im with one strided add per kernel
offset. The engine's op (autograd_core/ops/conv.py) differs in layout: columns
are (N, C·kh·kw, OH·OW), built a few images at a time, so the copy streams along
input rows and one batched matmul writes the output directly in NCHW order, with
no transposed copies of the output or of the upstream gradient. For its backward
it picks by shape: these two layers (more output than input channels) fold like
the hand-written step; stride-1 layers with at most twice as many output channels
as input ones compute the input gradient as the full convolution of g instead
(``gather_grads``), with no fold.

Method (as bench_engine.py): BLAS pinned to one thread (threadpoolctl),
``torch.set_num_threads(1)``; PyTorch in its own process, driven round by round
so the variants interleave; medians over rounds.

Note: on glibc, the page faults of freshly allocated multi-MB arrays (the heap
is trimmed back after each step) are a visible share of the small case for the
hand-written variant (the engine's backward keeps its column arrays as scratch);
``MALLOC_TOP_PAD_=67108864`` removes them if you want to see the arithmetic alone.

Run (see bench/README.md: unset OPENBLAS_CORETYPE and OPENBLAS_L2_SIZE for it):
``python bench/bench_conv.py [--rounds N]``. It prints the BLAS library each side uses.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

sys.path.insert(0, str(Path(__file__).resolve().parent))
from timing import (  # noqa: E402
    TorchWorker,
    blas_report,
    interleaved_medians,
    torch_available,
    torch_blas_source,
    wall_time,
)

CASES = [  # (input shape, out_channels, kernel, padding)
    ((32, 1, 28, 28), 8, 3, 1),
    ((64, 3, 32, 32), 16, 3, 1),
]


def case_data(index: int):
    """The same float32 input, weight, bias and upstream gradient for every variant."""
    (n, c, h, w), o, k, p = CASES[index]
    rng = np.random.default_rng(index)
    x = rng.standard_normal((n, c, h, w)).astype(np.float32)
    weight = (rng.standard_normal((o, c, k, k)) / np.sqrt(c * k * k)).astype(np.float32)
    bias = rng.standard_normal(o).astype(np.float32)
    oh, ow = h + 2 * p - k + 1, w + 2 * p - k + 1
    g = rng.standard_normal((n, o, oh, ow)).astype(np.float32)
    return x, weight, bias, g, p


# ---------------------------------------------------------------------------- variants
def engine_step(index: int):
    import autograd_core as ag
    from autograd_core.nn import functional as F

    x_np, w_np, b_np, g, p = case_data(index)
    x, w, b = (ag.tensor(a, requires_grad=True) for a in (x_np, w_np, b_np))

    def run():
        F.conv2d(x, w, b, padding=p).backward(g)
        grads = x.grad, w.grad, b.grad
        x.grad = w.grad = b.grad = None
        return grads

    return run


def numpy_step(index: int):
    """The textbook im2col forward and backward, by hand."""
    x, weight, bias, g, p = case_data(index)
    n, c, h, w = x.shape
    o, _, k, _ = weight.shape

    def run():
        xp = np.pad(x, ((0, 0), (0, 0), (p, p), (p, p)))
        windows = sliding_window_view(xp, (k, k), axis=(2, 3))  # N, C, OH, OW, k, k
        oh, ow = windows.shape[2:4]
        cols = windows.transpose(0, 2, 3, 1, 4, 5).reshape(n * oh * ow, c * k * k)
        w_flat = weight.reshape(o, -1)
        out = (cols @ w_flat.T + bias).reshape(n, oh, ow, o).transpose(0, 3, 1, 2)
        # backward
        g_rows = g.transpose(0, 2, 3, 1).reshape(-1, o)
        dw = (g_rows.T @ cols).reshape(weight.shape)
        db = g_rows.sum(axis=0)
        dcols = (g_rows @ w_flat).reshape(n, oh, ow, c, k, k)
        dxp = np.zeros_like(xp)
        for i in range(k):
            for j in range(k):
                dxp[:, :, i:i + oh, j:j + ow] += dcols[:, :, :, :, i, j].transpose(0, 3, 1, 2)
        return out, dxp[:, :, p:p + h, p:p + w], dw, db

    return run


TORCH_WORKER = r"""
import json, sys, time
import numpy as np
import torch
torch.set_num_threads(1)
sys.path.insert(0, %(here)r)
from bench_conv import case_data

runs = {}
for line in sys.stdin:
    index, mkldnn = json.loads(line)
    if index == "blas":
        print(json.dumps(blas_answer()), flush=True)
        continue
    torch.backends.mkldnn.enabled = mkldnn
    if index not in runs:
        x_np, w_np, b_np, g_np, p = case_data(index)
        x, w, b = (torch.tensor(a, requires_grad=True) for a in (x_np, w_np, b_np))
        g = torch.tensor(g_np)
        def run(x=x, w=w, b=b, g=g, p=p):
            torch.nn.functional.conv2d(x, w, b, padding=p).backward(g)
            x.grad = w.grad = b.grad = None
        runs[index] = run
    runs[index]()  # a warm call first: the flag may have just switched backends
    t = time.perf_counter(); runs[index](); elapsed = time.perf_counter() - t
    print(json.dumps(elapsed), flush=True)
"""


def check_agreement(index: int) -> None:
    """The engine and the hand-written step compute the same gradients."""
    engine = engine_step(index)()
    plain = numpy_step(index)()[1:]
    for ours, theirs in zip(engine, plain):
        np.testing.assert_allclose(ours.numpy(), theirs, rtol=1e-3, atol=1e-3)


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=25)
    args = parser.parse_args(argv)

    from threadpoolctl import threadpool_limits

    threadpool_limits(1)
    source = torch_blas_source() + TORCH_WORKER % {"here": str(Path(__file__).resolve().parent)}
    worker = TorchWorker(source) if torch_available() else None
    if worker is None:
        print("PyTorch is not installed: its columns are skipped.")
    print(blas_report(worker))

    print(f"conv2d forward+backward (dinput, dweight, dbias), float32, 3x3, stride 1, "
          f"padding 1 — milliseconds, medians of {args.rounds} interleaved rounds.\n"
          "torch: default CPU path (oneDNN); torch-native: torch.backends.mkldnn off.")
    print(f"{'input':>11} {'filters':>7} {'engine':>7} {'numpy':>7} {'torch':>7} "
          f"{'torch-native':>12} {'engine/numpy':>12} {'engine/torch':>12} "
          f"{'engine/native':>13}")
    for index, (shape, filters, _, _) in enumerate(CASES):
        check_agreement(index)
        timers = {"engine": wall_time(engine_step(index)), "numpy": wall_time(numpy_step(index))}
        if worker is not None:
            timers["torch"] = lambda i=index: worker.time(i, True)
            timers["native"] = lambda i=index: worker.time(i, False)
        ms = {k: v * 1e3 for k, v in interleaved_medians(timers, args.rounds).items()}
        torch_ms, native_ms = ms.get("torch", float("nan")), ms.get("native", float("nan"))
        print(f"{'x'.join(map(str, shape)):>11} {filters:>7} {ms['engine']:7.3f} "
              f"{ms['numpy']:7.3f} {torch_ms:7.3f} {native_ms:12.3f} "
              f"{ms['engine'] / ms['numpy']:12.2f} {ms['engine'] / torch_ms:12.2f} "
              f"{ms['engine'] / native_ms:13.2f}")
    if worker is not None:
        worker.close()


if __name__ == "__main__":
    main()
