"""The standard layers, each a thin :class:`Module` around one function of
``autograd_core.nn.functional``, with PyTorch's names, arguments and initialisation.

Every layer with parameters takes keyword-only ``dtype`` (default: the engine's
default dtype, float64 unless ``ag.set_default_dtype(ag.float32)`` made it PyTorch's)
and ``generator`` (the seeded source of its initial values; default the engine's
default generator, reseeded by ``autograd_core.manual_seed``).

>>> import autograd_core as ag
>>> from autograd_core import nn
>>> layer = nn.Linear(3, 2, generator=ag.Generator(0))
>>> layer(ag.ones(5, 3)).shape
(5, 2)
"""

from __future__ import annotations

import math
from collections import OrderedDict
from collections.abc import Iterator

import numpy as np

from .. import errors
from ..ops import api as ag
from ..recording import creation, default_dtype
from ..recording.tensor import Tensor
from . import functional as F
from . import init
from .module import Module
from .parameter import Parameter

__all__ = ["Linear", "Conv2d", "BatchNorm1d", "BatchNorm2d", "Dropout", "Embedding", "ReLU",
           "Tanh", "Sigmoid", "GELU", "SiLU", "Softplus", "LeakyReLU", "MaxPool2d", "AvgPool2d",
           "AdaptiveAvgPool2d", "Flatten", "Sequential",
           "LayerNorm", "RMSNorm"]

def _empty(*shape, dtype) -> Parameter:
    return Parameter(np.zeros(shape, dtype=np.dtype(default_dtype.resolve(dtype))))


def _pair(value) -> tuple[int, int] | str:
    """A (height, width) pair of an int or a pair; a padding string stays as it is."""
    if isinstance(value, str):
        return value
    return tuple(value) if isinstance(value, tuple | list) else (value, value)


def _reset_weight_and_bias(weight: Parameter, bias: Parameter | None, generator) -> None:
    """PyTorch's default for Linear and Conv2d: kaiming_uniform_(a=sqrt(5)) for the
    weight, U(-1/sqrt(fan_in), 1/sqrt(fan_in)) for the bias; weight drawn first."""
    init.kaiming_uniform_(weight, a=math.sqrt(5), generator=generator)
    if bias is not None:
        fan_in, _ = init.calculate_fan_in_and_fan_out(weight.shape)
        bound = 1 / math.sqrt(fan_in) if fan_in > 0 else 0.0
        init.uniform_(bias, -bound, bound, generator=generator)


class Linear(Module):
    """y = x @ W.T + b, with W of shape (out_features, in_features).

    Initialisation (PyTorch's): W and b uniform in ±1/sqrt(in_features); in the
    default dtype.

    >>> Linear(4, 2).weight.shape
    (2, 4)
    """

    def __init__(self, in_features: int, out_features: int, bias: bool = True, *,
                 dtype=None, generator: creation.Generator | None = None):
        super().__init__()
        self.in_features, self.out_features = in_features, out_features
        self.weight = _empty(out_features, in_features, dtype=dtype)
        self.bias = _empty(out_features, dtype=dtype) if bias else None
        _reset_weight_and_bias(self.weight, self.bias, generator)

    def forward(self, x: Tensor) -> Tensor:
        return F.linear(x, self.weight, self.bias)

    def extra_repr(self) -> str:
        return (f"in_features={self.in_features}, out_features={self.out_features}, "
                f"bias={self.bias is not None}")


