"""Grading a submission's answers again, with the instructor's checks, outside its kernel.

The autograder's otter plugin (``otter_plugin``) runs this module in a fresh process
(``python -m widgets.course.regrade ANSWERS QUESTIONS OUT``) once otter has executed the
submission: it reads the answers the exercise cells passed (``answers``), runs this
copy of the question bank's checks on them, and writes each question's verdict. The
submission's code never ran in this process, so whatever it patched, redefined or
stored in its kernel (the Result, the registry, the checks, NumPy, the grader cells)
decides nothing here. A learner's function is called in a sandbox (``sandbox``).

A question's verdict is one of:

* ``graded``: ``ok`` and ``feedback``, the check's own words (the same named mistake as
  in the lesson);
* ``unanswered``: no check of the item was graded by its ``grader.check`` cell;
* ``kernel_only``: the answer is not plain data (an op class, an experiment, a Tensor),
  so it cannot be graded outside the kernel; the otter plugin says so in the feedback.

An item with a budget of tries (``Exercise.tries``: C1, C2, A3, ...) can be solved by
search, or after reading its solution, and the lesson then says "solved after seeing the
solution". The submission's progress files never reach this process, so for such an item
the sandbox runs the notebook's cells again up to the answer graded, and its own tally
(``sandbox._tally_progress``) says what they did before the item was first right: how many
candidates they measured or checked wrong, whether they were shown its solution or its
skeleton. A right answer past the budget, or after the solution, is graded right, with
``after`` = "solution" ("help": after the skeleton) and a line of feedback saying so
(``graded_feedback.progress_line``), which the class report reads.
"""

from __future__ import annotations

import importlib
import json
import os
import pkgutil
import shutil
import sys
import tempfile
from pathlib import Path

from .answers import ANSWERS, CELLS, GRADED, Unencodable, decode, read_jsonl
from .graded_feedback import progress_line, question_feedback
from .sandbox import NotRegradable, Sandbox, SandboxFailed


def _unanswered(question: str, exercise: str) -> dict:
    return {"status": "unanswered", "ok": False, "feedback":
            f"The cell run just before grader.check({question!r}) did not check {exercise}: "
            f"run the exercise cell (the one that calls {exercise}; if it stops with an error, "
            "fix that first), then this check."}


def records_graded(folder: Path, questions: dict[str, str]) -> dict[str, dict | None]:
    """Question -> the answer record its last ``grader.check`` graded (None: none was, or
    it was a check of another item)."""
    records = {r.get("record"): r for r in read_jsonl(folder / ANSWERS)}
    chosen: dict[str, dict | None] = dict.fromkeys(questions)
    for mark in read_jsonl(folder / GRADED):
        question = mark.get("question")
        if question in questions:
            record = records.get(mark.get("record"))
            ok = record is not None and record.get("exercise") == questions[question]
            chosen[question] = record if ok else None
    return chosen


def _budget(record: dict) -> int | None:
    """The budget of tries of the item ``record`` answers (None: it has none)."""
    from widgets.exercises import registry

    exercise = registry().get(record.get("exercise"))
    return None if exercise is None else exercise.tries


def _sandbox_for(folder: Path, records: list[dict], workdir: Path) -> Sandbox | None:
    """One sandbox that has run the submission's cells, kept each record's functions and
    tallied what the cells did up to each answer of an item with a budget of tries."""
    captures = []
    for record in records:
        names: list[str] = []
        try:
            for value in [*record.get("args", []), *record.get("kwargs", {}).values()]:
                decode(value, function=lambda name, into=names: into.append(name))
        except Unencodable:
            names = []
        if (names or _budget(record) is not None) and isinstance(record.get("cell"), int):
            captures.append({"record": record["record"], "cell": record["cell"], "names": names})
    if not captures:
        return None
    root = workdir / "packages"  # the sandbox's own copy: it cannot change this process's
    for package in ("autograd_core", "widgets"):
        source = Path(__file__).resolve().parents[2] / package
        shutil.copytree(source, root / package, ignore=shutil.ignore_patterns("__pycache__"))
    cells = [c for c in read_jsonl(folder / CELLS)
             if isinstance(c.get("cell"), int) and isinstance(c.get("source"), str)]
    cells.sort(key=lambda c: c["cell"])
    return Sandbox(cells, sorted(captures, key=lambda c: c["cell"]), workdir, root)


