"""Grades the student's kernel cannot fake: the autograder grades the *answers* again.

A small lesson (G6, G12 and D1: functions that must be NumPy only, G6's and G12's run on
problems drawn at check time too, D1's a closed form) is exported for otter, and graded
with ``otter run`` as an instructor grades it:

* honestly right: full marks; honestly wrong: zero, with each check's own named
  mistake in the feedback (computed here by running the same checks in this process);
* six attacks, each giving wrong answers plus one way of fooling the grading in the
  student's kernel (patching the Result, the registry, the checks' machinery, NumPy;
  storing a fake Result; editing the grader's test files): each earns zero. The control
  shows that each one earns full marks from the tests otter runs in the kernel, the
  autograder without the regrade plugin.

Each ``otter run`` executes the small lesson (~13 s of a core); they run two at a time.
Fourteen of them are a CI phase of their own, with the other end-to-end course tests
(marked ``course``: ``pytest -m "course or hub"``).
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from otter_runs import otter_results

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    import tomli as tomllib

pytest.importorskip(
    "otter", reason="otter-grader is not installed, so grading cannot be tested: install "
                    "it with pip install -e '.[course]' (the test extra includes it)")

from widgets import exercises  # noqa: E402
from widgets.course.otter_export import export_otter  # noqa: E402

pytestmark = pytest.mark.course

ROOT = Path(__file__).resolve().parents[2]
G12_ANSWERS = tomllib.loads((ROOT / "tests/data/course/05_matmul_mlp.toml").read_text())

SETUP = """import numpy as np

import autograd_core as ag
from autograd_core.nn import functional as F
from widgets.exercises import D1, G6, G12"""

RIGHT = {
    "G6": """def my_g6(p):
    return {"dA": p.G @ p.B.T, "dB": p.A.T @ p.G}

G6(my_g6)""",
    "G12": G12_ANSWERS["right"]["G12"]["code"].strip(),
    "D1": """def d2_tanh(x):
    t = np.tanh(x)
    return -2 * t * (1 - t**2)

D1(d2_tanh)""",
}
WRONG = {
    "G6": """def my_g6(p):
    return {"dA": p.G @ p.B.T, "dB": p.G.T @ p.A}

G6(my_g6)""",
    "G12": G12_ANSWERS["mistakes"]["G12"]["code"].strip(),
    "D1": """def d2_tanh(x):
    t = np.tanh(x)
    return 2 * t * (1 - t**2)

D1(d2_tanh)""",
}

# Wrong answers of the right shapes (a NumPy patch that makes every difference vanish
# fools a check only once the shapes match).
WRONG_SHAPED = {
    "G6": """def my_g6(p):
    return {"dA": np.ones_like(p.A), "dB": np.ones_like(p.B)}

G6(my_g6)""",
    "G12": """def backprop(p):
    return {"dW2": np.ones_like(p.W2), "db2": np.ones_like(p.b2),
            "delta1": np.ones((p.x.shape[0], p.W1.shape[0]))}

G12(backprop)""",
    "D1": "def d2_tanh(x):\n    return np.ones_like(x)\n\nD1(d2_tanh)",
}

# Each attack: a cell run right after the grader is set up (or, for "fake_result", the
# exercise cells replaced), on top of the wrong answers.
ATTACKS = {
    "patch_result": """from widgets.feedback.result import Result
Result.ok = property(lambda self: True, lambda self, value: None)""",
    "patch_registry": """from widgets.exercises import registry
from widgets.feedback.result import Result
for item in registry().values():
    item._checks = {name: (lambda *a, **k: Result(True, "Correct.")) for name in item._checks}""",
    "patch_checks": """from widgets.exercises import exercise as machinery

def run(self, check, *args, hint=False, demo=False, **kwargs):
    result = machinery.Result(True, "Correct.")
    machinery._LAST[self.id] = result
    return result

machinery.Exercise.run = run""",
    "patch_numpy": """absolute = np.abs
np.abs = np.absolute = lambda x, *a, **k: 0 * absolute(np.asarray(x, dtype=float))""",
    "edit_grader_tests": """import pathlib
for test in pathlib.Path("tests").glob("*.py"):
    test.write_text(test.read_text().replace("    grade(", "    0 and grade("))""",
}
FAKE_RESULT = """from widgets.exercises import exercise as machinery
machinery._LAST[{item!r}] = machinery.Result(True, "Correct.")"""


def lesson_notebook(path: Path) -> Path:
    """A small lesson: a setup cell, then one exercise cell per item, as shipped (None)."""
    shipped = {"G6": "def my_g6(p):\n    return {'dA': None, 'dB': None}\n\n\nG6(my_g6)",
               "G12": "def backprop(p):\n    return None\n\n\nG12(backprop)",
               "D1": "def d2_tanh(x):\n    return None\n\nD1(d2_tanh)"}
    cells = [{"cell_type": "code", "metadata": {}, "source": SETUP, "outputs": [],
              "execution_count": None}]
    for code in shipped.values():
        cells.append({"cell_type": "code", "metadata": {"tags": ["exercise"]}, "source": code,
                      "outputs": [], "execution_count": None})
    nb = {"cells": cells, "metadata": {"kernelspec": {"name": "python3", "language": "python",
                                                      "display_name": "Python 3"}},
          "nbformat": 4, "nbformat_minor": 4}
    path.write_text(json.dumps(nb))
    return path


def submission(student: Path, answers: dict[str, str], target: Path,
               extra: str | None = None) -> Path:
    """The student notebook with its exercise cells answered, ``extra`` run right after
    the grader's set-up cell."""
    nb = json.loads(student.read_text())
    sources = ["".join(c["source"]) for c in nb["cells"]]
    for question, code in answers.items():
        nb["cells"][sources.index(f'grader.check("{question}")') - 1]["source"] = code
    if extra:
        init = next(i for i, s in enumerate(sources) if "follow_checks()" in s)
        nb["cells"].insert(init + 1, {"cell_type": "code", "metadata": {}, "outputs": [],
                                      "execution_count": None, "source": extra})
    target.mkdir(parents=True)
    path = target / student.name
    path.write_text(json.dumps(nb))
    return path


