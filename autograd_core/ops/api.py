"""The op library as functions, with PyTorch's names and arguments.

Each function checks and normalises its arguments (``dim``/``axis``,
``keepdim``/``keepdims``, negative dims) and then applies one op from ``ops/``.
``Tensor`` methods and operators call these same functions.

>>> x = tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
>>> y = exp(x).sum(dim=1)
"""

from __future__ import annotations

from collections import namedtuple
from collections.abc import Sequence
from functools import wraps

import numpy as np

from .. import errors
from ..recording.node import holds_tensor
from ..recording.tensor import Tensor, tensor
from . import einsum as es
from . import elementwise as ew
from . import indexing, joining, reductions
from . import linalg as la
from . import masking as mk
from . import matmul as mm
from . import scatter as sc
from . import shape as sh
from . import softmax as sm
from . import sorting as so
from ._util import normalize_axes, normalize_dim, normalize_new_dim

__all__ = [
    "add", "sub", "mul", "div", "pow", "neg", "matmul", "exp", "log", "sqrt", "abs", "sin", "cos",
    "tanh",
    "sigmoid", "relu", "maximum", "minimum", "where", "clip", "clamp", "sum", "mean", "max",
    "min", "var", "reshape", "flatten", "transpose", "permute", "squeeze", "unsqueeze",
    "expand", "cat", "stack", "split", "softmax", "log_softmax", "logsumexp", "getitem",
    "astype", "clone",
    "masked_fill", "tril", "triu", "cumsum", "flip", "gather", "scatter_add",
    "amax", "amin", "einsum", "topk", "sort", "argsort", "roll", "trace",
]


def _check_operand(op: str, x):
    if isinstance(x, Tensor | np.ndarray | int | float | np.number | bool):
        return x
    if isinstance(x, list | tuple):
        if holds_tensor(x):
            raise errors.tensor_sequence_operand(op, x)
        return tensor(x)
    raise errors.not_a_tensor(op, x)


def tensor_operand(name: str, a) -> Tensor:
    """``a`` as a Tensor if it is tensor-like (an array, a number, nested lists), else a
    sentence naming the op (for a dict, a string, None) instead of a NumPy error from
    deep inside the op."""
    a = _check_operand(name, a)
    return a if isinstance(a, Tensor) else Tensor._wrap(np.asarray(a))


def _one_tensor(fn):
    """Let ``fn(a, ...)`` take anything tensor-like as ``a`` (see ``tensor_operand``)."""
    name = fn.__name__

    @wraps(fn)
    def checked(a, *args, **kwargs):
        if a.__class__ is not Tensor:
            a = tensor_operand(name, a)
        return fn(a, *args, **kwargs)

    return checked


def _unary(op_class):
    """The function ``f(a)`` that applies the one-input op ``op_class`` to ``a``."""
    name = op_class.name

    def function(a) -> Tensor:
        if a.__class__ is not Tensor:
            a = tensor_operand(name, a)
        return op_class.apply(a)

    return _named_after(op_class, function)


def _binary(op_class):
    """The function ``f(a, b)`` that applies the two-input op ``op_class``."""
    name = op_class.name

    def function(a, b) -> Tensor:
        return op_class.apply(_check_operand(name, a), _check_operand(name, b))

    return _named_after(op_class, function)


def _named_after(op_class, function):
    """``function`` named like its op and documented by the op's formula."""
    function.__name__ = function.__qualname__ = op_class.name
    function.__doc__ = op_class.__doc__
    return function


# -- arithmetic and elementwise functions: each applies one op -----------------------------
add, sub, mul, div, pow, matmul, maximum, minimum = (  # noqa: A001 - PyTorch's names
    _binary(op) for op in (ew.Add, ew.Sub, ew.Mul, ew.Div, ew.Pow, mm.MatMul, ew.Maximum,
                           ew.Minimum))
neg, exp, log, sqrt, abs, sin, cos, tanh, sigmoid, relu = (  # noqa: A001 - as above
    _unary(op) for op in (ew.Neg, ew.Exp, ew.Log, ew.Sqrt, ew.Abs, ew.Sin, ew.Cos, ew.Tanh,
                          ew.Sigmoid, ew.Relu))


