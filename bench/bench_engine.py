"""Engine benchmarks, measured side by side in one run and reported as ratios.

1. Per-op cost of forward+backward over a chain of ~1000 ops on tiny tensors:
   the engine, raw NumPy (forward only: the floor for any NumPy engine), PyTorch.
2. One training step (forward, backward, SGD update) of an MLP 784-256-128-10 with
   softmax cross-entropy, float32, batch 64 and 512: the engine, a hand-written
   NumPy forward/backward of the same model, and PyTorch; each round times 20 (batch
   64) or 4 (batch 512) steps back to back and reports the time per step.
3. Peak memory growth of a forward and of forward+backward of a 50-layer, 512-unit
   MLP at batch 256, float32: the engine and PyTorch, each in a fresh process.

Method: BLAS pinned to one thread (threadpoolctl) and ``torch.set_num_threads(1)``;
PyTorch runs in its own process (on 2 cores, torch and NumPy in one process slow
each other down), driven round by round over a pipe so that the variants
interleave; every figure is the median over rounds.

Run (see bench/README.md: unset OPENBLAS_CORETYPE and OPENBLAS_L2_SIZE for it):
``python bench/bench_engine.py [--rounds N]``. It prints the BLAS library each side uses.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # the repository root
from bench.memory_probe import can_reset_peak_rss, peak_rss_growth  # noqa: E402
from bench.timing import (  # noqa: E402
    TorchWorker,
    blas_report,
    interleaved_medians,
    torch_available,
    torch_blas_source,
    wall_time,
)

CHAIN_SHAPES = [(1, 1), (4, 4), (64, 64)]
CHAIN_LENGTH = 1000  # iterations; each is 1 or 2 ops (see chain_ops)
MLP_SIZES = (784, 256, 128, 10)
# Steps timed back to back per round (about 20 ms), as a training loop runs them: one
# ~1 ms step on its own depends on what the run before it left in the CPU's caches.
MLP_STEPS_PER_ROUND = {64: 20, 512: 4}
MEMORY_MODEL = dict(depth=50, width=512, batch=256)


def chain_ops() -> int:
    """Ops in one chain: odd iterations do mul+tanh, even ones an add, plus the final sum."""
    return sum(2 if i % 2 else 1 for i in range(CHAIN_LENGTH)) + 1


# ---------------------------------------------------------------------------- engine
def engine_chain(shape):
    import autograd_core as ag

    x = ag.randn(*shape, requires_grad=True)

    def run():
        y = x
        for i in range(CHAIN_LENGTH):
            y = (y * 0.9).tanh() if i % 2 else y + x
        y.sum().backward()
        x.grad = None

    return run


def numpy_chain(shape):
    x = np.random.default_rng(0).standard_normal(shape)

    def run():
        y = x
        for i in range(CHAIN_LENGTH):
            y = np.tanh(y * 0.9) if i % 2 else y + x
        y.sum()

    return run


def _mlp_data(batch: int, seed: int = 0):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((batch, MLP_SIZES[0])).astype(np.float32)
    y = rng.integers(0, MLP_SIZES[-1], size=batch)
    params = []
    for fan_in, fan_out in zip(MLP_SIZES[:-1], MLP_SIZES[1:]):
        bound = 1 / np.sqrt(fan_in)
        params.append(rng.uniform(-bound, bound, (fan_out, fan_in)).astype(np.float32))
        params.append(rng.uniform(-bound, bound, fan_out).astype(np.float32))
    return x, y, params


def engine_mlp_step(batch: int):
    import autograd_core as ag
    from autograd_core.nn import functional as F

    x_np, y_np, arrays = _mlp_data(batch)
    x, y = ag.tensor(x_np), ag.tensor(y_np)
    params = [ag.tensor(a, requires_grad=True) for a in arrays]
    lr = 0.01

    def run():
        h = x
        for i in range(0, len(params), 2):
            h = F.linear(h, params[i], params[i + 1])
            if i + 2 < len(params):
                h = F.relu(h)
        loss = F.cross_entropy(h, y)
        loss.backward()
        with ag.no_grad():
            for p in params:
                p.sub_(p.grad, alpha=lr)
                p.grad = None

    return run


def numpy_mlp_step(batch: int):
    """The same model written by hand: forward, backward and SGD, in NumPy."""
    x, y, params = _mlp_data(batch)
    lr = np.float32(0.01)

    def run():
        w1, b1, w2, b2, w3, b3 = params
        z1 = x @ w1.T + b1
        h1 = np.maximum(z1, 0)
        z2 = h1 @ w2.T + b2
        h2 = np.maximum(z2, 0)
        logits = h2 @ w3.T + b3
        shifted = logits - logits.max(axis=1, keepdims=True)
        probs = np.exp(shifted)
        probs /= probs.sum(axis=1, keepdims=True)
        dlogits = probs
        dlogits[np.arange(batch), y] -= 1
        dlogits /= batch
        dw3, db3 = dlogits.T @ h2, dlogits.sum(0)
        dz2 = (dlogits @ w3) * (z2 > 0)
        dw2, db2 = dz2.T @ h1, dz2.sum(0)
        dz1 = (dz2 @ w2) * (z1 > 0)
        dw1, db1 = dz1.T @ x, dz1.sum(0)
        for p, g in zip(params, (dw1, db1, dw2, db2, dw3, db3)):
            p -= lr * g

    return run


# ---------------------------------------------------------------------------- torch
TORCH_WORKER = r"""
import json, sys, time
import torch
torch.set_num_threads(1)
torch.manual_seed(0)
CHAIN_LENGTH = %(chain)d
SIZES = %(sizes)r