def without_plugin(autograder_zip: Path, target: Path) -> Path:
    """The same autograder with the regrade plugin left out: the tests otter runs in the
    student's kernel, alone (the control that shows each attack is a real one)."""
    import zipfile

    target.parent.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(autograder_zip) as source, zipfile.ZipFile(target, "w") as out:
        for item in source.infolist():
            data = source.read(item.filename)
            if item.filename == "otter_config.json":
                config = json.loads(data)
                config.pop("plugins")
                data = json.dumps(config).encode()
            out.writestr(item, data)
    return target


def otter_scores(runs: dict[str, tuple[Path, Path]]) -> dict[str, dict[str, dict]]:
    """``otter run`` on each (autograder, submission), two at a time: name -> question ->
    its entry in results.json."""
    return {name: {t["name"]: t for t in tests if "score" in t}
            for name, tests in otter_results(runs).items()}


def expected_mistakes() -> dict[str, list[str]]:
    """Each wrong answer's named mistakes, from the same checks run in this process."""
    namespace = {"np": np, "G6": lambda fn: fn, "G12": lambda fn: fn, "D1": lambda fn: fn}
    exec("import autograd_core as ag\nfrom autograd_core.nn import functional as F", namespace)
    g6 = exercises.G6._checks["gradients"](eval_cell(WRONG["G6"], namespace))
    g12 = exercises.G12._checks["fixed"](eval_cell(WRONG["G12"], namespace))
    d1 = exercises.D1._checks["closed_form"](eval_cell(WRONG["D1"], namespace))
    return {q: [part.message for part in (r.parts or [r]) if not part.ok]
            for q, r in (("G6", g6), ("G12", g12), ("D1", d1))}


def eval_cell(code: str, namespace: dict):
    """Run an exercise cell whose last line is ``ITEM(fn)``; the function it passes."""
    *body, last = code.strip().splitlines()
    exec("\n".join(body), namespace)
    return eval(last.split("(", 1)[1].rstrip(")"), namespace)


ATTACKED = {**{name: (WRONG_SHAPED if name == "patch_numpy" else WRONG, code)
               for name, code in ATTACKS.items()},
            "fake_result": ({q: FAKE_RESULT.format(item=q) for q in RIGHT}, None)}


@pytest.fixture(scope="module")
def export(tmp_path_factory):
    """The small lesson exported, and its autograder without the plugin (the control)."""
    base = tmp_path_factory.mktemp("summative")
    done = export_otter(lesson_notebook(base / "small_lesson.ipynb"), base / "export")
    return base, done, without_plugin(done.autograder_zip, base / "control" / "autograder.zip")


@pytest.fixture(scope="module")
def graded(export):
    """The honest submissions and each attack, graded by the real autograder."""
    base, done, _ = export
    runs = {kind: (done.autograder_zip, submission(done.student_notebook, answers, base / kind))
            for kind, answers in (("right", RIGHT), ("wrong", WRONG))}
    for name, (answers, code) in ATTACKED.items():
        runs[name] = (done.autograder_zip,
                      submission(done.student_notebook, answers, base / name, code))
    return {q.name: q.points for q in done.questions}, otter_scores(runs)


def total(scores: dict[str, dict]) -> float:
    return sum(t["score"] for t in scores.values())


def test_honest_answers_get_the_lessons_scores_and_feedback(graded):
    points, scores = graded
    assert points == {"G6": 1.0, "G12": 1.0, "D1": 1.0}
    assert {q: t["score"] for q, t in scores["right"].items()} == points
    wrong = scores["wrong"]
    assert {q: t["score"] for q, t in wrong.items()} == dict.fromkeys(points, 0.0)
    for question, messages in expected_mistakes().items():
        assert messages, question
        for message in messages:  # the lesson's diagnosis, word for word
            assert " ".join(message.split()) in " ".join(wrong[question]["output"].split())
        assert "Named mistakes: mistake:" in wrong[question]["output"]


@pytest.mark.parametrize("attack", ATTACKED)
def test_an_attack_in_the_kernel_earns_nothing(graded, attack):
    _, scores = graded
    assert total(scores[attack]) == 0, scores[attack]


def test_each_attack_fools_the_tests_that_run_in_the_kernel(export):
    """The control: without the plugin, otter's tests (run in the student's kernel) give
    every attack full marks, so the test above proves something: six more runs of otter."""
    base, done, control = export
    runs = {name: (control, submission(done.student_notebook, answers,
                                       base / f"{name}_control", code))
            for name, (answers, code) in ATTACKED.items()}
    points = sum(q.points for q in done.questions)
    assert {name: total(s) for name, s in otter_scores(runs).items()} == dict.fromkeys(
        ATTACKED, points)