def where(condition, a, b) -> Tensor:
    """a where ``condition`` holds, else b (condition is never differentiated)."""
    cond = condition._data if isinstance(condition, Tensor) else np.asarray(condition)
    return ew.Where.apply(cond, _check_operand("where", a), _check_operand("where", b))


@_one_tensor
def clip(a, min=None, max=None) -> Tensor:  # noqa: A002 - PyTorch's names
    """Clamp into [min, max]; the gradient passes where min <= a <= max."""
    if min is None and max is None:
        raise errors.clip_bounds()
    return ew.Clip.apply(a, low=min, high=max)


clamp = clip


@_one_tensor
def astype(a, dtype) -> Tensor:
    """A copy with another dtype; the gradient is cast back to a's dtype."""
    return ew.Cast.apply(a, dtype=np.dtype(dtype))


@_one_tensor
def clone(a) -> Tensor:
    """A copy with its own memory that stays in the graph, as a ``clone`` node."""
    return ew.Clone.apply(a, dtype=a.dtype)


# -- reductions -----------------------------------------------------------------------
def _reduce_args(a, dim, keepdim, axis, keepdims, op="sum"):
    """(axes, keepdim) of a reduction: ``dim`` an int, a tuple or list of ints (``()``:
    every dim, as in PyTorch) or None; NumPy's ``axis``/``keepdims`` override, with
    NumPy's meanings (``axis=()``: no axis, the values themselves)."""
    if keepdims is not None:
        keepdim = keepdims
    if isinstance(axis, tuple | list) and not axis:
        return (), bool(keepdim)
    if axis is not None:
        dim = axis
    ndim = np.ndim(a._data if isinstance(a, Tensor) else a)
    return normalize_axes(dim, ndim, op), bool(keepdim)


@_one_tensor
def sum(a, dim=None, keepdim=False, *, axis=None, keepdims=None) -> Tensor:  # noqa: A001
    """Sum over ``dim`` (an int, a tuple, or None for all); NumPy's axis/keepdims work too."""
    axis, keep = _reduce_args(a, dim, keepdim, axis, keepdims, "sum")
    return reductions.Sum.apply(a, axis=axis, keepdims=keep)


@_one_tensor
def mean(a, dim=None, keepdim=False, *, axis=None, keepdims=None) -> Tensor:
    """Mean over ``dim`` (an int, a tuple, or None for all)."""
    axis, keep = _reduce_args(a, dim, keepdim, axis, keepdims, "mean")
    return reductions.Mean.apply(a, axis=axis, keepdims=keep)


MaxResult = namedtuple("MaxResult", ["values", "indices"])


def _refuse_empty(op, a: Tensor, axes) -> None:
    """max/min/amax/amin along a dim of size 0 have no value to pick: PyTorch's error."""
    if a._data.size == 0:
        for d in range(a.ndim) if axes is None else axes:
            if a.shape[d] == 0:
                raise errors.empty_reduction(op.name, None if axes is None else d)


def _extremum(op, arg, a, dim, keepdim, axis, keepdims):
    axes, keep = _reduce_args(a, dim, keepdim, axis, keepdims, op.name)
    _refuse_empty(op, a, axes)
    values = op.apply(a, axis=axes, keepdims=keep)
    if isinstance(dim, int) and axis is None:  # PyTorch style: values and indices
        data = a._data if isinstance(a, Tensor) else a
        indices = arg(data, axis=axes[0] if axes else None, keepdims=keep)  # 0-D: axes ()
        return MaxResult(values, Tensor._wrap(indices))
    return values


@_one_tensor
def max(a, dim=None, keepdim=False, *, axis=None, keepdims=None):  # noqa: A001
    """Maximum over ``dim``; tied maxima share the gradient equally.

    Like PyTorch, ``max(x, dim=1)`` returns ``(values, indices)``; with no dim, a
    tuple of dims, or NumPy's ``axis=``, it returns the values only.
    """
    return _extremum(reductions.Max, np.argmax, a, dim, keepdim, axis, keepdims)


