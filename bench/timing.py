"""What every benchmark here shares: interleaved timing and PyTorch in its own process.

On 2 cores, PyTorch and NumPy in one process slow each other down, so PyTorch runs in
a worker process that times one run per request; the benchmarks interleave those
requests with their own timers, round by round, and report medians.
"""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
import time

import numpy as np


def torch_available() -> bool:
    """Whether PyTorch can be imported here (without importing it)."""
    try:
        return importlib.util.find_spec("torch") is not None
    except ValueError:
        return False


def wall_time(run):
    """A timer for ``run``: warms it up once, then each call returns seconds of one run."""
    run()  # warm-up

    def timer() -> float:
        start = time.perf_counter()
        run()
        return time.perf_counter() - start

    return timer


def interleaved_medians(timers: dict, rounds: int) -> dict:
    """Each timer (a function returning seconds) once per round, interleaved; medians."""
    samples = {name: [] for name in timers}
    for _ in range(rounds):
        for name, timer in timers.items():
            samples[name].append(timer())
    return {name: float(np.median(s)) for name, s in samples.items()}


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