class Conv2d(Module):
    """2-D convolution (cross-correlation, as in every framework) over (N, C, H, W).

    Weight shape (out_channels, in_channels // groups, kH, kW). Initialisation
    (PyTorch's): uniform in ±1/sqrt(fan_in), fan_in = in_channels // groups * kH * kW;
    in the default dtype.

    >>> Conv2d(1, 8, kernel_size=3, padding=1).weight.shape
    (8, 1, 3, 3)
    """

    def __init__(self, in_channels: int, out_channels: int, kernel_size, stride=1,
                 padding=0, dilation=1, groups: int = 1, bias: bool = True, *,
                 dtype=None, generator: creation.Generator | None = None):
        super().__init__()
        if in_channels % groups or out_channels % groups:
            raise errors.bad_option("Conv2d", "groups", groups,
                                    "a divisor of in_channels and out_channels")
        self.in_channels, self.out_channels, self.groups = in_channels, out_channels, groups
        self.kernel_size, self.stride = _pair(kernel_size), _pair(stride)
        self.padding, self.dilation = _pair(padding), _pair(dilation)
        if isinstance(padding, str):  # checked now, as PyTorch's module does
            span = tuple(d * (k - 1) + 1 for d, k in zip(self.dilation, self.kernel_size))
            F.conv_padding_from_string(padding, self.stride, span, error_type=ValueError)
        self.weight = _empty(out_channels, in_channels // groups, *self.kernel_size,
                             dtype=dtype)
        self.bias = _empty(out_channels, dtype=dtype) if bias else None
        _reset_weight_and_bias(self.weight, self.bias, generator)

    def forward(self, x: Tensor) -> Tensor:
        return F.conv2d(x, self.weight, self.bias, stride=self.stride, padding=self.padding,
                        dilation=self.dilation, groups=self.groups)

    def extra_repr(self) -> str:
        s = (f"{self.in_channels}, {self.out_channels}, kernel_size={self.kernel_size}, "
             f"stride={self.stride}")
        if self.padding != (0, 0):
            s += f", padding={self.padding}"
        if self.dilation != (1, 1):
            s += f", dilation={self.dilation}"
        if self.groups != 1:
            s += f", groups={self.groups}"
        if self.bias is None:
            s += ", bias=False"
        return s


class _BatchNorm(Module):
    """Batch normalisation: normalise each channel with the batch's mean and (biased)
    variance in training, with the running estimates in evaluation; then scale by
    ``weight`` and shift by ``bias``.

    In training each forward also updates the running estimates (unbiased variance):
    running = (1 - momentum) * running + momentum * batch_statistic. Initialisation:
    weight 1, bias 0, running_mean 0, running_var 1; momentum 0.1, eps 1e-5 (all as
    PyTorch); in the default dtype.
    """

    _dims: tuple[int, ...] = ()
    _layout = ""

    def __init__(self, num_features: int, eps: float = 1e-5, momentum: float = 0.1,
                 affine: bool = True, *, dtype=None):
        super().__init__()
        self.num_features, self.eps, self.momentum = num_features, eps, momentum
        self.affine = affine
        self.weight = init.ones_(_empty(num_features, dtype=dtype)) if affine else None
        self.bias = _empty(num_features, dtype=dtype) if affine else None
        self.register_buffer("running_mean", creation.zeros(num_features, dtype=dtype))
        self.register_buffer("running_var", creation.ones(num_features, dtype=dtype))
        self.register_buffer("num_batches_tracked", creation.zeros((), dtype=np.int64))

    def forward(self, x: Tensor) -> Tensor:
        if x.ndim not in self._dims:
            raise errors.layer_input_rank(type(self).__name__, self._layout, x.shape)
        if self.training:
            self.num_batches_tracked.add_(1)
        return F.batch_norm(x, self.running_mean, self.running_var, self.weight, self.bias,
                            training=self.training, momentum=self.momentum, eps=self.eps)

    def extra_repr(self) -> str:
        return (f"{self.num_features}, eps={self.eps}, momentum={self.momentum}, "
                f"affine={self.affine}")


class BatchNorm1d(_BatchNorm):
    __doc__ = _BatchNorm.__doc__ + "\n    Input (N, C) or (N, C, L); statistics over N (and L)."
    _dims = (2, 3)
    _layout = "2D (N, C) or 3D (N, C, L)"


class BatchNorm2d(_BatchNorm):
    __doc__ = _BatchNorm.__doc__ + "\n    Input (N, C, H, W); statistics over N, H and W."
    _dims = (4,)
    _layout = "4D (N, C, H, W)"


