"""How an op is defined and what recording it leaves behind.

An op is a subclass of :class:`Function` with, side by side:

* ``forward(ctx, *arrays, **params)`` -> the output array, computed with NumPy;
* ``rule``: the gradient rule as short text, e.g. ``"da = g * b\ndb = g * a"``;
* ``backward(ctx, grad)`` -> one gradient per positional input (or ``None``). An op
  that writes none gets one compiled from its ``rule`` (``recording/rule.py``): then
  the rule a learner reads in the stepper is the code both sweeps run. An op that
  writes one (conv2d's fused columns, the norms' in-place arithmetic) keeps its rule as
  text, and tests/engine/test_rule_text.py runs that text and compares it with the
  backward.

A rule is a small NumPy program:

* ``g`` is the upstream gradient, ``out`` the output; inputs have the names of
  ``forward``'s parameters (``a_i`` for the i-th of ``*arrays``), their gradients a
  ``d`` in front; saved arrays and params have their own names; NumPy's functions
  need no ``np.``. Statements are separated by ``;`` or a new line. ``a.shape``,
  ``a.size`` and ``a.ndim`` of an input are known without saving it.
* After two spaces, a note in parentheses explains a line and is not run.
* Gradients may have the broadcast shape: the engine sums them to the input's shape.
* In a reduction, ``g`` and ``out`` keep the reduced axes with size 1, and so do
  ``sum(x, axis)`` and ``mean(x, axis)`` everywhere, so that they line up with the
  input. In a loss, ``g`` is each element's share of the upstream gradient. (An op's
  ``rule_gradient(ctx, g)`` gives g that layout before a compiled rule runs.)

Inside ``forward`` an op calls ``ctx.save(name=array)`` for exactly the arrays its
backward reads, and ``backward`` reads them back with ``ctx.load("name")``. So the
saved-tensor record is not a second list kept by hand: it *is* what the op asked to
keep, with names and byte sizes, and the graph view and the stepper read it.

When recording is on and some input requires grad, ``ctx`` is a :class:`Node`: the
recorded node of the graph. Otherwise ``ctx`` is a throw-away context whose
``save`` keeps nothing, so a ``no_grad`` forward holds no intermediates.
"""

from __future__ import annotations

import itertools
import threading
import weakref
from typing import Any, ClassVar

import numpy as np

from .. import errors
from . import rule
from .grad_mode import state as _grad_mode
from .source import caller as _caller
from .source import state as _source
from .source import where as _where
from .tensor import Tensor

_sequence = itertools.count()
# Tuples, not ``int | float``: a union is built anew each time the expression runs.
_ARRAY_TYPES = (np.ndarray, np.generic)
_NUMBER_TYPES = (int, float, np.number)


class SavedTensor:
    """One array an op keeps for its backward, with the version it had when saved.

    ``source`` says where the array came from: ``("input", i)``, ``("output",)`` or
    ``None`` for an array the op made itself (a mask, an index, a normalised input).
    """

    __slots__ = ("name", "array", "source", "_counter", "_version", "_shape", "_dtype")

    def __init__(self, name, array, source, counter):
        self.name = name
        self.array = array
        self.source = source
        self._counter = counter
        self._version = counter[0] if counter is not None else 0

    def forget(self) -> None:
        """Release the array (backward is done with it) but remember what it was."""
        a = self.array
        if a is not None:
            if isinstance(a, _ARRAY_TYPES):
                self._shape, self._dtype = a.shape, a.dtype
            else:
                self._shape, self._dtype = (), None
            self.array = self._counter = None

    @property
    def released(self) -> bool:
        return self.array is None

    @property
    def shape(self) -> tuple:
        return self._shape if self.array is None else np.shape(self.array)

    @property
    def dtype(self):
        return self._dtype if self.array is None else getattr(self.array, "dtype", None)

    @property
    def nbytes(self) -> int:
        # np.generic too: an op on 0-d arrays returns a NumPy scalar, which has bytes.
        return int(self.array.nbytes) if isinstance(self.array, _ARRAY_TYPES) else 0

    def __repr__(self) -> str:
        a = self.array
        return f"SavedTensor({self.name!r}, shape={np.shape(a)}, nbytes={self.nbytes})"


