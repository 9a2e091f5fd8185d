"""True or false, settled by your own experiment: T1–T10 (W1 and W2 use the same protocol).

You state a verdict, write a short experiment on the engine that settles it, and say why in
one line of your own words::

    def my_experiment():               # no arguments; runs the engine
        ...
        return {"grad": x.grad, "contributions": [g1, g2, g3]}   # named measurements

    exercises.T8(verdict=False, because="...", experiment=my_experiment)

Each item's question lists the keys its experiment returns. The check

(a) runs the experiment, turning anything it raises into a sentence (``learner``), while a
    :class:`Watch` notes what the engine really did: every reverse sweep (its seed, the ops it
    visited, what it sent to each leaf along each edge), every forward-mode pass, and what
    every recorded op saved;
(b) verifies that the experiment measured the right thing, with evidence of its own: it
    re-computes the quantity on the same function and tensors, or finds it in what the Watch
    saw (a gradient must be one the engine sent, a pass count the passes the engine made), and
    names what is wrong when it is not; where an item asks for the law behind the
    measurements, written as a function (T2, T4, T5), it tries the law on cases it draws when
    it runs and measures itself, the law running without the engine (:func:`predicted`);
(c) only then compares the verdict with what *your* measurement shows: a wrong verdict is
    pointed back at the measurement, never told the right one;
(d) takes the reason. For most claims it is one line in your words, quoted back beside the
    engine's account and not graded (no word list tells a reason from a guess). A claim whose
    reason can be stated as a law (W2: the passes each mode makes, as a function of the
    sizes) has a :class:`Rule`: the learner writes that law as a function, and the check
    holds it against the right law at sizes it draws when it runs, before it looks at the
    verdict, naming the usual wrong laws without the right one.

The measurement checks and the reference experiments (the last step of the stepped help:
``T8.solution`` shows one, ``T8.experiment()`` runs it; both count as seeing the solution)
live in :mod:`.true_false_experiments`. An old letter pick (``T9(False, "b")``) gets a
sentence saying what the item wants now.
"""

from __future__ import annotations

import inspect
import re
import textwrap
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from autograd_core.func.transforms import TangentCarrier
from autograd_core.recording.node import Node, Observer, observers, observing
from autograd_core.recording.tensor import Tensor
from autograd_core.sweep.engine import sum_to

from .. import gate
from ..feedback import words
from ..feedback.result import Result
from . import learner
from .exercise import Exercise, _all_words, register
from .predictions import guard_few_choices

MAX_REASON = 240  # characters: "one line"
MAX_KEPT_TANGENT = 10_000  # entries: a forward-mode tangent a Watch keeps ...
MAX_KEPT_TANGENTS = 10_000  # ... and how many it keeps


class Flaw(Exception):
    """The experiment ran but did not measure what the item asks; the message says what."""


class Unfinished(Exception):
    """The experiment still holds a placeholder (``...``)."""


# -- what the engine did while the experiment ran -----------------------------------------


@dataclass(eq=False)
class Sweep:
    """One reverse sweep: the node it started from, its seed, the nodes it visited in order,
    and every gradient it sent to a leaf, one entry per edge."""

    root: Node
    seed: np.ndarray
    visited: list = field(default_factory=list)
    sent: list = field(default_factory=list)  # (leaf, gradient) per edge
    _reachable: set = field(default_factory=set)

    @property
    def ops(self) -> list[str]:
        """The names of the ops visited, in order."""
        return [n.op.name for n in self.visited]

    def leaves(self) -> list[Tensor]:
        """The leaves this sweep sent gradient to, each once."""
        return list({id(leaf): leaf for leaf, _ in self.sent}.values())

    def to(self, leaf: Tensor) -> list[np.ndarray]:
        """What this sweep sent to ``leaf``, one array per edge."""
        return [g for t, g in self.sent if t is leaf]

    def total(self, leaf: Tensor) -> np.ndarray:
        """What this sweep added to ``leaf.grad`` (the sum over its edges)."""
        return sum(self.to(leaf))