def chain(shape):
    x = torch.randn(*shape, dtype=torch.float64, requires_grad=True)
    def run():
        y = x
        for i in range(CHAIN_LENGTH):
            y = (y * 0.9).tanh() if i %% 2 else y + x
        y.sum().backward()
        x.grad = None
    return run

def mlp(batch):
    layers = []
    for a, b in zip(SIZES[:-1], SIZES[1:]):
        layers += [torch.nn.Linear(a, b), torch.nn.ReLU()]
    model = torch.nn.Sequential(*layers[:-1])
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    x = torch.randn(batch, SIZES[0])
    y = torch.randint(0, SIZES[-1], (batch,))
    def run():
        loss = torch.nn.functional.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        opt.zero_grad()
    return run

runs = {}
for line in sys.stdin:
    kind, arg, *repeat = json.loads(line)
    if kind == "blas":
        print(json.dumps(blas_answer()), flush=True)
        continue
    repeat = repeat[0] if repeat else 1
    key = (kind, str(arg))
    if key not in runs:
        runs[key] = chain(tuple(arg)) if kind == "chain" else mlp(arg)
        runs[key]()  # warm-up
    t = time.perf_counter()
    for _ in range(repeat):
        runs[key]()
    print(json.dumps((time.perf_counter() - t) / repeat), flush=True)
"""


# ---------------------------------------------------------------------------- driver
def _timers(engine_run, numpy_run, worker, request, repeat: int = 1) -> dict:
    timers = {"engine": wall_time(engine_run, repeat), "numpy": wall_time(numpy_run, repeat)}
    if worker is not None:
        timers["torch"] = lambda: worker.time(*request, repeat)
    return timers


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=15)
    args = parser.parse_args(argv)

    from threadpoolctl import threadpool_limits

    threadpool_limits(1)
    source = torch_blas_source() + TORCH_WORKER % {"chain": CHAIN_LENGTH, "sizes": MLP_SIZES}
    worker = TorchWorker(source) if torch_available() else None
    if worker is None:
        print("PyTorch is not installed: its columns are skipped.")
    print(blas_report(worker))
    print(f"Medians of {args.rounds} interleaved rounds.")

    n_ops = chain_ops()
    print(f"\n1. Chain of {n_ops} ops, forward+backward, float64 — microseconds per op")
    print(f"{'shape':>10} {'engine':>9} {'numpy fwd':>10} {'torch':>9} {'engine/torch':>13}")
    for shape in CHAIN_SHAPES:
        t = interleaved_medians(_timers(engine_chain(shape), numpy_chain(shape), worker,
                                        ("chain", list(shape))), args.rounds)
        per = {k: v / n_ops * 1e6 for k, v in t.items()}
        ratio = f"{per['engine'] / per['torch']:.2f}" if "torch" in per else "-"
        print(f"{str(shape):>10} {per['engine']:9.2f} {per['numpy']:10.2f} "
              f"{per.get('torch', float('nan')):9.2f} {ratio:>13}")

    print("\n2. MLP 784-256-128-10 training step, float32 — milliseconds per step")
    print(f"{'batch':>6} {'engine':>8} {'numpy':>8} {'torch':>8} {'engine/numpy':>13} "
          f"{'engine/torch':>13}")
    for batch in (64, 512):
        t = interleaved_medians(_timers(engine_mlp_step(batch), numpy_mlp_step(batch), worker,
                                        ("mlp", batch), MLP_STEPS_PER_ROUND[batch]),
                                args.rounds)
        ms = {k: v * 1e3 for k, v in t.items()}
        vs_torch = f"{ms['engine'] / ms['torch']:.2f}" if "torch" in ms else "-"
        print(f"{batch:>6} {ms['engine']:8.3f} {ms['numpy']:8.3f} "
              f"{ms.get('torch', float('nan')):8.3f} {ms['engine'] / ms['numpy']:13.2f} "
              f"{vs_torch:>13}")
    if worker is not None:
        worker.close()

    m = MEMORY_MODEL
    print(f"\n3. Peak memory growth, {m['depth']}-layer {m['width']}-unit tanh MLP, "
          f"batch {m['batch']}, float32 — MiB (fresh process each)")
    if not can_reset_peak_rss():
        print("   skipped: needs Linux /proc/self/clear_refs")
        return
    engines = ["autograd_core"] + (["torch"] if worker is not None else [])
    for backward in (False, True):
        growth = {e: peak_rss_growth(e, backward=backward, **m)["growth"] / 2**20
                  for e in engines}
        ratio = (f"{growth['autograd_core'] / growth['torch']:.2f}" if "torch" in growth
                 else "-")
        print(f"{'forward+backward' if backward else 'forward':>17}: engine "
              f"{growth['autograd_core']:7.1f}  torch {growth.get('torch', float('nan')):7.1f}"
              f"  engine/torch {ratio}")


if __name__ == "__main__":
    main()
