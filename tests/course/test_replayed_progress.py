"""The grade of an item with a budget of tries (C1, C2, A3) says, as the lesson does, when a
right answer came after a search past the budget or after the solution or skeleton was
shown. The regrade's process has no progress of the student's, so the sandbox runs the
notebook's cells again and tallies what they did (``sandbox._tally_progress``); a notebook
cannot reset that tally (``reset_progress()``), forge it (raw audit events), or reach it
(``gc`` is refused in the sandbox).

Each scenario is a notebook written here, its answers recorded as the kernel records them,
and ``regrade`` run on them: what the tally must find is known from the cells (a search of
ten plans, C1 allowing eight; two measurements; a skeleton read; a solution read).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from widgets.course.answers import ANSWERS, CELLS, GRADED, encode
from widgets.course.graded_feedback import progress_in, progress_line
from widgets.course.otter_results import graded_question, item_record
from widgets.course.regrade import progress_before, regrade
from widgets.course.sandbox import Sandbox
from widgets.exercises.capstone_tasks.checkpoint_plan import TRIES as C1_TRIES
from widgets.exercises.learner import LearnerCodeFailed, call

ROOT = Path(__file__).resolve().parents[2]
C1_RIGHT, A3_RIGHT = [[0, 1, 2]], [["attention_core"], ["attention_core"]]
SEARCH = ("task = C1.problem()\n"
          "for i in range(10):\n"
          "    task.measure([[i % 9]] if i < 9 else [[0, 1]])\n")  # ten plans, none shown
FIX = ("import numpy as np\n"
       "def swish_backward(x, beta, g):\n"
       "    s = 1 / (1 + np.exp(-beta * x))\n"
       "    return g * (s + beta * x * s * (1 - s))\n")


def notebook(tmp_path: Path, cells: list[str], answers: list[tuple[str, str, dict]]) -> Path:
    """An answers folder as the kernel's recorder writes it: the cells run (numbered from
    1), and for each (question, exercise, answer) a record of its check in the cell that
    calls it (the first cell whose source names the exercise's call), graded."""
    folder = tmp_path / "answers"
    folder.mkdir()
    rows, graded = [], []
    for number, (question, exercise, kwargs) in enumerate(answers, 1):
        cell = next(i for i, source in enumerate(cells, 1) if f"{exercise}(" in source
                    and f"# answer {question}" in source)
        encoded = {k: (v if isinstance(v, dict) else encode(v)) for k, v in kwargs.items()}
        rows.append({"record": number, "exercise": exercise, "check": "plan" if exercise
                     in ("C1", "A3") else "hunt", "learner": None, "args": [],
                     "kwargs": encoded, "cell": cell})
        graded.append({"question": question, "record": number})
    for name, entries in ((ANSWERS, rows), (GRADED, graded),
                          (CELLS, [{"cell": i, "source": s} for i, s in enumerate(cells, 1)])):
        (folder / name).write_text("".join(json.dumps(e) + "\n" for e in entries))
    return folder


@pytest.fixture
def own_progress(tmp_path, monkeypatch):
    monkeypatch.setenv("AUTOGRAD_LESSONS_PROGRESS", str(tmp_path / "regrade-progress"))


def test_a_search_the_notebook_reset_and_forged_is_graded_after_the_solution(tmp_path,
                                                                              own_progress):
    cells = [
        "from widgets.exercises import A3, C1, C2, reset_progress\nimport sys",
        # the tally's events forged (C1 right already; the cells run after the answer),
        # then a search, then the progress store emptied
        "sys.audit('autograd_lessons.progress', 'C1', 'right')\n"
        "sys.audit('autograd_lessons.sandbox_cell', 99)\n" + SEARCH + "reset_progress()\n",
        f"C1({C1_RIGHT})  # answer C1",
        "A3.problem().measure([['mlp'], []])\nA3.problem().measure([['attention_core'], []])",
        f"A3({A3_RIGHT})  # answer A3",
        "C2.skeleton\n" + FIX + "C2(module='5.body.act', backward=swish_backward)  # answer C2",
    ]
    folder = notebook(tmp_path, cells, [
        ("C1", "C1", {"plan": C1_RIGHT}), ("A3", "A3", {"plan": A3_RIGHT}),
        ("C2", "C2", {"module": "5.body.act",
                      "backward": {"$": "function", "name": "swish_backward"}})])
    verdicts = regrade(folder, {"C1": "C1", "A3": "A3", "C2": "C2"})
    c1, a3, c2 = verdicts["C1"], verdicts["A3"], verdicts["C2"]
    assert c1["ok"] and a3["ok"] and c2["ok"], verdicts
    assert c2["status"] == "graded"  # its fix is NumPy of the learner's: regraded here
    assert c1["after"] == "solution" and "10 candidates" in c1["feedback"]
    assert f"C1 allows {C1_TRIES}" in c1["progress"]
    assert progress_in(c1["feedback"]) == "solution"
    assert "after" not in a3 and progress_in(a3["feedback"]) is None  # two measurements
    assert c2["after"] == "help" and progress_in(c2["progress"]) == "help"


def test_what_the_lesson_forgives_the_grade_forgives(tmp_path, own_progress):
    """Measurements after the item is first right count for nothing, as in the lesson; a
    solution read before the answer counts."""
    cells = [
        "from widgets.exercises import A3, C1",
        f"C1({C1_RIGHT})",
        SEARCH,
        f"C1({C1_RIGHT})  # answer C1",
        "A3.solution",
        f"A3({A3_RIGHT})  # answer A3",
    ]
    folder = notebook(tmp_path, cells, [("C1", "C1", {"plan": C1_RIGHT}),
                                        ("A3", "A3", {"plan": A3_RIGHT})])
    verdicts = regrade(folder, {"C1": "C1", "A3": "A3"})
    assert verdicts["C1"]["ok"] and "after" not in verdicts["C1"]
    assert verdicts["A3"]["ok"] and verdicts["A3"]["after"] == "solution"
    assert "its solution was shown" in verdicts["A3"]["feedback"]


def test_the_sandbox_keeps_its_tally_out_of_the_cells_reach(tmp_path):
    cells = [{"cell": 1, "source": "def walk(x):\n    import gc\n    return len(gc.get_objects())"
                                    "\ndef referrers(x):\n    import gc\n"
                                    "    return len(gc.get_referrers(x))"}]
    box = Sandbox(cells, [{"record": 1, "cell": 1, "names": ["walk", "referrers"]}], tmp_path,
                  ROOT)
    try:
        for name in ("walk", "referrers"):
            with pytest.raises(LearnerCodeFailed, match="PermissionError: the grader does not "
                                                        "let a submission walk"):
                call(box.function(1, name), 1)
        assert box.tally == {}
    finally:
        box.close()


# -- reading the tally, and the line the class report reads, without a sandbox ------------


@pytest.mark.parametrize("runs, cell, expected", [
    ([[2, "try", 9], [3, "right", 1]], 3, (9, False, False)),
    ([[2, "try", 3], [2, "solution", 1], [3, "try", 1]], 3, (4, True, False)),
    ([[1, "right", 1], [2, "try", 20], [2, "solution", 1]], 3, (0, False, False)),
    ([[2, "help", 1], [5, "try", 20]], 3, (0, False, True)),   # after the answer's cell
    ([[2, "try"], ["x", "try", 1], [2, "try", 2]], 3, (2, False, False)),  # unreadable runs
])
def test_progress_before_reads_the_tally_as_the_lesson_counts(runs, cell, expected):
    assert progress_before({"C1": runs}, "C1", cell) == expected
    assert progress_before({"C1": runs}, "A3", cell) == (0, False, False)


def test_the_class_report_reads_the_line_of_a_right_question():
    line = progress_line("solution", "10 candidates were measured")
    right = graded_question({"name": "C1", "score": 1, "max_score": 1,
                             "output": f"test_C1 message: {line}"})
    assert right.right and right.after == "solution"
    assert item_record([right])["after_solution"] is True
    helped = graded_question({"name": "C2", "score": 1, "max_score": 1,
                              "output": progress_line("help", "its skeleton was shown")})
    assert item_record([helped])["after_help"] is True
    assert item_record([helped])["after_solution"] is False
    wrong = graded_question({"name": "C1", "score": 0, "max_score": 1, "output": line})
    assert wrong.after is None and item_record([wrong])["after_solution"] is False
    plain = graded_question({"name": "C1", "score": 1, "max_score": 1, "output": "All right."})
    assert plain.after is None and item_record([plain])["after_solution"] is False


def test_the_plugin_puts_the_line_in_a_right_questions_output():
    pytest.importorskip("otter")
    from widgets.course.otter_plugin import RegradeAnswers

    line = progress_line("solution", "its solution was shown before this answer")
    test_file = RegradeAnswers._test_file("C1", 1.0, {"status": "graded", "ok": True,
                                                      "feedback": f"All 3 parts correct.\n{line}",
                                                      "after": "solution", "progress": line},
                                          None)
    assert test_file.passed_all and line in test_file.summary()
    assert progress_in(test_file.summary()) == "solution"
    wrong = RegradeAnswers._test_file("C1", 1.0, {"status": "graded", "ok": False,
                                                  "feedback": "✘ memory"}, None)
    assert not wrong.passed_all and progress_in(wrong.summary()) is None


def test_the_kernel_records_the_cell_of_every_check(tmp_path):
    """A plan (plain data) is recorded with its cell too: the replay stops there."""
    from types import SimpleNamespace

    from widgets.course.answers import Recorder, read_jsonl

    shell = SimpleNamespace(history_manager=SimpleNamespace(
        input_hist_raw=["", "from widgets.exercises import C1", "C1([[0, 1, 2]])"]))
    recorder = Recorder(tmp_path, shell)
    recorder("C1", "plan", ([[0, 1, 2]],), {}, object())
    (entry,) = read_jsonl(tmp_path / ANSWERS)
    assert entry["cell"] == 2 and entry["exercise"] == "C1"
    assert [c["cell"] for c in read_jsonl(tmp_path / CELLS)] == [0, 1, 2]