class Watch(Observer):
    """An engine observer: the reverse sweeps, forward-mode passes and saved bytes of the ops
    run while it is registered (``with observing(Watch()) as watch: ...``)."""

    def __init__(self):
        self.sweeps: list[Sweep] = []
        self.saved: list[tuple[str, int]] = []  # (op name, bytes it saved) per recorded op
        self.tangents: list[np.ndarray] = []  # each op's output tangent, in forward mode
        self._carriers: dict[int, object] = {}

    @property
    def jvp_passes(self) -> int:
        """Forward-mode passes: each ``jvp`` (and each column of ``jacfwd``) is one."""
        return len(self._carriers)

    def on_forward(self, op, node, arrays, out, params) -> None:
        for o in observers:
            if isinstance(o, TangentCarrier):
                self._carriers.setdefault(id(o), o)  # held, so the id is not reused
        if node is not None:
            self.saved.append((op.name, sum(s.nbytes for s in node.saved.values())))

    def on_jvp(self, op, node, tangents, out_tangent) -> None:
        """Keeps the tangent forward mode computed for an op's output (small ones only: an
        experiment reads the tangent of its function's output, a column of a Jacobian)."""
        if np.size(out_tangent) <= MAX_KEPT_TANGENT and len(self.tangents) < MAX_KEPT_TANGENTS:
            self.tangents.append(np.array(out_tangent, dtype=np.float64))

    def on_backward(self, node, grad_output, grads) -> None:
        sweep = self.sweeps[-1] if self.sweeps else None
        # A sweep visits each node once, and only nodes that feed one it visited before.
        if sweep is None or node in sweep.visited or node not in sweep._reachable:
            sweep = Sweep(node, np.array(grad_output, dtype=np.float64))
            self.sweeps.append(sweep)
        sweep.visited.append(node)
        for i, (edge, g) in enumerate(zip(node.edges, grads)):
            if edge is None or g is None:
                continue
            if isinstance(edge, Node):
                sweep._reachable.add(edge)
            else:
                sweep.sent.append((edge, sum_to(np.asarray(g, dtype=np.float64),
                                                node.input_shapes[i])))

    def sent_to_leaves(self) -> list[np.ndarray]:
        """Every gradient any sweep sent to a leaf along one edge."""
        return [g for s in self.sweeps for _, g in s.sent]

    def totals(self, sweeps: list[Sweep] | None = None) -> list[np.ndarray]:
        """What each sweep added to each leaf's gradient."""
        return [s.total(leaf) for s in (self.sweeps if sweeps is None else sweeps)
                for leaf in s.leaves()]


# -- reading what an experiment returned ------------------------------------------------------


def same(a: np.ndarray, b: np.ndarray, rtol: float = 1e-9, atol: float = 1e-12) -> bool:
    """Equal shapes and values equal to rounding."""
    return np.shape(a) == np.shape(b) and bool(np.allclose(a, b, rtol=rtol, atol=atol))


def among(a: np.ndarray, candidates) -> bool:
    """``a`` is one of ``candidates`` (to rounding)."""
    return any(same(a, c) for c in candidates)


def numbers(value: object, name: str) -> np.ndarray:
    """Measured numbers (a Tensor, an array, a list, a number) as a float64 array, or a
    :class:`Flaw` that says what they are instead."""
    if isinstance(value, Tensor):
        value = value.numpy()
    try:
        a = np.asarray(value)
        ok = a.dtype.kind in "iuf" and a.size <= 10**6
    except (TypeError, ValueError):
        ok = False
    if not ok:
        raise Flaw(f"'{name}' should be numbers (a Tensor, an array or a number); it is "
                   f"{words.short(value, 40)}.")
    if not np.isfinite(a).all():
        raise Flaw(f"'{name}' holds NaN or inf: something in your experiment overflowed.")
    return a.astype(np.float64)