@_one_tensor
def min(a, dim=None, keepdim=False, *, axis=None, keepdims=None):  # noqa: A001
    """Minimum over ``dim``; tied minima share the gradient equally (see ``max``)."""
    return _extremum(reductions.Min, np.argmin, a, dim, keepdim, axis, keepdims)


def _shared_extremum(op, input, dim, keepdim) -> Tensor:  # noqa: A002 - PyTorch's name
    a = input if input.__class__ is Tensor else tensor_operand(op.name, input)
    axes = normalize_axes(dim, a.ndim, op.name)
    _refuse_empty(op, a, axes)
    return op.apply(a, axis=axes, keepdims=bool(keepdim))


def amax(input: Tensor, dim: int | Sequence[int] = (), keepdim: bool = False  # noqa: A002
         ) -> Tensor:
    """The maximum over ``dim`` (an int or a tuple of ints; ``()``, the default, is every
    dim), as ``torch.amax``: values only, no indices. Tied maxima share the gradient
    equally; a slice whose maximum is nan sends nan to every one of its values."""
    return _shared_extremum(reductions.Amax, input, dim, keepdim)


def amin(input: Tensor, dim: int | Sequence[int] = (), keepdim: bool = False  # noqa: A002
         ) -> Tensor:
    """The minimum over ``dim``, as ``torch.amin`` (see ``amax``)."""
    return _shared_extremum(reductions.Amin, input, dim, keepdim)


@_one_tensor
def var(a, dim=None, keepdim=False, *, correction=1, axis=None, keepdims=None,
        ddof=None) -> Tensor:
    """Variance over ``dim``, divided by n - correction (PyTorch's default correction=1;
    NumPy's ``ddof=`` is accepted too)."""
    axes, keep = _reduce_args(a, dim, keepdim, axis, keepdims, "var")
    return reductions.Var.apply(a, axis=axes, keepdims=keep,
                                correction=correction if ddof is None else ddof)


# -- trace (ops/linalg.py; det, inv, solve and slogdet are in autograd_core/linalg.py) ------
def trace(input: Tensor) -> Tensor:  # noqa: A002
    """The sum of the main diagonal of one matrix (any m by n), as ``torch.trace``: its
    gradient is the upstream gradient on the diagonal and 0 elsewhere."""
    a = input if input.__class__ is Tensor else tensor_operand("trace", input)
    if a.ndim != 2:
        raise errors.trace_not_matrix(a.shape)
    return la.Trace.apply(a)


# -- einsum (ops/einsum.py, which reads the equation) -------------------------------------
def einsum(equation: str, *operands) -> Tensor:
    """The contraction ``equation`` names, as ``torch.einsum``: each operand's dims get a
    letter (a-z, A-Z), letters shared by operands are multiplied along and letters left
    out of the output summed over. ``einsum("bij,bjk->bik", a, b)`` is a batched matmul,
    ``einsum("ii", a)`` a trace, ``einsum("ii->i", a)`` a diagonal, ``einsum("i,j->ij",
    u, v)`` an outer product. The operands may also come as one list, ``einsum(eq, [a, b])``.

    Without ``->`` the output is, as in PyTorch and NumPy, the ``...`` dims and then the
    letters used once, in alphabetical order (A-Z before a-z). ``...`` stands for the dims
    an operand does not name; they broadcast like ``a + b``, and so does a dim of size 1
    against the same letter's size in another operand. Operands are Tensors or NumPy
    arrays; dtypes promote as NumPy's do.

    The gradient of each operand is another einsum, of ``g`` with the other operands
    (see ops/einsum.py), so the node saves only the other operands: operand k is kept
    when some operand other than k requires grad, and a one-operand einsum saves nothing.
    """
    if len(operands) == 1 and isinstance(operands[0], list | tuple):
        operands = tuple(operands[0])
    if not operands:
        raise errors.einsum_no_operands()
    if not isinstance(equation, str):
        raise errors.einsum_equation_type(equation)
    for k, x in enumerate(operands):
        if not isinstance(x, Tensor | np.ndarray):
            raise errors.einsum_operand_type(k, x)
    shapes = [x.shape for x in operands]
    return es.Einsum.apply(*operands, equation=es.canonical_equation(equation, shapes))