class Node:
    """A recorded application of an op: the context of its forward pass and the
    node the reverse sweep visits.

    ``edges`` has one entry per positional input: the input's own ``Node`` if it was
    computed, the leaf ``Tensor`` itself if it is a leaf that requires grad, or
    ``None`` for constants and tensors that do not require grad. A node never
    references its output tensor strongly, so graphs are freed by reference counting.
    """

    # Defaults for what most nodes never set (class attributes keep __init__ short:
    # it runs once per recorded op).
    constants = None  # {input index: (kind, value)} for inputs that get no gradient
    output_name = None
    released = False
    hooks = None
    retains_grad = False
    reads = None
    trace = None
    called_from = None  # where the learner's code called the op: autograd_core.recording.source
    # The functions a compiled rule calls: NumPy's, on NumPy arrays. Under create_graph
    # the backward gets an ops/recorded_numpy.RecordedContext instead, whose names run
    # the engine's own ops on Tensors (see that module).
    rule_names = rule.PLAIN
    recorded = False

    def __init__(self, op, inputs, arrays, edges, needs_input_grad, shapes, dtypes, params):
        self.op = op
        self.edges = edges
        self.needs_input_grad = needs_input_grad
        self.params = params
        self.saved: dict[str, SavedTensor] = {}
        self.seq = next(_sequence)
        self.input_shapes = shapes
        self.input_dtypes = dtypes
        self.module = module_scope.path
        self.module_kinds = module_scope.kinds
        self._inputs = inputs  # during forward only: to tell which saved arrays are inputs
        self._arrays = arrays

    # -- used by an op's forward and backward ---------------------------------
    def save(self, **arrays: Any) -> None:
        """Keep these arrays for backward, under these names."""
        inputs = self._arrays
        for name, array in arrays.items():
            source = counter = None
            for i, a in enumerate(inputs):
                if a is array:
                    x = self._inputs[i]
                    source = ("input", i)
                    counter = x._version if isinstance(x, Tensor) else None
                    break
            self.saved[name] = SavedTensor(name, array, source, counter)

    def load(self, name: str):
        """Read back a saved array (what backward does), checking it is still valid; or
        what the op's stand-in for ``name`` rebuilds from what it saved (recording/rule.py)."""
        if self.released:
            if name not in self.saved and name in self.op.stand_ins:
                return self.op.stand_ins[name](self)  # raises if it reads a released array
            raise errors.second_backward(self.op.name)
        saved = self.saved.get(name)
        if saved is None:
            if name in self.op.stand_ins:
                return self.op.stand_ins[name](self)
            raise errors.not_saved(self.op.name, name, list(self.saved))
        counter = saved._counter
        if counter is not None and counter[0] != saved._version:
            raise errors.modified_inplace(
                name, self.op.name, np.shape(saved.array), saved.array.dtype,
                counter[0], saved._version,
            )
        if self.reads is not None:
            self.reads.append(name)
        return saved.array

    def run(self, op, *arrays, **params):
        """``op``'s forward on ``arrays``, recording nothing (a forward-mode rule that is
        another op: conv2d's tangents through its adjoints)."""
        return op.forward(_UNRECORDED, *arrays, **params)

    # -- introspection ---------------------------------------------------------
    @property
    def name(self) -> str:
        return self.op.name

    @property
    def rule(self) -> str:
        return self.op.rule

    @property
    def source(self) -> tuple[str, int, str] | None:
        """(filename, lineno, function) of the learner's line that recorded this node,
        or ``None`` if source lines were not being recorded (``autograd_core.recording.source``)."""
        return _where(self.called_from)

    @property
    def output(self):
        """The output tensor if the program still holds it, else ``None``."""
        return self._output_ref() if self._output_ref is not None else None

    @property
    def saved_bytes(self) -> int:
        return sum(s.nbytes for s in self.saved.values())

    def release(self) -> list[str]:
        """Drop the saved arrays (after backward), keeping their metadata; return names."""
        for saved in self.saved.values():
            saved.forget()
        self.released = True
        return list(self.saved)

    def __repr__(self) -> str:
        return f"<{self.op.name} node #{self.seq}>"


