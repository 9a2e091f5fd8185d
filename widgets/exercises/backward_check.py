"""Write the backward yourself: check a learner's op, defined the way the engine's own
ops are (a ``Function`` subclass with ``forward``, ``backward`` and ``ctx.save``).

``check_backward(MySoftplus, "softplus")`` runs the op forward and backward on the
engine with a non-uniform upstream gradient, and compares

* the forward values with the reference (the same function built from engine ops);
* each gradient backward *returned* with the reference gradient (or, for an op without
  a reference, with central finite differences of the op's own forward: gradcheck),
  naming the mistake as the derivation checks do. Against a reference, a gradient must
  agree near machine precision, as a closed form does (finite differences reach about
  1e-10), and a backward that runs what forward computes many times over (finite
  differences of its own forward), computes with complex numbers (a complex step) or
  calls a library that measures derivatives gets a sentence saying it measures, not
  derives. A gradient must have its input's
  shape: the engine would sum a broadcast one down for you, but here that sum (dγ's
  over the batch, say) is part of the exercise;
* what forward saved with what backward read: reading something never saved (the
  ``KeyError`` of ``ctx.load``) and saving something never read both get a sentence.

An op may take several tensor inputs (x, γ, β) and keyword parameters that are not
tensors (an epsilon, integer targets, a random generator); its backward returns one
gradient per tensor input. The specs (reference, inputs, known mistakes) live in
``backward_specs``; the lessons' layer exercises B2–B6 are registered at the end.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

import autograd_core as ag
from autograd_core.autograd import numeric_jacobian
from autograd_core.recording.node import Function
from autograd_core.sweep.engine import backward_steps

from ..feedback import words
from ..feedback.check import check_gradient
from ..feedback.result import Result
from . import learner, problems
from .array_answers import derived
from .backward_specs import SPECS, BackwardSpec, gradient_names
from .exercise import Exercise, register
from .parts import answers
from .problems import rng

__all__ = ["BackwardSpec", "SPECS", "check_backward"]


class _NotSaved(Exception):
    def __init__(self, name, saved):
        super().__init__(name)
        self.name, self.saved = name, saved


class _BadBackward(Exception):
    """The learner's backward broke the contract; ``args[0]`` is the sentence."""


class _NotWritten(Exception):
    """The learner's backward returned None: a placeholder, not a try."""


class _UsesEngine(Exception):
    """The learner's forward or backward (``where``) ran engine ops or called the engine's
    own code (``how``): the engine computed what the item asks the learner to write."""

    def __init__(self, where: str, how: str):
        super().__init__(where, how)
        self.where, self.how = where, how


class _Measured(Exception):
    """The learner's backward ran what forward computes ``times`` times as often as
    forward did: it measures the gradient (finite differences of its own forward)."""

    def __init__(self, times: int):
        super().__init__(times)
        self.times = times


# How many times as often as forward itself backward may run forward's code (the op's
# forward, or a helper forward calls): a backward may reuse a helper for dx and for dw and
# recompute the output once; finite differences run it twice per entry of the input.
RERUNS = 3


def _by_hand(where: str, run: Callable[[], Any], ran: Counter | None = None
             ) -> tuple[Any, _UsesEngine | None]:
    """``run()``, the learner's forward or backward, and a :class:`_UsesEngine` to raise
    if it ran an engine op or called the engine's code (a node's ctx API aside), called a
    library that differentiates or measures derivatives, or computed with complex numbers;
    ``ran`` counts the learner's functions that ran."""
    out, used = learner.watch_engine_use(run, ran=ran)
    return out, None if used is None else _UsesEngine(where, used)


