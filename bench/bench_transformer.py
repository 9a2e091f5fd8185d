"""One training step of the pre-norm GPT block: the engine vs PyTorch CPU.

The block is ``autograd_core.nn.TransformerBlock`` (nn/blocks.py), float32, causal,
dropout 0:

    x = x + out_proj(attention(q_proj, k_proj, v_proj of ln1(x)))
    x = x + proj(gelu(fc(ln2(x))))

and one step is forward, a mean-squared-error loss against a fixed random target,
backward, and ``AdamW`` (lr 1e-3, weight decay 0.01, PyTorch's defaults), for

* batch 16 x context 64 x width 128, 4 heads, d_ff 512;
* batch 8 x context 128 x width 64, 2 heads, d_ff 256.

The block's MLP uses the exact GELU (``nn.GELU()``, erf), which the engine computes
for float32 in float32 (``ops/special.normal_cdf_f32``: Φ through Mills' ratio, within
10 ulps; the backward gets Φ and φ from one exp), one op of some thirty array passes
each way, in pieces of 65,536 elements. Each size is also timed with the tanh form
(``TransformerBlock(..., gelu_approximate="tanh")``, and
``nn.GELU(approximate='tanh')`` on the PyTorch side).

PyTorch runs the same block written with torch modules, with the engine model's
initial weights (a temporary .npz file), ``torch.optim.AdamW`` (its CPU default, the
for-loop implementation) and ``torch.set_num_threads(1)``, in its own process, in two
forms:

* ``torch``: attention written op for op as the engine's (nn/attention.py):
  ``q @ kᵀ``, times 1/sqrt(head size), plus a causal bias of 0 / -inf, softmax,
  ``@ v``; the bias is built once (the engine rebuilds it at each call); the engine's
  ratio is to this one;
* ``sdpa``: ``F.scaled_dot_product_attention(q, k, v, is_causal=True)``, PyTorch's
  fused CPU kernel (no L x S weights kept), for reference.

There is no hand-written NumPy step here (the other benches have one): attention's
would be long to write and to check, and the engine vs PyTorch ratio is the figure.

Before timing, one step of each variant from the same state is checked to give
PyTorch's (op-for-op form's) loss and gradients to float32 tolerance.

Method (as bench_engine.py): BLAS pinned to one thread (threadpoolctl),
``torch.set_num_threads(1)``; the six variants of a size (engine, torch, sdpa, each
with both GELUs) interleaved round by round, the order turning by one each round;
medians over rounds. Each round gives one reading of every variant, so a ratio is
printed as the median of the per-round ratios, with their quartiles as its spread.

Run (see bench/README.md: unset OPENBLAS_CORETYPE and OPENBLAS_L2_SIZE for it):
``python bench/bench_transformer.py [--rounds N] [--profile]``. It prints the BLAS
library each side uses; ``--profile`` adds a cProfile of one engine step per size and
GELU (its top functions by own time).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))  # the repository root, for autograd_core
sys.path.insert(0, str(HERE))
from timing import (  # noqa: E402
    TorchWorker,
    blas_report,
    interleaved_medians,
    ratio_with_quartiles,
    recorded,
    torch_available,
    torch_blas_source,
    wall_time,
    worst_difference,
)

import autograd_core as ag  # noqa: E402
from autograd_core import nn, optim  # noqa: E402
from autograd_core.nn import functional as F  # noqa: E402

ag.set_default_dtype(ag.float32)  # PyTorch's default: both sides are float32 throughout

CASES = [  # (batch, context, d_model, n_heads, d_ff)
    (16, 64, 128, 4, 512),
    (8, 128, 64, 2, 256),
]
GELUS = ("none", "tanh")  # the block's own (exact, erf), then the tanh approximation
LR, WEIGHT_DECAY = 1e-3, 1e-2
TOLERANCE = 1e-4  # max |difference| / max |reference| per array (see worst_difference)


def case_data(index: int) -> dict:
    """Initial state (the engine block's parameters, by name), input ``x`` and target ``y``.
    LayerNorm weights and biases are drawn away from 1 and 0 so the check sees them."""
    batch, context, d_model, n_heads, d_ff = CASES[index]
    rng = np.random.default_rng(index)
    block = nn.TransformerBlock(d_model, n_heads, d_ff, generator=ag.Generator(index))
    data = {name: t.numpy().copy() for name, t in block.state_dict().items()}
    for name in data:
        if name.startswith("ln") and name.endswith(".weight"):
            data[name] = (1 + 0.2 * rng.standard_normal(d_model)).astype(np.float32)
        elif name.startswith("ln") and name.endswith(".bias"):
            data[name] = (0.2 * rng.standard_normal(d_model)).astype(np.float32)
    data["x"] = rng.standard_normal((batch, context, d_model)).astype(np.float32)
    data["y"] = rng.standard_normal((batch, context, d_model)).astype(np.float32)
    return data


# ---------------------------------------------------------------------------- engine
def engine_block(index: int, data: dict, gelu: str) -> nn.TransformerBlock:
    """Case ``index``'s block with the state in ``data`` and ``gelu`` ('none' or 'tanh')
    in its MLP."""
    _, _, d_model, n_heads, d_ff = CASES[index]
    block = nn.TransformerBlock(d_model, n_heads, d_ff, gelu_approximate=gelu)
    block.load_state_dict({k: v for k, v in data.items() if k not in ("x", "y")})
    return block


def engine_step(index: int, data: dict, gelu: str):
    """The step with the engine; ``run()`` returns (loss, gradients by name)."""
    block = engine_block(index, data, gelu)
    names, params = zip(*block.named_parameters())
    opt = optim.AdamW(params, lr=LR, weight_decay=WEIGHT_DECAY)
    x, y = ag.tensor(data["x"]), ag.tensor(data["y"])

    def run():
        loss = F.mse_loss(block(x), y)
        loss.backward()
        grads = dict(zip(names, (p.grad for p in params)))
        opt.step()
        opt.zero_grad()
        return loss, grads

    return run


# ---------------------------------------------------------------------------- torch
TORCH_WORKER = r"""
import json, math, sys, time
from collections import OrderedDict
import numpy as np
import torch
from torch import nn
torch.set_num_threads(1)
DATA, LR, WEIGHT_DECAY = %(data)r, %(lr)r, %(weight_decay)r

class SelfAttention(nn.Module):
    def __init__(self, d_model, n_heads, context, sdpa):
        super().__init__()
        self.n_heads, self.sdpa = n_heads, sdpa
        self.q_proj = nn.Linear(d_model, d_model)
        self.k_proj = nn.Linear(d_model, d_model)
        self.v_proj = nn.Linear(d_model, d_model)
        self.out_proj = nn.Linear(d_model, d_model)
        causal = torch.ones(context, context, dtype=torch.bool).tril()
        bias = torch.zeros(context, context).masked_fill(~causal, float("-inf"))
        self.register_buffer("causal_bias", bias, persistent=False)

    def split(self, h):
        b, t, c = h.shape
        return h.reshape(b, t, self.n_heads, c // self.n_heads).transpose(1, 2)

    def forward(self, x):
        b, t, c = x.shape
        q, k, v = (self.split(p(x)) for p in (self.q_proj, self.k_proj, self.v_proj))
        if self.sdpa:
            y = nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True)
        else:  # the engine's ops (nn/attention.py), one by one
            scores = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(q.shape[-1]))
            scores = scores + self.causal_bias[:t, :t]
            y = torch.softmax(scores, dim=-1) @ v
        return self.out_proj(y.transpose(1, 2).reshape(b, t, c))

