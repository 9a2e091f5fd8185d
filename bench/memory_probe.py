"""Peak resident memory of a forward (+ backward) of a deep MLP, in a fresh process.

Shared by the memory test (``tests/engine/test_memory.py``) and the engine benchmark
(``bench/bench_engine.py``), so both measure PyTorch and the engine the same way.
PyTorch does not report its allocations to ``tracemalloc``, so the common measure
is the operating system's: peak resident set size growth (Linux ``/proc``).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

_MEASURE = """
import gc, json, re, sys
sys.path.insert(0, {root!r})

def status(field):
    text = open("/proc/self/status").read()
    return int(re.search(field + r":\\s+(\\d+) kB", text).group(1)) * 1024

{setup}

step()  # warm-up: lazy imports, BLAS kernels, first-touch of the parameters
clear_grads()
gc.collect()
open("/proc/self/clear_refs", "w").write("5")  # reset VmHWM (peak RSS) to current RSS
base = status("VmRSS")
step()
print(json.dumps({{"base": base, "peak": status("VmHWM")}}))
"""

# Each engine's way to make float32 arrays; the model and the step are then the same text.
_ENGINES = {
    "autograd_core": """
import numpy as np
import autograd_core as lib
g = lib.Generator(0)

def randn(*shape):
    return lib.randn(*shape, generator=g, dtype=np.float32)

def zeros(*shape):
    return lib.zeros(*shape, dtype=np.float32)
""",
    "torch": """
import torch as lib
lib.set_num_threads(1)
g = lib.Generator().manual_seed(0)

def randn(*shape):
    return lib.randn(*shape, generator=g)

def zeros(*shape):
    return lib.zeros(*shape)
""",
}

_MLP = """
params = []
for _ in range({depth}):
    params.append((randn({width}, {width}) * {width} ** -0.5).requires_grad_())
    params.append(zeros({width}).requires_grad_())
x = randn({batch}, {width})

def step():
    h = x
    for i in range(0, len(params), 2):
        h = lib.tanh(h @ params[i] + params[i + 1])
    loss = h.sum()
    if {backward}:
        loss.backward()

def clear_grads():
    for p in params:
        p.grad = None
"""


def peak_rss_growth(engine: str, depth: int = 30, width: int = 512, batch: int = 256,
                    backward: bool = True) -> dict:
    """Peak resident memory growth of one forward (+backward) of a float32 tanh MLP
    (``depth`` x ``width``, batch ``batch``), measured in a fresh Python process.

    The process builds the model, runs one warm-up step, drops the gradients, then
    resets the kernel's peak-RSS mark (``/proc/self/clear_refs``) and runs the
    measured step. Returns ``{"base": RSS before, "peak": peak RSS, "growth": peak -
    base}`` in bytes: saved activations, gradients (including the parameter
    gradients, one copy of the parameters) and temporaries, at the worst moment.

    RSS only follows live arrays if freed memory goes back to the OS. glibc's
    malloc (which NumPy and PyTorch's CPU allocator both use) raises its mmap
    threshold after the warm-up frees large blocks, then keeps freed blocks in its
    heap, so the measured step would reuse them unseen (PyTorch then "grows" by
    8 MiB instead of 31 MiB). ``MALLOC_MMAP_THRESHOLD_=65536`` fixes the threshold:
    every block of 64 KiB or more is its own mapping, unmapped on free, for both
    engines alike. PyTorch's CPU allocator keeps no cache of its own by default;
    both run single-threaded so per-thread arenas are alike. Linux only.

    ``engine`` is ``"autograd_core"`` or ``"torch"``.

    >>> peak_rss_growth("autograd_core", depth=4, width=64, batch=8)  # doctest: +SKIP
    {'base': ..., 'peak': ..., 'growth': ...}
    """
    setup = textwrap.dedent(_ENGINES[engine]) + _MLP.format(
        depth=depth, width=width, batch=batch, backward=backward)
    code = _MEASURE.format(root=str(ROOT), setup=setup)
    env = dict(os.environ, OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1",
               MKL_NUM_THREADS="1", MALLOC_MMAP_THRESHOLD_="65536")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          env=env, timeout=300, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"measuring {engine} failed:\n{done.stderr}")
    result = json.loads(done.stdout.strip().splitlines()[-1])
    result["growth"] = result["peak"] - result["base"]
    return result


def can_reset_peak_rss() -> bool:
    """Whether this system lets a process reset its peak-RSS mark (Linux)."""
    return os.access("/proc/self/clear_refs", os.W_OK)
