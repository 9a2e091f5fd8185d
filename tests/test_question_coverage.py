"""Every question-bank ID is exercised by at least one notebook code cell that RUNS its
check (so nbval executes it).

A code cell runs the check of ID X when it contains one of these calls:

* ``check("X", ...)`` (``exercises.check`` or ``widgets.exercises.check``);
* ``exercises.X(...)`` or ``exercises.X.check(...)`` / ``exercises.X.run(...)``;
* ``X(...)`` / ``X.check(...)`` / ``X.run(...)`` after ``from widgets.exercises import X``
  (or ``... import X as Y`` — then the alias) somewhere in the notebook.

Widgets (``X.widget(...)``), experiments (``X.experiment()``) and commented-out calls
do not count: nbval does not click buttons, and an experiment is not a check.
"""

import json
import re
from pathlib import Path

from widgets.exercises import QUESTION_BANK_IDS

NOTEBOOKS = Path(__file__).resolve().parent.parent / "notebooks"


def code_cells(path: Path) -> list[str]:
    nb = json.loads(path.read_text())
    return ["".join(c["source"]) if isinstance(c["source"], list) else c["source"]
            for c in nb.get("cells", []) if c.get("cell_type") == "code"]


def imported_names(cells: list[str]) -> dict[str, str]:
    """Local name -> ID for ``from widgets.exercises import G5, T9 as t9``."""
    names = {}
    for src in cells:
        for group in re.findall(r"from\s+widgets\.exercises\s+import\s+\(?([^)\n]+)", src):
            for part in group.split(","):
                bits = part.split()
                if bits and bits[0] in QUESTION_BANK_IDS:
                    names[bits[-1] if len(bits) == 3 and bits[1] == "as" else bits[0]] = bits[0]
    return names


def ids_checked(cells: list[str]) -> set[str]:
    """The IDs whose check some cell runs (see the module docstring)."""
    found = set()
    cells = [re.sub(r"#.*", "", src) for src in cells]  # a commented-out call runs nothing
    aliases = imported_names(cells)
    for src in cells:
        found.update(re.findall(r"\bcheck\(\s*['\"]([GTSWEL]\d+)['\"]", src))
        found.update(re.findall(r"\bexercises\.([GTSWEL]\d+)\s*(?:\(|\.(?:check|run)\s*\()",
                                src))
        for name, exercise_id in aliases.items():
            if re.search(rf"(?<![\w.]){re.escape(name)}\s*(?:\(|\.(?:check|run)\s*\()", src):
                found.add(exercise_id)
    return found & set(QUESTION_BANK_IDS)


def test_the_cell_detector():
    cells = ['from widgets import exercises\nexercises.G5(dW2=dW2)',
             'exercises.check("T9", False, "a")',
             'from widgets.exercises import S1, W4 as w4\n',
             'S1.run("fixed", grads)\nw4(MySigmoid)',
             'exercises.G6.widget(lambda: 1)\nexercises.T1.experiment()',
             '# exercises.L1(ops=[])  is commented out']
    assert ids_checked(cells) == {"G5", "T9", "S1", "W4"}


def test_every_id_is_checked_in_some_notebook():
    notebooks = sorted(NOTEBOOKS.glob("*.ipynb"))
    assert notebooks, "no notebooks in notebooks/"
    covered = set()
    for path in notebooks:
        covered |= ids_checked(code_cells(path))
    missing = [i for i in QUESTION_BANK_IDS if i not in covered]
    assert not missing, f"IDs no notebook cell checks: {missing}"
