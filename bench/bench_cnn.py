"""One training step of a small CNN: the engine vs hand-written NumPy vs PyTorch.

The network (float32, batch norm in training mode, convs without bias):

    conv3x3 -> batch norm -> ReLU -> max pool 2
    -> residual block (conv3x3 -> bn -> ReLU -> conv3x3 -> bn, + identity)
    -> global average pool -> linear (10 classes) -> cross-entropy

and one step is forward, backward and a plain SGD update (lr 0.01), for

* a 32x1x28x28 batch with 8 channels (MNIST-sized);
* a 64x3x32x32 batch with 16 channels (CIFAR-sized).

Variants: the engine (``autograd_core.nn`` modules + ``optim.SGD``); the same network
written by hand in NumPy (``bench/numpy_cnn.py``: textbook im2col conv, closed-form
batch-norm backward); PyTorch CPU in its own process, with its default CPU path
(oneDNN) and with ``torch.backends.mkldnn.enabled = False`` ("torch-native").

All variants start from the same weights and batch (the engine model's initial
state, written to a temporary .npz file that the PyTorch process reads). Before
timing, one step of each is checked to give the same loss, gradients and
running statistics to float32 tolerance.

Method (as bench_conv.py): BLAS pinned to one thread (threadpoolctl),
``torch.set_num_threads(1)``; variants interleaved round by round; the median per
variant, and the fastest round (on a shared machine, the least disturbed one).

Note: as in bench_conv.py, page faults on freshly allocated multi-MB arrays are a
visible share of the NumPy variants on glibc. The engine's conv builds its columns a
few images at a time (about 1 MB) and its backward writes them into scratch arrays it
keeps (``ops/conv.py``), which took its 64x3x32x32 step from ~5,000 faults (~2 µs each
on our VM, a quarter of the step) to 1,000-1,500, all in arrays the ops return or save
(batch norm, max pool), and only when interleaved with the hand-written step, which
still pays its own. ``MALLOC_TOP_PAD_=268435456`` removes them if you want to compare
the arithmetic alone.

Run (see bench/README.md: unset OPENBLAS_CORETYPE and OPENBLAS_L2_SIZE for it):
``python bench/bench_cnn.py [--rounds N]``. It prints the BLAS library each side uses.
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
import numpy_cnn  # noqa: E402
from timing import (  # noqa: E402
    TorchWorker,
    blas_report,
    interleaved_medians,
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

CASES = [  # (input shape, channels)
    ((32, 1, 28, 28), 8),
    ((64, 3, 32, 32), 16),
]
CLASSES = 10
LR = 0.01
TOLERANCE = 3e-4  # max |difference| / max |reference| per array; seen: up to 6e-5


class SmallCNN(nn.Module):
    """The benchmark network; its ``state_dict`` names are the keys ``numpy_cnn`` reads."""

    def __init__(self, in_channels: int, channels: int, generator=None):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, channels, 3, padding=1, bias=False,
                              generator=generator)
        self.bn = nn.BatchNorm2d(channels)
        self.block = nn.ResidualBlock(channels, generator=generator)
        self.fc = nn.Linear(channels, CLASSES, generator=generator)

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.bn(self.conv(x))), 2)
        x = self.block(x)
        return self.fc(x.mean(dim=(2, 3)))  # global average pool


def case_data(index: int) -> dict:
    """Initial state (every parameter and buffer, by name), input ``x`` and labels
    ``y`` of a case. Batch-norm scales and shifts are drawn away from 1 and 0 so that
    the agreement check sees them."""
    shape, channels = CASES[index]
    rng = np.random.default_rng(index)
    model = SmallCNN(shape[1], channels, generator=ag.Generator(index))
    data = {name: t.numpy().copy() for name, t in model.state_dict().items()}
    for name in data:
        if name.endswith(("bn.weight", "bn1.weight", "bn2.weight")):
            data[name] = (1 + 0.2 * rng.standard_normal(channels)).astype(np.float32)
        elif name.endswith(("bn.bias", "bn1.bias", "bn2.bias")):
            data[name] = (0.2 * rng.standard_normal(channels)).astype(np.float32)
    data["x"] = rng.standard_normal(shape).astype(np.float32)
    data["y"] = rng.integers(0, CLASSES, size=shape[0])
    return data


# ---------------------------------------------------------------------------- variants
def engine_step(data: dict):
    """The step with the engine; ``run()`` returns (loss, gradients by name), and
    ``run.model`` is the model it trains."""
    model = SmallCNN(data["x"].shape[1], data["conv.weight"].shape[0])
    model.load_state_dict({k: v for k, v in data.items() if k not in ("x", "y")})
    names, params = zip(*model.named_parameters())
    opt = optim.SGD(params, lr=LR)
    x, y = ag.tensor(data["x"]), ag.tensor(data["y"])

    def run():
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        grads = dict(zip(names, (p.grad for p in params)))
        opt.step()
        opt.zero_grad()
        return loss, grads

    run.model = model
    return run


def numpy_step(data: dict):
    """The step written by hand; ``run()`` returns (loss, gradients by name)."""
    state = {k: v.copy() for k, v in data.items() if k not in ("x", "y")}
    x, y = data["x"], data["y"]

    def run():
        return numpy_cnn.train_step(state, x, y, LR)

    return run


TORCH_WORKER = r"""
import json, sys, time
from collections import OrderedDict
import numpy as np
import torch
from torch import nn
torch.set_num_threads(1)
DATA, LR = %(data)r, %(lr)r

