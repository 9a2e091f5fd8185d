"""Gradient checkpointing: keep a segment's inputs, recompute the rest in backward.

A recorded forward pass keeps, for every op, what its backward will read, so the
memory of training grows with the number of ops run. ``checkpoint(fn, *inputs)``
runs ``fn`` *without* recording and keeps only its inputs, as one op named
``"checkpoint"``. When the reverse sweep reaches that op, it runs ``fn`` again on the
saved inputs, this time recording, and backpropagates the upstream gradient through
the fresh graph, which is released right after. Same gradients, fewer saved bytes,
one more forward pass of the segment (``counting.count_ops`` reports it as
``recompute``).

Randomness: the states of the generators the segment may draw from (the default one,
those of its modules, and any passed as ``generators=``) are saved before the
forward and restored for the recomputation, so dropout draws the same mask twice;
afterwards the generators continue as if the recomputation never happened.

Parameters: the parameters of ``fn`` (found when ``fn`` is a module or a bound method
of one, or passed as ``parameters=``) become inputs of the checkpoint op, so their
gradients flow through the engine like any other (hooks, accumulation, the stepper).
Tensors that ``fn`` merely closes over still receive their gradient, directly during
the recomputation, as with PyTorch's reentrant checkpoint.

>>> import autograd_core as ag
>>> x = ag.randn(4, 3, requires_grad=True)
>>> y = checkpoint(lambda t: ag.tanh(t * t).exp(), x).sum()
>>> y.backward()              # re-runs the lambda, recording, then backprops through it
"""

from __future__ import annotations

import contextlib
import math
import warnings
from collections.abc import Callable, Iterable, Sequence

from .. import errors
from ..recording import creation
from ..recording.grad_mode import enable_grad, is_grad_enabled, no_grad
from ..recording.node import Function, Observer, observing
from ..recording.tensor import Tensor
from ..sweep.engine import recomputing
from .transforms import _push_forward

__all__ = ["checkpoint", "checkpoint_sequential", "Checkpoint"]


class Checkpoint(Function):
    """f(x1, ..., xn) = fn(x1, ..., xn), with only the inputs kept for backward."""

    name = "checkpoint"
    rule = "re-run fn on the saved inputs, recording; backprop g through that graph"

    @staticmethod
    def forward(ctx, *arrays, fn=None, n_inputs=0, parameters=(), rng_states=None):
        with no_grad(), _UsedGenerators(rng_states) as used:
            out = fn(*(Tensor._wrap(a) for a in arrays[:n_inputs]))
        used.check()
        if not isinstance(out, Tensor):
            raise errors.checkpoint_output(type(out).__name__)
        ctx.save(**{f"input{i}": a for i, a in enumerate(arrays[:n_inputs])})
        return out._data

    @staticmethod
    def backward(ctx, g):
        p = ctx.params
        n = p["n_inputs"]
        leaves = [Tensor._wrap(ctx.load(f"input{i}")) for i in range(n)]
        for leaf, needs in zip(leaves, ctx.needs_input_grad):
            leaf._requires_grad = needs
        parameters = p["parameters"]
        # The recomputation's backward must not write into the parameters' .grad
        # (nor run their hooks): their gradients are returned to the engine below.
        stashed = [(q.grad, q._hooks) for q in parameters]
        for q in parameters:
            q.grad, q._hooks = None, None
        try:
            with _restored_rng(p["rng_states"]), recomputing(), enable_grad():
                out = p["fn"](*leaves)
            if out.requires_grad:
                out.backward(g)
            grads = [None if t.grad is None else t.grad._data for t in (*leaves, *parameters)]
        finally:
            for q, (grad, hooks) in zip(parameters, stashed):
                q.grad, q._hooks = grad, hooks
        return tuple(grads)

    @staticmethod
    def jvp(ctx, *tangents):
        """dout = jvp of fn at the saved inputs (fn re-run in forward mode)"""

        p = ctx.params
        n = p["n_inputs"]
        if any(t is not None for t in tangents[n:]):
            raise errors.checkpoint_forward_mode()
        inputs = [ctx.load(f"input{i}") for i in range(n)]
        with _restored_rng(p["rng_states"]), recomputing():
            _, (tangent,), _ = _push_forward(p["fn"], inputs, tangents[:n], "jvp")
        return tangent