# -- shape ---------------------------------------------------------------------------------
def _shape_arg(shape) -> tuple:
    if len(shape) == 1 and isinstance(shape[0], Sequence):
        shape = tuple(shape[0])
    return tuple(int(s) for s in shape)


@_one_tensor
def reshape(a, *shape) -> Tensor:
    """Same elements in a new shape (one size may be -1): ``reshape(x, 2, -1)``."""
    return sh.Reshape.apply(a, shape=_shape_arg(shape))


@_one_tensor
def flatten(a, start_dim: int = 0, end_dim: int = -1) -> Tensor:
    """Merge the dims start_dim..end_dim into one."""
    shape = a.shape
    if not shape:
        return reshape(a, 1)
    start, end = normalize_dim(start_dim, len(shape)), normalize_dim(end_dim, len(shape))
    merged = int(np.prod(shape[start:end + 1]))
    return reshape(a, shape[:start] + (merged,) + shape[end + 1:])


@_one_tensor
def permute(a, *dims) -> Tensor:
    """Reorder the axes: ``permute(x, 2, 0, 1)``."""
    dims = _shape_arg(dims)
    axes = tuple(normalize_dim(d, a.ndim) for d in dims)
    if sorted(axes) != list(range(a.ndim)):
        raise errors.not_a_permutation(dims, a.ndim)
    return sh.Permute.apply(a, axes=axes)


@_one_tensor
def transpose(a, dim0: int = -2, dim1: int = -1) -> Tensor:
    """Swap two axes."""
    axes = list(range(a.ndim))
    d0, d1 = normalize_dim(dim0, a.ndim), normalize_dim(dim1, a.ndim)
    axes[d0], axes[d1] = axes[d1], axes[d0]
    return sh.Permute.apply(a, axes=tuple(axes))


@_one_tensor
def squeeze(a, dim=None) -> Tensor:
    """Drop size-1 axes (all of them, or the given one if it has size 1)."""
    shape = a.shape
    if dim is None:
        return reshape(a, tuple(s for s in shape if s != 1))
    d = normalize_dim(dim, len(shape))
    return reshape(a, shape[:d] + shape[d + 1:]) if shape and shape[d] == 1 else \
        reshape(a, shape)


@_one_tensor
def unsqueeze(a, dim: int) -> Tensor:
    """Insert a size-1 axis at position ``dim``."""
    d = normalize_new_dim(dim, a.ndim)
    return reshape(a, a.shape[:d] + (1,) + a.shape[d:])


@_one_tensor
def expand(a, *sizes) -> Tensor:
    """Broadcast to a larger shape without copying (-1 keeps a size)."""
    sizes = _shape_arg(sizes)
    lead = len(sizes) - a.ndim
    shape = tuple(a.shape[i - lead] if s == -1 else s for i, s in enumerate(sizes))
    return sh.Expand.apply(a, shape=shape)


# -- indexing and joining ------------------------------------------------------------
def _key(key):
    if isinstance(key, tuple):
        return tuple(_key_part(k) for k in key)
    return _key_part(key)


def _key_part(k):
    if isinstance(k, Tensor):
        return k._data
    if isinstance(k, list):
        return np.asarray(k)
    return k


def getitem(a, key) -> Tensor:
    """``a[key]``; the backward scatter-adds, so repeated indices accumulate."""
    return indexing.GetItem.apply(a, key=_key(key))


def _tensors(op: str, tensors) -> list:
    tensors = list(tensors)
    if not tensors:
        raise errors.empty_sequence(op)
    return [_check_operand(op, t) for t in tensors]