class SmallCNN(nn.Module):
    def __init__(self, in_channels, channels, classes):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, channels, 3, padding=1, bias=False)
        self.bn = nn.BatchNorm2d(channels)
        self.block = nn.Module()
        self.block.body = nn.Sequential(OrderedDict([
            ("conv1", nn.Conv2d(channels, channels, 3, padding=1, bias=False)),
            ("bn1", nn.BatchNorm2d(channels)), ("relu", nn.ReLU()),
            ("conv2", nn.Conv2d(channels, channels, 3, padding=1, bias=False)),
            ("bn2", nn.BatchNorm2d(channels))]))
        self.fc = nn.Linear(channels, classes)

    def forward(self, x):
        x = nn.functional.max_pool2d(torch.relu(self.bn(self.conv(x))), 2)
        x = self.block.body(x) + x
        return self.fc(x.mean(dim=(2, 3)))

def make_step(index):
    data = np.load(DATA %% index)
    model = SmallCNN(data["x"].shape[1], data["conv.weight"].shape[0], data["fc.bias"].size)
    model.load_state_dict({k: torch.from_numpy(data[k]) for k in model.state_dict()})
    opt = torch.optim.SGD(model.parameters(), lr=LR)
    x, y = torch.from_numpy(data["x"]), torch.from_numpy(data["y"])
    def run():
        loss = nn.functional.cross_entropy(model(x), y)
        loss.backward()
        grads = {k: p.grad.numpy().copy() for k, p in model.named_parameters()}
        opt.step()
        opt.zero_grad()
        return loss, grads, model
    return run

runs = {}
for line in sys.stdin:
    request = json.loads(line)
    if request[0] == "blas":
        print(json.dumps(blas_answer()), flush=True)
        continue
    if request[0] == "check":  # one step from the initial state: loss, grads, buffers
        _, index, mkldnn, path = request
        torch.backends.mkldnn.enabled = mkldnn
        loss, grads, model = make_step(index)()
        buffers = {k: b.numpy() for k, b in model.named_buffers()}
        np.savez(path, loss=loss.detach().numpy(), **grads, **buffers)
        print(json.dumps(path), flush=True)
        continue
    index, mkldnn = request
    torch.backends.mkldnn.enabled = mkldnn
    if index not in runs:
        runs[index] = make_step(index)
    runs[index]()  # a warm call first: the flag may have just switched backends
    t = time.perf_counter(); runs[index](); elapsed = time.perf_counter() - t
    print(json.dumps(elapsed), flush=True)