class TransformerBlock(nn.Module):
    def __init__(self, d_model, n_heads, d_ff, context, gelu, sdpa):
        super().__init__()
        self.ln1 = nn.LayerNorm(d_model)
        self.attn = SelfAttention(d_model, n_heads, context, sdpa)
        self.ln2 = nn.LayerNorm(d_model)
        self.mlp = nn.Sequential(OrderedDict([
            ("fc", nn.Linear(d_model, d_ff)), ("gelu", nn.GELU(approximate=gelu)),
            ("proj", nn.Linear(d_ff, d_model))]))

    def forward(self, x):
        x = x + self.attn(self.ln1(x))
        return x + self.mlp(self.ln2(x))

def make_step(index, gelu, sdpa):
    data = np.load(DATA %% index)
    b, t, d_model = data["x"].shape
    n_heads = int(data["n_heads"])
    block = TransformerBlock(d_model, n_heads, data["mlp.fc.weight"].shape[0], t, gelu, sdpa)
    block.load_state_dict({k: torch.from_numpy(data[k]) for k in block.state_dict()})
    opt = torch.optim.AdamW(block.parameters(), lr=LR, weight_decay=WEIGHT_DECAY)
    x, y = torch.from_numpy(data["x"]), torch.from_numpy(data["y"])
    def run(keep=False):  # keep: return the loss and gradients (copied only then)
        loss = nn.functional.mse_loss(block(x), y)
        loss.backward()
        grads = {k: p.grad.numpy().copy() for k, p in block.named_parameters()} if keep else None
        opt.step()
        opt.zero_grad()
        return loss, grads
    return run

