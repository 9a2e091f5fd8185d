"""``Module``: a piece of a model that owns parameters, buffers and submodules.

A module is an object with a ``forward`` method. What it assigns to its own
attributes is *registered* by type:

* a :class:`Parameter` (learned: ``self.weight``) goes to ``_parameters``;
* a tensor given to ``register_buffer`` (state that is not learned, such as batch
  norm's running statistics) goes to ``_buffers``;
* another ``Module`` goes to ``_modules`` and becomes a child.

Walking that tree gives ``parameters()``, ``named_parameters()`` (dotted paths such
as ``"block.conv1.weight"``), ``state_dict()``, ``train()``/``eval()``, ``zero_grad()``.
Calling a module, ``module(x)``, runs the forward pre-hooks, ``forward`` and the
forward hooks, and while ``forward`` runs it tells the engine the module's path so
the recorded ops can be drawn as module clusters.

>>> from autograd_core import nn
>>> model = nn.Sequential(nn.Linear(4, 3), nn.ReLU(), nn.Linear(3, 2))
>>> [name for name, _ in model.named_parameters()]
['0.weight', '0.bias', '2.weight', '2.bias']
"""

from __future__ import annotations

import itertools
import threading
from collections import OrderedDict, namedtuple
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import numpy as np

from .. import errors
from ..optim.optimizer import zero_grads
from ..recording.device import to_dtype
from ..recording.grad_mode import no_grad
from ..recording.node import module_scope
from ..recording.tensor import Tensor
from .parameter import Parameter

__all__ = ["Module", "RemovableHandle", "IncompatibleKeys"]

IncompatibleKeys = namedtuple("IncompatibleKeys", ["missing_keys", "unexpected_keys"])


class RemovableHandle:
    """Returned when a hook is registered; ``remove()`` unregisters it (also usable
    as a context manager: the hook is removed when the ``with`` block ends)."""

    _ids = itertools.count()

    def __init__(self, hooks: dict):
        self.id = next(RemovableHandle._ids)
        self._hooks = hooks

    def remove(self) -> None:
        self._hooks.pop(self.id, None)

    def __enter__(self) -> RemovableHandle:
        return self

    def __exit__(self, *exc) -> None:
        self.remove()


# -- which module's forward is running: its path, for tagging the recorded ops --------
class _Calls(threading.local):
    def __init__(self):
        self.stack: list[tuple[Module, str]] = []


_calls = _Calls()


def _join(prefix: str, name: str) -> str:
    return f"{prefix}.{name}" if prefix else name


def _path_of(module: Module) -> str:
    """The path of ``module`` inside the module whose forward called it ("" at the top)."""
    if not _calls.stack:
        return ""
    parent, parent_path = _calls.stack[-1]
    if module is parent:
        return parent_path
    for name, child in parent._modules.items():
        if child is module:
            return _join(parent_path, name)
    for name, child in parent.named_modules():  # a grandchild called directly
        if child is module:
            return _join(parent_path, name)
    return _join(parent_path, type(module).__name__)  # not registered in the caller


@contextmanager
def _running(module: Module):
    """Push the module on the call stack and tell the recording layer its path
    (``module_scope``, which each recorded ``Node`` copies into ``Node.module``)."""
    path = _path_of(module)
    previous = (module_scope.path, module_scope.kinds)
    _calls.stack.append((module, path))
    module_scope.path = path or None
    module_scope.kinds = tuple((p, type(m).__name__) for m, p in _calls.stack if p)
    try:
        yield
    finally:
        _calls.stack.pop()
        module_scope.path, module_scope.kinds = previous


def _check_name(kind: str, name) -> None:
    if not isinstance(name, str) or not name or "." in name:
        raise errors.bad_member_name(kind, name)