def grade_record(record: dict, sandbox: Sandbox | None) -> dict:
    """Run this process's check of ``record`` on its answers: the verdict."""
    from widgets.exercises import registry, set_learner

    if "unencodable" in record:
        return {"status": "kernel_only", "why": f"the answer holds {record['unencodable']}"}
    exercise = registry().get(record.get("exercise"))
    if exercise is None:
        return {"status": "unanswered", "ok": False, "feedback": "No such exercise."}

    def function(name):
        if sandbox is None:
            raise NotRegradable("the sandbox could not start")
        return sandbox.function(record["record"], name)

    set_learner(record.get("learner"))
    try:
        args = [decode(a, function) for a in record.get("args", [])]
        kwargs = {k: decode(v, function) for k, v in record.get("kwargs", {}).items()}
        result = exercise.run(record.get("check", ""), *args, **kwargs)
    except NotRegradable as why:
        return {"status": "kernel_only", "why": str(why)}
    except Unencodable as why:
        return {"status": "kernel_only", "why": f"the answer holds {why}"}
    return {"status": "graded", "ok": bool(result.ok),
            "feedback": question_feedback(record.get("check", ""), result)}


def progress_before(tally: dict, item: str, cell: int) -> tuple[int, bool, bool]:
    """(tries, solution shown, skeleton shown) of ``item`` in the sandbox's tally, from the
    first cell up to ``cell`` (the answer graded), or up to the item's first right check
    if one came earlier: after it, as in the lesson, nothing counts."""
    tries, solution, skeleton = 0, False, False
    for run in tally.get(item, []):
        try:
            at, kind, count = int(run[0]), str(run[1]), int(run[2])
        except (TypeError, ValueError, IndexError):
            continue
        if at > cell or kind == "right":
            break
        tries += count if kind == "try" else 0
        solution |= kind == "solution"
        skeleton |= kind == "help"
    return tries, solution, skeleton


def replayed(verdict: dict, record: dict, sandbox: Sandbox | None) -> dict:
    """``verdict`` with what the replay says of a right answer to an item with a budget of
    tries: ``after`` ("solution" or "help") and ``progress``, the line that says so, also
    added to the feedback. A ``kernel_only`` verdict (an answer that is an op class) gets them
    too: the otter plugin shows the line if the kernel's grade was right."""
    budget = _budget(record)
    answered = verdict.get("ok") or verdict.get("status") == "kernel_only"
    if (budget is None or not answered or sandbox is None
            or not isinstance(record.get("cell"), int)):
        return verdict
    if sandbox.stopped:  # the tally is of part of the notebook: it says nothing
        return verdict
    item = record["exercise"]
    tries, solution, skeleton = progress_before(sandbox.tally, item, record["cell"])
    if solution or tries > budget:
        why = ("its solution was shown before this answer" if solution else
               f"{tries} candidates were measured or checked wrong before this answer, and "
               f"{item} allows {budget}: a search, not a derivation")
        after = "solution"
    elif skeleton:
        after, why = "help", "its skeleton was shown before this answer"
    else:
        return verdict
    line = progress_line(after, why)
    if verdict.get("status") == "kernel_only":
        return {**verdict, "after": after, "progress": line}
    return {**verdict, "after": after, "progress": line,
            "feedback": f"{verdict.get('feedback', '')}\n{line}"}


def import_checks() -> None:
    """Import every module of the checks and the engine now, before any learner code runs
    in the sandbox, so nothing it writes on disk is imported here later."""
    import autograd_core
    import widgets.exercises
    import widgets.feedback

    for package in (autograd_core, widgets.exercises, widgets.feedback):
        for module in pkgutil.walk_packages(package.__path__, f"{package.__name__}."):
            importlib.import_module(module.name)
    widgets.exercises.registry()


def regrade(folder: Path, questions: dict[str, str]) -> dict[str, dict]:
    """Question -> verdict for every question (``questions``: question -> exercise ID)."""
    import_checks()
    chosen = records_graded(folder, questions)
    with tempfile.TemporaryDirectory(prefix="autograd-regrade-") as work:
        work = Path(work)
        os.environ["AUTOGRAD_LESSONS_PROGRESS"] = str(work / "progress")
        sandbox = None
        try:
            try:
                sandbox = _sandbox_for(folder, [r for r in chosen.values() if r], work)
            except SandboxFailed:
                sandbox = None
            verdicts = {}
            for question, exercise in questions.items():
                record = chosen[question]
                verdicts[question] = (replayed(grade_record(record, sandbox), record, sandbox)
                                      if record is not None else _unanswered(question, exercise))
            return verdicts
        finally:
            if sandbox is not None:
                sandbox.close()


def main(argv: list[str] | None = None) -> int:
    """``ANSWERS_FOLDER QUESTIONS_JSON OUT_JSON``: write the verdicts of every question."""
    folder, questions, out = (argv if argv is not None else sys.argv[1:])
    verdicts = regrade(Path(folder), json.loads(Path(questions).read_text(encoding="utf-8")))
    Path(out).write_text(json.dumps(verdicts, indent=1), encoding="utf-8")
    return 0


if __name__ == "__main__":  # pragma: no cover - run by the otter plugin
    sys.exit(main())