class _NoGrads(tuple):
    """``needs_input_grad`` when nothing is recorded: False for every input."""

    def __getitem__(self, i):
        return False


class _Unrecorded:
    """The context ops see when nothing is recorded: saving keeps nothing."""

    __slots__ = ()
    needs_input_grad = _NoGrads()

    def save(self, **arrays) -> None:
        pass


_UNRECORDED = _Unrecorded()


class Function:
    """Base class of every op. See the module docstring for the contract."""

    name: ClassVar[str] = "op"
    rule: ClassVar[str] = ""
    # names the rule reads that the forward did not save as such, each rebuilt from the
    # node (what it saved, its params) by a function: see recording/rule.py
    stand_ins: ClassVar[dict] = {}

    @staticmethod
    def forward(ctx, *arrays, **params):  # pragma: no cover - always overridden
        raise NotImplementedError

    @classmethod
    def backward(cls, ctx, grad):
        raise errors.missing_backward(cls.name)

    def __init_subclass__(cls, **kwargs):
        # An op that writes no backward of its own runs its rule: the text is compiled
        # into ``backward`` (recording/rule.py). One that writes a backward keeps it.
        super().__init_subclass__(**kwargs)
        if "rule" in cls.__dict__ and cls.rule and "backward" not in cls.__dict__:
            writer = next(k for k in cls.__mro__ if "backward" in k.__dict__)
            if writer is Function or "backward_source" in writer.__dict__:
                rule.compile_rule(cls)

    @classmethod
    def apply(cls, *inputs, **params):
        """Run the op on tensors (or constants), recording a node if needed."""
        if _grad_mode.enabled:
            for x in inputs:
                if isinstance(x, Tensor) and x._requires_grad:
                    return _record(cls, inputs, params)
        arrays = [x._data if isinstance(x, Tensor) else _operand(cls, x) for x in inputs]
        out = cls.forward(_UNRECORDED, *arrays, **params)
        if observers:
            for observer in observers:
                observer.on_forward(cls, None, arrays, out, params)
        return _wrap_output(out, None, inputs)


def _record(op, inputs: tuple, params: dict) -> Tensor:
    """Run ``op`` on ``inputs``, some of which require grad, and record its node: this
    runs once per op of every recorded forward pass, so it is written for speed."""
    arrays, edges, needs, shapes, dtypes, constants = [], [], [], [], [], None
    for i, x in enumerate(inputs):
        if isinstance(x, Tensor):
            a = x._data
            arrays.append(a)
            shapes.append(a.shape)
            dtypes.append(a.dtype)
            if x._requires_grad:
                edges.append(x.grad_fn or x)
                needs.append(True)
                continue
        else:
            x = _operand(op, x)
            if isinstance(x, np.ndarray):
                # A NumPy operand has no version counter: keep our own copy, so a
                # later change to the caller's array cannot reach the backward.
                x = x.copy()
            arrays.append(x)
            shapes.append(getattr(x, "shape", ()))
            dtypes.append(getattr(x, "dtype", None))
        edges.append(None)
        needs.append(False)
        if constants is None:
            constants = {}
        constants[i] = _constant(x)
    node = Node(op, inputs, arrays, tuple(edges), tuple(needs), tuple(shapes), tuple(dtypes),
                params)
    node.constants = constants
    if _source.on:
        node.called_from = _caller(2)  # skip this frame and Function.apply's
    out = op.forward(node, *arrays, **params)
    node._inputs = None
    if out.__class__ is np.ndarray and out.base is None:  # a fresh array: the usual case
        result = Tensor._wrap(out, node)
    else:
        result = _wrap_output(out, node, inputs)
    if node.saved:
        for saved in node.saved.values():  # the output itself, or the output before a
            if saved.source is None and (saved.array is out  # squeeze (keepdims=False)
                                         or getattr(out, "base", None) is saved.array):
                saved.source, saved._counter = ("output",), result._version
    data = result._data
    node.output_shape = data.shape
    node.output_dtype = data.dtype
    node._output_ref = weakref.ref(result)
    if observers:
        for observer in observers:
            observer.on_forward(op, node, arrays, out, params)
    node._arrays = None
    return result


