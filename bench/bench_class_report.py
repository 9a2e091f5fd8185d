"""The class report on a class of 500: how long it takes, and that bad files are listed.

Generates a submissions folder the way a large course fills one: 500 learners, two thirds
handing in exported progress (``learnerNNN.json``) and one third graded by otter
(``learnerNNN/results.json``); each learner has tried a share of the course's items (more
of the early lessons than the late ones), solved most of what they tried, some after the
solution, with wrong tries and named mistakes drawn from the checks' own diagnoses. Two
per cent of the files are malformed in the ways files go wrong: cut off half-way, a field
of the wrong type, nesting thousands deep, random bytes. Then it times the report's
command as a learner-facing instructor runs it, a whole process
(``python -m widgets.course report IN OUT``), and checks that every malformed file is
named in what it printed.

Run: ``python bench/bench_class_report.py [--learners 500] [--rounds 3]``.
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from widgets.exercises.tracking import LESSONS, TRIES  # noqa: E402

MISTAKES = ["transpose", "sign", "scale", "missing_broadcast_sum", "batch_factor", "shape",
            "overwrite", "path_lost"]


def progress_record(rng: random.Random) -> dict:
    """One item's record as exported progress holds it."""
    parts = {f"check:{p}": {"ok": rng.random() < 0.8, "ever": True}
             for p in rng.sample(["dA", "dB", "db", "shape"], rng.randint(1, 3))}
    wrong = rng.choice([0, 0, 0, 1, 1, 2, 3, 5])
    misses = {TRIES: wrong}
    for _ in range(min(wrong, 3)):
        misses[f"mistake:check:{rng.choice(['dA', 'dB', 'db'])}:{rng.choice(MISTAKES)}"] = 1
    solved = all(p["ok"] for p in parts.values())
    return {"parts": parts, "misses": misses,
            "solved": "2026-11-20T10:00:00Z" if solved else None,
            "solution_seen": "2026-11-20T09:00:00Z" if rng.random() < 0.15 else None,
            "after_solution": rng.random() < 0.15}


def tried_items(rng: random.Random) -> list[str]:
    """The items one learner tried: most of the first lessons, fewer of the later ones."""
    items = []
    for k, (_, ids) in enumerate(LESSONS.values()):
        share = max(0.2, 0.95 - 0.05 * k)
        items += [i for i in ids if rng.random() < share]
    return items


def otter_results(rng: random.Random, items: list[str]) -> dict:
    """An otter ``results.json`` grading one question per item."""
    tests = []
    for item in items:
        right = rng.random() < 0.75
        output = "" if right else f"Named mistakes: mistake:check:dB:{rng.choice(MISTAKES)}"
        tests.append({"name": item, "score": 1 if right else 0, "max_score": 1,
                      "output": output})
    return {"tests": [{"name": "Public Tests", "output": ""}, *tests]}


MALFORMED = [
    lambda text: text[: len(text) // 2],                                     # cut off
    lambda text: json.dumps({"items": {"G6": {"misses": ["tries:", 3]}}}),   # wrong type
    lambda text: "[" * 50000 + "]" * 50000,                                  # deep
    lambda text: bytes(range(256)).decode("latin-1") * 4,                    # random bytes
]


def generate(folder: Path, learners: int, seed: int = 0) -> list[str]:
    """Write the class into ``folder``; the relative paths of the malformed files."""
    rng = random.Random(seed)
    bad = []
    for k in range(learners):
        items = tried_items(rng)
        graded = k % 3 == 2
        if graded:
            path = folder / f"learner{k:03}" / "results.json"
            path.parent.mkdir()
            text = json.dumps(otter_results(rng, items))
        else:
            path = folder / f"learner{k:03}.json"
            text = json.dumps({"version": 1, "learner": f"learner {k}",
                               "items": {i: progress_record(rng) for i in items}})
        if rng.random() < 0.02:
            text = MALFORMED[len(bad) % len(MALFORMED)](text)
            bad.append(path.relative_to(folder).as_posix())
        path.write_text(text, encoding="utf-8")
    return bad


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--learners", type=int, default=500)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="class-report-") as work:
        folder = Path(work) / "in"
        folder.mkdir()
        bad = generate(folder, args.learners)
        size = sum(p.stat().st_size for p in folder.rglob("*.json"))
        print(f"{args.learners} learners, {len(bad)} malformed files, {size / 2**20:.1f} MiB")
        seconds = []
        for r in range(args.rounds):
            started = time.perf_counter()
            run = subprocess.run([sys.executable, "-m", "widgets.course", "report", str(folder),
                                  str(Path(work) / f"out{r}")], cwd=ROOT, capture_output=True,
                                 text=True)
            seconds.append(time.perf_counter() - started)
            if run.returncode != 0:
                print(run.stdout, run.stderr)
                return 1
        missing = [path for path in bad if path not in run.stderr]
        print(f"report: median {statistics.median(seconds):.1f} s, min {min(seconds):.1f} s, "
              f"max {max(seconds):.1f} s over {args.rounds} runs (whole command)")
        print(f"malformed files named in what it printed: {len(bad) - len(missing)} of "
              f"{len(bad)}")
        print(run.stdout.strip())
        return 1 if missing else 0


if __name__ == "__main__":
    sys.exit(main())
