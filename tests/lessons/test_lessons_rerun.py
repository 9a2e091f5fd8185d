"""The lessons give the same outputs on a second run in the same job.

``pytest`` validates every notebook once with nbval (fresh kernel, stored outputs
compared). This test runs that validation a second time in a separate pytest
process, so a lesson whose outputs drift from run to run (an unseeded generator,
a timing, a leaked memory address) fails here even if its stored outputs happened
to match the first run.

It is marked ``rerun`` and runs only when asked (``python -m pytest -m rerun``): CI
runs it as a phase of its own (``.ci/run``), so the everyday ``pytest`` runs every
lesson once.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
LESSONS = sorted((ROOT / "notebooks").glob("[0-9]*.ipynb"))


@pytest.mark.rerun
@pytest.mark.skipif(not LESSONS, reason="no lessons in notebooks/")
def test_lessons_give_the_same_outputs_on_a_second_run():
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "notebooks"],
        cwd=ROOT, capture_output=True, text=True, timeout=1200, check=False)
    tail = "\n".join(done.stdout.splitlines()[-40:])
    assert done.returncode == 0, f"the second nbval run of the lessons failed:\n{tail}"
    assert " passed" in tail
