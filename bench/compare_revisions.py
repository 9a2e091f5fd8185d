"""The engine of two revisions timed side by side in one run: after/before ratios.

A change to the engine's core (the sweep, recording, an op's backward) must not slow the
plain ``backward()``. This times the same workloads as ``bench_engine.py``,
``bench_cnn.py`` and ``bench_transformer.py`` (the per-op chain, the MLP step, the CNN
step, the transformer block's step) with ``autograd_core`` taken from two trees: a git
revision (``--before``, default ``HEAD``, exported with ``git archive``) and the working
tree (``--after``, default: this checkout). Each tree runs in a worker process of its
own; the two are driven round by round, in turn, so a disturbance of the machine falls
on both alike. A process on its own runs a few percent faster or slower than another
running the very same code (where its arrays land in memory): so several pairs of
workers are started one after another (``--pairs``), each timing a few rounds
(``--rounds``). Each figure is the median of the per-round ratio after/before over all
of them, with its quartiles: below 1 is faster.

Run (see bench/README.md: unset OPENBLAS_CORETYPE and OPENBLAS_L2_SIZE for it)::

    env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE .venv/bin/python bench/compare_revisions.py \\
        --before main~3 [--rounds N]
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # the repository root: bench.timing
from bench.timing import TorchWorker  # noqa: E402

# name -> (what to build: the bench function and its argument, runs timed back to back
# per request: about 50 ms on a 2-core development VM, long enough for a steady figure)
WORKLOADS = {
    "chain of ops, (1, 1)": (("chain", (1, 1)), 3),
    "chain of ops, (4, 4)": (("chain", (4, 4)), 3),
    "chain of ops, (64, 64)": (("chain", (64, 64)), 2),
    "MLP step, batch 64": (("mlp", 64), 40),
    "MLP step, batch 512": (("mlp", 512), 7),
    "CNN step, case 0": (("cnn", 0), 8),
    "CNN step, case 1": (("cnn", 1), 2),
    "transformer step, case 0": (("block", 0), 2),
    "transformer step, case 1": (("block", 1), 4),
}


# ------------------------------------------------------------------------- the worker
def worker(tree: str) -> None:
    """Serve timing requests with ``autograd_core`` from ``tree``: one JSON request a line
    (``["where"]`` or ``["time", name]``), one JSON answer a line."""
    if hasattr(os, "sched_setaffinity") and len(os.sched_getaffinity(0)) > 1:
        os.sched_setaffinity(0, {max(os.sched_getaffinity(0))})  # both workers: one core
    sys.path.insert(0, tree)
    from threadpoolctl import threadpool_limits

    import autograd_core  # first, from ``tree``: the bench modules then find it imported

    threadpool_limits(1)
    from bench import bench_cnn, bench_engine, bench_transformer
    from bench.timing import wall_time

    def build(kind, arg):
        if kind == "chain":
            return bench_engine.engine_chain(tuple(arg))
        if kind == "mlp":
            return bench_engine.engine_mlp_step(arg)
        if kind == "cnn":
            return bench_cnn.engine_step(bench_cnn.case_data(arg))
        data = bench_transformer.case_data(arg)
        return bench_transformer.engine_step(arg, data, "none")

    timers = {}
    for line in sys.stdin:
        request = json.loads(line)
        if request[0] == "where":
            answer = str(Path(autograd_core.__file__).parent)
        else:
            name = request[1]
            if name not in timers:
                (kind, arg), repeat = WORKLOADS[name]
                timers[name] = wall_time(build(kind, arg), repeat)
            gc.collect()  # each timing starts from the same collector state
            answer = timers[name]()
        print(json.dumps(answer), flush=True)


def start_worker(tree: Path) -> TorchWorker:
    """A worker process (bench.timing's, which any source can run) serving
    ``autograd_core`` from ``tree``."""
    return TorchWorker(f"import sys; sys.path.insert(0, {str(ROOT)!r})\n"
                       f"from bench.compare_revisions import worker; worker({str(tree)!r})")


# ------------------------------------------------------------------------- the driver
def export(revision: str, into: Path) -> Path:
    """``autograd_core`` as it is at ``revision``, in the folder ``into / "old"``."""
    archive = into / "engine.tar"
    subprocess.run(["git", "archive", "--format=tar", "-o", str(archive), revision,
                    "autograd_core"], cwd=ROOT, check=True)
    tree = into / "old"
    with tarfile.open(archive) as tar:
        tar.extractall(tree, filter="data")
    return tree


def copy(folder: Path, into: Path) -> Path:
    """``folder``'s ``autograd_core`` copied to ``into / "new"``: a sibling of the
    export, so that the two trees differ in nothing but their code (the same worker ran
    a CNN step some 10% slower from a folder elsewhere, repeatably)."""
    tree = into / "new"
    shutil.copytree(folder / "autograd_core", tree / "autograd_core",
                    ignore=shutil.ignore_patterns("__pycache__"))
    return tree


def compare(before: TorchWorker, after: TorchWorker, name: str,
            rounds: int) -> tuple[list, list]:
    """Seconds per run of workload ``name`` before and after, one of each per round, the
    two in turn (which goes first alternates)."""
    times = {id(before): [], id(after): []}
    for round_ in range(rounds):
        for w in (before, after) if round_ % 2 == 0 else (after, before):
            times[id(w)].append(w.request("time", name))
    return times[id(before)], times[id(after)]


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", default="HEAD", help="git revision (default HEAD)")
    parser.add_argument("--after", default=str(ROOT),
                        help="folder holding autograd_core (default: this checkout)")
    parser.add_argument("--pairs", type=int, default=7,
                        help="pairs of worker processes, one after another (default 7)")
    parser.add_argument("--rounds", type=int, default=5, help="rounds per pair (default 5)")
    parser.add_argument("--only", help="time only the workloads whose name has this")
    args = parser.parse_args(argv)
    names = [n for n in WORKLOADS if not args.only or args.only in n]
    times = {name: ([], []) for name in names}
    with tempfile.TemporaryDirectory() as tmp:
        old, new = export(args.before, Path(tmp)), copy(Path(args.after), Path(tmp))
        for pair in range(args.pairs):
            before, after = start_worker(old), start_worker(new)
            try:
                if pair == 0:
                    print(f"before: {args.before}, autograd_core from {before.request('where')}")
                    print(f"after:  {args.after}, autograd_core from {after.request('where')}")
                for name in names:
                    old, new = compare(before, after, name, args.rounds)
                    times[name][0].extend(old)
                    times[name][1].extend(new)
            finally:
                before.close()
                after.close()
    print(f"Per-round ratio after/before, median [quartiles] of {args.pairs} pairs of "
          f"processes x {args.rounds} rounds (below 1: faster):")
    for name, (old, new) in times.items():
        ratios = np.array(new) / np.array(old)
        low, mid, high = np.percentile(ratios, [25, 50, 75])
        print(f"  {name:<26} {mid:6.3f}  [{low:.3f}, {high:.3f}]   "
              f"{np.median(old) * 1e3:8.2f} ms before, {np.median(new) * 1e3:8.2f} ms after")


if __name__ == "__main__":
    main()
