"""autograd_core: a define-by-run autograd engine on vectorised NumPy.

Tensors record the ops applied to them; ``backward()`` walks that record in
reverse and fills ``.grad`` of every leaf. Names follow PyTorch so that habits
carry over: ``tensor``, ``requires_grad``, ``backward``, ``no_grad``, ``nn``, ``optim``.

>>> import autograd_core as ag
>>> x = ag.tensor([1.0, 2.0], requires_grad=True)
>>> (x * x).sum().backward()
>>> x.grad
tensor([2., 4.])
"""

from .ops.api import (
    abs,
    add,
    amax,
    amin,
    argsort,
    astype,
    cat,
    clamp,
    clip,
    cos,
    cumsum,
    div,
    einsum,
    exp,
    expand,
    flatten,
    flip,
    gather,
    log,
    log_softmax,
    logsumexp,
    masked_fill,
    matmul,
    max,
    maximum,
    mean,
    min,
    minimum,
    mul,
    neg,
    permute,
    pow,
    relu,
    reshape,
    roll,
    scatter_add,
    sigmoid,
    sin,
    softmax,
    sort,
    split,
    sqrt,
    squeeze,
    stack,
    sub,
    sum,
    tanh,
    topk,
    trace,
    transpose,
    tril,
    triu,
    unsqueeze,
    var,
    where,
)
from .recording.creation import (
    Generator,
    arange,
    default_generator,
    from_numpy,
    manual_seed,
    multinomial,
    ones,
    ones_like,
    rand,
    randint,
    randn,
    zeros,
    zeros_like,
)
from .recording.default_dtype import get_default_dtype, set_default_dtype
from .recording.device import device
from .recording.grad_mode import enable_grad, is_grad_enabled, no_grad
from .recording.source import record_source, source_recording
from .recording.tensor import Tensor, tensor
from .serialization import load, save
from .tensor_methods import attach as _attach_tensor_maths
from .tools.allocator import keep_freed_memory as _keep_freed_memory

# dtypes by PyTorch's names (NumPy's types: ``x.dtype == long`` reads as in PyTorch);
# float, int and bool stay out of __all__, so that a star import keeps Python's own
float32 = float = __import__("numpy").float32  # noqa: A001 - PyTorch's names
float64 = double = __import__("numpy").float64
float16 = half = __import__("numpy").float16
int64 = long = __import__("numpy").int64
int32 = int = __import__("numpy").int32  # noqa: A001
int16 = short = __import__("numpy").int16
int8 = __import__("numpy").int8
uint8 = __import__("numpy").uint8
bool = __import__("numpy").bool_  # noqa: A001

__all__ = [
    "Tensor", "tensor", "Generator", "manual_seed", "default_generator", "zeros", "ones",
    "zeros_like", "ones_like", "arange", "randn", "rand", "randint", "no_grad",
    "enable_grad", "is_grad_enabled", "record_source", "source_recording", "float32", "float64",
    "abs", "add", "astype", "cat", "clamp", "clip", "cos", "div", "exp", "expand", "flatten", "log",
    "log_softmax", "logsumexp", "matmul", "max", "maximum", "mean", "min", "minimum", "mul",
    "neg", "permute", "pow", "relu", "reshape", "sigmoid", "sin", "softmax", "split", "sqrt",
    "squeeze", "stack", "sub", "sum", "tanh", "transpose", "unsqueeze", "var", "where",
    "masked_fill", "tril", "triu", "cumsum", "flip", "gather", "scatter_add",
    "amax", "amin", "einsum",
    "topk", "sort", "argsort", "roll", "multinomial", "from_numpy", "device", "save", "load",
    "double", "float16", "half", "int64", "long", "int32", "int16", "short", "int8", "uint8",
    "get_default_dtype", "set_default_dtype", "nn", "optim", "trace", "linalg",
]

_attach_tensor_maths()  # x + y, x.exp(), x.backward(): tensor_methods.py

from . import linalg, nn, optim  # noqa: E402 - linalg, layers and optimizers build on all above

_keep_freed_memory()  # fewer page faults per training step (glibc only): tools/allocator.py
