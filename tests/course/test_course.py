"""The course export (``python -m widgets.course export --otter``).

* Every lesson exports: a student notebook with no stored outputs and a grader.check
  after each exercise cell, one otter test per exercise cell, and an autograder.zip.
* No solution text of the question bank reaches the student version.
* otter's own grading (``otter run``, as an instructor runs it) gives full marks to
  lesson 05 solved with the engine's answers, and partial marks to lesson 05 with
  typical mistakes, with the mistake the lesson's check names in the feedback, and so
  do lessons 07 and 15. (Six ``otter run``s, 12-20 s of a core each, two at a time:
  marked ``course``, a CI phase of its own, ``pytest -m "course or hub"``.)
* Bad input gets one sentence, not a traceback.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import zipfile
from pathlib import Path

import nbformat
import pytest
from otter_runs import otter_results

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    import tomli as tomllib

pytest.importorskip(
    "otter", reason="otter-grader is not installed, so the course export cannot be tested: "
                    "install it with pip install -e '.[course]' (the test extra includes it)")

from widgets import exercises  # noqa: E402
from widgets.course import grading  # noqa: E402
from widgets.course.__main__ import main  # noqa: E402
from widgets.course.lesson import EXERCISE_TAG, read_lesson  # noqa: E402
from widgets.course.otter_export import export_otter  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
LESSONS = sorted((ROOT / "notebooks").glob("[0-9]*.ipynb"))
ANSWERS = Path(__file__).resolve().parents[1] / "data" / "course"
GRADED_LESSON = ROOT / "notebooks" / "05_matmul_mlp.ipynb"
# Graded by otter for real: lesson 05 (derivations, shapes, a function to fix, an item with
# two checks) and lesson 07 (one item, two exercise cells, a demonstration between them).
GRADED_LESSONS = [GRADED_LESSON, ROOT / "notebooks" / "07_convolution.ipynb",
                  ROOT / "notebooks" / "15_transformer_memory.ipynb"]
POINTS = {"05_matmul_mlp": {"G5": 3, "G12": 2}, "07_convolution": {"G7": 4},
          "15_transformer_memory": {"A1": 3, "A2": 2}}


def normalised(text: str) -> str:
    return " ".join(text.split())


def given_text(lesson: Path | None = None) -> str:
    """What a learner is shown on purpose: every exercise's question and code snippet
    (buggy code to fix shares its right lines with the solution), and the lesson's exercise
    cells as shipped (their scaffolding; test_question_coverage.py holds them unanswered)."""
    parts = [f"{ex.question}\n{ex.snippet or ''}" for ex in exercises.registry().values()]
    if lesson is not None:
        nb = read_lesson(lesson)
        parts += ["".join(c["source"]) for c in nb["cells"]
                  if EXERCISE_TAG in c.get("metadata", {}).get("tags", [])]
    return normalised("\n".join(parts))


def solution_text(exercise_id: str) -> str:
    """An exercise's worked solution, read without asking the exercise for it where asking
    is recorded in the learner's progress (then the text is kept as ``_solution``)."""
    exercise = exercises.registry()[exercise_id]
    return str(getattr(exercise, "_solution", None) or exercise.solution)


def solution_lines(given: str) -> dict[str, str]:
    """Line -> ID for every line of every exercise's worked solution that gives something
    away: at least 12 characters, not a bare ``def``/``class``/decorator line, and not part
    of what the learner is given anyway (``given``)."""
    lines = {}
    for exercise in exercises.registry().values():
        for line in solution_text(exercise.id).splitlines():
            line = normalised(line)
            if (len(line) >= 12 and not line.startswith(("def ", "class ", "@"))
                    and line not in given):
                lines[line] = exercise.id
    return lines


