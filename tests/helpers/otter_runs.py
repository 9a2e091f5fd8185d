"""``otter run`` on several submissions, two at a time (one per core of a 2-core CI
machine): six at once starve whatever else the test run does, and a notebook kernel
started elsewhere in the suite then misses its 60-second start-up limit."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

AT_ONCE = 2
# What otter says when the kernel it launched died at once: two kernels started at the
# same moment can be handed the same port (jupyter_client picks free ports, then binds).
KERNEL_START_RACE = "Kernel died before replying to kernel_info"


def otter_results(runs: dict, at_once: int = AT_ONCE) -> dict:
    """``runs``: name -> (autograder zip, submission notebook); otter writes results.json
    beside the notebook. Returns name -> the tests of that results.json (each a dict with
    ``name``, ``score``, ``output``...). A run that lost the kernel start-up race is run
    once more; any other failure fails the test with the end of otter's log."""
    pending, running, results, retried = list(runs.items()), [], {}, set()
    while pending or running:
        while pending and len(running) < at_once:
            name, (autograder, notebook) = pending.pop(0)
            running.append((name, Path(notebook), _start(Path(autograder), Path(notebook))))
        name, notebook, process = running.pop(0)
        log, _ = process.communicate(timeout=900)
        if process.returncode and KERNEL_START_RACE in log and name not in retried:
            retried.add(name)
            pending.append((name, runs[name]))
            continue
        assert process.returncode == 0, (name, log[-3000:])
        results[name] = json.loads((notebook.parent / "results.json").read_text())["tests"]
    return results


def _start(autograder: Path, notebook: Path) -> subprocess.Popen:
    """``otter run``, as an instructor grades one submission."""
    return subprocess.Popen(
        [sys.executable, "-m", "otter", "run", "-a", str(autograder), "-o",
         str(notebook.parent), "--no-logo", str(notebook)], cwd=notebook.parent,
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
