"""An exercise's worked solution for a test, read without recording that anyone saw it.

The learner's routes to a solution (``G6.solution``, ``.reveal()``, a Result's
``.solution()``, ``.experiment()`` before solving) all record it; a test that checks what
a solution says, or that a lesson or an export never shows it, reads it here instead, as
an instructor reads ``widgets/exercises/texts.toml``.
"""

from __future__ import annotations


def solution_text(exercise) -> str:
    """The worked solution ``exercise`` would show, as text (nothing recorded)."""
    from widgets.exercises.exercise import _WORKED

    return str(_WORKED[exercise.id])


def words(exercise_id: str) -> dict:
    """Every word ``texts.toml`` keeps for an exercise, its solution and settled verdict
    included (``widgets.exercises.texts()`` gives a learner only what comes before an
    answer)."""
    import sys
    from importlib import resources

    if sys.version_info >= (3, 11):
        import tomllib
    else:  # Python 3.10
        import tomli as tomllib

    source = resources.files("widgets.exercises").joinpath("texts.toml").read_text("utf-8")
    return tomllib.loads(source)[exercise_id]
