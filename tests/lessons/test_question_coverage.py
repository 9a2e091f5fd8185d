"""Every question-bank ID is exercised by a notebook cell that RUNS its check (so nbval
executes it), and the lessons' exercise cells are what the course export grades.

The detector of "a cell runs the check of X" is ``widgets.course.lesson`` (the course
export uses the same one):

* ``check("X", ...)`` (``exercises.check`` or ``widgets.exercises.check``);
* ``exercises.X(...)`` or ``exercises.X.check(...)`` / ``exercises.X.run(...)``;
* ``X(...)`` / ``X.check(...)`` / ``X.run(...)`` after ``from widgets.exercises import X``
  (or ``... import X as Y`` — then the alias) somewhere in the notebook.

Widgets (``X.widget(...)``), experiments (``X.experiment()``) and commented-out calls
do not count: nbval does not click buttons, and an experiment is not a check.

A cell where the learner answers carries the cell tag ``exercise``: it runs exactly one
item's check, every item of the lesson's closing ``Progress(...)`` has one, and, as
stored (and so as nbval reruns it), its check does not pass: the lesson ships unanswered,
so the student version of a graded assignment holds no answer.
"""

import json
import re
from pathlib import Path

import pytest

from widgets.course.lesson import (
    EXERCISE_TAG,
    LessonError,
    code_cells,
    graded_cells,
    ids_checked,
)
from widgets.exercises import EXERCISE_IDS

NOTEBOOKS = Path(__file__).resolve().parents[2] / "notebooks"
LESSONS = sorted(NOTEBOOKS.glob("[0-9]*.ipynb"))


def test_the_cell_detector():
    cells = ['from widgets import exercises\nexercises.G5(dW2=dW2)',
             'exercises.check("T9", False, "a")',
             'from widgets.exercises import S1, W4 as w4\n',
             'S1.run("fixed", grads)\nw4(MySigmoid)',
             'exercises.G6.widget(lambda: 1)\nexercises.T1.experiment()',
             '# exercises.L1(ops=[])  is commented out']
    assert ids_checked(cells) == {"G5", "T9", "S1", "W4"}


def test_every_id_is_checked_in_some_notebook():
    assert LESSONS, "no notebooks in notebooks/"
    covered = set()
    for path in LESSONS:
        covered |= ids_checked(code_cells(json.loads(path.read_text())))
    missing = [i for i in EXERCISE_IDS if i not in covered]
    assert not missing, f"IDs no notebook cell checks: {missing}"


def progress_ids(nb: dict) -> set[str]:
    """The items a lesson's progress summary lists: ``Progress.lesson("NN")`` reads them
    from the one lesson table, ``Progress("G1", ...)`` names them."""
    from widgets.exercises.tracking import LESSONS

    ids: set[str] = set()
    for src in code_cells(nb):
        for number in re.findall(r"Progress\.lesson\(['\"](\d+)['\"]\)", src):
            ids |= set(LESSONS[number][1])
        for call in re.findall(r"Progress\(([^)]*)\)", src):
            ids |= set(re.findall(r"['\"]([A-Z]\d+)['\"]", call))
    return ids


@pytest.mark.parametrize("lesson", [p for p in LESSONS if not p.name.startswith("01")],
                         ids=lambda p: p.stem)
def test_a_lesson_ends_with_its_progress_from_the_one_lesson_table(lesson):
    nb = json.loads(lesson.read_text())
    assert code_cells(nb)[-1].strip() == f'Progress.lesson("{lesson.name[:2]}")'
    assert progress_ids(nb), lesson.name


@pytest.mark.parametrize("lesson", LESSONS, ids=lambda p: p.stem)
def test_exercise_cells(lesson):
    nb = json.loads(lesson.read_text())
    cells = graded_cells(nb, lesson.name)  # each runs exactly one item's check
    missing = progress_ids(nb) - {c.exercise for c in cells}
    assert not missing, (f"{lesson.name}: items of the Progress summary with no cell tagged "
                         f"'{EXERCISE_TAG}': {sorted(missing)}")
    for c in cells:
        outputs = nb["cells"][c.cell]["outputs"]
        shown = "".join("".join(o.get("text", ""))
                        + "".join(o.get("data", {}).get("text/plain", "")) for o in outputs)
        assert "✘" in shown, (f"{lesson.name} cell {c.cell} ({c.question}) is tagged "
                              f"'{EXERCISE_TAG}' but its stored check passes: ship it unanswered")


@pytest.mark.parametrize("source, words", [
    ("print('no check here')", "runs no exercise check"),
    ("from widgets.exercises import G5, G6\nG5(dW2=a)\nG6(dA=b)", "the checks of ['G5', 'G6']"),
])
def test_a_tagged_cell_runs_exactly_one_check(source, words):
    nb = {"cells": [{"cell_type": "code", "metadata": {"tags": [EXERCISE_TAG]},
                     "source": source}]}
    with pytest.raises(LessonError, match=re.escape(words)):
        graded_cells(nb, "a lesson")
