"""Cells that give an answer away, run only once the learner has earned it.

A lesson often wants to compare the learner's derivation with the engine (print the
op's rule, overlay the two curves, count the passes). Shown before the exercise is
solved, that comparison *is* the answer. ``after_solving("G6", compare)`` runs
``compare`` only when G6 is solved or its solution was asked for, and otherwise says
what to do first; a stored lesson (a fresh start) therefore shows the sentence, never
the comparison.

>>> after_solving("G6", lambda: print("da = g @ b.T"))   # doctest: +SKIP
This comparison gives G6's answer away: it runs once G6 is solved (or you asked for the
solution). Solve G6 above, then run this cell again.

The cell's own name for ``show`` stays gated too: after the cell, every name in the
lesson's namespace that held ``show`` holds a stand-in that asks again on each call, so
calling ``compare()`` in a later cell is no way around the wait.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any

from ..feedback.result import Text
from . import store
from .exercise import registry

__all__ = ["after_solving", "earned"]


def earned(exercise_id: str) -> bool:
    """True once ``exercise_id`` is solved or its solution has been seen."""
    entry = store.read_item(exercise_id)
    return bool(entry["solved"] or entry["solution_seen"])


def after_solving(exercise_id: str | tuple[str, ...], show: Callable[[], Any], *,
                  kind: str = "comparison", where: str = "above") -> Any:
    """``show()`` once every item in ``exercise_id`` is solved (or its solution seen);
    until then a sentence that says which item to solve first (``show`` does not run).
    ``kind`` names what the cell shows ("comparison", or "demonstration" for a check's
    feedback on the learner's own problem, the only problem some items have); ``where``
    says where the item is ("above", "in lesson 03")."""
    ids = (exercise_id,) if isinstance(exercise_id, str) else tuple(exercise_id)
    unknown = [i for i in ids if i not in registry()]
    if unknown:
        return Text(f"{', '.join(map(str, unknown))} is not an exercise of these lessons.")
    frame = inspect.currentframe()
    _gate_names(frame.f_back.f_globals if frame and frame.f_back else {}, show,
                lambda: after_solving(ids, show, kind=kind, where=where))
    waiting = [i for i in ids if not earned(i)]
    if waiting:
        names = " and ".join(waiting)
        what = ("This comparison gives" if kind == "comparison" else
                f"This {kind} runs the check on your own problem, which gives")
        return Text(f"{what} {names}'s answer away: it runs once {names} "
                    f"{'is' if len(waiting) == 1 else 'are'} solved (or you asked for the "
                    f"solution). Solve {names} {where}, then run this cell again.")
    return show()


def _gate_names(namespace: dict, show: Callable, gated_call: Callable[[], Any]) -> None:
    """Every name in ``namespace`` (the lesson's globals) that holds ``show`` now holds a
    stand-in that runs ``gated_call`` (the wait, then ``show``) on each call. The stand-in
    keeps ``show``'s name and words but no way back to it."""
    if not callable(show) or getattr(show, "__name__", "") == "<lambda>":
        return

    def stand_in(*args, **kwargs):
        if args or kwargs:  # a comparison takes no arguments; say so rather than drop them
            return Text(f"{show.__name__}() takes no arguments: run it as the lesson's "
                        "cell does.")
        return gated_call()

    stand_in.__name__ = stand_in.__qualname__ = show.__name__
    stand_in.__doc__ = show.__doc__
    for name, value in list(namespace.items()):
        if value is show and not name.startswith("_"):
            namespace[name] = stand_in
