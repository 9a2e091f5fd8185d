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
    scatter_add,
    sigmoid,
    sin,
    softmax,
    split,
    sqrt,
    squeeze,
    stack,
    sub,
    sum,
    tanh,
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
    manual_seed,
    ones,
    ones_like,
    rand,
    randint,
    randn,
    zeros,
    zeros_like,
)
from .recording.grad_mode import enable_grad, is_grad_enabled, no_grad
from .recording.source import record_source, source_recording
from .recording.tensor import Tensor, tensor
from .tensor_methods import attach as _attach_tensor_maths
from .tools.allocator import keep_freed_memory as _keep_freed_memory

float32 = __import__("numpy").float32
float64 = __import__("numpy").float64

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
    "nn", "optim",
]

_attach_tensor_maths()  # x + y, x.exp(), x.backward(): tensor_methods.py

from . import nn, optim  # noqa: E402 - layers and optimizers build on everything above

_keep_freed_memory()  # fewer page faults per training step (glibc only): tools/allocator.py