def leaked_solutions(folder: Path, given: str = "") -> list[str]:
    """'file: ID solution line' for every solution line found in any file under ``folder``."""
    wanted = solution_lines(given)
    found = []
    for path in sorted(p for p in folder.rglob("*") if p.is_file()):
        text = path.read_text(encoding="utf-8", errors="replace")
        if path.suffix == ".ipynb":  # read the cells as a learner sees them, not JSON-escaped
            nb = json.loads(text)
            text = "\n".join(json.dumps(c.get("outputs", [])) + "\n" + "".join(c["source"])
                             for c in nb["cells"])
        flat = normalised(text)
        found += [f"{path.name}: {i} {line!r}" for line, i in wanted.items() if line in flat]
    return found


@pytest.fixture(scope="module")
def exports(tmp_path_factory):
    """Every lesson exported once, shared by the tests below."""
    out = tmp_path_factory.mktemp("exports")
    return {lesson.stem: export_otter(lesson, out / lesson.stem) for lesson in LESSONS}


def test_there_are_lessons_to_export():
    assert len(LESSONS) >= 12


@pytest.mark.parametrize("lesson", LESSONS, ids=lambda p: p.stem)
def test_every_lesson_exports(lesson, exports):
    done = exports[lesson.stem]
    nbformat.validate(nbformat.read(done.student_notebook, as_version=4))
    nb = json.loads(done.student_notebook.read_text())
    code = [c for c in nb["cells"] if c["cell_type"] == "code"]
    assert all(c["outputs"] == [] and c["execution_count"] is None for c in code), \
        "the student notebook keeps no stored output"
    assert "widgets" not in nb["metadata"]
    assert nb["metadata"]["otter"]["assignment_name"] == lesson.stem
    sources = ["".join(c["source"]) for c in nb["cells"]]
    for q in done.questions:  # each exercise cell is followed by its grader.check
        at = sources.index(f'grader.check("{q.name}")')
        assert EXERCISE_TAG in nb["cells"][at - 1]["metadata"].get("tags", [])
        test = done.student_notebook.parent / "tests" / f"{q.name}.py"
        assert f"grade({q.name!r}, {q.exercise!r})" in test.read_text()
    with zipfile.ZipFile(done.autograder_zip) as zf:
        names = set(zf.namelist())
    assert {f"tests/{q.name}.py" for q in done.questions} <= names
    assert {"otter_config.json", "run_autograder", "setup.sh", "environment.yml",
            "files/autograd_core/__init__.py", "files/widgets/course/grading.py"} <= names


@pytest.mark.parametrize("lesson", LESSONS, ids=lambda p: p.stem)
def test_no_solution_text_reaches_the_student(lesson, exports):
    student = exports[lesson.stem].student_notebook.parent
    assert leaked_solutions(student, given_text(lesson)) == []


def test_the_leak_check_finds_a_solution(tmp_path):
    line = solution_text("G6").splitlines()[0]
    (tmp_path / "copy.py").write_text(f"# {line}\n")
    found = leaked_solutions(tmp_path, given_text(GRADED_LESSON))
    assert found == [f"copy.py: G6 {normalised(line)!r}"]


# -- otter's own grading -----------------------------------------------------------------


def answered(student_notebook: Path, answers: dict[str, str], target: Path) -> Path:
    """A copy of the student notebook with the exercise cell of each question replaced."""
    nb = json.loads(student_notebook.read_text())
    sources = ["".join(c["source"]) for c in nb["cells"]]
    for question, code in answers.items():
        nb["cells"][sources.index(f'grader.check("{question}")') - 1]["source"] = code.strip()
    target.mkdir(parents=True)
    path = target / student_notebook.name
    path.write_text(json.dumps(nb, indent=1))
    return path


