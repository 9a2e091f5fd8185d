"""Course tools: turn a lesson into a graded assignment.

``python -m widgets.course export --otter notebooks/05_matmul_mlp.ipynb OUT/`` writes a
student notebook (the lesson's exercise cells, no stored outputs, a ``grader.check`` after
each exercise) and an otter-grader autograder whose tests grade the question bank's own
checks (see :mod:`widgets.course.otter_export` and :mod:`widgets.course.grading`).

otter-grader is an optional extra: ``pip install -e ".[course]"``. The lessons never
import this package.
"""

from .lesson import EXERCISE_TAG, GradedCell, LessonError, graded_cells, read_lesson

__all__ = ["EXERCISE_TAG", "GradedCell", "LessonError", "graded_cells", "read_lesson",
           "export_otter"]


def __getattr__(name: str):
    if name == "export_otter":
        from .otter_export import export_otter

        return export_otter
    raise AttributeError(f"module 'widgets.course' has no attribute {name!r}")
