"""The kind "say what an op keeps, then write its backward from that alone": :class:`Keeping`.

For each op of an item the learner answers with a pair: the words for the arrays the op
keeps for its backward (its inputs by name, its output, an array made from them such as a
mask), and a function ``backward(g, kept)`` that returns one gradient per input of the op,
``kept`` being a dict of exactly the arrays named. An item is data: the op's
:class:`~.backward_specs.BackwardSpec` (the engine op it is compared with, the names of its
gradients, its known slips), the names of its inputs, the shapes it is probed on, the
arrays it may make besides, and a sentence for each array the engine's op does without.
The rules live here, once:

* **Only what was kept is there.** ``kept`` holds the arrays named and nothing else; a
  backward that reads another one is told which, in one sentence.
* **Worked by hand, on several shapes.** The backward runs as a :class:`Derivation`
  (``function_cases``): no engine inside it, a closed form in float64, a second and a
  third problem of other shapes, and each gradient compared with the engine's own.
* **Nothing kept for nothing.** A word whose array the backward does just as well without
  is named; and a keep that the engine's op does with less is named with the op's own
  sentence (the memory it costs, or the work it redoes). What the engine's op keeps is
  read off its own saved tensors (``ctx.save``), never listed by hand.
"""

from __future__ import annotations

import contextlib
import inspect
import io
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

import numpy as np

import autograd_core as ag

from ..feedback import words
from ..feedback.check import check_gradient
from ..feedback.result import Result
from .backward_specs import BackwardSpec, gradient_names
from .function_cases import Derivation
from .learner import Refused
from .predictions import _as_set
from .problems import rng


class _Kept(dict):
    """The arrays an op kept, as the learner's backward gets them: asking for another of
    the op's arrays raises :class:`~.learner.Refused` with a sentence naming it."""

    def __init__(self, arrays: dict, op: str, known: tuple[str, ...]):
        super().__init__(arrays)
        self.op, self.known = op, known

    def __missing__(self, key):
        kept = words.listing(map(repr, sorted(self))) or "nothing"
        what = f"one of {self.op}'s arrays" if key in self.known else f"no array of {self.op}"
        raise Refused(f"reads kept[{key!r}] ({what}), but you said {self.op} keeps {kept}",
                      "read_unkept", f"Either say that {self.op} keeps {key!r}, or write the "
                      "backward from what it keeps; then ask whether it needs both.")


