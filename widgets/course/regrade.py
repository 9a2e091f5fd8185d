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
from .graded_feedback import question_feedback
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


def _sandbox_for(folder: Path, records: list[dict], workdir: Path) -> Sandbox | None:
    """One sandbox that has run the submission's cells and kept each record's functions."""
    captures = []
    for record in records:
        names: list[str] = []
        try:
            for value in [*record.get("args", []), *record.get("kwargs", {}).values()]:
                decode(value, function=lambda name, into=names: into.append(name))
        except Unencodable:
            continue
        if names and isinstance(record.get("cell"), int):
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
                verdicts[question] = (grade_record(record, sandbox) if record is not None
                                      else _unanswered(question, exercise))
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
