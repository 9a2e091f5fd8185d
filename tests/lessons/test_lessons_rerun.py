"""The lessons give the same outputs on a second run, on other CPU kernels.

``pytest`` validates every notebook once with nbval (fresh kernel, stored outputs
compared). This test runs that validation a second time in a separate pytest
process, with NumPy's and OpenBLAS's kernels switched to other versions
(``tests/helpers/cpu_kernels.py``: NumPy without the SIMD extensions it dispatches to,
AVX2 and AVX-512 on a recent x86 CPU, and OpenBLAS on another processor's kernel). So it
fails on

* a lesson whose outputs drift from run to run (an unseeded generator, a timing, a
  leaked memory address), even if its stored outputs happened to match the first run;
* a stored output that depends on the machine: a value's last bits, which the kernels
  round differently (a mean that is zero up to rounding, printed with all its digits).

It is marked ``rerun`` and runs only when asked (``python -m pytest -m rerun``): CI
runs it as a phase of its own (``.ci/run``), so the everyday ``pytest`` runs every
lesson once.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from cpu_kernels import kernels, other_kernels_env

ROOT = Path(__file__).resolve().parents[2]
LESSONS = sorted((ROOT / "notebooks").glob("[0-9]*.ipynb"))


@pytest.mark.rerun
@pytest.mark.skipif(not LESSONS, reason="no lessons in notebooks/")
def test_lessons_give_the_same_outputs_on_a_second_run_on_other_kernels():
    env, said = other_kernels_env()
    if not env:
        pytest.skip(f"the second run cannot change the CPU kernels here: {said}")
    assert kernels(env) != kernels(), f"asking for {said} changed nothing"
    print(f"second run of the lessons with {said}")
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "notebooks"],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=1200, check=False)
    tail = "\n".join(done.stdout.splitlines()[-40:])
    assert done.returncode == 0, (
        f"the second nbval run of the lessons ({said}) failed: an output that drifts from "
        f"run to run, or one that depends on the machine's CPU kernels:\n{tail}")
    assert " passed" in tail