@dataclass(frozen=True)
class Keeping:
    """One op to answer: ``spec`` (the engine op, gradient names, slips), ``inputs`` (the
    words of its inputs, in order), ``shapes`` (each case: one shape per input; at least
    two cases), ``made`` (more words: name -> f(arrays, output)), ``wasteful`` (a word the
    engine's op does without -> the sentence for keeping it), ``seed``."""

    spec: BackwardSpec
    inputs: tuple[str, ...]
    shapes: tuple[tuple[tuple[int, ...], ...], ...]
    made: Mapping[str, Callable] = field(default_factory=dict)
    wasteful: Mapping[str, str] = field(default_factory=dict)
    seed: int = 0

    @property
    def name(self) -> str:
        return self.spec.name

    @property
    def words(self) -> tuple[str, ...]:
        """Every array the op has at hand to keep."""
        return (*self.inputs, "output", *self.made)

    def _arrays(self, case: int) -> tuple[tuple, np.ndarray, np.ndarray]:
        """The inputs of one case, the engine's output on them, and an upstream gradient."""
        g = rng(self.seed + case)
        arrays = tuple(g.standard_normal(s) for s in self.shapes[case])
        with ag.no_grad():
            out = self.spec.reference(*(ag.tensor(a) for a in arrays)).numpy()
        return arrays, out, g.standard_normal(out.shape) + 0.5

    def _named(self, arrays: tuple, out: np.ndarray) -> dict:
        named = dict(zip(self.inputs, arrays), output=out)
        named.update({w: make(arrays, out) for w, make in self.made.items()})
        return named

    def engine_keeps(self) -> frozenset:
        """What the engine's op saves for its backward, every input needing a gradient, in
        this kind's words (an array it makes itself: "mask" if boolean)."""
        arrays, _, _ = self._arrays(0)
        node = self.spec.reference(*(ag.tensor(a, requires_grad=True) for a in arrays)).grad_fn
        found = set()
        for s in node.saved.values():
            if s.source is not None and s.source[0] == "input":
                found.add(self.inputs[s.source[1]])
            elif s.source == ("output",):
                found.add("output")
            else:
                found.add("mask" if np.dtype(s.dtype) == np.bool_ else s.name)
        return frozenset(found)

    def derivation(self, keeps: frozenset) -> Derivation:
        """The learner's backward as a Derivation: run on every case with only ``keeps``."""
        def case(k: int):
            def make():
                arrays, out, g = self._arrays(k)
                tensors = [ag.tensor(a, requires_grad=True) for a in arrays]
                self.spec.reference(*tensors).backward(g)
                expected = tuple(t.grad.numpy() for t in tensors)
                named = self._named(arrays, out)
                kept = _Kept({w: named[w] for w in keeps}, self.name, self.words)
                known = self.spec._mistakes(arrays, g, {"out": out}) if self.spec._mistakes \
                    else {}
                return (g, kept), expected, {"g": g, "mistakes": known}
            return ", ".join(f"{w} {words.shape(s)}" for w, s in
                             zip(self.inputs, self.shapes[k])), make

        return Derivation(f"{self.name}_backward", tuple(case(k) for k in
                                                         range(len(self.shapes))),
                          self._compare, "", label=self.name)

    def _compare(self, returned, expected: tuple, ctx: dict) -> Result:
        n, fn = len(self.inputs), f"{self.name}_backward"
        names = gradient_names(n, self.spec)
        if n == 1 and not isinstance(returned, tuple | list):
            returned = (returned,)
        if not isinstance(returned, tuple | list) or len(returned) != n:
            got = (f"{len(returned)} values" if isinstance(returned, tuple | list)
                   else words.a_type(returned))
            return Result(False, f"Your {fn} returns {got}; {self.name} has {n} input"
                                 f"{'s' if n > 1 else ''} ({', '.join(self.inputs)}), so it "
                                 f"returns one gradient for each, in that order: "
                                 f"({', '.join(names)}{',' if n == 1 else ''}).",
                          name=self.name, diagnosis="contract")
        wrong = []
        for given, want, grad, of in zip(returned, expected, names, self.inputs):
            if given is None:
                wrong.append(Result(False, f"Your {fn} returns None for it; every input "
                                           "here needs its gradient.", name=grad,
                                    diagnosis="no_gradient"))
                continue
            result = check_gradient(given, want, name=grad, of=of, upstream=ctx["g"],
                                    mistakes=ctx["mistakes"].get(grad, []))
            if not result.ok:
                wrong.append(result)
        if not wrong:
            return Result(True, "", name=self.name)
        return Result(False, " ".join(f"{r.name}: {r.message}" for r in wrong[:2]),
                      name=self.name, diagnosis=wrong[0].diagnosis, hint=wrong[0]._hint)

    def check(self, answer) -> Result:
        """A pair (the words for what the op keeps, its backward), as the item takes it."""
        read = self._read(answer)
        if isinstance(read, Result):
            return read
        keeps, backward = read
        result = self.derivation(keeps).check(backward)
        if not result.ok:
            return result
        for word in sorted(keeps):  # does the backward do as well without it?
            with contextlib.redirect_stdout(io.StringIO()):
                without = self.derivation(keeps - {word}).check(backward)
            if without.ok:
                return Result(False, f"Your {self.name}_backward gives the same gradients "
                                     f"without kept[{word!r}]: {self.name} keeps it for "
                                     "nothing.", name=self.name, diagnosis="kept_unread",
                              hint="Keep exactly what the backward reads.")
        extra = sorted(keeps - self.engine_keeps())
        if extra:
            said = self.wasteful.get(extra[0], f"{self.name}'s gradients can be written from "
                                               "what you kept with less.")
            return Result(False, said.format(word=repr(extra[0])), name=self.name,
                          diagnosis="keeps_more", hint="Write each gradient's formula, then "
                          "ask of each array it reads: is there a smaller or an "
                          "already-computed one that gives the same?")
        needs = (f"keeps {words.listing(map(repr, sorted(keeps)))}, and your backward needs "
                 "all of it and nothing else" if keeps else
                 "keeps nothing, and your backward needs nothing but g")
        return Result(True, f"{self.name} {needs}: right on {len(self.shapes)} problems of "
                            "different shapes.", name=self.name)

    def _read(self, answer) -> tuple[frozenset, Callable] | Result:
        name, fn = self.name, f"{self.name}_backward"
        example = f"{name}=([...], {fn})"
        if not isinstance(answer, tuple | list) or len(answer) != 2:
            return Result(False, f"{name} takes a pair: the words for what {name} keeps and "
                                 f"its backward, {example}; you passed "
                                 f"{words.a_type(answer)}.", name=name, diagnosis="type")
        first, second = answer
        keeps, backward = (second, first) if callable(first) and not callable(second) \
            else (first, second)
        blank = keeps is ... or keeps == "..." or (isinstance(keeps, list | tuple | set)
                                                   and any(w is ... or w == "..." for w in keeps))
        if blank or backward is None:
            return Result(False, f"Nothing to check yet for {name}: replace the ... with the "
                                 f"words for what it keeps and write {fn}.", name=name,
                          diagnosis="none")
        kept = _as_set(keeps)
        if kept is None:
            return Result(False, f"Say what {name} keeps as a list of words from "
                                 f"{words.listing(self.words)} ([] for nothing), e.g. "
                                 f"{example}; you passed {words.a_type(keeps)}.", name=name,
                          diagnosis="type")
        unknown = sorted(kept - set(self.words))
        if unknown:
            return Result(False, f"{name} has no array called {unknown[0][:30]!r}: its words "
                                 f"are {words.listing(self.words)}.", name=name,
                          diagnosis="unknown_word")
        if not callable(backward):
            return Result(False, f"The second of {name}'s pair is its backward, a function "
                                 f"{fn}(g, kept); you passed {words.a_type(backward)}.",
                          name=name, diagnosis="type")
        return kept, backward


def keeping(ops: tuple[Keeping, ...], doc: str) -> Callable[..., Result]:
    """The check of an item of the kind: ``ID(op=(keeps, backward), ...)`` with one
    keyword per op (an op not passed is not checked); ``doc`` says what it takes."""
    by_name = {op.name: op for op in ops}

    def check(*args, **given) -> Result:
        given = check.__signature__.bind(*args, **given).arguments
        answered = {k: v for k, v in given.items() if v is not None}
        if not answered:
            first = ops[0].name
            return Result(False, "Nothing to check yet: pass each op's pair, e.g. "
                                 f"{first}=([...], {first}_backward).", diagnosis="none")
        return Result.combine([by_name[k].check(v) for k, v in answered.items()])

    check.__signature__ = inspect.Signature(
        [inspect.Parameter(op.name, inspect.Parameter.POSITIONAL_OR_KEYWORD, default=None)
         for op in ops], return_annotation=Result)
    check.__doc__ = doc
    check.parts = tuple(by_name)
    return check