@pytest.mark.course
def test_otter_grades_the_lessons_checks(tmp_path):
    """For each graded lesson, a solved and a mistaken notebook: six, graded two at a time."""
    runs, expected = {}, {}
    for lesson in GRADED_LESSONS:
        data = tomllib.loads((ANSWERS / f"{lesson.stem}.toml").read_text())
        right = {q: entry["code"] for q, entry in data["right"].items()}
        mistakes = {q: entry["code"] for q, entry in data["mistakes"].items()}
        done = export_otter(lesson, tmp_path / lesson.stem / "export", points=POINTS[lesson.stem])
        questions = {q.name: q.points for q in done.questions}
        assert set(right) == set(questions), f"{lesson.stem}: an answer for every question"
        expected[lesson.stem] = questions, data["mistakes"]
        for kind, answers in (("solved", right), ("mistakes", {**right, **mistakes})):
            submission = answered(done.student_notebook, answers, tmp_path / lesson.stem / kind)
            runs[lesson.stem, kind] = done.autograder_zip, submission
    results = {}
    for key, tests in otter_results(runs).items():
        results[key] = {t["name"]: t for t in tests if "score" in t}
        results[key]["report"] = "\n".join(t.get("output", "") for t in tests)

    for lesson, (questions, mistakes) in expected.items():
        solved = results[lesson, "solved"]
        assert {q: solved[q]["score"] for q in questions} == questions, solved["report"][-3000:]

        graded = results[lesson, "mistakes"]
        for q, points in questions.items():
            assert graded[q]["score"] == (0 if q in mistakes else points), (q, graded["report"])
        assert 0 < sum(graded[q]["score"] for q in questions) < sum(questions.values())
        for q, entry in mistakes.items():  # the lesson's diagnosis, word for word
            assert entry["feedback"] in graded["report"], (lesson, q, entry["feedback"])


# -- the grading step itself, in this process --------------------------------------------


def right_g6(p):
    return {"dA": p.G @ p.B.T, "dB": p.A.T @ p.G}


def transposed_g6(p):  # dB transposed
    return {"dA": p.G @ p.B.T, "dB": p.G.T @ p.A}


def test_grade_reads_the_lessons_check_and_its_feedback():
    exercises.forget_results()
    grading._GRADED.clear()
    with pytest.raises(grading.NotAnswered, match="G6 has not been checked yet"):
        grading.grade("G6", "G6")
    exercises.G6(transposed_g6)
    with pytest.raises(AssertionError, match="transpose"):
        grading.grade("G6", "G6")
    exercises.G6(right_g6)
    grading.grade("G6", "G6")
    grading.grade("G6", "G6")  # checking again, unchanged, still passes
    with pytest.raises(grading.NotAnswered, match="No new check of G6"):
        grading.grade("G6_2", "G6")  # a second exercise cell of G6 needs its own check
    exercises.forget_results()
    grading._GRADED.clear()


def test_grader_check_grades_the_cell_run_just_before_it(monkeypatch):
    """The IPython hooks of follow_checks(), driven by hand: cell by cell, as a kernel runs."""
    watcher = grading._CellWatcher()
    monkeypatch.setattr(grading, "_WATCHER", watcher)

    class Ran:  # IPython's ExecutionResult, as far as the hooks read it
        def __init__(self, success=True):
            self.success = success

    def cell(code=None, success=True):
        watcher.pre_run_cell()
        if code:
            code()
        watcher.post_run_cell(Ran(success))

    cell(lambda: exercises.G6(right_g6))  # a right answer...
    cell(lambda: grading.grade("G6", "G6"))
    cell(lambda: grading.grade("G6", "G6"))  # ...checked twice: the same grade
    cell(lambda: exercises.G6(lambda p: {"dA": p.G.T}))  # a demonstration of a mistake
    cell(success=False)  # the next exercise cell stops with an error before its check
    with pytest.raises(grading.NotAnswered, match="did not check G6"):
        cell(lambda: grading.grade("G6_2", "G6"))
    cell(lambda: print("another cell"))  # a cell that checks nothing
    with pytest.raises(grading.NotAnswered, match="did not check G6"):
        cell(lambda: grading.grade("G6_2", "G6"))
    cell(lambda: exercises.G6(lambda p: {"dA": (p.G @ p.B.T).T, "dB": p.A.T @ p.G}))
    with pytest.raises(AssertionError, match="transpose"):
        cell(lambda: grading.grade("G6_2", "G6"))
    watcher.pre_run_cell()  # exercise and grader.check in one cell
    exercises.G6(right_g6)
    grading.grade("G6_2", "G6")