def _reran_forward(forward: Counter, backward: Counter) -> int:
    """How many times as often as forward ran it backward ran the learner's code that
    forward ran (the most, over its functions); 0 if it ran none of it."""
    return max((backward[code] // count for code, count in forward.items() if count), default=0)


class _Watched(np.ndarray):
    """An array that notes the NumPy functions (ufuncs) applied to it, or to arrays made
    from it, in ``calls``: what backward computed from what it read."""

    calls: list[str] = []

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        name = ufunc.__name__
        if name == "power" and np.ndim(inputs[0]) == 0 and not isinstance(inputs[0], _Watched):
            name = "power of a constant"  # np.e ** -x: an exp by another name
        _Watched.calls.append(name)
        plain = [np.asarray(i) if isinstance(i, _Watched) else i for i in inputs]
        if "out" in kwargs:
            kwargs["out"] = tuple(np.asarray(o) for o in kwargs["out"])
        result = getattr(ufunc, method)(*plain, **kwargs)
        if isinstance(result, tuple):
            return tuple(_watched(r) for r in result)
        return _watched(result)


def _watched(a):
    return a.view(_Watched) if isinstance(a, np.ndarray) else a


def _plain(a):
    return np.asarray(a) if isinstance(a, _Watched) else a


class _LoadSpy:
    """Stands in for the node as backward's ``ctx``: ``load`` of a name never saved
    becomes a sentence instead of a bare ``KeyError``; what it loads is watched
    (:class:`_Watched`); everything else is the node's."""

    def __init__(self, node):
        object.__setattr__(self, "_node", node)

    def load(self, name):
        if name not in self._node.saved:
            raise _NotSaved(name, list(self._node.saved))
        return _watched(self._node.load(name))

    def __getattr__(self, name):
        return getattr(self._node, name)

    def __setattr__(self, name, value):
        setattr(self._node, name, value)


def _fits(grad, shape: tuple) -> bool:
    """Whether the engine can take ``grad`` as the gradient of an input of ``shape``."""
    return (isinstance(grad, np.ndarray | np.number | float | int) and not isinstance(grad, bool)
            and np.shape(grad) == shape and np.asarray(grad).dtype.kind in "fiu")


def _instrumented(op: type, returned: list, no_new: tuple[str, ...] = (),
                  recomputed: list | None = None) -> type:
    """A subclass of the learner's op whose forward and backward check the contract;
    what backward returns is appended to ``returned`` as it was returned, and the
    functions of ``no_new`` it called on what it read to ``recomputed``."""
    recomputed = [] if recomputed is None else recomputed
    n_inputs: list[int] = []
    forward_ran: Counter = Counter()  # the learner's functions forward ran, how often

    class Checked(op):
        @staticmethod
        def forward(ctx, *arrays, **params):
            n_inputs.append(len(arrays))
            out, engine = _by_hand("forward", lambda: op.forward(ctx, *arrays, **params),
                                   forward_ran)
            if isinstance(out, ag.Tensor):
                raise _BadBackward("forward returned a Tensor; it must compute a NumPy array "
                                   "(np.exp, not ag.exp): the engine records the op itself.")
            if engine is not None:
                raise engine
            if not isinstance(out, np.ndarray | np.number | float | int):
                raise _BadBackward(f"forward must return a NumPy array; it returned "
                                   f"{type(out).__name__}.")
            return np.asarray(out)

        @staticmethod
        def backward(ctx, g):
            before = g.copy()
            _Watched.calls = []
            backward_ran: Counter = Counter()
            grads, engine = _by_hand("backward", lambda: op.backward(_LoadSpy(ctx), _watched(g)),
                                     backward_ran)
            if engine is not None:
                raise engine
            times = _reran_forward(forward_ran, backward_ran)
            if times > RERUNS:
                raise _Measured(times)
            recomputed.extend(n for n in dict.fromkeys(_Watched.calls) if n in no_new)
            if isinstance(grads, tuple | list):
                grads = tuple(_plain(gr) for gr in grads)
            if not np.array_equal(g, before):
                raise _BadBackward("backward changed the upstream gradient g in place; "
                                   "gradients are shared, so compute a new array "
                                   "(g * s, not g *= s).")
            if grads is None:
                raise _NotWritten()
            if not isinstance(grads, tuple | list):
                raise _BadBackward(f"backward must return a tuple with one gradient per "
                                   f"input, e.g. `return (g * s,)` (note the comma); it "
                                   f"returned {type(grads).__name__}.")
            if len(grads) != n_inputs[-1]:
                raise _BadBackward(f"backward returned {len(grads)} gradients for "
                                   f"{n_inputs[-1]} input(s): one per positional input of "
                                   "forward (None for an input that needs none).")
            returned.append(tuple(grads))
            # The check compares what was returned; the engine gets only what it can take.
            return tuple(gr if _fits(gr, shape) else None
                         for gr, shape in zip(grads, ctx.input_shapes))

    Checked.__name__ = Checked.__qualname__ = op.__name__
    return Checked


# The items whose answer is an op checked on one spec (B2's conv2d, W4's sigmoid, ...): on
# that spec, check_backward is the item's own check, so it goes through the item.
SPEC_ITEMS: dict[str, str] = {}


def check_backward(op, spec: str | BackwardSpec | None = "softplus", *,
                   inputs: Sequence | None = None, **params) -> Result:
    """Check a learner-defined op against the engine: forward, backward, saves and reads.

    ``spec`` names a reference op (a key of ``SPECS``: ``"softplus"``, ``"conv2d"``,
    ``"batch_norm"`` ...) or is ``None`` with ``inputs=`` given, for any op: then the
    gradient is checked against finite differences of the op's own forward (gradcheck).
    Keyword ``params`` override the spec's.

    On a spec an exercise asks for (``SPEC_ITEMS``: ``"conv2d"`` is B2's), this is that
    exercise's check and is recorded as one (``check_backward(MyConv, "conv2d")`` is
    ``B2(MyConv)``); other inputs or parameters for it are refused with a sentence, since
    an op right on other data is right on the item's own.

    >>> check_backward(MySoftplus, "softplus")        # doctest: +SKIP
    """
    from .exercise import registry

    exercises = registry()  # every item registered, and its spec in SPEC_ITEMS
    name = spec if isinstance(spec, str) else next(
        (key for key, known in SPECS.items() if known is spec), None)
    item = SPEC_ITEMS.get(name) if name is not None else None
    if item is None:
        return _check_backward(op, spec, inputs=inputs, **params)
    if inputs is not None or params:
        return Result(False, f"check_backward(MyOp, {name!r}) is {item}'s check, on {item}'s "
                             f"own data: check your op with {item}(MyOp), which records it "
                             "as a try.", diagnosis="call")
    return exercises[item].run("op", op)


def _check_backward(op, spec: str | BackwardSpec | None = "softplus", *,
                    inputs: Sequence | None = None, **params) -> Result:
    """:func:`check_backward` itself, recorded nowhere: the items' checks call it."""
    if op is None:
        return Result(False, "Your op is None, so there is nothing to check yet: write the "
                             "Function subclass and pass the class itself.", diagnosis="none")
    if not (isinstance(op, type) and issubclass(op, Function)):
        return Result(False, f"Pass the op class itself (a subclass of Function), not "
                             f"{type(op).__name__}: check_backward(MyOp, ...).",
                      diagnosis="type")
    borrowed = _borrowed_from_the_engine(op)
    if borrowed:
        return Result(False, f"Your op takes {borrowed}: write its forward "
                             "and backward yourself, in a class whose only engine base is "
                             "Function.", diagnosis="uses_engine")
    if isinstance(spec, str):
        if spec not in SPECS:
            raise KeyError(f"no backward exercise {spec!r}; known: {', '.join(SPECS)}")
        spec = SPECS[spec]
    # the spec's inputs and seeded parameters drawn afresh for this check (the same for each
    # run within it): a backward built from answers worked out on earlier inputs does not fit
    secret = problems.new_secret()
    with problems.unseen(secret):
        arrays = tuple(np.asarray(a, dtype=np.float64) for a in
                       (inputs if inputs is not None else spec.inputs()))

    def fresh() -> dict:  # the parameters for one run (seeded ones drawn afresh)
        with problems.unseen(secret):
            data = spec.data() if spec is not None and spec.data is not None else {}
        return {**(spec.params if spec else {}), **data, **params}

    want = None
    if spec is not None:
        with ag.no_grad():
            want = spec.reference(*[ag.tensor(a) for a in arrays], **fresh())
    g = _upstream(want.shape if want is not None else None)
    tensors = [ag.tensor(a, requires_grad=True) for a in arrays]
    returned: list = []
    try:
        recomputed: list[str] = []
        checked = _instrumented(op, returned, spec.no_new if spec is not None else (),
                                recomputed)
        out, g, steps = learner.call(_forward_backward, checked, tensors,
                                     fresh(), g, what=op.__name__)
    except learner.LearnerCodeFailed as exc:
        return _contract_failure(exc)
    parts = []
    if want is not None:
        parts.append(check_gradient(out, want, name="forward",
                                    reference="the reference forward values"))
        if out.shape != want.shape:
            return Result.combine(parts + [Result(
                False, "Gradients are compared once forward has the reference's shape.",
                name="backward", diagnosis="forward_shape")])
    parts += _gradient_parts(op, spec, arrays, returned[0], g, fresh)
    parts += _saved_parts(out.grad_fn, steps[0].reads, spec, recomputed)
    return Result.combine(parts)


def _borrowed_from_the_engine(op: type) -> str:
    """What of ``op`` is the engine's own code, in words ("its backward, from Softplus";
    "the class Sigmoid as a base"), or "": an op that subclasses one of the engine's ops, or
    takes a method from one, runs the engine's backward as its own."""
    for base in op.__mro__[1:]:
        if base not in (Function, object) and base.__module__.startswith("autograd_core"):
            return f"the engine's {base.__name__} as a base class"
    for klass in op.__mro__:
        if klass in (Function, object):
            continue
        for name, value in vars(klass).items():
            code = getattr(getattr(value, "__func__", value), "__code__", None)
            if code is not None and code.co_filename.startswith(learner.ENGINE):
                return f"its {name} from the engine's code"
    return ""


def _upstream(shape: tuple | None) -> np.ndarray | None:
    """A non-uniform upstream gradient of ``shape`` (None: drawn once the output is known);
    for a single number, one that is not 1, so a forgotten g shows."""
    if shape is None:
        return None
    if shape == ():
        return np.asarray(1.5 + rng(40).random())
    return rng(40).standard_normal(shape) + 0.5


def _forward_backward(checked, tensors, params, g):
    """Run the op forward and backward on the engine; (output, upstream used, steps).
    Backward does not run when the output's shape is not the one ``g`` was drawn for."""
    out = checked.apply(*tensors, **params)
    if g is None:
        g = _upstream(out.shape)
    elif out.shape != g.shape:
        return out, g, []
    return out, g, list(backward_steps(out, g))


def _contract_failure(exc: learner.LearnerCodeFailed) -> Result:
    error = exc.error
    if isinstance(error, _NotSaved):
        saved = words.listing(repr(s) for s in error.saved) or "nothing"
        return Result(False, f"Your backward reads ctx.load({error.name!r}), but forward saved "
                             f"{saved}.", diagnosis="read_unsaved",
                      hint=f"In forward, keep what backward needs: ctx.save({error.name}=...).")
    if isinstance(error, _NotWritten):
        return Result(False, "Your backward returned None, so it is not written yet: return a "
                             "tuple with one gradient per input of forward, e.g. "
                             "`return (dx,)`.", diagnosis="none")
    if isinstance(error, _UsesEngine) and getattr(error.how, "by", "engine") != "engine":
        return Result(False, f"Your {error.where} {error.how}: write it with NumPy on the "
                             "arrays it gets, in real numbers, from the derivative you derived.",
                      diagnosis=error.how.code,
                      hint="Derive each gradient on paper first; then each line is NumPy.")
    if isinstance(error, _UsesEngine):
        made = "the gradients" if error.where == "backward" else "what your op computes"
        return Result(False, f"Your {error.where} {error.how}: the engine would be computing "
                             f"{made} for you. Write it with NumPy on the arrays it gets.",
                      diagnosis="uses_engine",
                      hint="Derive each gradient on paper first; then each line is NumPy.")
    if isinstance(error, _Measured):
        return Result(False, f"Your backward runs what your forward computes {error.times} "
                             "times as often as forward does: that measures the gradient (finite "
                             "differences), where the item asks for the derivative written out.",
                      diagnosis="numerical",
                      hint="Derive each gradient on paper first; then each line is NumPy.")
    if isinstance(error, _BadBackward):
        return Result(False, "Your " + str(error), diagnosis="contract")
    return learner.failed(exc)


def _gradient_parts(op, spec, arrays, returned, g, fresh) -> list[Result]:
    if spec is not None:
        refs = [ag.tensor(a, requires_grad=True) for a in arrays]
        spec.reference(*refs, **fresh()).backward(g)
        expected = [r.grad for r in refs]
        names = gradient_names(len(arrays), spec)
        known = spec._mistakes(arrays, g, fresh()) if spec._mistakes else []
        if not isinstance(known, dict):  # one list for every gradient
            known = dict.fromkeys(names, known)
    else:  # gradcheck: g · J of the learner's own forward, J by central differences
        copies = [ag.tensor(a, requires_grad=True) for a in arrays]
        params = fresh()
        jac = numeric_jacobian(lambda *xs: op.apply(*xs, **params), copies)[0]
        expected = [(g.ravel() @ j).reshape(a.shape) for j, a in zip(jac, arrays)]
        names, known = gradient_names(len(arrays)), {}
    tol = {} if spec is not None else {"rtol": 1e-5, "atol": 1e-7}
    parts = []
    for i, (given, e, name) in enumerate(zip(returned, expected, names)):
        if given is None:
            parts.append(Result(False, "Your backward returned None for this input, so it "
                                       "gets no gradient.", name=name, diagnosis="no_gradient"))
            continue
        context = {"upstream": g, "mistakes": known.get(name, [])}
        if i == 0 and spec is not None and spec.naive:
            context["naive"] = spec.naive(arrays, g, fresh())
        result = check_gradient(given, e, name=name, **context, **tol)
        if result.ok and spec is not None:  # derived, or measured (finite differences)?
            result = derived(result, given, e, name)
        parts.append(result)
    return parts


def _saved_parts(node, reads: list, spec, recomputed: list[str]) -> list[Result]:
    saved = list(node.saved)
    unread = [name for name in saved if name not in reads]
    parts = []
    if unread:
        parts.append(Result(False, f"forward saved {words.listing(map(repr, unread))} but "
                                   "backward never read it: memory kept for nothing.",
                            name="saved", diagnosis="saved_unread",
                            hint="Save exactly what backward reads."))
    if spec is not None and spec.saves_only_output:
        others = [s.name for s in node.saved.values() if s.source != ("output",)]
        if others:
            parts.append(Result(False, f"Your op keeps {words.listing(map(repr, others))}, "
                                       "which is not its output; σ' = σ(1 − σ) needs only the "
                                       "output, so no exp has to be recomputed.",
                                name="saved", diagnosis="saves_input",
                                hint="Look at what your backward reads: which saved value "
                                     "does σ(1 − σ) need?"))
    if recomputed and not any(p.diagnosis == "saves_input" for p in parts):
        parts.append(Result(False, f"Your backward computes {words.listing(recomputed)} from "
                                   "what it read: this op's derivative can be written with "
                                   "what forward saved, so nothing needs recomputing.",
                            name="saved", diagnosis="recomputes",
                            hint="Write the derivative in terms of the saved values themselves."))
    if not parts:
        parts.append(Result(True, f"forward saved {words.listing(map(repr, saved)) or 'nothing'}"
                                  ", and backward read exactly that.", name="saved"))
    return parts


# -- the lessons' layers, each written as an op (B2–B6) ----------------------------------------


def _layer_exercise(exercise_id: str, spec: str, parts: tuple[str, ...]) -> None:
    @answers(*parts)  # an op is right when every part of it is
    def check(op: type | None = None) -> Result:
        return _check_backward(op, spec)

    check.__doc__ = (f"``{exercise_id}(MyOp)``: your {spec} op (a Function subclass) against "
                     f"the engine: forward, every gradient, what it saves.")
    register(Exercise(exercise_id, "write_backward", {"op": check}))
    SPEC_ITEMS[spec] = exercise_id


for _id, _spec, _parts in (
        ("B2", "conv2d", ("forward", "dx", "dw", "saved")),
        ("B3", "max_pool2d", ("forward", "dx", "saved")),
        ("B4", "batch_norm", ("forward", "dx", "dgamma", "dbeta", "saved")),
        ("B5", "dropout", ("forward", "dx", "saved")),
        ("B6", "softmax_cross_entropy", ("forward", "dlogits", "saved"))):
    _layer_exercise(_id, _spec, _parts)
