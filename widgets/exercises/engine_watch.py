"""The engine's own backward, run on an item's own problem, shows the item's answer.

A derivation item hands the learner its problem (``G6.problem()``) and asks for the
gradients worked out by hand. The engine is right there, and one ``backward()`` on those
arrays prints the answer: a route to it like ``.solution``. So once a learner has asked
for an item's problem, a watch on the engine notes every reverse sweep that sends a
gradient to a leaf holding one of that problem's arrays (bit for bit), outside a check.
That records the item's solution as seen (an item solved after it is "solved after
seeing the solution"), and a sentence says so, once per item. (No watch sees every
disguise: a leaf holding the array shifted, or in float32, is another array. So the
Gradients kind does not take arrays: it takes the learner's function of the problem and
runs it on problems drawn at check time too, where arrays seen here do not carry over.)

A prediction item asks about a program instead ("in which order does backward visit the
ops of ``a = x * w; c = a + tanh(a)``?"), and the engine's sweep of that very program is
its answer too. Such an item names its program once (``asks_about``); a sweep the learner
starts through a graph of the same shape (the same ops, wired the same way, whatever the
values) records that item's solution as seen, in the same way. A variant that only adds
ops the answer can be read through (a constant's scale or shift, a sign, a copy, a cast,
a mean for a sum) has the same shape.

Nothing else is watched: a sweep on other data or another program (a lesson's
demonstration, a problem the learner made up) records nothing, and neither does a sweep
these lessons' own code starts (a check's use of the engine on the problem, a lesson helper
training from the same weights). An item whose answer is a forward value
(``forward_shows``: L5, the layers' outputs in evaluation) is shown by any op run on one of
its problem's arrays. The views (``widgets.Stepper`` and the like) are the
learner's tools: a sweep they run for the learner counts as the learner's.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

from autograd_core.recording.node import Node, Observer, observers

from .. import gate
from . import learner, store
from .learner import ENGINE

# this watch, and widgets' own views (the learner's tools): frames a sweep is seen through
_WATCHING = (str(Path(__file__).resolve()),
             *(str(p) for p in Path(__file__).resolve().parent.parent.glob("*.py")))
# The arrays of the problems handed out in this kernel, by shape: (item, array).
_HANDED: dict[tuple, list[tuple[str, np.ndarray]]] = {}
_SAID: set[str] = set()  # the items whose sentence was shown
# The programs prediction items ask about, by the op each ends in: (item, its shape); one
# table for the programs whose sweep shows the answer, one for those whose record does.
_SWEPT: dict[str, list[tuple[str, tuple]]] = {}
_RECORDED: dict[str, list[tuple[str, tuple]]] = {}
_ASKED: dict[str, list] = {}  # item -> [(a function that records its program, shown_by)]
_FORWARD_SHOWS: set[str] = set()  # items whose answer any op run on their problem shows
# items whose program shows the answer of one of their checks only (S6's "predict": its
# "fixed" check asks for one sweep, and trying the snippet's own sweeps while writing it
# shows nothing once the prediction is right)
_ONLY_FOR: dict[str, str] = {}


class _ProblemWatch(Observer):
    """Notes a sweep through an asked-about program, or one that reaches a leaf holding a
    handed-out problem's array."""

    def on_forward(self, op, node, arrays, out, params) -> None:
        # every op's forward comes here: only a recorded node that ends an asked-about
        # program, or an op reading an array of a problem whose forward is its answer, is
        # read further
        asked = _RECORDED.get(_READ_AS.get(op.name, op.name)) if node is not None else None
        if asked and store.current.get() is None:
            _a_program_ran(node, asked)
        if _FORWARD_SHOWS and _HANDED:
            for array in arrays:
                if getattr(array, "shape", None) in _HANDED:
                    item = _whose(array)
                    if (item in _FORWARD_SHOWS and store.current.get() is None
                            and _started_by_the_learner()):
                        _shown(item)

    def on_backward(self, node, grad_output, grads) -> None:
        # every recorded op's backward comes here: only a node that ends an asked-about
        # program, or a leaf of a handed-out shape, is read further
        asked = _SWEPT.get(_READ_AS.get(node.op.name, node.op.name))
        if asked and store.current.get() is None:
            _a_program_ran(node, asked)
        if not _HANDED:
            return
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


def asks_about(item: str, program, shown_by: str = "sweep", check: str | None = None) -> None:
    """Note that ``item`` asks about the graph ``program()`` records (its output's), and
    start the watch: the learner's sweep through a graph of that shape (``shown_by="sweep"``:
    the order, the gradients), or recording one (``"record"``: the ops it records), shows
    the answer; with ``check``, the answer of that check only, until it is right."""
    if check is not None:
        _ONLY_FOR[item] = check
    root = program().grad_fn
    _ASKED.setdefault(item, []).append((program, shown_by))
    table = {"sweep": _SWEPT, "record": _RECORDED}[shown_by]
    known = table.setdefault(_key(root), [])
    if (item, _shape(root)) not in known:
        known.append((item, _shape(root)))
    if _WATCH not in observers:
        observers.append(_WATCH)