def _normalized_shape(module: str, normalized_shape) -> tuple[int, ...]:
    """An int or a sequence of ints as a tuple, as PyTorch's norm modules take it."""
    if isinstance(normalized_shape, int | np.integer) and not isinstance(normalized_shape, bool):
        normalized_shape = (normalized_shape,)
    if not (isinstance(normalized_shape, tuple | list) and all(
            isinstance(d, int | np.integer) and not isinstance(d, bool)
            for d in normalized_shape)):
        raise errors.norm_module_shape(module, normalized_shape)
    shape = tuple(int(d) for d in normalized_shape)
    if any(d < 0 for d in shape):
        raise errors.norm_module_shape(module, shape)
    return shape


class LayerNorm(Module):
    """Layer normalisation of each row over its last dims ``normalized_shape`` (an int
    or a tuple): (x - mean) / sqrt(var + eps) with the row's mean and biased variance,
    then ``weight`` · x̂ + ``bias``. No running statistics: training and evaluation are
    the same.

    Parameters (PyTorch's): ``weight`` (ones) and ``bias`` (zeros), both of shape
    ``normalized_shape``, when ``elementwise_affine``; ``bias=False`` drops the bias.
    In the default dtype.

    >>> LayerNorm(4)
    LayerNorm((4,), eps=1e-05, elementwise_affine=True, bias=True)
    """

    def __init__(self, normalized_shape, eps: float = 1e-5, elementwise_affine: bool = True,
                 bias: bool = True, *, dtype=None):
        super().__init__()
        self.normalized_shape = _normalized_shape("LayerNorm", normalized_shape)
        self.eps, self.elementwise_affine = eps, elementwise_affine
        if elementwise_affine:
            self.weight = init.ones_(_empty(*self.normalized_shape, dtype=dtype))
            if bias:
                self.bias = _empty(*self.normalized_shape, dtype=dtype)
            else:
                self.register_parameter("bias", None)
        else:
            self.register_parameter("weight", None)
            self.register_parameter("bias", None)

    def forward(self, x: Tensor) -> Tensor:
        return F.layer_norm(x, self.normalized_shape, self.weight, self.bias, self.eps)

    def extra_repr(self) -> str:
        return (f"{self.normalized_shape}, eps={self.eps}, "
                f"elementwise_affine={self.elementwise_affine}, bias={self.bias is not None}")


class RMSNorm(Module):
    """RMS normalisation of each row over its last dims ``normalized_shape`` (an int or a
    tuple): x / sqrt(mean(x²) + eps), then ``weight`` · x̂. No centring, no bias.
    ``eps=None``: the machine epsilon of the input's dtype, as in PyTorch.

    Parameter (PyTorch's): ``weight`` (ones, shape ``normalized_shape``) when
    ``elementwise_affine``. In the default dtype.

    >>> RMSNorm((3, 4))
    RMSNorm((3, 4), eps=None, elementwise_affine=True)
    """

    def __init__(self, normalized_shape, eps: float | None = None,
                 elementwise_affine: bool = True, *, dtype=None):
        super().__init__()
        self.normalized_shape = _normalized_shape("RMSNorm", normalized_shape)
        self.eps, self.elementwise_affine = eps, elementwise_affine
        if elementwise_affine:
            self.weight = init.ones_(_empty(*self.normalized_shape, dtype=dtype))
        else:
            self.register_parameter("weight", None)

    def forward(self, x: Tensor) -> Tensor:
        return F.rms_norm(x, self.normalized_shape, self.weight, self.eps)

    def extra_repr(self) -> str:
        return (f"{self.normalized_shape}, eps={self.eps}, "
                f"elementwise_affine={self.elementwise_affine}")