def number(value: object, name: str) -> float:
    """One measured number."""
    a = numbers(value, name)
    if a.size != 1:
        raise Flaw(f"'{name}' should be one number; it has shape {words.shape(a.shape)}.")
    return float(a.ravel()[0])


def count(value: object, name: str) -> int:
    """A count (a whole number, not a bool)."""
    if isinstance(value, bool) or not isinstance(value, int | np.integer) or value < 0:
        raise Flaw(f"'{name}' should be a count (a whole number); it is "
                   f"{words.short(value, 40)}.")
    return int(value)


def function(value: object, name: str) -> Callable:
    """A function the experiment used (the check runs it again)."""
    if not callable(value):
        raise Flaw(f"'{name}' should be the function your experiment used; it is "
                   f"{words.short(value, 40)}.")
    return value


def raised(error: object, name: str) -> BaseException:
    """An exception that was really raised (caught with ``except ... as error``)."""
    if not isinstance(error, BaseException) or error.__traceback__ is None:
        what = "nothing: no error was caught" if error is None else words.short(error, 40)
        raise Flaw(f"'{name}' should be the error your experiment caught "
                   f"(except ... as error); it is {what}.")
    return error


def predicted(law: object, *args, name: str):
    """What the learner's law ``law(*args)`` predicts for a case the check drew just now
    (a shape, a depth, a precision the learner has not seen). It runs without the engine: a
    law that measures the case instead of predicting it is a :class:`Flaw`; what it raises is
    a sentence (``learner``), and a placeholder it returns is :class:`Unfinished`."""
    law = function(law, name)
    try:
        out = learner.by_hand(law, *args, what=name)
    except learner.LearnerCodeFailed as exc:
        if exc.code != "uses_engine":
            raise
        raise Flaw(f"Your '{name}' runs the engine when the check calls it: it should predict "
                   "from its arguments alone, by the law you found, not measure the case."
                   ) from None
    if _placeholder(out):
        raise Unfinished(f"Fill in the experiment first: your '{name}' still returns a "
                         "placeholder (...).")
    return out


def _placeholder(value, depth: int = 0) -> bool:
    if value is Ellipsis or (isinstance(value, str) and value.strip() == "..."):
        return True
    if depth < 3 and isinstance(value, dict):
        return any(_placeholder(v, depth + 1) for v in value.values())
    if depth < 3 and isinstance(value, list | tuple):
        return any(_placeholder(v, depth + 1) for v in value[:100])
    return False


# -- a reason stated as a law -----------------------------------------------------------------


@dataclass(frozen=True)
class Law:
    """A wrong (or right) law for one entry of a :class:`Rule`: ``value(*sizes)``, and the
    sentence naming it (for a wrong one), with its code."""

    value: Callable[..., int]
    says: str = ""
    code: str = ""


@dataclass(frozen=True)
class Rule:
    """A reason the check can test: the learner states it as a function called like
    ``call`` ("passes(n, m)") that returns a dict of whole numbers with the keys of
    ``right`` (each a :class:`Law` of the sizes), held against ``right`` at sizes ``draw``
    picks from a generator seeded afresh at every check, so no table of the item's own
    numbers passes. ``about`` says in words what the whole law gives, ``counts[key]`` what
    one entry counts; ``wrong[key]`` lists the usual wrong laws of that entry, each named;
    ``hint`` is the nudge a wrong rule offers."""

    call: str
    about: str
    right: dict[str, Law]
    counts: dict[str, str]
    draw: Callable[[np.random.Generator], list[tuple[int, ...]]]
    wrong: dict[str, tuple[Law, ...]] = field(default_factory=dict)
    hint: str = ""

    @property
    def name(self) -> str:
        return self.call.split("(")[0]

    @property
    def sizes(self) -> tuple[str, ...]:
        return tuple(a.strip() for a in self.call.split("(")[1].rstrip(")").split(","))

    def at(self, args: tuple[int, ...]) -> str:
        """``n = 37, m = 1``: where an entry was wrong."""
        return ", ".join(f"{k} = {v}" for k, v in zip(self.sizes, args))