def test_points_per_item_are_split_over_its_cells(tmp_path):
    done = export_otter(GRADED_LESSON, tmp_path, points={"G9": 3, "G12": 2.5},
                        default_points=0.5)
    points = {q.name: q.points for q in done.questions}
    assert points["G9"] == points["G9_unbroadcast"] == 1.5
    assert points["G12"] == 2.5 and points["G6"] == 0.5
    assert "points = 1.5" in (done.student_notebook.parent / "tests" / "G9.py").read_text()


# -- bad input: one sentence, exit code 2 ------------------------------------------------

LESSON = str(GRADED_LESSON)


@pytest.mark.parametrize("args, words", [
    (["export", "--otter", "notebooks/no_such_lesson.ipynb", "{out}"], "does not exist"),
    (["export", "--otter", "README.md", "{out}"], "is not a notebook"),
    (["export", "--otter", "{bad}", "{out}"], "not a readable notebook"),
    (["export", LESSON, "{out}"], "add --otter"),
    (["export", "--otter", LESSON, "{out}", "--points", "G5"], "ITEM=NUMBER"),
    (["export", "--otter", LESSON, "{out}", "--points", "G5=-1"], "ITEM=NUMBER"),
    (["export", "--otter", LESSON, "{out}", "--points", "G99=2"], "does not grade"),
    (["export", "--otter", LESSON, "{file}"], "is a file"),
])
def test_bad_input_gets_one_sentence(args, words, tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(ROOT)
    (tmp_path / "bad.ipynb").write_text("{not json")
    (tmp_path / "file").write_text("")
    args = [a.format(out=tmp_path / "out", bad=tmp_path / "bad.ipynb", file=tmp_path / "file")
            for a in args]
    assert main(args) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and words in err and err.count("\n") == 1, err


def test_without_otter_the_export_says_how_to_install_it(tmp_path, capsys, monkeypatch):
    monkeypatch.setitem(sys.modules, "otter", None)  # import otter now raises ImportError
    assert main(["export", "--otter", LESSON, str(tmp_path)]) == 2
    assert "pip install -e '.[course]'" in capsys.readouterr().err


def test_the_autograder_installs_what_a_lesson_needs(exports):
    zip_path = exports[GRADED_LESSON.stem].autograder_zip
    requirements = (zip_path.parent / "requirements.txt").read_text().split()
    names = {re.split(r"[<>=;]", r)[0] for r in requirements}
    assert {"numpy", "ipywidgets", "matplotlib", "graphviz-pure", "ipykernel"} <= names
    assert "jupyterlab" not in names  # otter brings its own kernel tools


def test_an_existing_export_is_kept_unless_forced(tmp_path, capsys):
    assert main(["export", "--otter", LESSON, str(tmp_path)]) == 0
    assert "Hand out:" in capsys.readouterr().out
    assert main(["export", "--otter", LESSON, str(tmp_path)]) == 2
    assert "--force" in capsys.readouterr().err
    assert main(["export", "--otter", LESSON, str(tmp_path), "--force"]) == 0


def test_the_command_line_prints_no_traceback(tmp_path):
    run = subprocess.run([sys.executable, "-m", "widgets.course", "export", "--otter",
                          str(tmp_path / "missing.ipynb"), str(tmp_path / "out")],
                         capture_output=True, text=True, cwd=ROOT)
    assert run.returncode == 2
    assert "Traceback" not in run.stderr
    assert run.stderr.strip().count("\n") == 0, run.stderr
