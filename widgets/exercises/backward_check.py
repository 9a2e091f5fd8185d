"""Write the backward yourself: check a learner's op, defined the way the engine's own
ops are (a ``Function`` subclass with ``forward``, ``backward`` and ``ctx.save``).

``check_backward(MySoftplus, "softplus")`` runs the op forward and backward on the
engine with a non-uniform upstream gradient, and compares

* the forward values with the reference (the same function built from engine ops);
* each input's gradient with the reference gradient (or, for an op without a
  reference, with central finite differences of the op's own forward: gradcheck),
  naming the mistake as the derivation checks do;
* what forward saved with what backward read: reading something never saved (the
  ``KeyError`` of ``ctx.load``) and saving something never read both get a sentence.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np

import autograd_core as ag
from autograd_core.autograd import numeric_jacobian
from autograd_core.engine import backward_steps
from autograd_core.function import Function

from . import learner, words
from .context import Mistake
from .feedback import check_gradient
from .problems import rng
from .result import Result


@dataclass(frozen=True)
class BackwardSpec:
    """An op to write: its formula, a reference built from engine ops, seeded inputs."""

    name: str
    formula: str
    reference: Callable  # (*tensors, **params) -> Tensor, built from engine ops
    inputs: Callable[[], tuple]  # seeded float64 arrays
    params: dict = field(default_factory=dict)
    saves_only_output: bool = False
    mistakes: Callable | None = None  # (arrays, g, params) -> list[Mistake]
    naive: Callable | None = None  # (arrays, g, params) -> array (normalisation only)


class _NotSaved(Exception):
    def __init__(self, name, saved):
        super().__init__(name)
        self.name, self.saved = name, saved


class _BadBackward(Exception):
    """The learner's backward broke the contract; ``args[0]`` is the sentence."""


class _LoadSpy:
    """Stands in for the node as backward's ``ctx``: ``load`` of a name never saved
    becomes a sentence instead of a bare ``KeyError``; everything else is the node's."""

    def __init__(self, node):
        object.__setattr__(self, "_node", node)

    def load(self, name):
        if name not in self._node.saved:
            raise _NotSaved(name, list(self._node.saved))
        return self._node.load(name)

    def __getattr__(self, name):
        return getattr(self._node, name)

    def __setattr__(self, name, value):
        setattr(self._node, name, value)


def _instrumented(op: type) -> type:
    """A subclass of the learner's op whose forward and backward check the contract."""
    n_inputs: list[int] = []

    class Checked(op):
        @staticmethod
        def forward(ctx, *arrays, **params):
            n_inputs.append(len(arrays))
            out = op.forward(ctx, *arrays, **params)
            if isinstance(out, ag.Tensor):
                raise _BadBackward("forward returned a Tensor; it must compute a NumPy array "
                                   "(np.exp, not ag.exp): the engine records the op itself.")
            if not isinstance(out, np.ndarray | np.number | float | int):
                raise _BadBackward(f"forward must return a NumPy array; it returned "
                                   f"{type(out).__name__}.")
            return np.asarray(out)

        @staticmethod
        def backward(ctx, g):
            before = g.copy()
            grads = op.backward(_LoadSpy(ctx), g)
            if not np.array_equal(g, before):
                raise _BadBackward("backward changed the upstream gradient g in place; "
                                   "gradients are shared, so compute a new array "
                                   "(g * s, not g *= s).")
            if not isinstance(grads, tuple | list):
                raise _BadBackward(f"backward must return a tuple with one gradient per "
                                   f"input, e.g. `return (g * s,)` (note the comma); it "
                                   f"returned {type(grads).__name__}.")
            if len(grads) != n_inputs[-1]:
                raise _BadBackward(f"backward returned {len(grads)} gradients for "
                                   f"{n_inputs[-1]} input(s): one per positional input of "
                                   "forward (None for an input that needs none).")
            return tuple(grads)

    Checked.__name__ = Checked.__qualname__ = op.__name__
    return Checked


def _softplus_mistakes(arrays, g, params):
    (x,) = arrays
    s = 1 / (1 + np.exp(-x))
    return [Mistake(g * (1 - s), "Your backward uses σ(−x) = 1 − σ(x): the sign inside the "
                    "sigmoid is flipped.", "d/dx log(1 + eˣ) = eˣ / (1 + eˣ).", "sign_inside")]


def _sigmoid_mistakes(arrays, g, params):
    (x,) = arrays
    s = 1 / (1 + np.exp(-x))
    return [Mistake(g * s, "Your backward multiplies by σ only: one factor of σ' is missing.",
                    "",
                    "missing_factor")]


def _layer_norm_naive(arrays, g, params):
    (x,) = arrays
    return g / np.sqrt(x.var(axis=-1, keepdims=True) + params["eps"])


def _layer_norm_reference(x, eps=1e-5):
    centered = x - x.mean(dim=-1, keepdim=True)
    return centered / ag.sqrt(x.var(dim=-1, keepdim=True, correction=0) + eps)