def forward_shows(item: str) -> None:
    """Note that ``item``'s answer is what the engine's forward computes on its problem (L5:
    the layers' outputs in evaluation): any op the learner runs on one of the problem's
    arrays, recording or not, shows the answer, as a sweep shows a gradient's."""
    _FORWARD_SHOWS.add(item)
    if _WATCH not in observers:
        observers.append(_WATCH)


def programs_asked_about() -> dict:
    """Each item that asks about programs: for each, the function that records it, and what
    shows the answer ("sweep" or "record")."""
    return {item: list(programs) for item, programs in _ASKED.items()}


# Ops a variant of a program may add without changing what it asks about: a constant's
# scale or shift (``x * 1.0``, ``y + 0``), a sign, a copy, a cast. A graph's shape looks
# through them, and reads a mean as a sum (``.mean()`` for ``.sum()`` leaves which leaves a
# sweep reaches, and the order it reaches them in, as they were).
_THROUGH = {"add", "sub", "mul", "div", "neg", "clone", "cast"}
_READ_AS = {"mean": "sum"}


def _fed_by(node: Node) -> list:
    """The inputs of ``node`` that carry a gradient (a node or a leaf)."""
    return [e for e in node.edges if e is not None]


def _through(node: Node) -> bool:
    """Whether ``node`` only scales, shifts, copies or casts one input."""
    return node.op.name in _THROUGH and len(_fed_by(node)) == 1


def _key(node: Node) -> str:
    """The op name a program is filed under: its last op that is not looked through."""
    while _through(node) and _fed_by(node)[0].__class__ is Node:
        node = _fed_by(node)[0]
    return _READ_AS.get(node.op.name, node.op.name)


def _shape(root: Node, most: int | None = None) -> tuple | None:
    """A graph's shape, from its last node: each op with the shapes of the ops that feed it
    (in any order: ``a + tanh(a)`` is ``tanh(a) + a``), and how many ops there are, so that a
    value read twice is told from one computed twice. The ops ``_THROUGH`` only pass one
    input on are looked through. ``None`` past ``most`` ops. (A loop, not a recursion: this
    runs beside every op of an asked-about kind, and a recursion's frames would stay
    allocated on Python 3.10's free list.)"""
    shapes: dict = {}
    counted = 0
    stack: list = [(root, False)]
    while stack:
        node, fed_ready = stack.pop()
        if fed_ready:
            if _through(node):
                only = _fed_by(node)[0]
                shapes[node] = shapes[only] if only.__class__ is Node else None
            else:
                fed = sorted(shapes[e] for e in node.edges
                             if e.__class__ is Node and shapes[e] is not None)
                shapes[node] = (_READ_AS.get(node.op.name, node.op.name), tuple(fed))
        elif node not in shapes:
            counted += not _through(node)
            if most is not None and (counted > most or len(shapes) >= 4 * most + 16):
                return None
            shapes[node] = None  # seen now; its shape once every op feeding it has one
            stack.append((node, True))
            stack.extend((e, False) for e in node.edges if e.__class__ is Node)
    return shapes[root], counted


def _a_program_ran(node: Node, asked: list[tuple[str, tuple]]) -> None:
    most = max(len_ for _, (_, len_) in asked)
    shape = _shape(node, most)
    for item, program in asked:
        if shape == program and _started_by_the_learner():
            _shown(item)


def _started_by_the_learner() -> bool:
    """Whether the code that started this sweep is the learner's: the first frame outside
    the engine and the views is not these lessons' own (a lesson helper training on the
    same weights, a check)."""
    return learner.learners_code(sys._getframe(1), through=(ENGINE, *_WATCHING))


def _whose(array: np.ndarray) -> str | None:
    for item, handed in _HANDED.get(array.shape, ()):
        if array.dtype == handed.dtype and np.array_equal(array, handed):
            return item
    return None


def _shown(item: str) -> None:
    entry = store.read_item(item)
    if entry["solved"] is not None:
        return
    check = _ONLY_FOR.get(item)
    if check is not None:
        parts = [p for key, p in entry["parts"].items() if key.startswith(f"{check}:")]
        if parts and all(p.get("ever") for p in parts):
            return  # that check is answered already: nothing left to show
    gate.measured(item, "solution")
    if item not in _SAID and not gate.is_quiet():
        _SAID.add(item)
        print(f"(The engine run on {item}'s own problem shows {item}'s answer: {item} now "
              "counts as seen, as its solution would. Work it out by hand, then check it "
              f"with {item}(...).)", file=sys.stderr)


def forget() -> None:
    """Stop watching and forget every problem handed out (tests, a fresh start); the
    programs items ask about stay watched."""
    _HANDED.clear()
    _SAID.clear()
    if _WATCH in observers and not _ASKED and not _FORWARD_SHOWS:
        observers.remove(_WATCH)
