"""What every benchmark here shares: interleaved timing, PyTorch in its own process, and
a line saying which BLAS each side runs on.

On 2 cores, PyTorch and NumPy in one process slow each other down, so PyTorch runs in
a worker process that times one run per request; the benchmarks interleave those
requests with their own timers, round by round, and report medians.

Figures mean little without the BLAS library, its version, the CPU kernel it picked
and its thread count: ``blas_report`` gives them (from threadpoolctl) for this process
and, through ``TORCH_BLAS_REQUEST``, for the PyTorch worker. It also names the
environment variables that override OpenBLAS's kernel choice (see bench/README.md).
"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np


def torch_available() -> bool:
    """Whether PyTorch can be imported here (without importing it)."""
    try:
        return importlib.util.find_spec("torch") is not None
    except ValueError:
        return False


def wall_time(run, repeat: int = 1):
    """A timer for ``run``: warms it up once, then each call runs it ``repeat`` times back
    to back (as a training loop runs its steps) and returns seconds per run."""
    run()  # warm-up

    def timer() -> float:
        start = time.perf_counter()
        for _ in range(repeat):
            run()
        return (time.perf_counter() - start) / repeat

    return timer


def interleaved_medians(timers: dict, rounds: int) -> dict:
    """Each timer (a function returning seconds) once per round, interleaved; medians.

    The order turns by one each round, so no variant always runs right after the same
    other one: whatever a run leaves in the CPU's caches (or evicts from them) falls on
    every variant alike."""
    samples = {name: [] for name in timers}
    names = list(timers)
    for round_ in range(rounds):
        k = round_ % len(names)
        for name in names[k:] + names[:k]:
            samples[name].append(timers[name]())
    return {name: float(np.median(s)) for name, s in samples.items()}


def recorded(timer, samples: list):
    """``timer``, also appending each of its readings to ``samples``."""
    def run() -> float:
        samples.append(timer())
        return samples[-1]

    return run


def ratio_with_quartiles(numerator: list, denominator: list) -> str:
    """The median of the per-round ratios and, in brackets, their quartiles."""
    q1, median, q3 = np.percentile(np.asarray(numerator) / np.asarray(denominator),
                                   [25, 50, 75])
    return f"{median:.2f} ({q1:.2f}-{q3:.2f})"


class TorchWorker:
    """A Python process running ``source``, which reads one JSON request per line and
    answers each with one JSON value (for timing requests: the seconds one run took)."""

    def __init__(self, source: str):
        self.proc = subprocess.Popen([sys.executable, "-c", source], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, text=True)

    def request(self, *args):
        """Send ``args`` as a JSON list; return the worker's JSON answer."""
        self.proc.stdin.write(json.dumps(list(args)) + "\n")
        self.proc.stdin.flush()
        return json.loads(self.proc.stdout.readline())

    time = request  # a timing request answers with seconds

    def close(self) -> None:
        self.proc.stdin.close()
        self.proc.wait()


# Environment variables that change which kernels OpenBLAS runs (see bench/README.md).
BLAS_OVERRIDES = ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE", "OPENBLAS_NUM_THREADS",
                  "OMP_NUM_THREADS", "MKL_NUM_THREADS")


def describe_pools(pools: list[dict]) -> str:
    """threadpoolctl's ``threadpool_info()`` as one line per library: the API, the
    implementation and version, the CPU kernel (OpenBLAS's "architecture") and threads."""
    lines = []
    for pool in pools:
        kernel = f", kernel {pool['architecture']}" if pool.get("architecture") else ""
        version = f" {pool['version']}" if pool.get("version") else ""
        lines.append(f"{pool.get('user_api', '?')}: {pool.get('internal_api', '?')}{version}"
                     f"{kernel}, {pool.get('num_threads')} thread(s) "
                     f"({Path(pool.get('filepath', '')).name})")
    return "; ".join(lines) or "no BLAS or OpenMP library loaded"


def blas_report(worker: TorchWorker | None = None) -> str:
    """Which BLAS this process (NumPy) uses, and the PyTorch worker if there is one
    (it must answer ``TORCH_BLAS_REQUEST``), plus any overriding variables that are set."""
    from threadpoolctl import threadpool_info

    lines = [f"NumPy {np.__version__}: {describe_pools(threadpool_info())}"]
    if worker is not None:
        lines.append(f"PyTorch: {worker.request(*TORCH_BLAS_REQUEST)}")
    overrides = [f"{k}={os.environ[k]}" for k in BLAS_OVERRIDES if k in os.environ]
    lines.append("set: " + ", ".join(overrides) if overrides else
                 "no OPENBLAS_*/OMP/MKL variables set")
    if {"OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE"} & set(os.environ):
        lines.append("warning: OPENBLAS_CORETYPE / OPENBLAS_L2_SIZE force another CPU "
                     "kernel; unset them for figures like a learner's laptop "
                     "(bench/README.md)")
    return "\n".join("BLAS  " + line for line in lines)


# What a PyTorch worker answers to ("blas", 0): its own libraries, described as above.
TORCH_BLAS_REQUEST = ("blas", 0)
TORCH_BLAS_ANSWER = r"""
def blas_answer():
    import re
    import torch
    from threadpoolctl import threadpool_info
    config = torch.__config__.show()
    blas = re.search(r"BLAS_INFO=(\w+)", config)
    cpu = re.search(r"CPU capability usage: (\w+)", config)
    onednn = torch.backends.mkldnn.is_available()
    return (f"torch {torch.__version__}: BLAS {blas.group(1) if blas else '?'}, "
            f"CPU kernels {cpu.group(1) if cpu else '?'}, "
            f"oneDNN {'available' if onednn else 'absent'}, "
            f"{torch.get_num_threads()} intra-op thread(s); "
            f"loaded in its process: {describe_pools(threadpool_info())}")
"""


def torch_blas_source() -> str:
    """Source for a PyTorch worker: ``describe_pools`` and ``blas_answer()``."""
    import inspect

    return ("from pathlib import Path\n" + inspect.getsource(describe_pools)
            + TORCH_BLAS_ANSWER)


# ---------------------------------------------------------------------------- agreement
# Gradients whose largest value is below this share of the largest gradient of a step are
# zero in exact arithmetic (a transformer's k_proj.bias: a per-row constant in the scores,
# which softmax ignores) and are compared against that largest gradient instead.
ZERO_SHARE = 1e-4


def worst_difference(ours: dict, reference: dict) -> tuple[float, str]:
    """The largest max|ours - reference| / max|reference| over the float arrays of
    ``reference`` (all must be in ``ours``), and the name of that array: how far one
    training step of the engine is from PyTorch's. An array whose largest value is below
    ``ZERO_SHARE`` of the largest gradient is measured against that largest gradient (it
    is zero but for rounding)."""
    missing = sorted(set(reference) - set(ours))
    if missing:
        raise AssertionError(f"missing from the step's results: {missing}")
    largest = max(float(np.abs(r).max()) for k, r in reference.items()
                  if k != "loss" and r.dtype.kind == "f")
    worst, where = 0.0, ""
    for name, ref in reference.items():
        if ref.dtype.kind != "f":
            continue
        ref = ref.astype(np.float64)
        scale = float(np.abs(ref).max())
        if name != "loss" and scale < ZERO_SHARE * largest:
            scale = largest
        diff = float(np.abs(np.asarray(ours[name], dtype=np.float64) - ref).max())
        diff /= max(scale, 1e-30)
        if diff >= worst:
            worst, where = diff, name
    return worst, where