SPECS: dict[str, BackwardSpec] = {
    "softplus": BackwardSpec(
        "softplus", "f(x) = log(1 + exp(x))", lambda x: ag.log(1 + ag.exp(x)),
        lambda: (rng(41).standard_normal((3, 4)) * 2,), mistakes=_softplus_mistakes),
    "sigmoid": BackwardSpec(
        "sigmoid", "f(x) = 1 / (1 + exp(-x)), backward from the saved output only",
        ag.sigmoid, lambda: (rng(42).standard_normal((3, 4)) * 2,), saves_only_output=True,
        mistakes=_sigmoid_mistakes),
    "layer_norm": BackwardSpec(
        "layer_norm", "f(x) = (x - mean(x)) / sqrt(var(x) + eps) over the last axis",
        _layer_norm_reference, lambda: (rng(43).standard_normal((4, 5)) * 3 + 1,),
        params={"eps": 1e-5}, naive=_layer_norm_naive),
}


def check_backward(op, spec: str | BackwardSpec = "softplus", *,
                   inputs: Sequence | None = None, **params) -> Result:
    """Check a learner-defined op against the engine: forward, backward, saves and reads.

    ``spec`` names a reference op (``"softplus"``, ``"sigmoid"``, ``"layer_norm"``) or is
    ``None`` with ``inputs=`` given, for any op: then the gradient is checked against
    finite differences of the op's own forward (gradcheck).

    >>> check_backward(MySoftplus, "softplus")        # doctest: +SKIP
    """
    if op is None:
        return Result(False, "Your op is None, so there is nothing to check yet: write the "
                             "Function subclass and pass the class itself.", diagnosis="none")
    if not (isinstance(op, type) and issubclass(op, Function)):
        return Result(False, f"Pass the op class itself (a subclass of Function), not "
                             f"{type(op).__name__}: check_backward(MyOp, ...).",
                      diagnosis="type")
    if isinstance(spec, str):
        if spec not in SPECS:
            raise KeyError(f"no backward exercise {spec!r}; known: {', '.join(SPECS)}")
        spec = SPECS[spec]
    arrays = tuple(np.asarray(a, dtype=np.float64) for a in
                   (inputs if inputs is not None else spec.inputs()))
    params = {**(spec.params if spec else {}), **params}
    g = rng(40).standard_normal(arrays[0].shape) + 0.5  # non-uniform upstream gradient
    tensors = [ag.tensor(a, requires_grad=True) for a in arrays]
    try:
        out, g, steps = learner.call(_forward_backward, _instrumented(op), tensors, params, g,
                                     what=op.__name__)
    except learner.LearnerCodeFailed as exc:
        return _contract_failure(exc)
    parts = []
    if spec is not None:
        with ag.no_grad():
            want = spec.reference(*[ag.tensor(a) for a in arrays], **params)
        parts.append(check_gradient(out, want, name="forward",
                                    reference="the reference forward values"))
    parts += _gradient_parts(op, spec, arrays, tensors, g, params)
    parts += _saved_parts(out.grad_fn, steps[0].reads, spec)
    return Result.combine(parts)


def _forward_backward(checked, tensors, params, g):
    """Run the op forward and backward on the engine; (output, upstream used, steps)."""
    out = checked.apply(*tensors, **params)
    if out.shape != g.shape:
        g = rng(40).standard_normal(out.shape) + 0.5
    return out, g, list(backward_steps(out, g))


def _contract_failure(exc: learner.LearnerCodeFailed) -> Result:
    error = exc.error
    if isinstance(error, _NotSaved):
        saved = words.listing(repr(s) for s in error.saved) or "nothing"
        return Result(False, f"Your backward reads ctx.load({error.name!r}), but forward saved "
                             f"{saved}.", diagnosis="read_unsaved",
                      hint=f"In forward, keep what backward needs: ctx.save({error.name}=...).")
    if isinstance(error, _BadBackward):
        return Result(False, "Your " + str(error), diagnosis="contract")
    return learner.failed(exc)


def _gradient_parts(op, spec, arrays, tensors, g, params) -> list[Result]:
    if spec is not None:
        refs = [ag.tensor(a, requires_grad=True) for a in arrays]
        spec.reference(*refs, **params).backward(g)
        expected = [r.grad for r in refs]
    else:  # gradcheck: g · J of the learner's own forward, J by central differences
        copies = [ag.tensor(a, requires_grad=True) for a in arrays]
        jac = numeric_jacobian(lambda *xs: op.apply(*xs, **params), copies)[0]
        expected = [(g.ravel() @ j).reshape(a.shape) for j, a in zip(jac, arrays)]
    context = {"upstream": g}
    if spec is not None and spec.mistakes:
        context["mistakes"] = spec.mistakes(arrays, g, params)
    if spec is not None and spec.naive:
        context["naive"] = spec.naive(arrays, g, params)
    tol = {} if spec is not None else {"rtol": 1e-5, "atol": 1e-7}
    names = ["dx"] if len(arrays) == 1 else [f"d(input {i})" for i in range(len(arrays))]
    return [check_gradient(t.grad, e, name=n, **context, **tol) if t.grad is not None else
            Result(False, "Your backward returned None for this input, so it gets no gradient.",
                   name=n, diagnosis="no_gradient")
            for t, e, n in zip(tensors, expected, names)]


def _saved_parts(node, reads: list, spec) -> list[Result]:
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
                                hint="In forward: out = ...; ctx.save(out=out); in backward: "
                                     "s = ctx.load('out')."))
    if not parts:
        parts.append(Result(True, f"forward saved {words.listing(map(repr, saved)) or 'nothing'}"
                                  ", and backward read exactly that.", name="saved"))
    return parts
