"""A lesson notebook as the course tools read it: its exercise cells and what each grades.

A lesson marks every cell where the learner answers an exercise with the cell tag
``exercise`` (JupyterLab: the property inspector, or View → Cell Toolbar). Each such
cell runs the check of exactly one exercise (a question-bank item or one of the course's own,
``ids.EXERCISE_IDS``), in one of the lessons' forms:

* ``check("X", ...)``, ``exercises.X(...)``, ``exercises.X.check(...)`` / ``.run(...)``;
* ``X(...)``, ``X.check(...)`` / ``X.run(...)`` after ``from widgets.exercises import X``
  (or ``... import X as Y``, then the alias).

Demonstrations (a check called on a deliberate mistake, to show the feedback) are not
tagged. ``tests/lessons/test_question_coverage.py`` uses the same detector to hold every
question-bank ID to a notebook cell that runs its check.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from widgets.exercises import EXERCISE_IDS

EXERCISE_TAG = "exercise"

_ID = r"[A-Z]\d+"  # an exercise ID; only those of ids.EXERCISE_IDS count


class LessonError(ValueError):
    """A lesson file the course tools cannot use; the message is one sentence for the user."""


@dataclass(frozen=True)
class GradedCell:
    """One exercise cell of a lesson, as a graded question.

    ``question`` is the name the autograder knows it by (``grader.check("G9_unbroadcast")``):
    the item's ID, with the check's name when the cell runs a named check (``.run("x")``),
    or a number when the item has several exercise cells.
    """

    question: str
    exercise: str
    cell: int  # index in the notebook's cells


def cell_source(cell: dict) -> str:
    source = cell.get("source", "")
    return "".join(source) if isinstance(source, list) else source


def code_cells(nb: dict) -> list[str]:
    return [cell_source(c) for c in nb.get("cells", []) if c.get("cell_type") == "code"]


def _without_comments(src: str) -> str:
    return re.sub(r"#.*", "", src)  # a commented-out call runs nothing


def imported_names(cells: list[str]) -> dict[str, str]:
    """Local name -> ID for ``from widgets.exercises import G5, T9 as t9`` anywhere in ``cells``.

    >>> imported_names(["from widgets.exercises import G5, T9 as t9, Progress"])
    {'G5': 'G5', 't9': 'T9'}
    """
    names = {}
    for src in cells:
        for group in re.findall(r"from\s+widgets\.exercises\s+import\s+\(?([^)\n]+)", src):
            for part in group.split(","):
                bits = part.split()
                if bits and bits[0] in EXERCISE_IDS:
                    names[bits[-1] if len(bits) == 3 and bits[1] == "as" else bits[0]] = bits[0]
    return names


def ids_checked_in(src: str, aliases: dict[str, str]) -> set[str]:
    """The IDs whose check the code ``src`` runs, given the notebook's imported names."""
    src = _without_comments(src)
    found = set(re.findall(rf"\bcheck\(\s*['\"]({_ID})['\"]", src))
    found.update(re.findall(rf"\bexercises\.({_ID})\s*(?:\(|\.(?:check|run)\s*\()", src))
    for name, exercise_id in aliases.items():
        if re.search(rf"(?<![\w.]){re.escape(name)}\s*(?:\(|\.(?:check|run)\s*\()", src):
            found.add(exercise_id)
    return found & set(EXERCISE_IDS)


def ids_checked(cells: list[str]) -> set[str]:
    """The IDs whose check some cell of ``cells`` runs (see the module docstring)."""
    aliases = imported_names([_without_comments(src) for src in cells])
    found: set[str] = set()
    for src in cells:
        found |= ids_checked_in(src, aliases)
    return found


def _named_check(src: str) -> str | None:
    """The check name of ``X.run("name", ...)`` in a cell, if it calls one."""
    match = re.search(r"\.run\(\s*['\"](\w+)['\"]", _without_comments(src))
    return match.group(1) if match else None


def read_lesson(path: str | Path) -> dict:
    """The notebook at ``path`` as a dict; a LessonError names what is wrong with it."""
    path = Path(path)
    if not path.exists():
        raise LessonError(f"{path} does not exist: give the path of a lesson notebook, "
                          "e.g. notebooks/05_matmul_mlp.ipynb.")
    if path.is_dir() or path.suffix != ".ipynb":
        raise LessonError(f"{path} is not a notebook: give a lesson's .ipynb file, "
                          "e.g. notebooks/05_matmul_mlp.ipynb.")
    try:
        nb = json.loads(path.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as error:
        raise LessonError(f"{path} is not a readable notebook (invalid JSON: {error}).") from None
    if not isinstance(nb, dict) or not isinstance(nb.get("cells"), list):
        raise LessonError(f"{path} is not a Jupyter notebook: it has no list of cells.")
    return nb


def graded_cells(nb: dict, name: str = "the lesson") -> list[GradedCell]:
    """The lesson's exercise cells, in order, with the question name each is graded as."""
    aliases = imported_names([_without_comments(src) for src in code_cells(nb)])
    found: list[tuple[int, str, str | None]] = []
    for index, cell in enumerate(nb["cells"]):
        tags = cell.get("metadata", {}).get("tags", [])
        if cell.get("cell_type") != "code" or EXERCISE_TAG not in tags:
            continue
        ids = ids_checked_in(cell_source(cell), aliases)
        if len(ids) != 1:
            what = "no exercise check" if not ids else f"the checks of {sorted(ids)}"
            raise LessonError(f"cell {index} of {name} is tagged '{EXERCISE_TAG}' but runs "
                              f"{what}; an exercise cell runs the check of exactly one item.")
        found.append((index, ids.pop(), _named_check(cell_source(cell))))
    per_id = Counter(exercise for _, exercise, _ in found)
    seen: Counter = Counter()
    cells, names = [], set()
    for index, exercise, check in found:
        seen[exercise] += 1
        if check:
            question = f"{exercise}_{check}"
        elif per_id[exercise] > 1 and seen[exercise] > 1:
            question = f"{exercise}_{seen[exercise]}"
        else:
            question = exercise
        while question in names:  # the same named check in two cells
            question += f"_{seen[exercise]}"
        names.add(question)
        cells.append(GradedCell(question, exercise, index))
    return cells
