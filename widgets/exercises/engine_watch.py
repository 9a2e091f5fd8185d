"""The engine's own backward, run on an item's own problem, shows the item's answer.

A derivation item hands the learner its problem (``G6.problem()``) and asks for the
gradients worked out by hand. The engine is right there, and one ``backward()`` on those
arrays prints the answer: a route to it like ``.solution``. So once a learner has asked
for an item's problem, a watch on the engine notes every reverse sweep that sends a
gradient to a leaf holding one of that problem's arrays (bit for bit), outside a check.
That records the item's solution as seen (an item solved after it is "solved after
seeing the solution"), and a sentence says so, once per item.

Nothing else is watched: a sweep on other data (a lesson's demonstration, another
problem the learner made up) records nothing, and neither does a sweep these lessons' own
code starts (a check's use of the engine on the problem, a lesson helper training from the
same weights).
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

import autograd_core
from autograd_core.recording.node import Node, Observer, observers

from .. import gate
from . import store

_ENGINE = str(Path(autograd_core.__file__).resolve().parent)
_LESSONS = str(Path(__file__).resolve().parent.parent)  # widgets/
# The arrays of the problems handed out in this kernel, by shape: (item, array).
_HANDED: dict[tuple, list[tuple[str, np.ndarray]]] = {}
_SAID: set[str] = set()  # the items whose sentence was shown


class _ProblemWatch(Observer):
    """Notes a sweep that reaches a leaf holding a handed-out problem's array."""

    def on_backward(self, node, grad_output, grads) -> None:
        # every recorded op's backward comes here: only a leaf of a handed-out shape is read
        for edge, grad in zip(node.edges, grads):
            if (edge is None or grad is None or isinstance(edge, Node)
                    or edge.shape not in _HANDED):
                continue
            item = _whose(edge.numpy())
            if (item is not None and store.current.get() is None  # not a check's own sweep
                    and _started_by_the_learner()):
                _shown(item)


_WATCH = _ProblemWatch()


def hand_out(item: str, problem) -> None:
    """Note the float arrays of ``problem`` (an item's own data, as the learner got it) and
    start the watch (once)."""
    values = problem.values() if hasattr(problem, "values") else ()
    for value in values:
        if isinstance(value, np.ndarray) and value.dtype.kind == "f" and value.size > 1:
            known = _HANDED.setdefault(value.shape, [])
            if not any(i == item and np.array_equal(a, value) for i, a in known):
                known.append((item, value.copy()))
    if _HANDED and _WATCH not in observers:
        observers.append(_WATCH)


def _started_by_the_learner() -> bool:
    """Whether the code that started this sweep is the learner's: the first frame outside
    the engine is not these lessons' own (a lesson helper training on the same weights)."""
    frame = sys._getframe(2)  # on_backward's caller: the engine's sweep
    while frame is not None and frame.f_code.co_filename.startswith(_ENGINE):
        frame = frame.f_back
    return frame is not None and not frame.f_code.co_filename.startswith(_LESSONS)


def _whose(array: np.ndarray) -> str | None:
    for item, handed in _HANDED.get(array.shape, ()):
        if array.dtype == handed.dtype and np.array_equal(array, handed):
            return item
    return None


def _shown(item: str) -> None:
    if store.read_item(item)["solved"] is not None:
        return
    gate.measured(item, "solution")
    if item not in _SAID and not gate.is_quiet():
        _SAID.add(item)
        print(f"(A backward on {item}'s own problem shows {item}'s answer: {item} now counts "
              "as seen, as its solution would. Work it out by hand, then check it with "
              f"{item}(...).)", file=sys.stderr)


def forget() -> None:
    """Stop watching and forget every problem handed out (tests, a fresh start)."""
    _HANDED.clear()
    _SAID.clear()
    if _WATCH in observers:
        observers.remove(_WATCH)