runs = {}
for line in sys.stdin:
    request = json.loads(line)
    if request[0] == "blas":
        print(json.dumps(blas_answer()), flush=True)
        continue
    if request[0] == "check":  # one step from the initial state: loss and gradients
        _, index, gelu, sdpa, path = request
        loss, grads = make_step(index, gelu, sdpa)(keep=True)
        np.savez(path, loss=loss.detach().numpy(), **grads)
        print(json.dumps(path), flush=True)
        continue
    index, gelu, sdpa, repeat = request
    key = (index, gelu, sdpa)
    if key not in runs:
        runs[key] = make_step(index, gelu, sdpa)
        runs[key]()  # warm-up (AdamW's state is made at the first step)
    t = time.perf_counter()
    for _ in range(repeat):
        runs[key]()
    print(json.dumps((time.perf_counter() - t) / repeat), flush=True)
"""


class BlockTorchWorker(TorchWorker):
    """The timing worker (``time(index, gelu, sdpa, repeat)``) running the PyTorch block,
    plus ``check``: the loss and gradients of one step from the initial state."""

    def __init__(self, data_pattern: str):
        super().__init__(torch_blas_source() + TORCH_WORKER % {
            "data": data_pattern, "lr": LR, "weight_decay": WEIGHT_DECAY})
        self.data_pattern = data_pattern

    def check(self, index: int, gelu: str, sdpa: bool) -> dict:
        path = self.data_pattern.replace("%d", f"{index}_check_{gelu}_{int(sdpa)}")
        return dict(np.load(self.request("check", index, gelu, sdpa, path)))


# ---------------------------------------------------------------------------- checking
def check_agreement(index: int, data: dict, worker: BlockTorchWorker) -> str:
    """One step of the engine and of ``sdpa`` from the same state gives the op-for-op
    PyTorch block's loss and gradients (to ``TOLERANCE``), for both GELUs, or
    AssertionError. Returns a one-line summary of the worst differences."""
    summary = []
    for gelu in GELUS:
        reference = worker.check(index, gelu, False)
        loss, grads = engine_step(index, data, gelu)()
        results = {"engine": {"loss": loss.numpy(), **{k: g.numpy() for k, g in grads.items()}},
                   "sdpa": worker.check(index, gelu, True)}
        for name, result in results.items():
            worst, where = worst_difference(result, reference)
            if not worst <= TOLERANCE:
                raise AssertionError(f"{name} (gelu {gelu}) differs from the PyTorch block: "
                                     f"{where} off by {worst:.2e} of its largest value")
            summary.append(f"{name}/{gelu} {worst:.1e} ({where})")
    return f"{len(reference)} arrays; " + ", ".join(summary)


# ---------------------------------------------------------------------------- profile
def profile_step(index: int, data: dict, gelu: str, top: int = 25) -> str:
    """cProfile of one engine step (after a warm one): the top functions by own time."""
    import cProfile
    import io
    import pstats

    run = engine_step(index, data, gelu)
    run()
    profiler = cProfile.Profile()
    profiler.enable()
    run()
    profiler.disable()
    out = io.StringIO()
    pstats.Stats(profiler, stream=out).sort_stats("tottime").print_stats(top)
    return out.getvalue()


# ---------------------------------------------------------------------------- driver
def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=25)
    parser.add_argument("--profile", action="store_true",
                        help="also print a cProfile of one engine step per case")
    args = parser.parse_args(argv)

    from threadpoolctl import threadpool_limits

    threadpool_limits(1)
    with tempfile.TemporaryDirectory() as tmp:
        pattern = str(Path(tmp) / "case_%d.npz")
        cases = [case_data(i) for i in range(len(CASES))]
        for i, data in enumerate(cases):
            np.savez(pattern % i, n_heads=CASES[i][3], **data)
        worker = BlockTorchWorker(pattern) if torch_available() else None
        if worker is None:
            print("PyTorch is not installed: its columns are skipped.")
        print(blas_report(worker))

        if worker is not None:
            print("Agreement of one step with the op-for-op PyTorch block (max |difference| "
                  "/ max |value|, worst array):")
            for i, data in enumerate(cases):
                print(f"  case {i}: {check_agreement(i, data, worker)}")

        print(f"\nTransformerBlock training step (forward, MSE loss, backward, AdamW), "
              f"float32 — milliseconds per step, medians of {args.rounds} interleaved "
              "rounds.\ngelu: none = exact (erf, the block's own), tanh = approximation. "
              "torch: attention op for op as the engine's; sdpa: "
              "F.scaled_dot_product_attention.\nRatios: the median of the per-round "
              "ratios (q1-q3: their quartiles).")
        print(f"{'B x T x C, heads, d_ff':>24} {'gelu':>5} {'engine':>8} {'torch':>7} "
              f"{'sdpa':>7} {'engine/torch (q1-q3)':>23} {'engine/sdpa (q1-q3)':>23}")
        for i, (case, data) in enumerate(zip(CASES, cases)):
            timers = {}
            for gelu in GELUS:
                timers[("engine", gelu)] = wall_time(engine_step(i, data, gelu))
                if worker is not None:
                    timers[("torch", gelu)] = lambda i=i, g=gelu: worker.time(i, g, False, 1)
                    timers[("sdpa", gelu)] = lambda i=i, g=gelu: worker.time(i, g, True, 1)
            samples = {name: [] for name in timers}
            medians = interleaved_medians(
                {name: recorded(timer, samples[name]) for name, timer in timers.items()},
                args.rounds)
            batch, context, d_model, n_heads, d_ff = case
            label = f"{batch}x{context}x{d_model}, {n_heads}, {d_ff}"
            for gelu in GELUS:
                ms = {side: medians.get((side, gelu), np.nan) * 1e3
                      for side in ("engine", "torch", "sdpa")}
                row = f"{label:>24} {gelu:>5} {ms['engine']:8.2f} {ms['torch']:7.2f} " \
                      f"{ms['sdpa']:7.2f}"
                for side in ("torch", "sdpa"):
                    if (side, gelu) in samples:
                        ratio = ratio_with_quartiles(samples[("engine", gelu)],
                                                     samples[(side, gelu)])
                        row += f" {ratio:>23}"
                print(row)
                label = ""
        if worker is not None:
            worker.close()

    if args.profile:
        for i, data in enumerate(cases):
            for gelu in GELUS:
                print(f"\ncProfile of one engine step, case {i} {CASES[i]}, gelu {gelu} "
                      "(top functions by own time):")
                print(profile_step(i, data, gelu))


if __name__ == "__main__":
    main()
