"""The ``Tensor``: a NumPy array plus what autograd needs to know about it.

A tensor is a *leaf* when the program created it (data, parameters) and a
*non-leaf* when an op computed it while recording; then ``grad_fn`` is the
recorded node. ``requires_grad`` says whether gradients flow to it. After
``backward()``, leaves that require grad hold their gradient in ``.grad``.

This file holds what a tensor *is*: its data, its place in the graph, hooks, in-place
updates. Its maths (``x + y``, ``x.exp()``, ``x.sum()``) and ``backward()`` run ops and
the reverse sweep, which sit in layers above this one and make Tensors themselves; they
are written in ``autograd_core/tensor_methods.py`` and put on the class at import.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .. import errors
from . import default_dtype
from .device import CPU, check_device
from .grad_mode import state as _grad_mode

_FLOAT_KINDS = "f"


def _as_array(data: Any, dtype=None) -> np.ndarray:
    """Validate and copy learner data into an ndarray with a clear error when it cannot."""
    if isinstance(data, Tensor):
        data = data._data
    if isinstance(data, str | bytes) or data is None:
        raise errors.unsupported_data(type(data).__name__)
    try:
        array = np.array(data, dtype=dtype)
    except ValueError as exc:
        if "inhomogeneous" in str(exc) or "sequence" in str(exc):
            raise errors.ragged(str(exc).split(". ", 1)[-1].rstrip(".")) from None
        raise
    except TypeError:
        raise errors.unsupported_data(type(data).__name__) from None
    if array.dtype.kind not in "biuf":
        raise errors.unsupported_data(f"{type(data).__name__} with NumPy dtype {array.dtype}")
    return array if dtype is not None else default_dtype.python_floats(data, array)


class Tensor:
    """An n-dimensional array that can record the ops applied to it.

    >>> x = tensor([1.0, 2.0, 3.0], requires_grad=True)
    >>> (x * x).sum().backward()
    >>> x.grad
    tensor([2., 4., 6.])
    """

    __slots__ = ("_data", "_requires_grad", "grad", "grad_fn", "_version", "_name",
                 "_hooks", "_base", "__weakref__")
    __array_priority__ = 1000  # make ``ndarray op Tensor`` defer to Tensor's operators

    def __init__(self, data: Any, requires_grad: bool = False, dtype=None, name=None):
        self._data = _as_array(data, dtype)
        self._requires_grad = False
        self.grad: Tensor | None = None
        self.grad_fn = None
        self._version = [0]
        self._name = name
        self._hooks = None
        self._base = None
        if requires_grad:
            self.requires_grad = True

    @classmethod
    def _wrap(cls, data, grad_fn=None, counter=None, base=None) -> Tensor:
        """Wrap an array the engine computed (no validation, no copy). A view of another
        tensor's memory shares its version ``counter`` and names the tensor it views as
        ``base`` (the first tensor of a chain of views)."""
        t = object.__new__(cls)
        t._data = data if data.__class__ is np.ndarray else np.asarray(data)
        t._requires_grad = grad_fn is not None
        t.grad = None
        t.grad_fn = grad_fn
        t._version = counter if counter is not None else [0]
        t._name = None
        t._hooks = None
        t._base = base
        return t

    # -- autograd state --------------------------------------------------------
    @property
    def requires_grad(self) -> bool:
        return self._requires_grad

    @requires_grad.setter
    def requires_grad(self, value: bool) -> None:
        if self.grad_fn is not None:
            if value:
                return  # a computed tensor already requires grad: nothing to change
            raise errors.non_leaf_requires_grad()
        if value and self._data.dtype.kind not in _FLOAT_KINDS:
            raise errors.non_float_grad(self._data.dtype)
        self._requires_grad = bool(value)

    def requires_grad_(self, requires_grad: bool = True) -> Tensor:
        """Set ``requires_grad`` in place (leaves only) and return ``self``."""
        self.requires_grad = requires_grad
        return self

    @property
    def is_leaf(self) -> bool:
        return self.grad_fn is None

    @property
    def name(self) -> str | None:
        """A label shown by the graph view (parameters get theirs from their module)."""
        return self._name

    @name.setter
    def name(self, value: str | None) -> None:
        self._name = value
        if self.grad_fn is not None:
            self.grad_fn.output_name = value

    def named(self, name: str) -> Tensor:
        """Label this tensor for the graph view and return it: ``h = (x @ w).named("h")``."""
        self.name = name
        return self

    def retain_grad(self) -> None:
        """Keep ``.grad`` on this non-leaf tensor after backward (leaves always keep it)."""
        if self.grad_fn is not None:
            self.grad_fn.retains_grad = True

    @property
    def retains_grad(self) -> bool:
        return self.grad_fn is not None and self.grad_fn.retains_grad

    def register_hook(self, hook) -> _HookHandle:
        """Call ``hook(grad)`` when this tensor's gradient is computed; a returned
        tensor replaces the gradient. Returns a handle whose ``remove()`` undoes it."""
        if not self._requires_grad:
            raise errors.hook_needs_grad()
        if self.grad_fn is not None:
            if self.grad_fn.hooks is None:
                self.grad_fn.hooks = []
            hooks = self.grad_fn.hooks
        else:
            if self._hooks is None:
                self._hooks = []
            hooks = self._hooks
        hooks.append(hook)
        return _HookHandle(hooks, hook)

    def detach(self) -> Tensor:
        """The same values (shared memory), cut from the graph: no gradient flows back."""
        return Tensor._wrap(self._data, None, self._version)

    # -- NumPy-like metadata ------------------------------------------------------
    @property
    def shape(self) -> tuple:
        return self._data.shape

    @property
    def dtype(self):
        return self._data.dtype

    @property
    def device(self):
        """Where the values live: the CPU, the one device the engine runs on."""
        return CPU

    @property
    def is_cuda(self) -> bool:
        """False: the engine runs on the CPU only."""
        return False

    def is_contiguous(self) -> bool:
        """Whether the values are laid out row after row in memory (C order)."""
        return bool(self._data.flags.c_contiguous)

    @property
    def ndim(self) -> int:
        return self._data.ndim

    @property
    def data(self) -> Tensor:
        """The values as a tensor that is not part of any graph (like ``detach()``)."""
        return self.detach()

    @data.setter
    def data(self, value) -> None:
        """``p.data = t`` (and so ``p.data += u``): this tensor takes ``t``'s values,
        unrecorded, as in PyTorch; its gradient and graph stay as they were."""
        if not isinstance(value, Tensor):
            raise errors.data_not_a_tensor(value)
        if value._data is not self._data:
            self._data = value._data
            self._version[0] += 1

    def size(self, dim: int | None = None):
        return self.shape if dim is None else self.shape[dim]

    def dim(self) -> int:
        return self._data.ndim

    def numel(self) -> int:
        return int(self._data.size)

    def __len__(self) -> int:
        if self._data.ndim == 0:
            raise errors.len_of_scalar()
        return len(self._data)

    def numpy(self) -> np.ndarray:
        """The values as a read-only NumPy view (copy it with ``np.array`` to edit).

        Read-only so that editing it cannot silently corrupt a tensor saved for
        backward; use the in-place methods (``add_``, ``zero_``...) to change data.
        """
        view = self._data.view()
        view.flags.writeable = False
        return view

    def item(self) -> float | int | bool:
        if self._data.size != 1:
            raise errors.item_of_many(self._data.shape)
        return self._data.item()

    def tolist(self):
        return self._data.tolist()

    def __bool__(self) -> bool:
        if self._data.size != 1:
            raise errors.ambiguous_bool(self._data.shape)
        return bool(self._data)

    def __float__(self) -> float:
        return float(self.item())

    def __int__(self) -> int:
        return int(self.item())

    def __index__(self) -> int:
        if self._data.dtype.kind not in "iu":
            raise errors.not_an_index()
        return int(self.item())

    def __array__(self, dtype=None, copy=None):
        if dtype is not None or copy:
            return np.array(self._data, dtype=dtype, copy=True)
        return self.numpy()  # read-only, for the same reason as numpy()

    def __repr__(self) -> str:
        body = np.array2string(self._data, separator=", ", prefix="tensor(")
        extra = ""
        if self._data.dtype not in (np.float64, np.int64, np.bool_):
            extra += f", dtype={self._data.dtype}"
        if self.grad_fn is not None:
            extra += f", grad_fn=<{self.grad_fn.op.name}>"
        elif self._requires_grad:
            extra += ", requires_grad=True"
        return f"tensor({body}{extra})"

    __hash__ = object.__hash__

    # -- comparisons and indices: plain arrays, not differentiable ----------------
    def _compare(self, other, ufunc):
        return Tensor._wrap(ufunc(self._data, _value(other)))

    def __lt__(self, other):
        return self._compare(other, np.less)

    def __le__(self, other):
        return self._compare(other, np.less_equal)

    def __gt__(self, other):
        return self._compare(other, np.greater)

    def __ge__(self, other):
        return self._compare(other, np.greater_equal)

    def __eq__(self, other):  # elementwise, like NumPy and PyTorch
        return self._compare(other, np.equal)

    def __ne__(self, other):
        return self._compare(other, np.not_equal)

    def __and__(self, other):  # of masks: a bitwise and, as in PyTorch
        return self._compare(other, np.bitwise_and)

    def __or__(self, other):
        return self._compare(other, np.bitwise_or)

    def __invert__(self):
        return Tensor._wrap(np.invert(self._data))

    def argmax(self, dim=None, keepdim=False):
        return Tensor._wrap(np.argmax(self._data, axis=dim, keepdims=keepdim))

    def argmin(self, dim=None, keepdim=False):
        return Tensor._wrap(np.argmin(self._data, axis=dim, keepdims=keepdim))

    # -- in-place updates (no recording; for optimizers and data edits) -------------
    def _inplace(self, compute) -> Tensor:
        """Run ``compute`` on the data in place, after refusing what PyTorch refuses while
        recording: changing a leaf that requires grad, or a view of one (even a view taken
        before ``requires_grad`` was set: it shares the leaf's memory)."""
        if _grad_mode.enabled:
            base = self._base
            if base is not None and base._requires_grad:
                raise errors.inplace_view() if base.grad_fn is None else errors.inplace_recorded()
            if self._requires_grad:
                raise errors.inplace_leaf() if self.grad_fn is None else errors.inplace_recorded()
        compute(self._data)
        self._version[0] += 1
        return self

    def add_(self, other, alpha: float = 1.0) -> Tensor:
        value = _value(other)
        return self._inplace(lambda a: np.add(a, value * alpha if alpha != 1 else value,
                                              out=a, casting="unsafe"))

    def sub_(self, other, alpha: float = 1.0) -> Tensor:
        return self.add_(other, -alpha)

    def mul_(self, other) -> Tensor:
        value = _value(other)
        return self._inplace(lambda a: np.multiply(a, value, out=a, casting="unsafe"))

    def zero_(self) -> Tensor:
        return self._inplace(lambda a: a.fill(0))

    def fill_(self, value) -> Tensor:
        return self._inplace(lambda a: a.fill(value))

    def copy_(self, source) -> Tensor:
        value = _value(source)
        return self._inplace(lambda a: np.copyto(a, value, casting="unsafe"))

    # x += y: in place where PyTorch changes x unrecorded (x takes no part in a recorded
    # graph); while recording, a new tensor bound to the same name (the engine records
    # nothing in place), so the graph and the gradients are PyTorch's.
    def _augmented(self, other, method: str, op: str):
        base = self._base
        refused = (self._requires_grad and self.grad_fn is None) or (
            base is not None and base._requires_grad)  # a leaf, or a view of one: add_ says
        recording = _grad_mode.enabled and not refused and (
            (self._requires_grad and self.grad_fn is not None)
            or (isinstance(other, Tensor) and other._requires_grad))
        if recording:
            return getattr(self, op)(other)
        result = np.result_type(self._data, _value(other))
        if not np.can_cast(result, self._data.dtype, "same_kind"):  # PyTorch refuses too
            raise errors.inplace_result_type(result, self._data.dtype)
        return getattr(self, method)(other)

    def __iadd__(self, other):
        return self._augmented(other, "add_", "__add__")

    def __isub__(self, other):
        return self._augmented(other, "sub_", "__sub__")

    def __imul__(self, other):
        return self._augmented(other, "mul_", "__mul__")

    def __itruediv__(self, other):
        return self._augmented(other, "div_", "__truediv__")

    def div_(self, other) -> Tensor:
        value = _value(other)
        return self._inplace(lambda a: np.divide(a, value, out=a, casting="unsafe"))

    def __setitem__(self, key, value) -> None:
        key, value = _index_key(key), _value(value)
        self._inplace(lambda a: a.__setitem__(key, value))


class _HookHandle:
    """Returned by ``register_hook``; ``remove()`` unregisters the hook."""

    def __init__(self, hooks: list, hook):
        self._hooks, self._hook = hooks, hook

    def remove(self) -> None:
        if self._hook in self._hooks:
            self._hooks.remove(self._hook)


def _value(x):
    return x._data if isinstance(x, Tensor) else x


def _index_key(key):
    if isinstance(key, tuple):
        return tuple(_value(k) for k in key)
    return _value(key)



def tensor(data: Any, requires_grad: bool = False, dtype=None, name: str | None = None,
           device=None) -> Tensor:
    """A new leaf tensor holding a copy of ``data``. Dtypes follow NumPy's, but Python
    floats take the default dtype (float64 unless ``set_default_dtype`` changed it);
    ``device`` may be the CPU (``"cpu"``), the one device the engine runs on.

    >>> tensor([[1.0, 2.0]], requires_grad=True).shape
    (1, 2)
    """
    check_device(device)
    return Tensor(data, requires_grad=requires_grad, dtype=dtype, name=name)


__all__ = ["Tensor", "tensor"]