class Dropout(Module):
    """In training, zero each element with probability ``p`` and scale the kept ones
    by 1 / (1 - p), so the expected value is unchanged; in evaluation, the identity.
    ``inplace=True`` is accepted as in :class:`ReLU`: the same result, in a new tensor.

    The masks are drawn from ``generator`` (default: the engine's default generator).
    """

    def __init__(self, p: float = 0.5, inplace: bool = False, *,
                 generator: creation.Generator | None = None):
        super().__init__()
        if not 0 <= p <= 1:
            raise errors.dropout_probability(p)
        self.p, self.inplace, self.generator = p, inplace, generator

    def forward(self, x: Tensor) -> Tensor:
        return F.dropout(x, self.p, training=self.training, generator=self.generator)

    def extra_repr(self) -> str:
        return f"p={self.p}"


class Embedding(Module):
    """A lookup table: row ``i`` of ``weight`` (num_embeddings, embedding_dim) is the
    vector of index ``i``. The backward scatter-adds, so repeated indices accumulate.

    Initialisation (PyTorch's): N(0, 1); in the default dtype.
    """

    def __init__(self, num_embeddings: int, embedding_dim: int, *, dtype=None,
                 generator: creation.Generator | None = None):
        super().__init__()
        self.num_embeddings, self.embedding_dim = num_embeddings, embedding_dim
        self.weight = init.normal_(_empty(num_embeddings, embedding_dim, dtype=dtype),
                                   generator=generator)

    def forward(self, indices) -> Tensor:
        return F.embedding(indices, self.weight)

    def extra_repr(self) -> str:
        return f"{self.num_embeddings}, {self.embedding_dim}"


class ReLU(Module):
    """max(x, 0), elementwise. ``inplace=True`` (PyTorch's hint to overwrite the input)
    is accepted and gives the same result in a new tensor: the engine records nothing in
    place, so the input keeps its values."""

    def __init__(self, inplace: bool = False):
        super().__init__()
        self.inplace = inplace

    def extra_repr(self) -> str:
        return "inplace=True" if self.inplace else ""

    def forward(self, x: Tensor) -> Tensor:
        return F.relu(x)


class Tanh(Module):
    """tanh(x), elementwise."""

    def forward(self, x: Tensor) -> Tensor:
        return F.tanh(x)


class Sigmoid(Module):
    """1 / (1 + exp(-x)), elementwise."""

    def forward(self, x: Tensor) -> Tensor:
        return F.sigmoid(x)


class GELU(Module):
    """x · Φ(x), elementwise, Φ the standard normal CDF; ``approximate='tanh'``: its tanh
    approximation (see ``functional.gelu``). A bad ``approximate`` is refused here
    already (PyTorch's module refuses it at its first call), with the same error."""

    def __init__(self, approximate: str = "none"):
        super().__init__()
        self.approximate = F._check_approximate(approximate)

    def forward(self, x: Tensor) -> Tensor:
        return F.gelu(x, approximate=self.approximate)

    def extra_repr(self) -> str:
        return f"approximate={self.approximate!r}"


class SiLU(Module):
    """x · sigmoid(x), elementwise (swish). ``inplace=True`` is refused: this engine
    records no in-place op."""

    def __init__(self, inplace: bool = False):
        super().__init__()
        F._no_inplace("SiLU", inplace)
        self.inplace = inplace

    def forward(self, x: Tensor) -> Tensor:
        return F.silu(x)


class Softplus(Module):
    """log(1 + exp(beta · x)) / beta, elementwise, and x itself where beta · x >
    threshold (see ``functional.softplus``)."""

    def __init__(self, beta: float = 1.0, threshold: float = 20.0):
        super().__init__()
        F._number("Softplus", "beta", beta)
        F._number("Softplus", "threshold", threshold)
        self.beta, self.threshold = beta, threshold

    def forward(self, x: Tensor) -> Tensor:
        return F.softplus(x, self.beta, self.threshold)

    def extra_repr(self) -> str:
        return f"beta={self.beta}, threshold={self.threshold}"


