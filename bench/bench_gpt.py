"""One training step of a small GPT in float32: the engine vs PyTorch CPU, and where the
engine's step spends its time, op by op.

The model is written once (``MODEL_SOURCE``) in the usual PyTorch style with the
names both libraries share (``nn.Module``, ``nn.Embedding``, ``nn.Linear``,
``nn.LayerNorm``, ``nn.GELU``, ``nn.Sequential``, ``F.cross_entropy``), and run by each:

    x = tok(idx) + pos(arange(T))
    N times:  x = x + attn(ln1(x))       (q, k, v projections, causal attention, out_proj)
              x = x + mlp(ln2(x))        (Linear d -> 4d, exact GELU, Linear 4d -> d)
    loss = cross_entropy(head(ln_f(x)), targets)

One step is forward, loss, backward, ``AdamW`` (lr 3e-4, weight decay 0.1) and
``zero_grad``, for each case of ``CASES``. PyTorch runs the same source in its own
process, with the engine model's initial weights (a temporary .npz file),
``torch.optim.AdamW`` and ``torch.set_num_threads(1)``, in two forms:

* ``torch``: attention written op for op as the engine's ``F.scaled_dot_product_attention``
  (nn/attention.py): ``q @ kᵀ`` times 1/sqrt(head size), plus a causal bias, softmax,
  ``@ v``; the engine's ratio is to this one;
* ``sdpa``: ``F.scaled_dot_product_attention(q, k, v, is_causal=True)``, PyTorch's
  fused CPU kernel, for reference.

Before timing, one step of the engine and of ``sdpa`` from the same state is checked to
give the ``torch`` form's loss and gradients to float32 tolerance.

The exact GELU is also timed on its own, forward and backward (``F.gelu`` on a float32
array of the MLP's shape (B, T, 4d), N(0, 1) values, a given upstream gradient), engine
vs PyTorch, interleaved in the same way.

``--profile`` adds a per-op profile of the engine's step: every op's forward and
backward timed (their own time: an op run inside another op's forward counts for the
inner op only), medians per step over ``--profile-steps`` steps, with the optimizer and
what is left (recording the graph, the sweep's bookkeeping, Python between the ops).
Timing each call costs about a microsecond, so the profiled step is a little slower
than the timed one.

Method as bench_transformer.py: BLAS pinned to one thread, the variants of a case
interleaved round by round, the order turning by one each round; ratios are medians
of the per-round ratios, with their quartiles.

Run (see bench/README.md: unset OPENBLAS_CORETYPE and OPENBLAS_L2_SIZE for it):
``python bench/bench_gpt.py [--rounds N] [--profile] [--profile-steps N]``.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from collections import defaultdict
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
from autograd_core.recording.node import Function  # noqa: E402

CASES = [  # (batch, context, vocab, d_model, n_heads, n_layers)
    (16, 64, 512, 128, 4, 4),
    (8, 128, 256, 64, 2, 2),
]
LR, WEIGHT_DECAY = 3e-4, 0.1
TOLERANCE = 1e-4  # max |difference| / max |reference| per array (worst_difference)
INPUTS = ("idx", "targets", "gelu_x", "gelu_g")  # the rest of a case's data: the state

# The model, run by both libraries: ``nn``, ``F``, ``arange`` and ``attention`` are the
# names each side binds before running it.
MODEL_SOURCE = '''
class CausalSelfAttention(nn.Module):
    def __init__(self, d_model, n_heads):
        super().__init__()
        self.n_heads = n_heads
        self.q_proj = nn.Linear(d_model, d_model)
        self.k_proj = nn.Linear(d_model, d_model)
        self.v_proj = nn.Linear(d_model, d_model)
        self.out_proj = nn.Linear(d_model, d_model)

    def heads(self, h):
        b, t, c = h.shape
        return h.reshape(b, t, self.n_heads, c // self.n_heads).transpose(1, 2)

    def forward(self, x):
        b, t, c = x.shape
        q, k, v = (self.heads(p(x)) for p in (self.q_proj, self.k_proj, self.v_proj))
        y = attention(q, k, v)
        return self.out_proj(y.transpose(1, 2).reshape(b, t, c))


class Block(nn.Module):
    def __init__(self, d_model, n_heads):
        super().__init__()
        self.ln1 = nn.LayerNorm(d_model)
        self.attn = CausalSelfAttention(d_model, n_heads)
        self.ln2 = nn.LayerNorm(d_model)
        self.fc = nn.Linear(d_model, 4 * d_model)
        self.gelu = nn.GELU()
        self.proj = nn.Linear(4 * d_model, d_model)

    def forward(self, x):
        x = x + self.attn(self.ln1(x))
        return x + self.proj(self.gelu(self.fc(self.ln2(x))))


class GPT(nn.Module):
    def __init__(self, vocab, context, d_model, n_heads, n_layers):
        super().__init__()
        self.tok = nn.Embedding(vocab, d_model)
        self.pos = nn.Embedding(context, d_model)
        self.blocks = nn.Sequential(*[Block(d_model, n_heads) for _ in range(n_layers)])
        self.ln_f = nn.LayerNorm(d_model)
        self.head = nn.Linear(d_model, vocab)

    def forward(self, idx, targets):
        b, t = idx.shape
        x = self.tok(idx) + self.pos(arange(t))
        logits = self.head(self.ln_f(self.blocks(x)))
        return F.cross_entropy(logits.reshape(b * t, -1), targets.reshape(b * t))
'''


def _engine_namespace() -> dict:
    namespace = {"nn": nn, "F": F, "arange": ag.arange, "attention": lambda q, k, v:
                 F.scaled_dot_product_attention(q, k, v, is_causal=True)}
    exec(MODEL_SOURCE, namespace)  # noqa: S102
    return namespace


ENGINE = _engine_namespace()


def case_data(index: int) -> dict:
    """Initial state (the engine model's parameters, by name), token ids ``idx`` and
    ``targets``. LayerNorm weights and biases are drawn away from 1 and 0 so the check
    sees them."""
    batch, context, vocab, d_model, n_heads, n_layers = CASES[index]
    rng = np.random.default_rng(index)
    model = ENGINE["GPT"](vocab, context, d_model, n_heads, n_layers)
    data = {name: t.numpy().copy() for name, t in model.state_dict().items()}
    for name in data:
        if "ln" in name and name.endswith(".weight"):
            data[name] = (1 + 0.2 * rng.standard_normal(d_model)).astype(np.float32)
        elif "ln" in name and name.endswith(".bias"):
            data[name] = (0.2 * rng.standard_normal(d_model)).astype(np.float32)
    data["idx"] = rng.integers(0, vocab, (batch, context))
    data["targets"] = rng.integers(0, vocab, (batch, context))
    data["gelu_x"] = rng.standard_normal((batch, context, 4 * d_model)).astype(np.float32)
    data["gelu_g"] = rng.uniform(0.5, 1.5, data["gelu_x"].shape).astype(np.float32)
    return data


def engine_step(index: int, data: dict, timed: dict | None = None):
    """The step with the engine; ``run()`` returns (loss, gradients by name). With
    ``timed`` (a dict of lists), each run appends the seconds of its optimizer step and
    zero_grad to ``timed['AdamW.step']`` and ``timed['zero_grad']``."""
    _, context, vocab, d_model, n_heads, n_layers = CASES[index]
    model = ENGINE["GPT"](vocab, context, d_model, n_heads, n_layers)
    model.load_state_dict({k: v for k, v in data.items() if k not in INPUTS})
    names, params = zip(*model.named_parameters())
    opt = optim.AdamW(params, lr=LR, weight_decay=WEIGHT_DECAY)
    idx, targets = ag.tensor(data["idx"]), ag.tensor(data["targets"])

    def run():
        loss = model(idx, targets)
        loss.backward()
        grads = dict(zip(names, (p.grad for p in params)))
        if timed is None:
            opt.step()
            opt.zero_grad()
        else:
            t0 = time.perf_counter()
            opt.step()
            t1 = time.perf_counter()
            opt.zero_grad()
            timed["AdamW.step"].append(t1 - t0)
            timed["zero_grad"].append(time.perf_counter() - t1)
        return loss, grads

    return run


def engine_gelu(data: dict):
    """The exact GELU alone, forward and backward, on the case's (B, T, 4d) array."""
    x, g = ag.tensor(data["gelu_x"], requires_grad=True), ag.tensor(data["gelu_g"])

    def run():
        F.gelu(x).backward(g)
        x.grad = None

    return run


# ---------------------------------------------------------------------------- torch
TORCH_WORKER = r"""
import json, math, sys, time
import numpy as np
import torch
from torch import nn
from torch.nn import functional as F
torch.set_num_threads(1)
DATA, LR, WEIGHT_DECAY, MODEL_SOURCE = %(data)r, %(lr)r, %(weight_decay)r, %(model)r

def op_for_op(q, k, v):  # the engine's F.scaled_dot_product_attention, one op at a time
    t = q.shape[-2]
    bias = torch.zeros(t, t).masked_fill(~torch.ones(t, t, dtype=torch.bool).tril(),
                                         float("-inf"))
    scores = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(q.shape[-1])) + bias
    return torch.softmax(scores, dim=-1) @ v

def fused(q, k, v):
    return F.scaled_dot_product_attention(q, k, v, is_causal=True)

models = {}
for sdpa in (False, True):
    models[sdpa] = {"nn": nn, "F": F, "arange": torch.arange,
                    "attention": fused if sdpa else op_for_op}
    exec(MODEL_SOURCE, models[sdpa])

def make_step(index, sdpa):
    data = np.load(DATA %% index)
    b, t = data["idx"].shape
    vocab, d_model = data["tok.weight"].shape
    model = models[sdpa]["GPT"](vocab, t, d_model, int(data["n_heads"]), int(data["n_layers"]))
    model.load_state_dict({k: torch.from_numpy(data[k]) for k in model.state_dict()})
    opt = torch.optim.AdamW(model.parameters(), lr=LR, weight_decay=WEIGHT_DECAY)
    idx, targets = torch.from_numpy(data["idx"]), torch.from_numpy(data["targets"])
    def run(keep=False):  # keep: return the loss and gradients (copied only then)
        loss = model(idx, targets)
        loss.backward()
        grads = {k: p.grad.numpy().copy() for k, p in model.named_parameters()} if keep else None
        opt.step()
        opt.zero_grad()
        return loss, grads
    return run

def make_gelu(index):
    data = np.load(DATA %% index)
    x = torch.from_numpy(data["gelu_x"]).requires_grad_()
    g = torch.from_numpy(data["gelu_g"])
    def run():
        F.gelu(x).backward(g)
        x.grad = None
    return run

runs = {}
for line in sys.stdin:
    request = json.loads(line)
    if request[0] == "blas":
        print(json.dumps(blas_answer()), flush=True)
        continue
    if request[0] == "check":  # one step from the initial state: loss and gradients
        _, index, sdpa, path = request
        loss, grads = make_step(index, sdpa)(keep=True)
        np.savez(path, loss=loss.detach().numpy(), **grads)
        print(json.dumps(path), flush=True)
        continue
    index, sdpa, repeat = request  # sdpa "gelu": the GELU alone
    key = (index, sdpa)
    if key not in runs:
        runs[key] = make_gelu(index) if sdpa == "gelu" else make_step(index, sdpa)
        runs[key]()  # warm-up (AdamW's state is made at the first step)
    t = time.perf_counter()
    for _ in range(repeat):
        runs[key]()
    print(json.dumps((time.perf_counter() - t) / repeat), flush=True)
"""


class GPTTorchWorker(TorchWorker):
    """The timing worker (``time(index, sdpa, repeat)``) running the PyTorch GPT, plus
    ``check``: the loss and gradients of one step from the initial state."""

    def __init__(self, data_pattern: str):
        super().__init__(torch_blas_source() + TORCH_WORKER % {
            "data": data_pattern, "lr": LR, "weight_decay": WEIGHT_DECAY,
            "model": MODEL_SOURCE})
        self.data_pattern = data_pattern

    def check(self, index: int, sdpa: bool) -> dict:
        path = self.data_pattern.replace("%d", f"{index}_check_{int(sdpa)}")
        return dict(np.load(self.request("check", index, sdpa, path)))


def check_agreement(index: int, data: dict, worker: GPTTorchWorker) -> str:
    """One step of the engine and of ``sdpa`` from the same state gives the op-for-op
    PyTorch model's loss and gradients (to ``TOLERANCE``), or AssertionError. Returns a
    one-line summary of the worst differences."""
    reference = worker.check(index, False)
    loss, grads = engine_step(index, data)()
    results = {"engine": {"loss": loss.numpy(), **{k: g.numpy() for k, g in grads.items()}},
               "sdpa": worker.check(index, True)}
    summary = []
    for name, result in results.items():
        worst, where = worst_difference(result, reference)
        if not worst <= TOLERANCE:
            raise AssertionError(f"{name} differs from the PyTorch model: {where} off by "
                                 f"{worst:.2e} of its largest value")
        summary.append(f"{name} {worst:.1e} ({where})")
    return f"{len(reference)} arrays; " + ", ".join(summary)


# ---------------------------------------------------------------------------- profile
def _op_classes() -> list[type]:
    """Every op class (Function's subclasses, all levels)."""
    found, todo = [], list(Function.__subclasses__())
    while todo:
        cls = todo.pop()
        found.append(cls)
        todo.extend(cls.__subclasses__())
    return found


class OpTimer:
    """While entered, every op's ``forward`` and ``backward`` is timed: ``seconds[(op,
    'forward' | 'backward')]`` sums each call's own time (a nested op's time is its own,
    not its caller's). Leaving restores the ops' methods."""

    def __init__(self):
        self.seconds: dict = defaultdict(float)
        self._stack: list[float] = []  # per open call: time spent in calls inside it
        self._saved: list = []

    def _timed(self, key, method):
        stack, seconds = self._stack, self.seconds

        def timed(*args, **kwargs):
            stack.append(0.0)
            start = time.perf_counter()
            try:
                return method(*args, **kwargs)
            finally:
                total = time.perf_counter() - start
                inner = stack.pop()
                seconds[key] += total - inner
                if stack:
                    stack[-1] += total

        return staticmethod(timed)

    def __enter__(self):
        classes = _op_classes()
        wrappers = []
        for cls in classes:  # every method read before any is replaced
            for kind in ("forward", "backward"):
                wrappers.append((cls, kind, cls.__dict__.get(kind),
                                 self._timed((cls.__name__, kind), getattr(cls, kind))))
        for cls, kind, own, wrapper in wrappers:
            setattr(cls, kind, wrapper)
            self._saved.append((cls, kind, own))
        return self

    def __exit__(self, *exc) -> None:
        for cls, kind, own in self._saved:
            if own is None:
                delattr(cls, kind)
            else:
                setattr(cls, kind, own)
        self._saved.clear()


def op_profile(index: int, data: dict, steps: int, top: int = 16) -> str:
    """The engine step's time by op (forward and backward apart), the optimizer, and the
    rest: medians per step over ``steps`` steps, after a warm one."""
    timed = defaultdict(list)
    run = engine_step(index, data, timed)
    run()
    per_step, totals = defaultdict(list), []
    with OpTimer() as timer:
        for _ in range(steps):
            timer.seconds.clear()
            for key in timed:
                timed[key].clear()
            start = time.perf_counter()
            run()
            totals.append(time.perf_counter() - start)
            for key, s in [*timer.seconds.items(), *((k, v[0]) for k, v in timed.items())]:
                per_step[key].append(s)
    for key in per_step:  # an op missing from a step took 0 there
        per_step[key] += [0.0] * (steps - len(per_step[key]))
    medians = {key: float(np.median(s)) for key, s in per_step.items()}
    total = float(np.median(totals))
    ops = [key for key in medians if isinstance(key, tuple)]
    rest = total - sum(medians.values())
    by_op = defaultdict(float)
    for op, _ in ops:
        by_op[op] += medians[(op, "forward")] + medians.get((op, "backward"), 0.0)
    lines = [f"  step {total * 1e3:.1f} ms (median of {steps}, profiled); ops' forward "
             f"{sum(medians[k] for k in ops if k[1] == 'forward') * 1e3:.1f}, backward "
             f"{sum(medians[k] for k in ops if k[1] == 'backward') * 1e3:.1f}, AdamW.step "
             f"{medians['AdamW.step'] * 1e3:.1f}, zero_grad {medians['zero_grad'] * 1e3:.1f},"
             f" the rest (recording, sweep, Python) {rest * 1e3:.1f}",
             f"  {'op':<22} {'forward':>8} {'backward':>9} {'both':>7} {'share':>6}  (ms)"]
    for op in sorted(by_op, key=by_op.get, reverse=True)[:top]:
        f, b = medians[(op, "forward")], medians.get((op, "backward"), 0.0)
        lines.append(f"  {op:<22} {f * 1e3:8.2f} {b * 1e3:9.2f} {(f + b) * 1e3:7.2f} "
                     f"{(f + b) / total:6.1%}")
    return "\n".join(lines)


# ---------------------------------------------------------------------------- driver
def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=25)
    parser.add_argument("--profile", action="store_true",
                        help="also print a per-op profile of the engine's step per case")
    parser.add_argument("--profile-steps", type=int, default=15)
    args = parser.parse_args(argv)

    from threadpoolctl import threadpool_limits

    threadpool_limits(1)
    with tempfile.TemporaryDirectory() as tmp:
        pattern = str(Path(tmp) / "case_%d.npz")
        cases = [case_data(i) for i in range(len(CASES))]
        for i, data in enumerate(cases):
            np.savez(pattern % i, n_heads=CASES[i][4], n_layers=CASES[i][5], **data)
        worker = GPTTorchWorker(pattern) if torch_available() else None
        if worker is None:
            print("PyTorch is not installed: its columns are skipped.")
        print(blas_report(worker))

        if worker is not None:
            print("Agreement of one step with the op-for-op PyTorch model (max |difference| "
                  "/ max |value|, worst array):")
            for i, data in enumerate(cases):
                print(f"  case {i}: {check_agreement(i, data, worker)}")

        print(f"\nGPT training step (forward, cross-entropy, backward, AdamW, zero_grad), "
              f"float32, exact GELU — milliseconds per step, medians of {args.rounds} "
              "interleaved rounds.\ntorch: attention op for op as the engine's; sdpa: "
              "F.scaled_dot_product_attention.\nRatios: the median of the per-round "
              "ratios (q1-q3: their quartiles).")
        print(f"{'B x T, vocab, d, heads, layers':>31} {'engine':>8} {'torch':>7} "
              f"{'sdpa':>7} {'engine/torch (q1-q3)':>23} {'engine/sdpa (q1-q3)':>23}")
        for i, (case, data) in enumerate(zip(CASES, cases)):
            timers = {"engine": wall_time(engine_step(i, data))}
            if worker is not None:
                timers["torch"] = lambda i=i: worker.time(i, False, 1)
                timers["sdpa"] = lambda i=i: worker.time(i, True, 1)
            samples = {name: [] for name in timers}
            medians = interleaved_medians(
                {name: recorded(timer, samples[name]) for name, timer in timers.items()},
                args.rounds)
            batch, context, vocab, d_model, n_heads, n_layers = case
            label = f"{batch}x{context}, {vocab}, {d_model}, {n_heads}, {n_layers}"
            ms = {side: medians.get(side, np.nan) * 1e3 for side in ("engine", "torch", "sdpa")}
            row = f"{label:>31} {ms['engine']:8.2f} {ms['torch']:7.2f} {ms['sdpa']:7.2f}"
            for side in ("torch", "sdpa"):
                if side in samples:
                    row += f" {ratio_with_quartiles(samples['engine'], samples[side]):>23}"
            print(row)

        print(f"\nExact GELU alone (F.gelu forward + backward, float32, the MLP's (B, T, 4d) "
              f"array), milliseconds, medians of {args.rounds} interleaved rounds:")
        print(f"{'B x T x 4d':>31} {'engine':>8} {'torch':>7} {'engine/torch (q1-q3)':>23}")
        for i, data in enumerate(cases):
            timers = {"engine": wall_time(engine_gelu(data))}
            if worker is not None:
                timers["torch"] = lambda i=i: worker.time(i, "gelu", 1)
            samples = {name: [] for name in timers}
            medians = interleaved_medians(
                {name: recorded(timer, samples[name]) for name, timer in timers.items()},
                args.rounds)
            label = "x".join(map(str, data["gelu_x"].shape))
            row = (f"{label:>31} {medians['engine'] * 1e3:8.2f} "
                   f"{medians.get('torch', np.nan) * 1e3:7.2f}")
            if "torch" in samples:
                row += f" {ratio_with_quartiles(samples['engine'], samples['torch']):>23}"
            print(row)
        if worker is not None:
            worker.close()

    if args.profile:
        for i, data in enumerate(cases):
            print(f"\nPer-op profile of the engine's step, case {i} {CASES[i]} (ms per step, "
                  "medians; top ops by forward + backward):")
            print(op_profile(i, data, args.profile_steps))


if __name__ == "__main__":
    main()
