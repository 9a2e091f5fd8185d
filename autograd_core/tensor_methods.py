"""Tensor's maths: the operators and methods that run ops (``x + y``, ``x.exp()``,
``x.sum()``, ``x @ w``) and ``backward``, which runs the reverse sweep.

``Tensor`` itself lives in the recording layer (``recording/tensor.py``), below the ops
and the sweep, because both of those make Tensors: every op wraps its output in one. So
the methods that *run* an op or the sweep are written here, above both, in
:class:`TensorMaths`, and :func:`attach` puts each of them on ``Tensor`` once, when
``autograd_core`` is imported. Each is a line that hands its arguments to the op, or
to the function of the same name in ``ops/api.py``.
"""

from __future__ import annotations

from types import FunctionType

import numpy as np

from . import errors, linalg
from .ops import api as F
from .ops import elementwise as _ew
from .recording import creation
from .recording.device import to_dtype
from .recording.tensor import Tensor
from .sweep.engine import backward as _backward


class TensorMaths:
    """The methods :func:`attach` copies onto ``Tensor`` (see the module's docstring)."""

    def backward(self, gradient=None, retain_graph: bool | None = None,
                 create_graph: bool = False) -> None:
        """Run the reverse sweep from this tensor, filling ``.grad`` of every leaf. With
        ``create_graph=True`` the sweep is recorded as ops, so each ``.grad`` has a graph
        and can be differentiated again (the graph is kept: ``retain_graph`` defaults to
        ``create_graph``, as in PyTorch)."""
        if retain_graph is None:
            retain_graph = create_graph
        _backward(self, gradient, bool(retain_graph), create_graph)

    # -- operators and methods: each calls the function (or op) of the same name -----
    # The arithmetic operators and the common one-input methods (exp, log, tanh,
    # sigmoid, relu) apply their op directly: they are the hottest path.
    def __add__(self, other):
        return _ew.Add.apply(self, other)

    def __radd__(self, other):
        return _ew.Add.apply(other, self)

    def __sub__(self, other):
        return _ew.Sub.apply(self, other)

    def __rsub__(self, other):
        return _ew.Sub.apply(other, self)

    def __mul__(self, other):
        return _ew.Mul.apply(self, other)

    def __rmul__(self, other):
        return _ew.Mul.apply(other, self)

    def __truediv__(self, other):
        return _ew.Div.apply(self, other)

    def __rtruediv__(self, other):
        return _ew.Div.apply(other, self)

    def __pow__(self, other):
        return _ew.Pow.apply(self, other)

    def __rpow__(self, other):
        return _ew.Pow.apply(other, self)

    def __matmul__(self, other):
        return F.matmul(self, other)

    def __rmatmul__(self, other):
        return F.matmul(other, self)

    def __neg__(self):
        return F.neg(self)

    def __getitem__(self, key):
        return F.getitem(self, key)

    def exp(self):
        return _ew.Exp.apply(self)

    def log(self):
        return _ew.Log.apply(self)

    def sqrt(self):
        return F.sqrt(self)

    def abs(self):
        return F.abs(self)

    def sin(self):
        return F.sin(self)

    def cos(self):
        return F.cos(self)

    def tanh(self):
        return _ew.Tanh.apply(self)

    def sigmoid(self):
        return _ew.Sigmoid.apply(self)

    def relu(self):
        return _ew.Relu.apply(self)

    def clip(self, min=None, max=None):  # noqa: A002
        return F.clip(self, min, max)

    clamp = clip

    def sum(self, dim=None, keepdim=False, *, axis=None, keepdims=None):
        return F.sum(self, dim, keepdim, axis=axis, keepdims=keepdims)

    def mean(self, dim=None, keepdim=False, *, axis=None, keepdims=None):
        return F.mean(self, dim, keepdim, axis=axis, keepdims=keepdims)

    def max(self, dim=None, keepdim=False, *, axis=None, keepdims=None):
        return F.max(self, dim, keepdim, axis=axis, keepdims=keepdims)

    def min(self, dim=None, keepdim=False, *, axis=None, keepdims=None):
        return F.min(self, dim, keepdim, axis=axis, keepdims=keepdims)

    def amax(self, dim=(), keepdim: bool = False) -> Tensor:
        """The maximum over ``dim`` (an int or a tuple; ``()``: every dim), ``torch.amax``."""
        return F.amax(self, dim, keepdim)

    def amin(self, dim=(), keepdim: bool = False) -> Tensor:
        """The minimum over ``dim`` (an int or a tuple; ``()``: every dim), ``torch.amin``."""
        return F.amin(self, dim, keepdim)

    def var(self, dim=None, keepdim=False, *, correction=1, axis=None, keepdims=None,
            ddof=None):
        return F.var(self, dim, keepdim, correction=correction, axis=axis, keepdims=keepdims,
                     ddof=ddof)

    def reshape(self, *shape):
        return F.reshape(self, *shape)

    view = reshape

    def flatten(self, start_dim=0, end_dim=-1):
        return F.flatten(self, start_dim, end_dim)

    def permute(self, *dims):
        return F.permute(self, *dims)

    def transpose(self, dim0=-2, dim1=-1):
        return F.transpose(self, dim0, dim1)

    @property
    def T(self):
        """All axes reversed (a matrix transpose for 2-D tensors)."""
        return F.permute(self, *range(self.ndim - 1, -1, -1))

    def squeeze(self, dim=None):
        return F.squeeze(self, dim)

    def unsqueeze(self, dim):
        return F.unsqueeze(self, dim)

    def expand(self, *sizes):
        return F.expand(self, *sizes)

    def split(self, split_size_or_sections, dim=0):
        return F.split(self, split_size_or_sections, dim)

    def softmax(self, dim=-1):
        return F.softmax(self, dim)

    def log_softmax(self, dim=-1):
        return F.log_softmax(self, dim)

    def logsumexp(self, dim=-1, keepdim=False):
        return F.logsumexp(self, dim, keepdim)

    def masked_fill(self, mask, value) -> Tensor:
        """``value`` where the bool ``mask`` is True, these values elsewhere."""
        return F.masked_fill(self, mask, value)

    def tril(self, diagonal: int = 0) -> Tensor:
        return F.tril(self, diagonal)

    def triu(self, diagonal: int = 0) -> Tensor:
        return F.triu(self, diagonal)

    def trace(self) -> Tensor:
        return F.trace(self)

    def det(self) -> Tensor:
        return linalg.det(self)

    def inverse(self) -> Tensor:
        return linalg.inv(self)

    def cumsum(self, dim: int, *, dtype=None) -> Tensor:
        return F.cumsum(self, dim, dtype=dtype)

    def flip(self, *dims, **kwargs) -> Tensor:
        """Reversed along ``dims``: ``x.flip(0)``, ``x.flip(0, 1)``, ``x.flip([0, 1])`` or
        ``x.flip(dims=(0, 1))``, as PyTorch's method takes them."""
        if "dims" in kwargs and not dims:
            dims = (kwargs.pop("dims"),)
        if kwargs or not dims:
            raise errors.flip_no_dims()
        one = len(dims) == 1 and isinstance(dims[0], tuple | list)
        return F.flip(self, dims[0] if one else dims)

    def gather(self, dim: int, index) -> Tensor:
        return F.gather(self, dim, index)

    def scatter_add(self, dim: int, index, src) -> Tensor:
        return F.scatter_add(self, dim, index, src)

    def matmul(self, other):
        return F.matmul(self, other)

    def astype(self, dtype):
        return F.astype(self, dtype)

    def to(self, *args, **kwargs):
        """This tensor with another dtype, as PyTorch's ``to``: ``x.to(float64)``,
        ``x.to("cpu")``, ``x.to("cpu", float32)``, ``x.to(other)`` (other's dtype), with
        ``device=``/``dtype=``/``copy=`` keywords. Nothing to change: ``x`` itself (a new
        tensor only with ``copy=True``). The engine runs on the CPU only."""
        dtype = to_dtype(args, kwargs)
        if dtype is not None and dtype != self.dtype:
            return F.astype(self, dtype)
        return F.clone(self) if kwargs.get("copy") else self

    def cpu(self):
        """This tensor itself: its values are on the CPU already."""
        return self

    def contiguous(self):
        """This tensor if its values are laid out row after row (C order), else a copy
        that is, in the graph (as PyTorch's ``contiguous``)."""
        if self._data.flags.c_contiguous:
            return self
        return _ew.Contiguous.apply(self, dtype=self.dtype)

    def topk(self, k: int, dim: int = -1, largest: bool = True, sorted: bool = True):  # noqa: A002
        return F.topk(self, k, dim, largest, sorted)

    def sort(self, dim: int = -1, descending: bool = False, *, stable: bool = False):
        return F.sort(self, dim, descending, stable=stable)

    def argsort(self, dim: int = -1, descending: bool = False, *, stable: bool = False):
        return F.argsort(self, dim, descending, stable=stable)

    def roll(self, shifts, dims=None):
        return F.roll(self, shifts, dims)

    def float(self):
        """A float32 copy (differentiable)."""
        return F.astype(self, np.float32)

    def double(self):
        """A float64 copy (differentiable)."""
        return F.astype(self, np.float64)

    def clone(self):
        """A copy with its own memory that stays in the graph (a ``clone`` node)."""
        return F.clone(self)

    def long(self):
        """An int64 copy (``torch.long``; no gradient flows through integers)."""
        return F.astype(self, np.int64)

    def view_as(self, other):
        """This tensor reshaped to ``other``'s shape."""
        return F.reshape(self, *other.shape)

    def narrow(self, dim: int, start: int, length: int):
        """``length`` slices along ``dim`` from ``start`` (an indexing op)."""
        dim = dim + self.ndim if dim < 0 else dim
        return self[(slice(None),) * dim + (slice(start, start + length),)]

    def t(self):
        """The transpose of a matrix; a tensor of fewer than 2 dims is returned as it is
        (PyTorch's ``t``, which refuses more than 2 dims)."""
        if self.ndim > 2:
            raise errors.t_dims(self.shape)
        return F.transpose(self, 0, 1) if self.ndim == 2 else self

    def eq(self, other):
        """Elementwise ``==``, a bool tensor."""
        return self == other

    def log10(self):
        """The base-10 logarithm: ``log(x) / log(10)``, recorded as those two ops."""
        logged = F.log(self)
        return logged * np.asarray(1.0 / np.log(10.0), dtype=logged.dtype)

    def new_zeros(self, *size, dtype=None, device=None, requires_grad: bool = False):
        """Zeros of ``size`` with this tensor's dtype (unless ``dtype`` is given)."""
        return creation.zeros(*size, dtype=dtype or self.dtype, device=device,
                              requires_grad=requires_grad)

    def new_ones(self, *size, dtype=None, device=None, requires_grad: bool = False):
        """Ones of ``size`` with this tensor's dtype (unless ``dtype`` is given)."""
        return creation.ones(*size, dtype=dtype or self.dtype, device=device,
                             requires_grad=requires_grad)


def attach() -> None:
    """Put every method of :class:`TensorMaths` on ``Tensor``."""
    for name, value in vars(TensorMaths).items():
        if isinstance(value, FunctionType | property):
            setattr(Tensor, name, value)
