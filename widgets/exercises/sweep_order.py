"""G4: the order of the reverse sweep, written as a function.

The learner writes ``backward_order(ops, loss)``: ``ops`` describes a recorded graph as
``(name, inputs)`` pairs in no particular order (an input is another op's name, or a leaf's
such as ``"x"``), ``loss`` names the op that made the loss, and the function returns the
names of the ops the sweep visits, in an order it may visit them. The check runs it on the
lesson's graph and on graphs drawn for the learner (fan-out, a value one op reads twice, a
branch the loss does not use), each recorded and swept by the engine: the ops the engine
visits are the ones an answer must hold, and any order that puts every op after every
visited op that read its output is right, not only the engine's (newest first).
"""

from __future__ import annotations

import autograd_core as ag
from autograd_core.sweep.engine import backward_steps
from autograd_core.tools.graph import capture

from .. import gate
from ..feedback.result import Result
from ..lessons.report import Report
from . import engine_watch
from .exercise import Exercise, register
from .function_cases import Derivation, deriving
from .problems import rng

_LEAVES = ("x", "w", "v")
_NAMES = tuple("abcdefghjkmnpqrstu")  # the drawn graphs' op names (no leaf's)
_UNARY = {"tanh": ag.tanh, "sin": ag.sin, "cos": ag.cos, "sum": lambda t: t.sum()}
_BINARY = {"mul": lambda a, b: a * b, "add": lambda a, b: a + b, "sub": lambda a, b: a - b}
# The lesson's program, a = x * w; c = a + tanh(a); loss = c.sum(), each op named as the
# engine names it, listed in an order that is neither a forward nor a backward one.
_LESSON = [("mul", "mul", ("x", "w")), ("tanh", "tanh", ("mul",)),
           ("add", "add", ("mul", "tanh")), ("sum", "sum", ("add",))]
_LESSON_LISTED = ("tanh", "sum", "mul", "add")


def _g4_program():
    x = ag.tensor([0.5, -1.0, 2.0], requires_grad=True)
    w = ag.tensor([1.5, 0.5, -0.5], requires_grad=True)
    a = x * w
    c = a + ag.tanh(a)  # a feeds two ops: tanh and add
    return c.sum()


@gate.answers("G4")
def sweep_of_g4() -> Report:
    """The lesson's program's ops in recording order and in the order backward visits them."""
    loss = _g4_program()
    forward = [op.op for op in capture(loss).ops]
    steps = list(backward_steps(loss))
    rows = [(s.index, s.node.op.name, ", ".join(s.reads) or "-",
             sum(x.accumulated for x in s.sent)) for s in steps]
    return Report("a = x * w;  c = a + tanh(a);  loss = c.sum()",
                  f"Recorded in the order {forward}; backward visits "
                  f"{[r[1] for r in rows]}: each node only after every consumer of its output "
                  "(mul after both tanh and add).",
                  ("step", "op", "reads", "accumulated sends"), rows,
                  data={"forward": forward, "backward": [r[1] for r in rows]})


def _swept(recorded, g) -> list[str]:
    """Run ``recorded`` ((name, kind, inputs) in recording order, the last op the loss) in
    the engine and sweep back from the loss: the names of the ops it visits, in its order."""
    values = {n: ag.tensor(g.uniform(-1, 1, 3), requires_grad=True) for n in _LEAVES}
    made = {}
    for name, kind, inputs in recorded:
        fn = _UNARY.get(kind) or _BINARY[kind]
        values[name] = fn(*(values[i] for i in inputs))
        made[values[name].grad_fn] = name
    return [made[step.node] for step in backward_steps(values[recorded[-1][0]])]


def _follows_edges(order, reads, forward: bool) -> bool:
    """Whether ``order`` puts every op after (``forward``: before) every op in it that read
    its output."""
    at = {n: i for i, n in enumerate(order)}
    return all((at[i] < at[n]) == forward for n in order for i in reads[n] if i in at)


def _case(recorded, listed, g) -> tuple[tuple, list[str], dict]:
    visited = _swept(recorded, g)
    reads = {name: tuple(inputs) for name, _, inputs in recorded}
    ops = [(name, reads[name]) for name in listed]
    return (ops, recorded[-1][0]), visited, {"reads": reads, "loss": recorded[-1][0],
                                             "visited": frozenset(visited)}


def _lesson_case():
    return _case(_LESSON, _LESSON_LISTED, rng(40))


def _drawn(g) -> list[tuple[str, str, tuple]]:
    """A recorded graph: 4 to 6 ops the loss depends on (one of them reading one value
    twice, one value read by two ops), 1 or 2 more that it does not (one reading a value
    the loss depends on), and the loss, a sum; (name, kind, inputs) in recording order."""
    while True:
        names = iter(g.permutation(_NAMES).tolist())
        recorded, live, unused, dead = [], list(_LEAVES), [], []
        twice = int(g.integers(4))
        for k in range(int(g.integers(4, 7))):
            if k == twice:
                a = unused[-1] if unused else str(g.choice(live))
                kind, inputs = "mul", (a, a)
            elif g.random() < 0.5:
                kind = str(g.choice(list(_UNARY)[:3]))
                inputs = (unused[int(g.integers(len(unused)))] if unused else
                          str(g.choice(live)),)
            else:
                kind = str(g.choice(list(_BINARY)))
                inputs = tuple(str(v) for v in g.choice(live, 2))
            name = next(names)
            recorded.append((name, kind, inputs))
            unused = [u for u in unused if u not in inputs] + [name]
            live.append(name)
            if g.random() < 0.4 or (k == 3 and not dead):  # a branch the loss will not use
                d = next(names)
                recorded.append((d, "tanh", (name,)) if g.random() < 0.5 else
                                (d, "mul", (name, str(g.choice(live)))))
                dead.append(d)
        while len(unused) > 1:
            name = next(names)
            recorded.append((name, str(g.choice(list(_BINARY))), (unused[0], unused[1])))
            unused = unused[2:] + [name]
        recorded.append(("loss", "sum", (unused[0],)))
        readers = [sum(v in inputs for n, _, inputs in recorded if n not in dead)
                   for v in live[len(_LEAVES):]]
        if dead and max(readers) >= 2 and len(recorded) <= 12:
            return recorded