def check_rule(rule: Rule, given: object, rng: np.random.Generator | None = None
               ) -> Result | None:
    """The learner's law ``given`` (their function) at sizes drawn now: None when every
    entry agrees with the right law at every size, else a sentence that names the entry,
    the kind of mistake where it has a name, and a size where it is off (never the value
    there)."""
    keys, want = tuple(rule.right), f"def {rule.call}: return {{" + ", ".join(
        f'"{k}": ...' for k in rule.right) + "}"
    if given is None or given is Ellipsis or (isinstance(given, str) and given.strip() in (
            "", "...")):
        return Result(False, f"Your experiment measures the right thing. Now state why as a "
                             f"rule the check can test: write {want}, {rule.about}, and pass "
                             f"the function, because={rule.name}.", diagnosis="none")
    if not callable(given):
        what = "a line of text" if isinstance(given, str) else words.short(given, 40)
        return Result(False, f"Here your reason is a rule, not {what}: write {want} and pass "
                             f"the function itself, because={rule.name}.",
                      diagnosis="reason_format")
    drawn = rule.draw(rng if rng is not None else np.random.default_rng())
    got: list[dict] = []
    for args in drawn:
        try:
            out = learner.call(given, *args, what=getattr(given, "__name__", rule.name))
        except learner.LearnerCodeFailed as exc:
            return learner.failed(exc)
        if not isinstance(out, dict) or set(out) != set(keys) or not all(
                isinstance(v, int | np.integer) and not isinstance(v, bool) for v in
                out.values()):
            return Result(False, f"Your rule should return a dict of whole numbers with the "
                                 f"keys {words.listing(map(repr, keys))}; at "
                                 f"{rule.at(args)} it returned {words.short(out, 60)}.",
                          diagnosis="reason_format")
        got.append(out)
    wrong = []
    for key in keys:
        right = [rule.right[key].value(*args) for args in drawn]
        mine = [int(out[key]) for out in got]
        if mine == right:
            continue
        named = next((law for law in rule.wrong.get(key, ())
                      if mine == [law.value(*args) for args in drawn]), None)
        if named is not None:
            wrong.append(named.says)
        elif len(set(mine)) == 1 and len(set(right)) > 1:
            wrong.append(f"Your rule's {key!r} stays {mine[0]} whatever the sizes: is that "
                         f"{rule.counts[key]} for every size?")
        else:
            where = rule.at(drawn[next(i for i, (a, b) in enumerate(zip(mine, right))
                                       if a != b)])
            wrong.append(f"Your rule's {key!r} is not {rule.counts[key]} at {where}.")
    if wrong:
        return Result(False, " ".join(wrong), diagnosis="reason", hint=rule.hint)
    return None


# -- the claims and their checks --------------------------------------------------------------


@dataclass(frozen=True)
class Claim:
    """One item: the keys its experiment returns, how the measurement is checked
    (``measure(data, watch)`` returns the verdict it supports, or raises :class:`Flaw`), and
    its reference experiment. Its words are in ``texts.toml``: besides the question and the
    help, ``reread`` (where to look after a wrong verdict) and ``settled`` (what a right
    answer says). With a ``rule``, the reason (``because``) is that law, written as a
    function and checked; without one, it is a line of text, quoted back."""

    id: str
    keys: tuple[str, ...]
    measure: Callable[[dict, Watch], bool]
    reference: Callable[[], dict]
    rule: Rule | None = None
    # wrong checks allowed before a right answer counts as found by search (Exercise.tries):
    # for a claim whose answer a loop over a small space of candidates could find
    tries: int | None = None

    def _word(self, key: str):
        """This item's ``key`` from ``texts.toml``."""
        return _all_words()[self.id][key]

    @property
    def wants(self) -> str:
        """What the experiment returns, in words."""
        return "a dict with the keys " + words.listing(repr(k) for k in self.keys)


