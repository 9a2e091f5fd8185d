"""The otter plugin that makes a lesson's grades summative: answers graded again, outside.

otter executes a submission in a kernel and runs each test there, in the same kernel
as the student's code; a notebook that patches the checker would pass them all. This
plugin, listed in the exported ``otter_config.json``, runs in otter's own process:

* before the submission runs, it points ``AUTOGRAD_LESSONS_ANSWERS`` at a fresh folder,
  so the exercise cells' answers are recorded there (``answers``);
* after, it replaces every question's result with the verdict of ``regrade``, which
  grades those answers with this copy of the checks in a fresh process (the
  submission's code never ran in it). The question list and points come from the
  plugin's configuration, written at export time, never from the submission; what the
  kernel reported is discarded.

An answer that is not plain data (an op class, an experiment, a Tensor) can only be
graded in the kernel: that question keeps the kernel's score, and its feedback says so.
"""

from __future__ import annotations

import atexit
import json
import os
import shutil
import subprocess
import tempfile
from pathlib import Path

from otter.plugins import AbstractOtterPlugin
from otter.test_files.abstract_test import TestCase, TestCaseResult
from otter.test_files.exception_test import ExceptionTestFile

import autograd_core
import widgets

from .answers import ANSWERS_ENV, python_running

PACKAGES = (autograd_core, widgets)  # this copy of the engine and the checks
REGRADE_SECONDS = 1800
KERNEL_ONLY = ("(Graded in the notebook's kernel: {why}, which the autograder cannot run "
               "outside it.)")

class RegradeAnswers(AbstractOtterPlugin):
    """Grade every question again from the recorded answers (see the module docstring).
    Configuration: ``{"questions": {QUESTION: {"exercise": ID, "points": N}}}``."""

    def __init__(self, submission_path, submission_metadata, plugin_config):
        super().__init__(submission_path, submission_metadata, plugin_config)
        self.questions = {q: (str(spec["exercise"]), float(spec["points"]))
                          for q, spec in plugin_config.get("questions", {}).items()}
        self.folder = self.checks = None  # made by before_grading (otter builds plugins
        # in other places too, which never grade)

    def before_grading(self, config) -> None:
        """Copy the checks as they are now, before the submission runs (the regrade
        imports this copy, not files the submission's code could change on disk), and
        point the submission's kernel at a fresh answers folder."""
        self.folder = Path(tempfile.mkdtemp(prefix="autograd-answers-"))
        self.checks = Path(tempfile.mkdtemp(prefix="autograd-checks-"))
        atexit.register(self._remove_folders)  # also when otter stops before grading
        for package in PACKAGES:
            source = Path(package.__file__).resolve().parent
            shutil.copytree(source, self.checks / source.name,
                            ignore=shutil.ignore_patterns("__pycache__", "labextension"))
        os.environ[ANSWERS_ENV] = str(self.folder)

    def _remove_folders(self) -> None:
        for folder in (self.folder, self.checks):
            if folder is not None:
                shutil.rmtree(folder, ignore_errors=True)

    def after_grading(self, results) -> None:
        """Replace every question's result by its verdict from outside the kernel."""
        os.environ.pop(ANSWERS_ENV, None)
        if self.folder is None:
            raise RuntimeError("The autograder's plugin graded without preparing: "
                               "before_grading did not run.")
        try:
            verdicts = self._regrade()
        finally:
            self._remove_folders()
        kernel = dict(results.results)
        results.results = {q: self._test_file(q, points, verdicts.get(q), kernel.get(q))
                           for q, (_, points) in self.questions.items()}
        results._catastrophic_error = None  # the verdicts do not depend on the kernel's pickle

    def _regrade(self) -> dict[str, dict]:
        with tempfile.TemporaryDirectory(prefix="autograd-regrade-") as work:
            work = Path(work)
            questions = work / "questions.json"
            questions.write_text(json.dumps({q: e for q, (e, _) in self.questions.items()}))
            out = work / "verdicts.json"
            env = {k: v for k, v in os.environ.items() if k != ANSWERS_ENV}
            done = subprocess.run(
                python_running(self.checks, "from widgets.course.regrade import main; "
                               "sys.exit(main(sys.argv[2:]))", str(self.folder),
                               str(questions), str(out)), cwd=work, env=env, capture_output=True,
                text=True, timeout=REGRADE_SECONDS)
            if done.returncode != 0 or not out.is_file():
                raise RuntimeError("The autograder could not grade the answers again:\n"
                                   + done.stderr[-2000:])
            return json.loads(out.read_text(encoding="utf-8"))

    @staticmethod
    def _test_file(question: str, points: float, verdict: dict | None, kernel) -> ExceptionTestFile:
        verdict = verdict or {"status": "unanswered", "ok": False, "feedback": "Not graded."}
        note = None
        if verdict["status"] == "kernel_only":
            passed = kernel is not None and kernel.passed_all
            note = KERNEL_ONLY.format(why=verdict.get("why", "its answer is not plain data"))
            message = note if kernel is None else f"{kernel.summary().strip()}\n{note}"
            if passed and verdict.get("progress"):  # what the replay found before it
                note = f"{note}\n{verdict['progress']}"
        else:
            passed, message = bool(verdict["ok"]), verdict.get("feedback", "")
            note = verdict.get("progress") if passed else None  # after seeing the solution
        case = TestCase(name=f"test_{question}", body=None, hidden=False, points=points,
                        success_message=note, failure_message=None)
        test_file = ExceptionTestFile(question, f"tests/{question}.py", [case])
        test_file.test_case_results = [TestCaseResult(case, None if passed else message,
                                                      passed)]
        return test_file