class Module:
    """Base class of every layer and model: subclass it, assign parameters and
    submodules in ``__init__`` (after ``super().__init__()``), define ``forward``.

    >>> class TwoLayer(Module):
    ...     def __init__(self):
    ...         super().__init__()
    ...         self.hidden = Linear(4, 8)
    ...         self.out = Linear(8, 1)
    ...     def forward(self, x):
    ...         return self.out(self.hidden(x).relu())
    """

    training: bool

    def __init__(self) -> None:
        set_ = object.__setattr__
        set_(self, "training", True)
        set_(self, "_parameters", OrderedDict())
        set_(self, "_buffers", OrderedDict())
        set_(self, "_modules", OrderedDict())
        set_(self, "_forward_hooks", OrderedDict())
        set_(self, "_forward_pre_hooks", OrderedDict())

    def forward(self, *args, **kwargs):
        raise errors.no_forward(type(self).__name__)

    # -- registration ---------------------------------------------------------------
    def _check_initialised(self, cls: str, name: str) -> None:
        if "_parameters" not in self.__dict__:
            raise errors.init_not_called(cls, name)

    def _forget(self, name: str) -> None:
        for members in (self._parameters, self._buffers, self._modules):
            members.pop(name, None)
        self.__dict__.pop(name, None)

    def register_parameter(self, name: str, param: Parameter | None) -> None:
        """Register ``param`` as ``name`` (what ``self.name = param`` does)."""
        self._register("parameter", name, param, Parameter, errors.not_a_parameter)

    def register_buffer(self, name: str, tensor: Tensor | None) -> None:
        """Register state that is saved and restored with the module but not learned
        (e.g. batch norm's ``running_mean``); it is reached as ``self.name``."""
        self._register("buffer", name, tensor, Tensor, errors.not_a_buffer)

    def add_module(self, name: str, module: Module | None) -> None:
        """Register ``module`` as the child ``name`` (what ``self.name = module`` does)."""
        self._register("module", name, module, Module, lambda _, m: errors.not_a_module(m))

    def _register(self, kind: str, name: str, value, expected: type, wrong_type) -> None:
        """Store ``value`` (an ``expected`` or None) as the ``kind`` member ``name``,
        replacing any member of that name; ``wrong_type(name, value)`` is the error."""
        self._check_initialised(type(self).__name__, name)
        _check_name(kind, name)
        if value is not None and not isinstance(value, expected):
            raise wrong_type(name, value)
        members = getattr(self, f"_{kind}s")
        if name not in members:  # replacing a member of the same kind keeps its place
            self._forget(name)
        members[name] = value
        self._name_members()

    def _name_members(self) -> None:
        """Label parameters and buffers with their path in this tree (for the graph view).

        Called on every registration, so the labels follow the outermost module built
        so far; a tensor shared by two places gets the first path, in
        ``named_parameters`` order.
        """
        for name, tensor in itertools.chain(self.named_parameters(), self.named_buffers()):
            tensor.name = name

    def __setattr__(self, name: str, value: Any) -> None:
        d = self.__dict__
        if isinstance(value, Parameter):
            self.register_parameter(name, value)
        elif isinstance(value, Module):
            self.add_module(name, value)
        elif "_parameters" in d and name in d["_parameters"]:
            if value is not None:
                raise errors.not_a_parameter(name, value)
            d["_parameters"][name] = None
        elif "_modules" in d and name in d["_modules"]:
            if value is not None:
                raise errors.not_a_child_module(name, value)
            d["_modules"][name] = None
        elif "_buffers" in d and name in d["_buffers"]:
            self.register_buffer(name, value)
        else:
            object.__setattr__(self, name, value)

    def __getattr__(self, name: str) -> Any:
        d = self.__dict__
        for members in ("_parameters", "_buffers", "_modules"):
            if members in d and name in d[members]:
                return d[members][name]
        raise errors.missing_attribute(type(self).__name__, name)

    def __delattr__(self, name: str) -> None:
        for members in (self._parameters, self._buffers, self._modules):
            if name in members:
                del members[name]
                return
        object.__delattr__(self, name)

    def __dir__(self):
        return sorted(set(super().__dir__()) | set(self._parameters) | set(self._buffers)
                      | set(self._modules))

    # -- walking the tree -----------------------------------------------------------
    def named_modules(self, prefix: str = "", _seen: set | None = None) \
            -> Iterator[tuple[str, Module]]:
        """(path, module) for this module ("") and every descendant, each once."""
        seen = set() if _seen is None else _seen
        if id(self) in seen:
            return
        seen.add(id(self))
        yield prefix, self
        for name, child in self._modules.items():
            if child is not None:
                yield from child.named_modules(_join(prefix, name), seen)

    def modules(self) -> Iterator[Module]:
        """This module and every descendant."""
        for _, module in self.named_modules():
            yield module

    def named_children(self) -> Iterator[tuple[str, Module]]:
        """(name, module) of the direct children."""
        seen = set()
        for name, child in self._modules.items():
            if child is not None and id(child) not in seen:
                seen.add(id(child))
                yield name, child

    def children(self) -> Iterator[Module]:
        """The direct children."""
        for _, child in self.named_children():
            yield child

    def _named_members(self, kind: str, prefix: str, recurse: bool):
        seen = set()
        modules = self.named_modules(prefix) if recurse else [(prefix, self)]
        for path, module in modules:
            for name, tensor in getattr(module, kind).items():
                if tensor is not None and id(tensor) not in seen:
                    seen.add(id(tensor))
                    yield _join(path, name), tensor

    def named_parameters(self, prefix: str = "", recurse: bool = True) \
            -> Iterator[tuple[str, Parameter]]:
        """(path, parameter) pairs, each parameter once, in registration order."""
        return self._named_members("_parameters", prefix, recurse)

    def named_buffers(self, prefix: str = "", recurse: bool = True) \
            -> Iterator[tuple[str, Tensor]]:
        """(path, buffer) pairs, each buffer once."""
        return self._named_members("_buffers", prefix, recurse)

    def parameters(self, recurse: bool = True) -> Iterator[Parameter]:
        """Every parameter (what an optimizer updates), each once."""
        return (param for _, param in self.named_parameters(recurse=recurse))

    def buffers(self, recurse: bool = True) -> Iterator[Tensor]:
        """Every buffer (running statistics and other saved, unlearned state)."""
        return (buffer for _, buffer in self.named_buffers(recurse=recurse))

    # -- modes and gradients ------------------------------------------------------------
    def train(self, mode: bool = True) -> Module:
        """Training mode (the default) for this module and all descendants: dropout
        drops, batch norm uses and updates batch statistics. Returns ``self``.
        ``mode`` must be a bool (as in PyTorch: ``train("no")`` is refused)."""
        if not isinstance(mode, bool):
            raise errors.training_mode(mode)
        self.training = mode
        for child in self.children():
            child.train(mode)
        return self

    def eval(self) -> Module:
        """Evaluation mode, ``train(False)``: dropout is the identity, batch norm uses
        its running statistics. Recording is unaffected (that is ``no_grad``)."""
        return self.train(False)

    def requires_grad_(self, requires_grad: bool = True) -> Module:
        """Freeze (``False``) or unfreeze every parameter. Returns ``self``."""
        for param in self.parameters():
            param.requires_grad_(requires_grad)
        return self

    def zero_grad(self, set_to_none: bool = True) -> None:
        """Forget the gradients: ``.grad = None`` (PyTorch's default), or zeros written
        in place (as PyTorch does)."""
        zero_grads(self.parameters(), set_to_none)

    def to(self, *args, **kwargs) -> Module:
        """Cast every floating-point parameter and buffer, in place, as PyTorch's
        ``to``: ``to(float64)``, ``to("cpu")``, ``to("cpu", float32)``, ``to(tensor)``
        (its dtype), ``device=``/``dtype=`` keywords. The tensors stay the same objects, so
        an optimizer made before still holds them; gradients of cast ones are dropped.
        The engine runs on the CPU only. Returns ``self``.

        >>> model = Linear(3, 2).to("cpu", float64)          # doctest: +SKIP
        """
        dtype = to_dtype(args, kwargs)
        if dtype is None:
            return self
        for tensor in itertools.chain(self.parameters(), self.buffers()):
            if tensor.dtype.kind == "f" and tensor.dtype != dtype:
                tensor._data = tensor._data.astype(dtype)
                tensor._version[0] += 1  # graphs that saved the old values must not use them
                tensor.grad = None
        return self

    def cpu(self) -> Module:
        """``self``: the engine runs on the CPU."""
        return self

    def apply(self, fn: Callable[[Module], Any]) -> Module:
        """Call ``fn`` on every submodule (children first, each subtree in order) and then
        on this module, as PyTorch's ``apply``: the usual way to initialise weights.
        Returns ``self``.

        >>> def init(m):
        ...     if isinstance(m, Linear):
        ...         nn.init.zeros_(m.bias)
        >>> model.apply(init)          # doctest: +SKIP
        """
        for child in self.children():
            child.apply(fn)
        fn(self)
        return self

    def double(self) -> Module:
        """``to(float64)``: what gradient checks need."""
        return self.to(np.float64)

    def float(self) -> Module:  # noqa: A003 - PyTorch's name
        """``to(float32)``."""
        return self.to(np.float32)

    # -- saving and loading ---------------------------------------------------------
    def _state_entries(self, prefix: str = "") -> Iterator[tuple[str, Tensor]]:
        for name, param in self._parameters.items():
            if param is not None:
                yield prefix + name, param
        for name, buffer in self._buffers.items():
            if buffer is not None:
                yield prefix + name, buffer
        for name, child in self._modules.items():
            if child is not None:
                yield from child._state_entries(prefix + name + ".")

    def state_dict(self) -> OrderedDict:
        """Every parameter and buffer, by path, as in PyTorch: each entry detached (no
        gradient flows through it) and sharing memory with the module's own tensor, so
        ``sd[k].copy_(pretrained[k])`` loads a value into the model, and training moves
        the entries with the model. For a snapshot that later training does not change,
        clone the entries:

        >>> snapshot = {k: v.clone() for k, v in model.state_dict().items()}  # doctest: +SKIP
        >>> model.load_state_dict(snapshot)                                  # doctest: +SKIP
        """
        return OrderedDict((key, t.detach()) for key, t in self._state_entries())

    def load_state_dict(self, state_dict, strict: bool = True) -> IncompatibleKeys:
        """Copy values into this module's parameters and buffers, in place.

        Values may be our tensors, NumPy arrays or anything ``np.asarray`` reads
        (PyTorch CPU tensors too). With ``strict`` (the default) the keys must match
        exactly; shapes must always match.
        """
        own = OrderedDict(self._state_entries())
        missing = [k for k in own if k not in state_dict]
        unexpected = [k for k in state_dict if k not in own]
        if strict and (missing or unexpected):
            raise errors.state_dict_keys(type(self).__name__, missing, unexpected)
        values = {}
        for key, target in own.items():
            if key in state_dict:
                value = np.asarray(state_dict[key])
                if value.shape != target.shape:
                    raise errors.state_dict_shape(key, value.shape, target.shape)
                values[key] = value
        with no_grad():
            for key, value in values.items():
                own[key].copy_(value)
        return IncompatibleKeys(missing, unexpected)

    # -- calling, with hooks ----------------------------------------------------------
    def register_forward_pre_hook(self, hook: Callable) -> RemovableHandle:
        """Call ``hook(module, inputs)`` before each forward; ``inputs`` is the tuple of
        positional arguments. A returned value (a tuple, or one value) replaces them."""
        handle = RemovableHandle(self._forward_pre_hooks)
        self._forward_pre_hooks[handle.id] = hook
        return handle

    def register_forward_hook(self, hook: Callable) -> RemovableHandle:
        """Call ``hook(module, inputs, output)`` after each forward; a returned value
        replaces the output. Good for recording shapes, ranges or NaNs per layer."""
        handle = RemovableHandle(self._forward_hooks)
        self._forward_hooks[handle.id] = hook
        return handle

    def __call__(self, *args, **kwargs):
        for hook in tuple(self._forward_pre_hooks.values()):
            result = hook(self, args)
            if result is not None:
                args = result if isinstance(result, tuple) else (result,)
        with _running(self):
            output = self.forward(*args, **kwargs)
        for hook in tuple(self._forward_hooks.values()):
            result = hook(self, args, output)
            if result is not None:
                output = result
        return output

    # -- printing ---------------------------------------------------------------------------
    def extra_repr(self) -> str:
        """The settings shown between the parentheses of this module's repr."""
        return ""

    def __repr__(self) -> str:
        extra = self.extra_repr()
        children = [f"({name}): {_indent(repr(child))}"
                    for name, child in self._modules.items()]
        if not children:
            return f"{type(self).__name__}({extra})"
        lines = (extra.split("\n") if extra else []) + children
        return type(self).__name__ + "(\n  " + "\n  ".join(lines) + "\n)"


def _indent(text: str) -> str:
    return text.replace("\n", "\n  ")