def run(c: Claim, experiment: object) -> tuple[dict, Watch]:
    """Run the learner's experiment under a :class:`Watch`; its dict, and what was seen."""
    name = getattr(experiment, "__name__", "experiment")
    with observing(Watch()) as watch:
        try:
            data = learner.call(experiment, what=name)
        except learner.LearnerCodeFailed as exc:
            if "ellipsis" in str(exc.error).lower():
                raise Unfinished("Fill in the experiment first: a placeholder (...) is still "
                                 f"in use{learner.where_it_failed(exc.error)}.") from None
            raise
    if not isinstance(data, dict):
        raise Flaw(f"Your experiment returned {words.short(data, 40)}; it should return "
                   f"{c.wants}.")
    missing = [k for k in c.keys if k not in data]
    if missing:
        raise Flaw(f"Your experiment's dict has no {words.listing(map(repr, missing))}; it "
                   f"should have {words.listing(map(repr, c.keys))}.")
    unfilled = [k for k in c.keys if _placeholder(data[k])]
    if unfilled:
        still = "is still a placeholder" if len(unfilled) == 1 else "are still placeholders"
        raise Unfinished(f"Fill in the experiment first: {words.listing(map(repr, unfilled))} "
                         f"{still} (...).")
    return data, watch


_TRUE, _FALSE = ("true", "t", "yes"), ("false", "f", "no")


def _verdict(value) -> bool | None:
    if isinstance(value, bool | np.bool_):
        return bool(value)
    if isinstance(value, str) and value.strip().lower() in _TRUE + _FALSE:
        return value.strip().lower() in _TRUE
    return None


def _old_letter(because) -> bool:
    return isinstance(because, str) and re.fullmatch(r"\(?[a-h]\)?", because.strip().lower())


def reason_problem(c: Claim, because: object) -> Result | None:
    """A sentence when the one-line reason cannot be read as one line of text, or None.

    The reason is not graded: the verdict already has to follow from the learner's own
    measurement, and no word list tells a reason from a guess (a keyword gate passed
    "cats can code"). A reason given is quoted back beside the engine's account, for the
    learner to compare; none is needed to solve the item."""
    if because is None or because is Ellipsis:
        return None
    if not isinstance(because, str):
        return Result(False, f"because should be your reason as text in quotes; it is "
                             f"{words.short(because, 40)}.", diagnosis="reason_format")
    text = because.strip()
    if "\n" in text or len(text) > MAX_REASON:
        size = f"; yours has {len(text)}" if len(text) > MAX_REASON else ""
        return Result(False, f"Keep your reason to one line (at most {MAX_REASON} characters"
                             f"{size}): the measurement says the rest.",
                      diagnosis="reason_format")
    return None


def _your_reason(because: object) -> str:
    """The learner's reason quoted back, or an invitation to give one."""
    text = because.strip() if isinstance(because, str) else ""
    if text and text != "...":
        return f" You wrote: \u201c{text}\u201d; does it say the same?"
    return (" (Say why in one line, because=\"...\", to set your reason beside this "
            "account; it is not graded.)")


_TRUTH: dict[str, bool] = {}


def _truth(c: Claim) -> bool:
    """The verdict the claim's reference experiment measures (its settled answer)."""
    if c.id not in _TRUTH:
        with gate.quietly():  # the check's own use of the reference: nothing is shown
            data, watch = run(c, c.reference)
            _TRUTH[c.id] = bool(c.measure(data, watch))
    return _TRUTH[c.id]