class LeakyReLU(Module):
    """x where x > 0, else negative_slope · x, elementwise (the gradient at 0 is
    negative_slope). ``inplace=True`` is refused: this engine records no in-place op."""

    def __init__(self, negative_slope: float = 0.01, inplace: bool = False):
        super().__init__()
        F._number("LeakyReLU", "negative_slope", negative_slope)
        F._no_inplace("LeakyReLU", inplace)
        self.negative_slope, self.inplace = negative_slope, inplace

    def forward(self, x: Tensor) -> Tensor:
        return F.leaky_relu(x, self.negative_slope)

    def extra_repr(self) -> str:
        return f"negative_slope={self.negative_slope}"


class _Pool2d(Module):
    def __init__(self, kernel_size, stride=None, padding=0):
        super().__init__()
        self.kernel_size, self.padding = kernel_size, padding
        self.stride = kernel_size if stride is None else stride

    def extra_repr(self) -> str:
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class MaxPool2d(_Pool2d):
    """The maximum of each window over (N, C, H, W); the gradient goes to the maximum.
    ``stride`` defaults to ``kernel_size`` (windows that do not overlap)."""

    def forward(self, x: Tensor) -> Tensor:
        return F.max_pool2d(x, self.kernel_size, self.stride, self.padding)


class AvgPool2d(_Pool2d):
    """The mean of each window over (N, C, H, W); the gradient is shared equally.
    ``stride`` defaults to ``kernel_size``."""

    def forward(self, x: Tensor) -> Tensor:
        return F.avg_pool2d(x, self.kernel_size, self.stride, self.padding)


class AdaptiveAvgPool2d(Module):
    """The mean over each of ``output_size`` windows that cover the image, whatever its
    size (``F.adaptive_avg_pool2d``); ``(1, 1)`` is a global average pool."""

    def __init__(self, output_size):
        super().__init__()
        self.output_size = output_size

    def forward(self, x: Tensor) -> Tensor:
        return F.adaptive_avg_pool2d(x, self.output_size)

    def extra_repr(self) -> str:
        return f"output_size={self.output_size}"


class Flatten(Module):
    """Merge dims ``start_dim``..``end_dim`` into one: (N, C, H, W) -> (N, C*H*W)."""

    def __init__(self, start_dim: int = 1, end_dim: int = -1):
        super().__init__()
        self.start_dim, self.end_dim = start_dim, end_dim

    def forward(self, x: Tensor) -> Tensor:
        return ag.flatten(x, self.start_dim, self.end_dim)

    def extra_repr(self) -> str:
        return f"start_dim={self.start_dim}, end_dim={self.end_dim}"


class Sequential(Module):
    """Modules applied one after the other; children are named "0", "1", ... (or by
    the keys of an ``OrderedDict``). Indexable (a slice gives a ``Sequential``),
    iterable, with ``len``.

    >>> model = Sequential(Linear(4, 8), ReLU(), Linear(8, 2))
    >>> len(model), type(model[1]).__name__
    (3, 'ReLU')
    """

    def __init__(self, *modules: Module):
        super().__init__()
        if len(modules) == 1 and isinstance(modules[0], OrderedDict | dict):
            for name, module in modules[0].items():
                self.add_module(name, module)
        else:
            for index, module in enumerate(modules):
                self.add_module(str(index), module)

    def forward(self, x):
        for module in self._modules.values():
            x = module(x)
        return x

    def __getitem__(self, index):
        items = list(self._modules.items())
        if isinstance(index, slice):
            return Sequential(OrderedDict(items[index]))
        if not isinstance(index, int | np.integer):
            raise errors.sequential_index_type(index)
        if not -len(items) <= index < len(items):
            raise errors.sequential_index(index, len(items))
        return items[index][1]

    def __len__(self) -> int:
        return len(self._modules)

    def __iter__(self) -> Iterator[Module]:
        return iter(self._modules.values())

    def append(self, module: Module) -> Sequential:
        """Add ``module`` at the end; returns ``self``."""
        self.add_module(str(len(self)), module)
        return self
