"""What an exported autograder test runs: the lesson's own check, read back and graded.

The student notebook runs ``grader.check("G6")`` right after the exercise cell, and the
test file ``tests/G6.py`` calls :func:`grade`. The exercise cell has just run the question
bank's check on the student's answer (``G6(my_g6)``), exactly as in the lesson;
:func:`grade` takes that Result and passes when it is right, or fails with the Result's
own words. So ``grader.check`` shows the same feedback (the named mistake) as the lesson,
and the grade counts the same check: one source of truth, the question-bank registry.

Which Result: the student notebook's grader cell calls :func:`follow_checks`, which
watches the kernel's cells. ``grader.check`` then grades the checks run by the last cell
executed before it (other ``grader.check`` cells aside, so checking twice gives the same
answer); a cell that stopped with an error, or ran no check of the item, leaves nothing
to grade, and the feedback says to run the exercise cell. A demonstration cell that
checked a deliberate mistake earlier in the lesson is never graded in its place. Without
:func:`follow_checks` (outside IPython), the last check of the item in this process is
graded, and a Result already graded for another question of the item is not reused.

This grade, made in the student's kernel, is the feedback ``grader.check`` shows while
the student works. The grade that counts is made again outside the kernel: while the
autograder executes a submission, :func:`follow_checks` records every check's answers
and :func:`grade` notes which record each question graded (``answers``); the otter
plugin then grades those answers with its own copy of the checks (``otter_plugin``,
``regrade``).
"""

from __future__ import annotations

from widgets.exercises import last_results

from .answers import note_graded, start_recording

_GRADED: dict[str, object] = {}  # question -> the Result it last graded (this kernel)


class NotAnswered(AssertionError):
    """No check of the item ran for this question: the feedback says which cell to run."""


class _CellWatcher:
    """IPython hooks: which exercise Results each cell created, and which cell graded."""

    def __init__(self):
        self.before: dict[str, object] = {}
        self.grading = False  # the running cell called grade()
        self.previous: dict[str, object] = {}  # Results of the last non-grading cell

    def new_results(self) -> dict[str, object]:
        """The Results created by the cell running now (so far)."""
        return {i: r for i, r in last_results().items() if self.before.get(i) is not r}

    def pre_run_cell(self, info=None) -> None:
        self.before, self.grading = dict(last_results()), False

    def post_run_cell(self, result=None) -> None:
        if self.grading:
            return  # a grader.check cell: the exercise cell before it stays the one graded
        failed = result is not None and not result.success
        self.previous = {} if failed else self.new_results()


_WATCHER: _CellWatcher | None = None


def follow_checks() -> None:
    """Let ``grader.check`` grade the exercise cell run just before it (IPython only)."""
    global _WATCHER
    try:
        from IPython import get_ipython
    except ImportError:  # pragma: no cover - IPython is part of every lesson environment
        return
    shell = get_ipython()
    if shell is None or _WATCHER is not None:
        return
    start_recording(shell)  # only while the autograder executes a submission
    _WATCHER = _CellWatcher()
    shell.events.register("pre_run_cell", _WATCHER.pre_run_cell)
    shell.events.register("post_run_cell", _WATCHER.post_run_cell)


def _result_to_grade(question: str, exercise_id: str):
    if _WATCHER is not None:
        _WATCHER.grading = True
        result = _WATCHER.new_results().get(exercise_id) or _WATCHER.previous.get(exercise_id)
        if result is None:
            raise NotAnswered(
                f"The cell run just before grader.check({question!r}) did not check "
                f"{exercise_id}: run the exercise cell (the one that calls {exercise_id}; if it "
                "stops with an error, fix that first), then this check.")
        return result
    result = last_results().get(exercise_id)
    if result is None:
        raise NotAnswered(f"{exercise_id} has not been checked yet: run the exercise cell "
                          f"(the one that calls {exercise_id}), then grader.check({question!r}).")
    earlier = [q for q, graded in _GRADED.items() if graded is result and q != question]
    if earlier:
        raise NotAnswered(f"No new check of {exercise_id} ran since {earlier[0]} was graded: run "
                          "the exercise cell (if it stops with an error, fix that first).")
    return result


def grade(question: str, exercise_id: str) -> None:
    """Pass if the exercise cell's check of ``exercise_id`` was right; else fail with its
    feedback. ``question`` is the autograder's name for the exercise cell."""
    result = _result_to_grade(question, exercise_id)
    _GRADED[question] = result
    note_graded(question, result)
    if not result.ok:
        raise AssertionError("\n" + repr(result))