def _drawn_case(seed: int):
    g = rng(seed)
    recorded = _drawn(g)
    reads = {name: inputs for name, _, inputs in recorded}
    while True:  # listed neither forward nor backward, even once the unused ops are left out
        listed = [recorded[i][0] for i in g.permutation(len(recorded))]
        kept = [n for n in listed if n in _reached(reads)]
        if not (_follows_edges(kept, reads, True) or _follows_edges(kept, reads, False)):
            return _case(recorded, listed, g)


def _reached(reads) -> set[str]:
    """The ops the loss depends on (``reads``' last op is the loss)."""
    stack, seen = [list(reads)[-1]], set()
    while stack:
        n = stack.pop()
        if n in reads and n not in seen:
            seen.add(n)
            stack += reads[n]
    return seen


def _compare(out, expected, ctx) -> Result:
    """Any order of exactly the ops the engine visited that puts each after every visited
    op that read its output; a mistake is named by the ops of the learner's list."""
    reads, visited, loss = ctx["reads"], ctx["visited"], ctx["loss"]

    def wrong(message: str, code: str, hint: str = "") -> Result:
        return Result(False, message, name="backward_order", diagnosis=code, hint=hint)

    if isinstance(out, str | bytes) or not isinstance(out, list | tuple):
        return wrong(f"Your backward_order returns {type(out).__name__}, not a list of op "
                     f"names (such as {loss!r}).", "type")
    order = list(out)
    for n in order:
        if not isinstance(n, str):
            return wrong(f"Your order holds {n!r:.40}, which is not an op's name: give each "
                         f"op by the name ops lists it under (a string, such as {loss!r}).",
                         "type")
        if n not in reads:
            what = ("an input no op made (a leaf): the sweep visits ops, and a leaf's "
                    "gradient arrives when the ops that read it are visited"
                    if any(n in inputs for inputs in reads.values())
                    else "not the name of any op in ops")
            return wrong(f"Your order holds {n[:40]!r}, {what}.", "unknown_name_in_order")
    for n in order:
        if order.count(n) > 1:
            return wrong(f"Your order visits {n!r} {order.count(n)} times: the sweep visits "
                         "each op once, when all of its gradient has arrived.", "twice")
    for n in order:
        if n not in visited:
            return wrong(f"Your order visits {n!r}, but the loss does not depend on it: "
                         f"nothing {n!r} made reaches {loss!r}, so no gradient ever arrives "
                         "there.", "not_reached", "Which ops can the sweep reach, going back "
                         "from the loss along what each op read?")
    for n in reads:
        if n in visited and n not in order:
            return wrong(f"Your order leaves out {n!r}, which the loss depends on: the sweep "
                         "visits every op that a path from the loss back reaches.", "missing")
    if len(order) > 1 and _follows_edges(order, reads, True):
        return wrong("Your order is a forward one: each op comes after the ops it read, as "
                     "they ran. Backward starts at the loss and goes the other way.",
                     "forward")
    at = {n: i for i, n in enumerate(order)}
    for n in order:
        late = [c for c in order[at[n] + 1:] if n in reads[c]]
        if late:
            return wrong(f"Your order visits {n!r} before {late[0]!r}, which read the "
                         f"output of {n!r}: {n!r} can pass its gradient on only once "
                         f"{late[0]!r} has sent it its share.", "before_consumer",
                         "After each op you place, which ops have now heard from every op "
                         "that read their output?")
    return Result(True, "", name="backward_order", diagnosis="correct")


_check_g4 = deriving(Derivation("backward_order", (
    ("the lesson's graph (a = x * w; c = a + tanh(a); loss = c.sum())", _lesson_case),
    ("a graph drawn for you", lambda: _drawn_case(41)),
    ("a second graph drawn for you", lambda: _drawn_case(42)),
    ("a third graph drawn for you", lambda: _drawn_case(43))),
    _compare, right="every op after every op that read its output, and only the ops the "
    "loss depends on.", closed_form=False,
    probe="Does it rely on the lesson's op names, or on the order ops came in?"),
    """``G4(backward_order)``: your ``backward_order(ops, loss)`` gets a recorded graph as
    ``(name, inputs)`` pairs in no particular order and the name of the op that made the
    loss, and returns the ops the sweep visits, in an order it may visit them; checked on
    the lesson's graph and on three graphs drawn for you.""")


register(Exercise("G4", "derivation", {"order": _check_g4}, level="M", experiment=sweep_of_g4))
engine_watch.asks_about("G4", _g4_program)  # a sweep of this program shows G4's answer
