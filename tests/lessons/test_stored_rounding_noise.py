"""No stored lesson output prints rounding noise.

A number that is zero up to rounding (the mean of a normalised tensor, a sum of terms that
cancel) keeps only the last bits of a computation, and those depend on the CPU: NumPy and
OpenBLAS pick their SIMD kernels when they start. Stored with all its digits, such a number
reads -1.3e-08 where the lesson was stored and -1.6e-08 on a learner's machine, and nbval
fails there. The views show it as 0 (``widgets.summary.noise_floor``); this test scans every
stored output of every lesson (text, HTML, SVG titles and labels) for two signs of noise,
with thresholds of its own:

* a summary ``min A max B mean C norm D`` whose min, max or mean is not 0 but smaller
  than a millionth of the largest of min and max (about eight float32 rounding steps);
* any number below 1e-12 that is not 0, unless listed in ``REAL_SMALL`` with the reason
  it is a real quantity.
"""

from __future__ import annotations

import html
import json
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
LESSONS = sorted((ROOT / "notebooks").glob("[0-9]*.ipynb"))

NUMBER = r"[-−]?(?:\d+\.?\d*|\.\d+)(?:e[-+]?\d+)?"
SUMMARY = re.compile(rf"min ({NUMBER}) max ({NUMBER}) mean ({NUMBER}) norm ({NUMBER})")
ANY_NUMBER = re.compile(rf"(?<![\w.]){NUMBER}(?![\w.])")
RELATIVE = 1e-6
ABSOLUTE = 1e-12

# (lesson, number as printed): small numbers that are real, not rounding noise.
REAL_SMALL = {
    # The gradient that reaches the first of ten saturated sigmoid layers: it vanishes,
    # and that is the lesson (each layer multiplies it by at most 0.018).
    ("11_debugging", "1.0e-15"): "a vanishing gradient's norm",
    # The smallest step of the finite-difference sweep, named in the text.
    ("09_modes", "1e-12"): "a step size",
}


def number(text: str) -> float:
    return float(text.replace("−", "-"))


def noise_in(text: str, lesson: str = "") -> list[str]:
    """The numbers in ``text`` (HTML entities allowed) that look like rounding noise."""
    text = html.unescape(text)
    found = []
    for m in SUMMARY.finditer(text):
        low, high, mean = (number(m.group(i)) for i in (1, 2, 3))
        scale = max(abs(low), abs(high))
        found += [f"{name} {x:g} in {m.group(0)!r}" for name, x in
                  (("min", low), ("max", high), ("mean", mean))
                  if x != 0 and abs(x) < RELATIVE * scale]
    for m in ANY_NUMBER.finditer(text):
        x = number(m.group(0))
        if x != 0 and abs(x) < ABSOLUTE and (lesson, m.group(0)) not in REAL_SMALL:
            found.append(f"{m.group(0)} in {text[max(0, m.start() - 40):m.end() + 10]!r}")
    return found


@pytest.mark.parametrize("text, noisy", [
    ("value: (1, 4, 8) min &#45;2.143 max 1.879 mean &#45;1.304e&#45;08 norm 5.657", True),
    ("(1, 4, 8) min -2.143 max 1.879 mean 0 norm 5.657", False),
    ("(16,) min -2 max 2 mean 0.25 norm 6.325", False),
    ("(10,) min 1e-09 max 3 mean 0.5 norm 4", True),
    ("t10 () float64\nvalue: &#45;1.332e&#45;15", True),
    ("value: 0", False),
    ("layer 1: 9.8e-07", False),
    ("BatchNorm2d(16, eps=1e-05, momentum=0.1)", False),
    ("x = 3.0e-13", True),
])
def test_the_noise_finder(text, noisy):
    assert bool(noise_in(text)) == noisy


def test_listed_real_values_are_still_in_their_lessons():
    """Each exception names a number some lesson really prints, so the list stays true."""
    for lesson, printed in REAL_SMALL:
        text = (ROOT / "notebooks" / f"{lesson}.ipynb").read_text(encoding="utf-8")
        assert printed in text, (lesson, printed)


@pytest.mark.parametrize("lesson", LESSONS, ids=lambda p: p.stem)
def test_no_stored_output_prints_rounding_noise(lesson):
    nb = json.loads(lesson.read_text(encoding="utf-8"))
    problems = []
    for index, cell in enumerate(nb["cells"]):
        for output in cell.get("outputs", []):
            texts = ["".join(output.get("text", ""))] + [
                "".join(value) if isinstance(value, list) else str(value)
                for kind, value in output.get("data", {}).items() if kind.startswith("text")
                or kind == "image/svg+xml"]
            problems += [f"cell {index}: {found}" for text in texts
                         for found in noise_in(text, lesson.stem)]
    assert not problems, (
        f"{lesson.name} stores numbers that are rounding noise, whose last bits differ "
        "from CPU to CPU (show them as 0, see widgets.summary.noise_floor):\n"
        + "\n".join(problems[:20]))