def _operand(op, x):
    """A non-Tensor input as it is, unless it is a tuple or list that holds a Tensor
    (``x.max(dim=1) * w``): NumPy would make a constant of it and drop the gradient, so
    it is refused with a TypeError, as PyTorch does. Sequences of numbers pass."""
    if isinstance(x, tuple | list) and holds_tensor(x):
        raise errors.tensor_sequence_operand(op.name, x)
    return x


def holds_tensor(seq) -> bool:
    """Whether a (nested) tuple or list has a Tensor among its items."""
    return any(isinstance(v, Tensor) or (isinstance(v, tuple | list) and holds_tensor(v))
               for v in seq)


def _constant(x) -> tuple:
    """(kind, name or value) of an input that gets no gradient, for the graph view.
    Arrays are not kept: a constant must not stay alive just because it was used."""
    if isinstance(x, Tensor):
        return ("frozen parameter" if getattr(x, "is_parameter", False) else "tensor"), x._name
    if isinstance(x, _NUMBER_TYPES):
        return "number", x
    return "array", None


def _wrap_output(out, grad_fn, inputs) -> Tensor:
    """The op's output as a Tensor. A view of an input shares that input's version
    counter, so writing through either one is seen by whoever saved the other, and
    remembers its base, so an in-place change through it can be refused while the
    base requires grad (``Tensor._inplace``)."""
    if isinstance(out, np.ndarray) and out.base is not None:
        for x in inputs:
            if isinstance(x, Tensor) and np.may_share_memory(out, x._data):
                base = x if x._base is None else x._base
                return Tensor._wrap(out, grad_fn, x._version, base)
    return Tensor._wrap(out, grad_fn)


class _ModuleScope(threading.local):
    """Path of the ``nn.Module`` whose forward is running (e.g. ``"3.body.conv1"``), or
    ``None``. ``nn.Module.__call__`` sets it; every node recorded meanwhile is tagged
    with it, and the graph view draws those tags as clusters. ``kinds``: (path, type
    name) of that module and of each module around it, so that a picker can say
    ``4 · ResidualBlock`` (one tuple per module call, shared by its nodes)."""

    path: str | None = None
    kinds: tuple[tuple[str, str], ...] = ()


module_scope = _ModuleScope()


class Observer:
    """Something that watches ops run: op counters, anomaly detection, tracers.

    Register with ``observing(obs)``. ``on_forward`` is called after every op's
    forward (``node`` is ``None`` when nothing was recorded); ``on_backward`` after
    every backward rule, with the gradients it returned (before un-broadcasting).
    """

    def on_forward(self, op, node, arrays, out, params) -> None:
        pass

    def on_backward(self, node, grad_output, grads) -> None:
        pass


observers: list[Observer] = []  # empty almost always: the hot path tests it once


class observing:
    """Context manager that registers an :class:`Observer` for its duration."""

    def __init__(self, observer: Observer):
        self.observer = observer

    def __enter__(self):
        observers.append(self.observer)
        return self.observer

    def __exit__(self, *exc) -> None:
        observers.remove(self.observer)


