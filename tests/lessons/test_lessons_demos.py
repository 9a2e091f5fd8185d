"""The mistake a lesson demonstrates runs on another problem than the learner's.

Lessons 01, 02 and 09 show what the checker says to a common slip with ``X.demo(...)``. Shown
on the learner's own problem, that feedback (and the numbers around it) would say too much
about the learner's answer, so each check takes another problem on request: E2 another
literal (lesson 01), L2 other widths (lesson 02).
Each other problem is a real one: its own data, right answers pass, the slip is named; an
answer to it is not an answer to the learner's problem; and a request for a problem that does
not exist gets a sentence.
"""

import json
import re
from pathlib import Path

import numpy as np
import pytest

from widgets import exercises as ex

NOTEBOOKS = Path(__file__).resolve().parents[2] / "notebooks"


@pytest.fixture(autouse=True)
def _own_progress_file(tmp_path, monkeypatch):
    monkeypatch.setenv("AUTOGRAD_LESSONS_PROGRESS", str(tmp_path / "progress.json"))


def diagnoses(result):
    return {p.name: p.diagnosis for p in (result.parts or (result,))}


def said(result) -> str:
    return "\n".join(p.message for p in (result.parts or (result,)))


def test_e2_another_literal():
    p, q = ex.E2.problem(), ex.E2.problem(literal=3)
    assert not np.allclose(p.x, q.x) and "3 * w * x" in q.description

    def by_hand(r):  # z = literal·w·x + b: dw = literal·x
        return {"dw": r.literal * r.x}

    assert ex.E2.demo(by_hand, literal=3).ok
    slip = ex.E2.demo(lambda r: {"dw": r.x}, literal=3)
    assert diagnoses(slip) == {"dw": "missing_constant"} and "dropped the 3" in slip.message
    assert "dropped the 2" not in repr(slip)
    three = {"dw": 3 * q.x}
    assert not ex.E2(lambda r: three).ok                 # the demo's answer is not the learner's
    assert ex.E2.check(by_hand).ok                       # the learner's problem is unchanged
    for wrong in (1, 10, True, "3"):
        assert ex.E2.demo(by_hand, literal=wrong).diagnosis == "call"
    assert ex.E2.demo(by_hand, literal=2.0).diagnosis == "demo_refused"  # the learner's own


def test_l2_other_widths():
    p, q = ex.L2.problem(), ex.L2.problem(widths=(4, 1))
    assert (q.a.shape, q.b.shape, q.G.shape) == ((2, 4), (2, 1), (2, 5))
    assert ex.L2.demo(lambda r: {"da": r.G[:, :4], "db": r.G[:, 4:]}, widths=(4, 1)).ok
    slip = ex.L2.demo(lambda r: {"da": r.G[:, -4:], "db": r.G[:, :1]}, widths=(4, 1))
    assert diagnoses(slip) == {"da": "wrong_slice", "db": "wrong_slice"}
    # the slip is named without saying where each input's columns sit: said on another
    # problem, that would be every problem's layout (the learner's own included)
    where = re.compile(r"\b(first|last|start|end|beginning|leftmost|rightmost)\b")
    assert not where.search(said(slip)), said(slip)
    # the demo's arrays, handed back on the learner's own problem, are no answer to it
    assert not ex.L2.check(lambda r: {"da": q.G[:, :4], "db": q.G[:, 4:]}).ok
    assert ex.L2.check(lambda r: {"da": r.G[:, :3], "db": r.G[:, 3:]}).ok
    assert (p.a.shape, p.b.shape) == ((2, 3), (2, 2))
    for wrong in ((0, 2), (3,), (7, 1), "ab", None, (True, 2)):
        assert ex.L2.demo(lambda r: {"da": r.G[:, :4]}, widths=wrong).diagnosis == "call"


def test_l2s_lesson_demonstration_names_no_layout():
    """Lesson 02's demonstration shows the add-like slip (all of G to each branch): its
    feedback is about shapes, and says nothing about which columns belong to which input."""
    shown = ex.L2.demo(lambda q: {"da": q.G, "db": q.G}, widths=(2, 4))
    assert diagnoses(shown) == {"da": "shape", "db": "shape"}, repr(shown)
    assert not re.search(r"\b(first|last|column|columns|slice)\b", said(shown)), said(shown)
    nb = json.loads((NOTEBOOKS / "02_forward_graph.ipynb").read_text())
    stored = json.dumps([c.get("outputs", []) for c in nb["cells"]], ensure_ascii=False)
    assert said(shown).splitlines()[0] in stored
    assert not re.search(r"values sit in the (first|last)", stored)


def test_l2s_merges_have_no_demonstration_and_the_default_problem_none():
    for kwargs in ({}, {"widths": (3, 2)}):
        shown = ex.L2.demo(lambda q: {"da": q.G[:, :3], "db": q.G[:, 3:]}, **kwargs)
        assert shown.diagnosis == "demo_refused"

    def merges(q):  # the pool's and the reuse's right answers; the check never tells
        winner = q.branches == q.branches.max(axis=0)
        t = np.tanh(q.x * q.w)
        return {"d_branches": np.where(winner, q.G_pool, 0.0),
                "dw": q.G_reuse * (t + q.w * (1 - t ** 2) * q.x)}

    for kwargs in ({}, {"merges": True}, {"merges": False}):
        shown = ex.L2.demo(merges, check="merges", **kwargs)
        assert not shown.ok and shown.diagnosis in ("demo_refused", "unknown_name"), shown
        assert "Correct" not in said(shown)


@pytest.mark.parametrize("lesson, demo", [
    ("01_start_here", "E2.demo(dropped_the_literal, literal=3)"),
    ("02_forward_graph", 'L2.demo(lambda q: {"da": q.G, "db": q.G}, widths=(2, 4))'),
])
def test_the_lessons_demonstrate_on_the_other_problem(lesson, demo):
    nb = json.loads((NOTEBOOKS / f"{lesson}.ipynb").read_text())
    sources = ["".join(c["source"]) for c in nb["cells"] if c["cell_type"] == "code"]
    assert any(demo in s for s in sources)
    assert not any(".demo(" in s and demo not in s for s in sources
                   if any(i in s for i in ("E2.demo", "L2.demo")))