def checkpoint(function: Callable, *args, use_reentrant: bool | None = None,
               preserve_rng_state: bool = True, parameters: Iterable[Tensor] | None = None,
               generators: Iterable[creation.Generator] = ()) -> Tensor:
    """``function(*args)``, keeping only ``args`` for backward and recomputing the
    segment when backward reaches it (see the module docstring).

    ``args`` that are not tensors are passed through unchanged. ``function`` must
    return one tensor. Gradients equal those of a plain call. ``use_reentrant`` is
    accepted for PyTorch compatibility and ignored (there is one implementation).

    >>> import autograd_core as ag
    >>> from autograd_core import nn
    >>> block = nn.Sequential(nn.Linear(8, 8), nn.Tanh())
    >>> y = checkpoint(block, ag.randn(2, 8, dtype=ag.float32))
    """
    tensor_positions = [i for i, a in enumerate(args) if isinstance(a, Tensor)]
    segment = function
    if len(tensor_positions) != len(args):
        segment = _bind_constants(function, args, tensor_positions)
    inputs = [args[i] for i in tensor_positions]
    params = _parameters_of(function) if parameters is None else list(parameters)
    params = [q for q in params if q.requires_grad and q.grad_fn is None]
    if is_grad_enabled() and not any(t.requires_grad for t in inputs) and not params:
        # (not under no_grad: there, e.g. inside an outer checkpoint's first forward
        # pass, nothing is recorded anyway and the recomputation will record)
        warnings.warn(errors.checkpoint_no_grad(), stacklevel=2)
    rng = _rng_snapshot(function, generators) if preserve_rng_state else None
    return Checkpoint.apply(*inputs, *params, fn=segment, n_inputs=len(inputs),
                            parameters=tuple(params), rng_states=rng)


def checkpoint_sequential(functions, segments: int, input: Tensor,  # noqa: A002
                          use_reentrant: bool | None = None,
                          preserve_rng_state: bool = True) -> Tensor:
    """Run the modules of ``functions`` (an ``nn.Sequential`` or a list) in order, split
    into ``segments`` consecutive segments; every segment but the last is
    checkpointed (as in PyTorch), so backward keeps only the segments' inputs plus
    the last segment's graph, and recomputes one segment at a time.

    >>> import autograd_core as ag
    >>> from autograd_core import nn
    >>> model = nn.Sequential(*[nn.Linear(4, 4) for _ in range(6)])
    >>> y = checkpoint_sequential(model, 2, ag.randn(3, 4, dtype=ag.float32))
    """
    modules = list(functions)
    if not 1 <= segments <= max(len(modules), 1):
        raise errors.checkpoint_segments(segments, len(modules))
    size = len(modules) // segments
    end = -1
    for start in range(0, size * (segments - 1), size):
        end = start + size - 1
        part = _Segment(modules[start:end + 1])
        input = checkpoint(part, input, preserve_rng_state=preserve_rng_state)
    return _Segment(modules[end + 1:])(input)


class _Segment:
    """Consecutive modules called one after the other (what a checkpoint re-runs)."""

    def __init__(self, modules: Sequence):
        self.modules_list = list(modules)

    def __call__(self, x):
        for module in self.modules_list:
            x = module(x)
        return x

    def parameters(self):
        for module in self.modules_list:
            yield from _parameters_of(module)

    def modules(self):
        for module in self.modules_list:
            yield from (module.modules() if hasattr(module, "modules") else ())


def sqrt_segments(n_layers: int) -> int:
    """The √n rule: about √n segments of about √n layers each (Chen et al., 2016)."""
    return max(1, round(math.sqrt(n_layers)))


# -- helpers ---------------------------------------------------------------------------
def _bind_constants(function, args, tensor_positions):
    def segment(*tensors):
        full = list(args)
        for i, t in zip(tensor_positions, tensors):
            full[i] = t
        return function(*full)

    return segment


def _owner(fn):
    """The object whose parameters and generators belong to ``fn``: fn itself if it
    has ``parameters()``, or the module of a bound method."""
    if callable(getattr(fn, "parameters", None)):
        return fn
    owner = getattr(fn, "__self__", None)
    return owner if callable(getattr(owner, "parameters", None)) else None


def _parameters_of(fn) -> list[Tensor]:
    owner = _owner(fn)
    return list(owner.parameters()) if owner is not None else []


def _rng_snapshot(fn, generators) -> dict:
    """{generator: state} for every generator the segment may draw from."""
    found = [creation.default_generator, *generators]
    owner = _owner(fn)
    if owner is not None and callable(getattr(owner, "modules", None)):
        found += [m.generator for m in owner.modules()
                  if isinstance(getattr(m, "generator", None), creation.Generator)]
    return {g: g.numpy.bit_generator.state for g in found}


@contextlib.contextmanager
def _restored_rng(states: dict | None):
    """Rewind the generators to ``states`` for the block, then put them back."""
    if not states:
        yield
        return
    now = {g: g.numpy.bit_generator.state for g in states}
    for g, state in states.items():
        g.numpy.bit_generator.state = state
    try:
        yield
    finally:
        for g, state in now.items():
            g.numpy.bit_generator.state = state


class _UsedGenerators(Observer):
    """Notices a generator the segment draws from that was not saved: its
    recomputation would draw different numbers, and the gradients would be wrong."""

    def __init__(self, states: dict | None):
        self.states = states
        self.unsaved: list[creation.Generator] = []

    def on_forward(self, op, node, arrays, out, params) -> None:
        for value in params.values():
            if isinstance(value, creation.Generator) and self.states is not None \
                    and value not in self.states and value not in self.unsaved:
                self.unsaved.append(value)

    def __enter__(self):
        self._observing = observing(self)
        self._observing.__enter__()
        return self

    def __exit__(self, *exc) -> None:
        self._observing.__exit__(*exc)

    def check(self) -> None:
        if self.unsaved:
            raise errors.checkpoint_generator(len(self.unsaved))