def cat(tensors, dim: int = 0) -> Tensor:
    """Concatenate along an existing axis."""
    tensors = _tensors("cat", tensors)
    ndim = np.ndim(tensors[0]._data if isinstance(tensors[0], Tensor) else tensors[0])
    try:
        return joining.Cat.apply(*tensors, dim=normalize_dim(dim, ndim))
    except ValueError as exc:
        shapes = [np.shape(t._data if isinstance(t, Tensor) else t) for t in tensors]
        raise errors.cat_shapes(shapes, dim, exc) from None


def stack(tensors, dim: int = 0) -> Tensor:
    """Stack along a new axis."""
    tensors = _tensors("stack", tensors)
    ndim = np.ndim(tensors[0]._data if isinstance(tensors[0], Tensor) else tensors[0])
    try:
        return joining.Stack.apply(*tensors, dim=normalize_new_dim(dim, ndim))
    except ValueError:
        shapes = [np.shape(t._data if isinstance(t, Tensor) else t) for t in tensors]
        raise errors.stack_shapes(shapes) from None


@_one_tensor
def split(a, split_size_or_sections, dim: int = 0) -> tuple:
    """Split into pieces of a given size (the last may be smaller) or of given sizes."""
    d = normalize_dim(dim, a.ndim)
    total = a.shape[d]
    if isinstance(split_size_or_sections, int):
        step = split_size_or_sections
        if step <= 0:
            raise errors.split_size(step)
        # (this module's ``min`` is the tensor reduction, so no builtin min here)
        sizes = [step] * (total // step) + ([total % step] if total % step else [])
    else:
        sizes = [int(s) for s in split_size_or_sections]
        if np.sum(sizes) != total:
            raise errors.split_sections(sizes, dim, total)
    starts = [int(s) for s in np.cumsum([0] + sizes[:-1])]
    return tuple(indexing.Narrow.apply(a, key=(slice(None),) * d + (slice(s, s + n),))
                 for s, n in zip(starts, sizes, strict=True))


# -- masking, triangles, running sums, flips, gather and scatter_add (ops/masking.py,
# ops/scatter.py, which also check their arguments) -------------------------------------
def masked_fill(input: Tensor, mask: Tensor, value: float | Tensor) -> Tensor:  # noqa: A002
    """``value`` where ``mask`` (a bool tensor, broadcast against input) is True, input
    elsewhere. The gradient reaches input where the mask is False; a 0-d tensor ``value``
    that requires grad gets the gradient summed over where the mask is True."""
    a = input if input.__class__ is Tensor else tensor_operand("masked_fill", input)
    mask = mk.check_mask(mask)
    value = mk.check_fill_value("masked_fill", value, a.dtype)
    mask_shape = np.shape(mask._data if isinstance(mask, Tensor) else mask)
    try:
        np.broadcast_shapes(a.shape, mask_shape)
    except ValueError:
        raise errors.broadcast("masked_fill", a.shape, mask_shape) from None
    return mk.MaskedFill.apply(a, mask, value)


def tril(input: Tensor, diagonal: int = 0) -> Tensor:  # noqa: A002
    """The lower triangle over the last two dims (batched): entries above the
    ``diagonal``-th diagonal (0: the main one, > 0 above it, < 0 below) set to 0."""
    a = input if input.__class__ is Tensor else tensor_operand("tril", input)
    return mk.Tril.apply(a, diagonal=mk.check_triangle("tril", a, diagonal))


def triu(input: Tensor, diagonal: int = 0) -> Tensor:  # noqa: A002
    """The upper triangle over the last two dims (batched): entries below the
    ``diagonal``-th diagonal set to 0."""
    a = input if input.__class__ is Tensor else tensor_operand("triu", input)
    return mk.Triu.apply(a, diagonal=mk.check_triangle("triu", a, diagonal))


def cumsum(input: Tensor, dim: int, *, dtype=None) -> Tensor:  # noqa: A002
    """Running sums along ``dim``: out[j] = input[0] + ... + input[j]. ``dtype`` converts
    the input first; integer and bool inputs sum as int64, as in PyTorch."""
    a = input if input.__class__ is Tensor else tensor_operand("cumsum", input)
    dim = normalize_dim(mk.check_int("cumsum", "dim", 2, dim), a.ndim)
    if dtype is not None:
        a = astype(a, dtype)
    return mk.Cumsum.apply(a, dim=dim)


def flip(input: Tensor, dims: Sequence[int]) -> Tensor:  # noqa: A002
    """A copy with the order of the entries reversed along each dim in ``dims`` (a tuple
    or list of ints)."""
    a = input if input.__class__ is Tensor else tensor_operand("flip", input)
    return mk.Flip.apply(a, dims=mk.check_flip_dims(dims, a.ndim))


def gather(input: Tensor, dim: int, index: Tensor) -> Tensor:  # noqa: A002
    """Values read along ``dim`` at ``index`` (an int64/int32 tensor with as many dims as
    input): out[i][j] = input[i][index[i][j]] for dim=1; out has the index's shape."""
    a = input if input.__class__ is Tensor else tensor_operand("gather", input)
    dim = sc.check_gather("gather", a, dim, index)
    return sc.Gather.apply(a, index, dim=dim)


def scatter_add(input: Tensor, dim: int, index: Tensor, src: Tensor) -> Tensor:  # noqa: A002
    """A copy of input with ``src`` added along ``dim`` at ``index``: for dim=1,
    out[i][index[i][j]] += src[i][j]; repeated indices add up. src has input's dtype."""
    a = input if input.__class__ is Tensor else tensor_operand("scatter_add", input)
    dim = sc.check_gather("scatter_add", a, dim, index, src)
    return sc.ScatterAdd.apply(a, index, src, dim=dim)


# -- softmax family ------------------------------------------------------------------------
def _softmax_dim(dim: int, ndim: int):
    """The axis as a non-negative int; for a 0-d input (dim 0 or -1, as in PyTorch) None,
    which NumPy reads as "the whole 0-d array": softmax 1, logsumexp the value itself."""
    axis = normalize_dim(dim, ndim)
    return axis if ndim else None


@_one_tensor
def softmax(a, dim: int = -1) -> Tensor:
    """exp(a) / sum(exp(a)) along ``dim``, computed stably."""
    return sm.Softmax.apply(a, dim=_softmax_dim(dim, a.ndim))


@_one_tensor
def log_softmax(a, dim: int = -1) -> Tensor:
    """log(softmax(a)) along ``dim``, computed stably."""
    return sm.LogSoftmax.apply(a, dim=_softmax_dim(dim, a.ndim))


@_one_tensor
def logsumexp(a, dim: int | tuple[int, ...] = -1, keepdim: bool = False) -> Tensor:
    """log(sum(exp(a))) along ``dim`` (an int or, as in PyTorch, a tuple of dims; unlike
    sum's, an empty tuple is refused, as PyTorch does), computed stably."""
    if isinstance(dim, tuple | list):
        if not dim and a.ndim:
            raise errors.no_dims("logsumexp")
        axes = normalize_axes(tuple(dim), a.ndim, "logsumexp")
        return sm.LogSumExp.apply(a, dim=axes if a.ndim else None, keepdims=keepdim)
    if not isinstance(dim, int | np.integer) or isinstance(dim, bool | np.bool_):
        raise errors.int_tuple_argument("logsumexp", "dim", 2, dim)
    return sm.LogSumExp.apply(a, dim=_softmax_dim(dim, a.ndim), keepdims=keepdim)


# -- ordering: sort, topk, argsort, roll (ops/sorting.py) ---------------------------------
TopkResult = namedtuple("topk", ["values", "indices"])
SortResult = namedtuple("sort", ["values", "indices"])


def _sorted_along(op: str, input, dim, descending: bool) -> tuple:  # noqa: A002
    """(tensor, dim, indices) for sort/topk/argsort: ``dim`` non-negative (0 for a 0-d
    input) and the stable sorting indices of the values along it, int64."""
    a = input if input.__class__ is Tensor else tensor_operand(op, input)
    dim = normalize_dim(mk.check_int(op, "dim", 2, dim), a.ndim)
    data = a._data if a.ndim else a._data.reshape(1)
    return a, dim, so.sorting_indices(data, dim, bool(descending))


def _index_like(a: Tensor, indices: np.ndarray) -> np.ndarray:
    """The indices shaped as the input (a 0-d input keeps a 0-d index, as in PyTorch)."""
    return indices.reshape(()) if a.ndim == 0 and indices.size == 1 else indices


def sort(input: Tensor, dim: int = -1, descending: bool = False, *,  # noqa: A002
         stable: bool = False) -> SortResult:
    """The entries sorted along ``dim``, as ``torch.sort``: a named tuple ``(values,
    indices)`` with ``values == gather(input, dim, indices)``. The order is stable whether
    ``stable`` is asked or not (ties keep their positions' order, lower index first, also
    descending; NaN is the largest). The gradient goes back to where each value was read."""
    a, dim, indices = _sorted_along("sort", input, dim, descending)
    indices = _index_like(a, indices)
    return SortResult(so.Sort.apply(a, indices, dim=dim), Tensor._wrap(indices))


def argsort(input: Tensor, dim: int = -1, descending: bool = False, *,  # noqa: A002
            stable: bool = False) -> Tensor:
    """The int64 indices that sort ``input`` along ``dim``, as ``torch.argsort`` (sort's
    ``indices``; stable, see ``sort``). Integers: no gradient."""
    a, _, indices = _sorted_along("argsort", input, dim, descending)
    return Tensor._wrap(_index_like(a, indices))


def topk(input: Tensor, k: int, dim: int = -1, largest: bool = True,  # noqa: A002
         sorted: bool = True) -> TopkResult:  # noqa: A002 - PyTorch's names
    """The ``k`` largest (``largest=False``: smallest) entries along ``dim``, as
    ``torch.topk``: a named tuple ``(values, indices)``, largest first (smallest first).
    Ties are taken lower index first; ``sorted=False`` returns them in that same order.
    The gradient reaches the k entries picked and is 0 elsewhere."""
    a, dim, indices = _sorted_along("topk", input, dim, largest)
    k = mk.check_int("topk", "k", 2, k)
    size = a.shape[dim] if a.ndim else 1
    if not 0 <= k <= size:
        raise errors.topk_k(k, size)
    indices = _index_like(a, np.take(indices, np.arange(k), axis=dim))
    return TopkResult(so.Topk.apply(a, indices, dim=dim), Tensor._wrap(indices))


def roll(input: Tensor, shifts: int | Sequence[int],  # noqa: A002
         dims: int | Sequence[int] | None = None) -> Tensor:
    """The entries shifted by ``shifts`` along ``dims``, those pushed past the end coming
    back at the start, as ``torch.roll``; with no ``dims`` the tensor is flattened,
    rolled and given its shape back. The gradient is rolled back."""
    a = input if input.__class__ is Tensor else tensor_operand("roll", input)
    many = isinstance(shifts, tuple | list)
    shift_list = mk.check_ints("roll", "shifts", 2, shifts) if many else \
        (mk.check_int("roll", "shifts", 2, shifts),)
    if dims is None:
        if len(shift_list) != 1:
            raise errors.roll_arguments(shifts, dims)
        return so.Roll.apply(a, shifts=shift_list[0], dims=None)
    many_dims = isinstance(dims, tuple | list)
    dim_list = mk.check_ints("roll", "dims", 3, dims) if many_dims else \
        (mk.check_int("roll", "dims", 3, dims),)
    if len(dim_list) != len(shift_list) or not dim_list:
        raise errors.roll_arguments(shifts, dims)
    if a.ndim == 0:  # a 0-d tensor has one entry: every roll gives it back
        for d in dim_list:
            normalize_dim(d, 0)
        return so.Roll.apply(a, shifts=0, dims=None)
    axes = tuple(normalize_dim(d, a.ndim) for d in dim_list)
    return so.Roll.apply(a, shifts=shift_list, dims=axes)