"""


class CNNTorchWorker(TorchWorker):
    """The timing worker (``time(index, mkldnn)``) running this benchmark's step,
    plus ``check``: the loss, gradients and buffers after one step from the start."""

    def __init__(self, data_pattern: str):
        super().__init__(torch_blas_source() + TORCH_WORKER % {"data": data_pattern, "lr": LR})
        self.data_pattern = data_pattern

    def check(self, index: int, mkldnn: bool) -> dict:
        path = self.data_pattern.replace("%d", f"{index}_check_{int(mkldnn)}")
        return dict(np.load(self.request("check", index, mkldnn, path)))


# ---------------------------------------------------------------------------- checking
def _as_arrays(loss, grads: dict, buffers: dict) -> dict:
    """Loss, gradients and buffers of one step as NumPy arrays, by name."""
    def array(v):
        return v.numpy() if isinstance(v, ag.Tensor) else np.asarray(v)

    return {"loss": array(loss), **{k: array(g) for k, g in grads.items()},
            **{k: array(b) for k, b in buffers.items()}}


def check_agreement(index: int, data: dict, worker: CNNTorchWorker | None) -> str:
    """One step of every variant from the same state gives the hand-written step's
    loss, gradients and running statistics (to ``TOLERANCE``), or AssertionError.
    Returns a one-line summary of the worst differences."""
    state = {k: v.copy() for k, v in data.items() if k not in ("x", "y")}
    loss, grads = numpy_cnn.train_step(state, data["x"], data["y"], LR)
    reference = _as_arrays(loss, grads, {k: v for k, v in state.items() if "running" in k})
    engine_run = engine_step(data)
    loss, grads = engine_run()
    results = {"engine": _as_arrays(loss, grads, dict(engine_run.model.named_buffers()))}
    if worker is not None:
        results["torch"] = worker.check(index, True)
        results["torch-native"] = worker.check(index, False)
    summary = []
    for name, result in results.items():
        worst, where = worst_difference(result, reference)
        if not worst <= TOLERANCE:
            raise AssertionError(f"{name} differs from the hand-written NumPy step: "
                                 f"{where} off by {worst:.2e} of its largest value")
        summary.append(f"{name} {worst:.1e} ({where})")
    return f"{len(reference)} arrays; " + ", ".join(summary)


# ---------------------------------------------------------------------------- driver
def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=25)
    args = parser.parse_args(argv)

    from threadpoolctl import threadpool_limits

    threadpool_limits(1)
    with tempfile.TemporaryDirectory() as tmp:
        pattern = str(Path(tmp) / "case_%d.npz")
        cases = [case_data(i) for i in range(len(CASES))]
        for i, data in enumerate(cases):
            np.savez(pattern % i, **data)
        worker = CNNTorchWorker(pattern) if torch_available() else None
        if worker is None:
            print("PyTorch is not installed: its columns are skipped.")
        print(blas_report(worker))

        print("Agreement of one step with the hand-written NumPy step (max |difference| / "
              "max |value|, worst array):")
        for i, data in enumerate(cases):
            print(f"  case {i}: {check_agreement(i, data, worker)}")

        print(f"\nCNN training step (forward, backward, SGD), float32 — milliseconds per "
              f"step over {args.rounds} interleaved rounds: the median, then the fastest "
              "round (the one least disturbed by other processes).\n"
              "torch: default CPU path (oneDNN); torch-native: torch.backends.mkldnn off.")
        print(f"{'input':>11} {'ch':>3} {'':>6} {'engine':>7} {'numpy':>7} {'torch':>7} "
              f"{'torch-native':>12} {'engine/numpy':>12} {'engine/torch':>12} "
              f"{'engine/native':>13}")
        for i, ((shape, channels), data) in enumerate(zip(CASES, cases)):
            timers = {"engine": wall_time(engine_step(data)),
                      "numpy": wall_time(numpy_step(data))}
            if worker is not None:
                timers["torch"] = lambda i=i: worker.time(i, True)
                timers["native"] = lambda i=i: worker.time(i, False)
            samples = {name: [] for name in timers}
            medians = interleaved_medians(
                {name: recorded(timer, samples[name]) for name, timer in timers.items()},
                args.rounds)
            fastest = {name: min(s) for name, s in samples.items()}
            for label, seconds in (("median", medians), ("min", fastest)):
                _print_row(shape if label == "median" else "", channels, label, seconds)
        if worker is not None:
            worker.close()


def _print_row(shape, channels, label: str, seconds: dict) -> None:
    ms = {k: v * 1e3 for k, v in seconds.items()}
    torch_ms, native_ms = ms.get("torch", np.nan), ms.get("native", np.nan)
    shape_text = "x".join(map(str, shape))
    channel_text = channels if shape else ""
    print(f"{shape_text:>11} {channel_text:>3} {label:>6} {ms['engine']:7.3f} "
          f"{ms['numpy']:7.3f} {torch_ms:7.3f} {native_ms:12.3f} "
          f"{ms['engine'] / ms['numpy']:12.2f} {ms['engine'] / torch_ms:12.2f} "
          f"{ms['engine'] / native_ms:13.2f}")


if __name__ == "__main__":
    main()
