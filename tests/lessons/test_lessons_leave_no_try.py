"""Running a lesson top to bottom, as "Run All" does, spends none of the learner's tries.

The stored outputs are what a run from the top gives (nbval runs every lesson again and
holds them to it), so each lesson's progress summaries, read from its stored outputs, must
show no item "in progress": an exercise cell that still holds its placeholder, or a
demonstration the lesson runs for everyone (lesson 12's measured example plan), is not an
attempt.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

LESSONS = sorted((Path(__file__).resolve().parents[2] / "notebooks").glob("[0-9][0-9]_*.ipynb"))


def output_texts(path: Path) -> list[str]:
    texts = []
    for cell in json.loads(path.read_text(encoding="utf-8"))["cells"]:
        for output in cell.get("outputs", []):
            texts.append("".join(output.get("text", "")))
            texts += ["".join(v) if isinstance(v, list) else str(v)
                      for v in output.get("data", {}).values()]
    return texts


@pytest.mark.parametrize("lesson", LESSONS, ids=lambda p: p.stem)
def test_a_run_from_the_top_leaves_no_item_in_progress(lesson):
    summaries = [t for t in output_texts(lesson) if "not started" in t or "in progress" in t]
    assert summaries, f"{lesson.name} shows no progress summary"
    assert not [t for t in summaries if "in progress" in t], (
        f"{lesson.name}: running it from the top leaves an item in progress (a placeholder "
        "or a demonstration counted as a try)")