def make_check(c: Claim) -> Callable[..., Result]:
    """The check of one claim: ``check(verdict, because, experiment)``."""

    def check(verdict: object = None, because: object = None,
              experiment: object = None) -> Result:
        call = f"{c.id}(verdict=..., because=\"...\", experiment=your_function)"
        if _old_letter(because) and experiment is None:
            return Result(False, f"{c.id} no longer takes a letter: it wants your own "
                                 f"experiment and a reason in your words: {call}. Display "
                                 f"{c.id} to read what the experiment returns.",
                          diagnosis="call")
        if experiment is None or experiment is Ellipsis:
            return Result(False, "Fill in the experiment first: write a function (no "
                                 f"arguments) that runs the engine and returns {c.wants}, "
                                 f"then pass it: {call}.", diagnosis="none")
        try:
            data, watch = run(c, experiment)
            shows = c.measure(data, watch)
        except Unfinished as problem:
            return Result(False, str(problem), diagnosis="none")
        except Flaw as problem:
            return Result(False, f"{problem} Your verdict is looked at once the experiment "
                                 "measures the right thing.", diagnosis="experiment")
        except learner.LearnerCodeFailed as exc:
            return learner.failed(exc)
        if c.rule is not None:  # the reason is a law: checked before the verdict, so
            reason = check_rule(c.rule, because)  # what it says tells nothing of the verdict
            if reason is not None:
                return reason
        if verdict is None or verdict is Ellipsis:
            return Result(False, "Your experiment measures the right thing. Now read it and "
                                 "state your verdict: verdict=True or verdict=False.",
                          diagnosis="none")
        v = _verdict(verdict)
        if v is None:
            return Result(False, f"verdict should be True or False; {words.short(verdict, 40)} "
                                 "is neither.", diagnosis="call")
        if shows != _truth(c):
            # A measurement that supports the misconception measured something else (a loss
            # that averages instead of adding, say): it never certifies a verdict.
            return Result(False, "Your experiment measures something other than the claim "
                                 f"speaks of, so it cannot settle it: {c._word('reread')} "
                                 "Check that it runs the situation the claim describes.",
                          diagnosis="experiment")
        if v != shows:
            guard_few_choices("verdict", right=False, choices=2)
            return Result(False, "Your verdict does not follow from your own measurement: "
                                 f"{c._word('reread')} Read it again.", diagnosis="wrong_verdict")
        problem = None if c.rule is not None else reason_problem(c, because)  # (no `or`)
        if problem is not None:
            return problem
        flipped = guard_few_choices("verdict", right=True, choices=2)
        if flipped is not None:  # a verdict flipped after a wrong one may be a guess
            return flipped
        said = (_your_reason(because) if c.rule is None
                else f" Your rule {c.rule.call} holds at every size the check drew.")
        return Result(True, f"Right, and your own experiment settles it: {c._word('settled')}"
                            f"{said}", diagnosis="correct")

    reason = "a one-line reason" if c.rule is None else f"your rule {c.rule.call} as a function"
    check.__doc__ = (f"``{c.id}(verdict, because, experiment)``: your verdict, {reason}, "
                     f"and an experiment returning {c.wants}.")
    return check


def register_claim(c: Claim) -> Exercise:
    """Register an item of this protocol. Its words come from ``texts.toml``; the solution
    adds the reference experiment's code, and ``.experiment()`` runs it (both recorded as
    seeing the solution)."""
    code = textwrap.dedent(inspect.getsource(c.reference))
    code = "".join(line for line in code.splitlines(keepends=True)
                   if not line.startswith("@gate."))  # the decorator is not the experiment
    solution = (f"{_all_words()[c.id]['solution']}\n\nA reference experiment "
                f"({c.id}.experiment() runs it):\n\n{code}")

    def experiment() -> dict:
        return c.reference()

    experiment.__doc__ = f"Run {c.id}'s reference experiment (Exercise.experiment records it)."
    return register(Exercise(c.id, "true_false", {"verdict": make_check(c)},
                             solution=solution, experiment=experiment, tries=c.tries))


# T1–T10 are registered by the module that holds their measurement checks.
from . import true_false_experiments  # noqa: E402, F401
